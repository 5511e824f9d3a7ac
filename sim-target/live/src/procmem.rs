//! The memory of a stopped live process, read through `/proc/PID/mem` a page at a time.
//!
//! Each page is read once and kept, readable or not: the process stays stopped as long as it is
//! attached and nothing writes to it, so its memory cannot change under a kept page. A library
//! reads the same runtime structures over and over; a kept page answers every read after the
//! first without a system call. A read answers exactly as reading `/proc/PID/mem` at once would,
//! error text included: the kernel also reads that file a page at a time, so a read fails where,
//! and as, the first page it reaches fails.

use crate::check_read_len;
use crate::ReadMemory;
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex};

/// The unit `/proc/PID/mem` is read and kept in.
const PAGE: u64 = 4096;

/// `/proc/PID/mem` of a stopped process, with the pages read so far.
#[derive(Debug)]
pub(crate) struct ProcMem {
    pid: i32,
    file: File,
    pages: Mutex<HashMap<u64, Arc<Page>>>,
}

/// One page as `/proc/PID/mem` gave it: the bytes readable from its start, then how the rest
/// ended (none when the whole page was read).
#[derive(Debug)]
struct Page {
    bytes: Vec<u8>,
    end: Option<End>,
}

/// Why a page stops short.
#[derive(Debug)]
enum End {
    /// The read returned nothing.
    Nothing,
    /// The read failed with this error.
    Failed(String),
}

impl ProcMem {
    /// The memory of process `pid`, read through `file` (its `/proc/PID/mem`).
    pub(crate) fn new(pid: i32, file: File) -> ProcMem {
        ProcMem {
            pid,
            file,
            pages: Mutex::default(),
        }
    }

    /// The page at `base` (a multiple of [`PAGE`]): kept, or read now and kept.
    fn page(&self, base: u64) -> Arc<Page> {
        let mut pages = self.pages.lock().unwrap_or_else(|p| p.into_inner());
        pages
            .entry(base)
            .or_insert_with(|| Arc::new(self.read_page(base)))
            .clone()
    }

    fn read_page(&self, base: u64) -> Page {
        let mut bytes = vec![0u8; PAGE as usize];
        let mut done = 0;
        let end = loop {
            if done == bytes.len() {
                break None;
            }
            match self.file.read_at(&mut bytes[done..], base + done as u64) {
                Ok(0) => break Some(End::Nothing),
                Ok(k) => done += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => break Some(End::Failed(e.to_string())),
            }
        };
        bytes.truncate(done);
        Page { bytes, end }
    }
}

impl ReadMemory for ProcMem {
    fn read_memory(&self, addr: u64, len: u64) -> Result<Vec<u8>, String> {
        let n = check_read_len(addr, len)?;
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let at = addr + out.len() as u64;
            let base = at & !(PAGE - 1);
            let page = self.page(base);
            let from = (at - base) as usize;
            if from < page.bytes.len() {
                let take = (page.bytes.len() - from).min(n - out.len());
                out.extend_from_slice(&page.bytes[from..from + take]);
                continue;
            }
            let pid = self.pid;
            return Err(match &page.end {
                Some(End::Failed(e)) => {
                    format!("pid {pid}: {len} bytes at {addr:#x}: {at:#x} not readable: {e}")
                }
                _ => format!("pid {pid}: {len} bytes at {addr:#x}: nothing readable at {at:#x}"),
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This process's own memory (a process may read its own `/proc/PID/mem` untraced).
    fn own() -> ProcMem {
        let pid = std::process::id() as i32;
        ProcMem::new(pid, File::open("/proc/self/mem").unwrap())
    }

    #[test]
    fn reads_across_pages_and_keeps_each_page_once_read() {
        let mut buf: Vec<u8> = (0..3 * PAGE as usize).map(|i| (i % 251) as u8).collect();
        let mem = own();
        let addr = buf.as_ptr() as u64 + PAGE - 5;
        let first = mem.read_memory(addr, PAGE + 10).unwrap();
        assert_eq!(first, buf[PAGE as usize - 5..2 * PAGE as usize + 5]);
        assert_eq!(mem.read_memory(addr, 0).unwrap(), Vec::<u8>::new());
        // A kept page is not read again: the change is not seen (a stopped process cannot
        // change; this one can).
        buf[PAGE as usize] ^= 0xff;
        assert_eq!(mem.read_memory(addr, PAGE + 10).unwrap(), first);
        assert_ne!(own().read_memory(addr, PAGE + 10).unwrap(), first);
    }

    #[test]
    fn a_read_into_an_unmapped_page_fails_where_the_mapping_ends() {
        let maps = crate::maps::read_proc_maps(std::process::id() as i32).unwrap();
        let mem = own();
        // A readable mapping with a gap after it.
        let end = maps
            .iter()
            .map(|m| m.end)
            .filter(|&e| !maps.iter().any(|m| m.start <= e && e < m.end))
            .find(|&e| own().read_memory(e - 8, 8).is_ok())
            .expect("a readable mapping with a gap after it");
        let why = mem.read_memory(end - 8, 16).unwrap_err();
        let pid = std::process::id();
        assert!(
            why.starts_with(&format!(
                "pid {pid}: 16 bytes at {:#x}: {end:#x} not readable: ",
                end - 8
            )),
            "{why}"
        );
        assert_eq!(mem.read_memory(end - 8, 8).unwrap().len(), 8);
        assert_eq!(mem.read_memory(end - 8, 16).unwrap_err(), why, "kept");
    }
}
