//! Real processes and ELF core files as OMPD targets.
//!
//! Both implement [`ompd_serve::source::Source`], the interface the callback table serves a
//! library from, so every check that makes sense on a real process runs unchanged on a
//! simulated image, a stopped live process ([`LiveTarget`]) and a core file ([`CoreTarget`]).
//!
//! - [`maps`]: the memory mappings of a process (`/proc/PID/maps`) or of a core (`NT_FILE`).
//! - [`elf`]: one module's symbol table (`.symtab` and `.dynsym`, LOCAL and thread-local symbols
//!   included) and load address, and glibc's `_thread_db_*` layout descriptors.
//! - [`modules`]: the modules of a target, their load bias and `link_map`, and symbol lookup
//!   across them (thread-local symbols per thread).
//! - [`tls`]: the address of a thread's instance of a thread-local symbol, through the DTV.
//! - [`live`]: a live process stopped under ptrace, memory read through `/proc/PID/mem`
//!   (`procmem`: a page at a time, each page read once).
//! - [`core`]: an ELF core file (gdb's `gcore` or the kernel's), read by the three rules of
//!   dumped, not-dumped and omitted memory.
//! - [`spawn`]: starting a fixture program that can never be left behind, and producing core
//!   files of it.
//! - [`tour`]: a breakpoint tour, a fixture that stops itself, all threads at once, at each
//!   OMPD breakpoint its runtime passes, and continues when told.
//!
//! Only x86-64 little-endian targets are supported (the register layout of `fs_base`, the
//! `user_regs_struct` of core notes and glibc's TLS layout are those of x86-64).

#![deny(unsafe_code)]

pub mod core;
pub mod elf;
pub mod live;
pub mod maps;
pub mod modules;
mod pages;
mod procmem;
pub mod spawn;
pub mod tls;
pub mod tour;

pub use crate::core::{CoreError, CoreTarget};
pub use crate::live::{AttachError, LiveTarget};
pub use crate::spawn::{Finished, Running, SpawnError};

use ompd_abi::thread_id_kind;
use serde::{Deserialize, Serialize};

/// Reads a target's memory (a stopped process, a core file). At the crate root because both
/// [`modules`] (the link map, glibc's descriptors) and [`tls`] (the DTV) read through it.
pub trait ReadMemory {
    /// Exactly `len` bytes at `addr`, or why not.
    fn read_memory(&self, addr: u64, len: u64) -> Result<Vec<u8>, String>;
}

/// One native thread of a target: its kernel id and its thread pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Thread {
    /// The kernel thread id (`gettid()`, the LWP id).
    pub tid: u32,
    /// The `fs_base` register: on x86-64 glibc, the thread pointer and the `pthread_t`.
    pub fs_base: u64,
}

/// Orders threads the way both target kinds index them: the process's main thread (tid ==
/// `pid`) first, then by tid.
pub(crate) fn order_threads(threads: &mut [Thread], pid: Option<u32>) {
    threads.sort_by_key(|t| (Some(t.tid) != pid, t.tid));
}

/// The index of the thread whose id of `kind` is `id` (little-endian bytes): a `pthread_t` (8
/// bytes) is matched against `fs_base`, an LWP id (4 bytes) against the tid.
pub(crate) fn find_thread(threads: &[Thread], kind: u64, id: &[u8]) -> Option<usize> {
    match kind {
        thread_id_kind::PTHREAD => {
            let id: [u8; 8] = id.try_into().ok()?;
            let id = u64::from_le_bytes(id);
            threads.iter().position(|t| t.fs_base == id)
        }
        thread_id_kind::LWP => {
            let id: [u8; 4] = id.try_into().ok()?;
            let id = u32::from_le_bytes(id);
            threads.iter().position(|t| t.tid == id)
        }
        _ => None,
    }
}

/// The id bytes (little-endian) of thread `index` for `kind`.
pub(crate) fn thread_id_bytes(threads: &[Thread], index: usize, kind: u64) -> Option<Vec<u8>> {
    let t = threads.get(index)?;
    match kind {
        thread_id_kind::PTHREAD => Some(t.fs_base.to_le_bytes().to_vec()),
        thread_id_kind::LWP => Some(t.tid.to_le_bytes().to_vec()),
        _ => None,
    }
}

/// The largest single read a target serves: a longer request is refused rather than allocated.
pub const MAX_READ: u64 = 64 << 20;

/// Refuses a read longer than [`MAX_READ`] with the reason.
pub(crate) fn check_read_len(addr: u64, len: u64) -> Result<usize, String> {
    if len > MAX_READ {
        return Err(format!(
            "read of {len} bytes at {addr:#x} refused: more than {MAX_READ} bytes"
        ));
    }
    if addr.checked_add(len).is_none() {
        return Err(format!(
            "read of {len} bytes at {addr:#x} wraps past the end of the address space"
        ));
    }
    Ok(len as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_order_main_first_then_by_tid() {
        let mut t = vec![
            Thread { tid: 9, fs_base: 1 },
            Thread { tid: 5, fs_base: 2 },
            Thread { tid: 7, fs_base: 3 },
        ];
        order_threads(&mut t, Some(7));
        assert_eq!(t.iter().map(|t| t.tid).collect::<Vec<_>>(), [7, 5, 9]);
        order_threads(&mut t, None);
        assert_eq!(t.iter().map(|t| t.tid).collect::<Vec<_>>(), [5, 7, 9]);
    }

    #[test]
    fn thread_ids_round_trip_and_wrong_sizes_match_nothing() {
        let t = [
            Thread {
                tid: 100,
                fs_base: 0x7f00_0000_1000,
            },
            Thread {
                tid: 101,
                fs_base: 0x7f00_0000_2000,
            },
        ];
        for i in 0..2 {
            for kind in [thread_id_kind::PTHREAD, thread_id_kind::LWP] {
                let id = thread_id_bytes(&t, i, kind).unwrap();
                assert_eq!(find_thread(&t, kind, &id), Some(i));
            }
        }
        assert_eq!(find_thread(&t, thread_id_kind::LWP, &[100, 0]), None);
        assert_eq!(find_thread(&t, thread_id_kind::PTHREAD, &[0; 4]), None);
        assert_eq!(find_thread(&t, 7, &[100, 0, 0, 0]), None);
        assert_eq!(thread_id_bytes(&t, 2, thread_id_kind::LWP), None);
    }

    #[test]
    fn huge_or_wrapping_reads_are_refused() {
        assert!(check_read_len(0, MAX_READ + 1).is_err());
        assert!(check_read_len(u64::MAX, 2).is_err());
        assert_eq!(check_read_len(16, 8), Ok(8));
    }
}
