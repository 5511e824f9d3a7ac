//! The memory of a stopped live process, read through `/proc/PID/mem` a page at a time, each
//! page once ([`crate::pages`]): the process stays stopped as long as it is attached and nothing
//! writes to it, so its memory cannot change under a kept page. A read answers exactly as
//! reading `/proc/PID/mem` at once would, error text included.

use crate::check_read_len;
use crate::pages::{End, FilePages};
use crate::ReadMemory;
use std::fs::File;

/// `/proc/PID/mem` of a stopped process, with the pages read so far.
#[derive(Debug)]
pub(crate) struct ProcMem {
    pid: i32,
    pages: FilePages,
}

impl ProcMem {
    /// The memory of process `pid`, read through `file` (its `/proc/PID/mem`).
    pub(crate) fn new(pid: i32, file: File) -> ProcMem {
        ProcMem {
            pid,
            pages: FilePages::new(file),
        }
    }
}

impl ReadMemory for ProcMem {
    fn read_memory(&self, addr: u64, len: u64) -> Result<Vec<u8>, String> {
        let n = check_read_len(addr, len)?;
        let mut out = vec![0u8; n];
        let (done, end) = self.pages.read_at(&mut out, addr);
        let at = addr + done as u64;
        let pid = self.pid;
        match end {
            None => Ok(out),
            Some(End::Failed(e)) => Err(format!(
                "pid {pid}: {len} bytes at {addr:#x}: {at:#x} not readable: {e}"
            )),
            Some(End::Nothing) => Err(format!(
                "pid {pid}: {len} bytes at {addr:#x}: nothing readable at {at:#x}"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pages::PAGE;

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
