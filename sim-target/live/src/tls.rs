//! The address of a thread's instance of a thread-local symbol, the way `libthread_db` finds it,
//! without linking `libthread_db`: through glibc's `_thread_db_*` layout descriptors.
//!
//! On x86-64 the thread pointer is `fs_base`; the thread's DTV pointer is at
//! `tp + dtvp.offset`; the module's TLS id is at `link_map + l_tls_modid.offset`; the module's
//! block is `dtv[modid]` (entries `dtv.bits / 8` bytes apart, the pointer first); the symbol is
//! at `block + st_value`. A block of 0 or -1 is not allocated (yet) for that thread. The same
//! code serves live processes and core files: it only reads memory.

use crate::elf::{ThreadDbDesc, THREAD_DB_DTV, THREAD_DB_DTVP, THREAD_DB_TLS_MODID};
use crate::ReadMemory;
use ompd_serve::source::SymbolError;

/// The three layout descriptors TLS resolution needs, from libc.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadDb {
    /// `_thread_db_pthread_dtvp`: where the DTV pointer sits in the thread control block.
    pub dtvp: ThreadDbDesc,
    /// `_thread_db_link_map_l_tls_modid`: where the TLS module id sits in a `link_map`.
    pub modid: ThreadDbDesc,
    /// `_thread_db_dtv_dtv`: one DTV entry (its size in `bits`).
    pub dtv: ThreadDbDesc,
}

impl ThreadDb {
    /// Assembles the three descriptors found by name (`None` names the first one missing).
    pub fn from_lookup(
        mut find: impl FnMut(&str) -> Option<ThreadDbDesc>,
    ) -> Result<ThreadDb, String> {
        let mut get = |name: &str| {
            find(name).ok_or_else(|| {
                format!("glibc's {name} descriptor was not found (libc not loaded or stripped of .dynsym?)")
            })
        };
        let db = ThreadDb {
            dtvp: get(THREAD_DB_DTVP)?,
            modid: get(THREAD_DB_TLS_MODID)?,
            dtv: get(THREAD_DB_DTV)?,
        };
        for (name, d) in [
            (THREAD_DB_DTVP, db.dtvp),
            (THREAD_DB_TLS_MODID, db.modid),
            (THREAD_DB_DTV, db.dtv),
        ] {
            // A DTV entry holds at least the block pointer; the other two are plain words.
            let ok = if name == THREAD_DB_DTV {
                d.bits >= 64 && d.bits % 64 == 0 && d.bits <= 1024
            } else {
                d.bits == 32 || d.bits == 64
            };
            if !ok {
                return Err(format!(
                    "glibc's {name} descriptor has an unexpected size of {} bits",
                    d.bits
                ));
            }
        }
        Ok(db)
    }
}

/// Reads an unsigned field of `bits` (32 or 64) at `addr`.
fn read_field(mem: &dyn ReadMemory, addr: u64, bits: u32, what: &str) -> Result<u64, String> {
    let len = if bits == 32 { 4 } else { 8 };
    let b = mem
        .read_memory(addr, len)
        .map_err(|e| format!("reading {what} at {addr:#x}: {e}"))?;
    Ok(match *b.as_slice() {
        [a, b, c, d] => u32::from_le_bytes([a, b, c, d]) as u64,
        [a, b, c, d, e, f, g, h] => u64::from_le_bytes([a, b, c, d, e, f, g, h]),
        _ => return Err(format!("reading {what} at {addr:#x}: short read")),
    })
}

/// The address of the instance, in the thread whose thread pointer is `tp`, of the thread-local
/// symbol with `st_value` `offset` defined by the module whose `link_map` is at `link_map`.
pub fn tls_address(
    mem: &dyn ReadMemory,
    db: &ThreadDb,
    tp: u64,
    link_map: u64,
    offset: u64,
) -> Result<u64, SymbolError> {
    let unavailable = SymbolError::Unavailable;
    let modid = read_field(
        mem,
        link_map.wrapping_add(db.modid.offset as u64),
        db.modid.bits,
        "link_map.l_tls_modid",
    )
    .map_err(unavailable)?;
    if modid == 0 {
        return Err(unavailable(format!(
            "the module of link_map {link_map:#x} has no TLS block (l_tls_modid 0)"
        )));
    }
    let dtv = read_field(
        mem,
        tp.wrapping_add(db.dtvp.offset as u64),
        db.dtvp.bits,
        "the thread's DTV pointer",
    )
    .map_err(unavailable)?;
    let entry = (db.dtv.bits / 8) as u64;
    // glibc keeps the number of DTV slots in the entry before the one the thread points at
    // (`dtv[-1].counter`); a module loaded after the thread's DTV was sized has no slot yet.
    // When that word cannot be read, the check is skipped.
    if let Ok(slots) = read_field(mem, dtv.wrapping_sub(entry), 64, "the DTV length") {
        if modid > slots && slots < 1 << 20 {
            return Err(unavailable(format!(
                "the DTV of the thread with tp {tp:#x} has {slots} slots, none yet for module {modid}"
            )));
        }
    }
    let slot = modid
        .checked_mul(entry)
        .and_then(|o| dtv.checked_add(o))
        .ok_or_else(|| unavailable(format!("DTV {dtv:#x} entry {modid} overflows")))?;
    let block = read_field(mem, slot, 64, "the DTV entry").map_err(unavailable)?;
    if block == 0 || block == u64::MAX {
        return Err(unavailable(format!(
            "TLS block of module {modid} not allocated for the thread with tp {tp:#x}"
        )));
    }
    Ok(block.wrapping_add(offset))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Memory as a map of 8-byte words.
    struct Words(BTreeMap<u64, u64>);

    impl ReadMemory for Words {
        fn read_memory(&self, addr: u64, len: u64) -> Result<Vec<u8>, String> {
            let w = self.0.get(&addr).ok_or(format!("unmapped {addr:#x}"))?;
            Ok(w.to_le_bytes()[..len as usize].to_vec())
        }
    }

    fn db() -> ThreadDb {
        ThreadDb::from_lookup(|name| {
            Some(match name {
                THREAD_DB_DTVP => ThreadDbDesc {
                    bits: 64,
                    count: 1,
                    offset: 8,
                },
                THREAD_DB_TLS_MODID => ThreadDbDesc {
                    bits: 64,
                    count: 1,
                    offset: 1152,
                },
                _ => ThreadDbDesc {
                    bits: 128,
                    count: 0,
                    offset: 0,
                },
            })
        })
        .unwrap()
    }

    #[test]
    fn follows_tp_dtv_and_modid() {
        let (tp, lm, dtv) = (0x7000_0000u64, 0x5000u64, 0x9000u64);
        let mut m = BTreeMap::new();
        m.insert(lm + 1152, 2);
        m.insert(tp + 8, dtv);
        m.insert(dtv + 32, 0x6000_0000);
        let mem = Words(m);
        assert_eq!(tls_address(&mem, &db(), tp, lm, 0x10), Ok(0x6000_0010));
        // Unallocated blocks, unreadable memory and module id 0 are unavailable.
        for block in [0, u64::MAX] {
            let mut m = mem.0.clone();
            m.insert(dtv + 32, block);
            assert!(matches!(
                tls_address(&Words(m), &db(), tp, lm, 0),
                Err(SymbolError::Unavailable(_))
            ));
        }
        // A DTV too short for the module (glibc's length word before the entries).
        let mut m = mem.0.clone();
        m.insert(dtv - 16, 1);
        let e = tls_address(&Words(m.clone()), &db(), tp, lm, 0).unwrap_err();
        assert!(e.to_string().contains("1 slots"), "{e}");
        m.insert(dtv - 16, 2);
        assert_eq!(tls_address(&Words(m), &db(), tp, lm, 4), Ok(0x6000_0004));
        let mut m = mem.0.clone();
        m.insert(lm + 1152, 0);
        assert!(tls_address(&Words(m), &db(), tp, lm, 0).is_err());
        assert!(tls_address(&mem, &db(), tp + 16, lm, 0).is_err());
    }

    #[test]
    fn missing_or_odd_descriptors_are_refused() {
        assert!(ThreadDb::from_lookup(|_| None)
            .unwrap_err()
            .contains(THREAD_DB_DTVP));
        let odd = ThreadDb::from_lookup(|_| {
            Some(ThreadDbDesc {
                bits: 12,
                count: 1,
                offset: 0,
            })
        });
        assert!(odd.is_err());
    }
}
