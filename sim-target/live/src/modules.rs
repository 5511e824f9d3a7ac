//! The modules (executable and shared objects) of a target, found from its mappings: each one's
//! path, load bias (start of its offset-0 mapping minus the page-aligned `p_vaddr` of its first
//! `PT_LOAD`), address range, symbol table, and `link_map` (found by walking `_r_debug.r_map`
//! from `ld.so` and matching `l_addr` and `l_ld`). Symbols are looked up across modules, the
//! main executable first and GLOBAL definitions before LOCAL ones; a thread-local symbol's
//! address is per thread (see [`crate::tls`]).

use crate::elf::{ElfError, Symbol, SymbolTable, THREAD_DB_DESCRIPTORS};
use crate::maps::Mapping;
use crate::tls::{tls_address, ThreadDb};
use crate::{ReadMemory, Thread};
use ompd_serve::source::SymbolError;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The debugger's rendezvous structure of `ld.so`.
const R_DEBUG: &str = "_r_debug";
/// At most this many `link_map` entries are walked (a corrupted list may loop).
const MAX_LINK_MAPS: usize = 4096;

/// One loaded module.
#[derive(Clone, Debug)]
pub struct Module {
    /// The file as the target's mappings name it.
    pub path: PathBuf,
    /// Load bias: what is added to a link-time address to get the run-time one.
    pub bias: u64,
    /// Lowest mapped address of the file.
    pub start: u64,
    /// One past the highest mapped address of the file.
    pub end: u64,
    /// Address of the module's `struct link_map`, when the dynamic linker's list names it.
    pub link_map: Option<u64>,
    /// Whether this is the main executable.
    pub main: bool,
    /// The module's symbols.
    pub symbols: Arc<SymbolTable>,
}

/// Parses the symbol table of every ELF file `mappings` map from offset 0 into this process's
/// cache ([`SymbolTable::cached`]) and returns how many it holds: a process that forks after
/// this (the harness's zygote) spares each child the parsing, and [`Modules::discover`] in the
/// child still checks each file's identity before it takes a table from the cache.
pub fn preload(mappings: &[Mapping]) -> usize {
    module_files(mappings)
        .into_iter()
        .filter(|(p, _)| SymbolTable::cached(p).is_ok())
        .count()
}

/// The files `mappings` map, each once in the order first seen, with its first mapping from
/// offset 0 (a file mapped only from further in is no module of the target: skipped).
fn module_files(mappings: &[Mapping]) -> Vec<(&Path, &Mapping)> {
    let mut out: Vec<(&Path, &Mapping)> = Vec::new();
    for m in mappings {
        let Some(p) = m.file() else { continue };
        if out.iter().any(|(q, _)| *q == p) {
            continue;
        }
        if let Some(first) = mappings
            .iter()
            .find(|x| x.offset == 0 && x.file() == Some(p))
        {
            out.push((p, first));
        }
    }
    out
}

/// The modules of one target and what symbol lookup needs beside them.
#[derive(Clone, Debug, Default)]
pub struct Modules {
    modules: Vec<Module>,
    thread_db: Option<ThreadDb>,
    thread_db_error: String,
    problems: Vec<String>,
}

impl Modules {
    /// Finds the modules in `mappings`. `entry` (the `AT_ENTRY` of the auxiliary vector) marks
    /// the main executable; `mem` reads `_r_debug`, the `link_map` list and, when the files do
    /// not hold them, glibc's descriptors. Files that cannot be read are skipped and listed in
    /// [`Modules::problems`]; non-ELF mapped files are skipped silently.
    pub fn discover(mappings: &[Mapping], entry: Option<u64>, mem: &dyn ReadMemory) -> Modules {
        let mut out = Modules::default();
        for (path, first) in module_files(mappings) {
            let of_file = || mappings.iter().filter(move |m| m.file() == Some(path));
            let symbols = match SymbolTable::cached(path) {
                Ok(t) => t,
                Err(ElfError::Format { reason, .. }) if reason == "not an ELF file" => continue,
                Err(e) => {
                    out.problems.push(e.to_string());
                    continue;
                }
            };
            if symbols.load_vaddr() > first.start {
                out.problems.push(format!(
                    "{}: first PT_LOAD at {:#x} lies above its mapping at {:#x}",
                    path.display(),
                    symbols.load_vaddr(),
                    first.start
                ));
                continue;
            }
            let start = of_file().map(|m| m.start).min().unwrap_or(first.start);
            let end = of_file().map(|m| m.end).max().unwrap_or(first.end);
            out.modules.push(Module {
                path: path.to_path_buf(),
                bias: first.start - symbols.load_vaddr(),
                start,
                end,
                link_map: None,
                main: entry.is_some_and(|e| start <= e && e < end),
                symbols,
            });
        }
        let chain = out.link_link_maps(mem);
        // Main executable first, then the dynamic linker's order, then the rest by address.
        out.modules.sort_by_key(|m| {
            let pos = m
                .link_map
                .and_then(|lm| chain.iter().position(|&c| c == lm))
                .unwrap_or(usize::MAX);
            (!m.main, pos, m.start)
        });
        match ThreadDb::from_lookup(|name| out.thread_db_desc(name, mem)) {
            Ok(db) => out.thread_db = Some(db),
            Err(e) => out.thread_db_error = e,
        }
        out
    }

    /// Walks `_r_debug.r_map` and assigns each module its `link_map`; returns the list's
    /// addresses in order.
    fn link_link_maps(&mut self, mem: &dyn ReadMemory) -> Vec<u64> {
        let mut chain = Vec::new();
        let Some((m, sym)) = self.lookup(R_DEBUG) else {
            self.problems
                .push(format!("{R_DEBUG} not found: no link_map for any module"));
            return chain;
        };
        let r_debug = self.modules[m].bias.wrapping_add(sym.value);
        let word = |addr: u64| -> Result<u64, String> {
            let b = mem.read_memory(addr, 8)?;
            Ok(u64::from_le_bytes(b.try_into().map_err(|_| "short read")?))
        };
        // struct r_debug { int r_version; struct link_map *r_map; ... }
        let mut lm = match word(r_debug.wrapping_add(8)) {
            Ok(a) => a,
            Err(e) => {
                self.problems
                    .push(format!("reading {R_DEBUG}.r_map at {r_debug:#x}: {e}"));
                return chain;
            }
        };
        // struct link_map { l_addr; l_name; l_ld; l_next; l_prev; ... }
        while lm != 0 && chain.len() < MAX_LINK_MAPS && !chain.contains(&lm) {
            chain.push(lm);
            let (Ok(l_addr), Ok(l_ld), Ok(next)) = (
                word(lm),
                word(lm.wrapping_add(16)),
                word(lm.wrapping_add(24)),
            ) else {
                self.problems
                    .push(format!("reading the link_map at {lm:#x} failed"));
                break;
            };
            // The module whose bias is l_addr and whose mapped range holds its dynamic section
            // (l_ld); failing that, the one whose bias is l_addr and whose file name is l_name's
            // (paths differ between l_name and the mappings, e.g. /lib vs /usr/lib).
            let by_ld = self.modules.iter().position(|m| {
                m.link_map.is_none() && m.bias == l_addr && m.start <= l_ld && l_ld < m.end
            });
            let by_name = || {
                let name = word(lm.wrapping_add(8))
                    .ok()
                    .and_then(|a| read_cstr(mem, a, 4096))?;
                let name = Path::new(&name).file_name()?.to_owned();
                self.modules.iter().position(|m| {
                    m.link_map.is_none()
                        && m.bias == l_addr
                        && m.path.file_name() == Some(name.as_os_str())
                })
            };
            if let Some(i) = by_ld.or_else(by_name) {
                self.modules[i].link_map = Some(lm);
            }
            lm = next;
        }
        chain
    }

    /// A `_thread_db_*` descriptor: from the defining module's file, else from target memory.
    fn thread_db_desc(&self, name: &str, mem: &dyn ReadMemory) -> Option<crate::elf::ThreadDbDesc> {
        debug_assert!(THREAD_DB_DESCRIPTORS.contains(&name));
        let (m, sym) = self.lookup(name)?;
        let module = &self.modules[m];
        module.symbols.thread_db(name).or_else(|| {
            let bytes = mem
                .read_memory(module.bias.wrapping_add(sym.value), 12)
                .ok()?;
            crate::elf::ThreadDbDesc::parse(&bytes)
        })
    }

    /// The modules: the main executable first, then in the dynamic linker's order, then the
    /// others by address.
    pub fn list(&self) -> &[Module] {
        &self.modules
    }

    /// The main executable, when it was identified.
    pub fn main(&self) -> Option<&Module> {
        self.modules.first().filter(|m| m.main)
    }

    /// Module files that could not be read, and other problems met while finding modules.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// The TLS layout descriptors, or why they are missing.
    pub fn thread_db(&self) -> Result<&ThreadDb, &str> {
        self.thread_db.as_ref().ok_or(&self.thread_db_error)
    }

    /// The definition of `name`: the first GLOBAL one in module order, else the first LOCAL
    /// one; with the index of its module.
    pub fn lookup(&self, name: &str) -> Option<(usize, &Symbol)> {
        for global in [true, false] {
            for (i, m) in self.modules.iter().enumerate() {
                if let Some(s) = m.symbols.get(name).filter(|s| s.global == global) {
                    return Some((i, s));
                }
            }
        }
        None
    }

    /// The run-time address of `name`; for a thread-local symbol, of the instance of
    /// `threads[thread]` (without a thread, or for a block not allocated, it is unavailable).
    pub fn address(
        &self,
        name: &str,
        thread: Option<usize>,
        threads: &[Thread],
        mem: &dyn ReadMemory,
    ) -> Result<u64, SymbolError> {
        let (m, sym) = self.lookup(name).ok_or(SymbolError::NotFound)?;
        let module = &self.modules[m];
        if !sym.tls {
            return Ok(module.bias.wrapping_add(sym.value));
        }
        let unavailable = |why: String| SymbolError::Unavailable(format!("{name}: {why}"));
        let Some(i) = thread else {
            return Err(unavailable(
                "thread-local, and looked up without a thread context".into(),
            ));
        };
        let t = threads
            .get(i)
            .ok_or_else(|| unavailable(format!("no native thread {i}")))?;
        let lm = module.link_map.ok_or_else(|| {
            unavailable(format!(
                "no link_map found for {}, which defines it",
                module.path.display()
            ))
        })?;
        let db = self.thread_db().map_err(|e| unavailable(e.to_string()))?;
        tls_address(mem, db, t.fs_base, lm, sym.value).map_err(|e| match e {
            SymbolError::Unavailable(why) => {
                unavailable(format!("thread {i} (tid {}): {why}", t.tid))
            }
            other => other,
        })
    }
}

/// The NUL-terminated string at `addr` (at most `max` bytes), read in small pieces.
fn read_cstr(mem: &dyn ReadMemory, addr: u64, max: u64) -> Option<String> {
    let mut out = Vec::new();
    while (out.len() as u64) < max {
        let at = addr.checked_add(out.len() as u64)?;
        let piece = mem.read_memory(at, 64 - at % 64).ok()?;
        if let Some(nul) = piece.iter().position(|&b| b == 0) {
            out.extend_from_slice(&piece[..nul]);
            return String::from_utf8(out).ok();
        }
        out.extend_from_slice(&piece);
    }
    None
}

/// `AT_ENTRY` from an auxiliary vector (pairs of little-endian 64-bit words).
pub fn auxv_entry(auxv: &[u8]) -> Option<u64> {
    const AT_ENTRY: u64 = 9;
    auxv.chunks_exact(16).find_map(|pair| {
        let key = u64::from_le_bytes(pair[..8].try_into().ok()?);
        let val = u64::from_le_bytes(pair[8..].try_into().ok()?);
        (key == AT_ENTRY).then_some(val)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct NoMemory;

    impl ReadMemory for NoMemory {
        fn read_memory(&self, addr: u64, _: u64) -> Result<Vec<u8>, String> {
            Err(format!("nothing at {addr:#x}"))
        }
    }

    #[test]
    fn auxv_entry_is_found() {
        let mut v = Vec::new();
        for (k, x) in [(3u64, 0x40u64), (9, 0x1234), (0, 0)] {
            v.extend(k.to_le_bytes());
            v.extend(x.to_le_bytes());
        }
        assert_eq!(auxv_entry(&v), Some(0x1234));
        assert_eq!(auxv_entry(&v[..16]), None);
    }

    #[test]
    fn preloading_reads_each_elf_file_mapped_from_offset_zero() {
        if !cfg!(all(target_arch = "x86_64", target_os = "linux")) {
            return;
        }
        let maps = crate::maps::read_proc_maps(std::process::id() as i32).unwrap();
        let exe = std::env::current_exe().unwrap();
        let mapped_from_zero = |p: &Path| {
            maps.iter()
                .any(|m| m.offset == 0 && m.file().is_some_and(|f| f == p))
        };
        assert!(
            mapped_from_zero(&exe),
            "the test binary is mapped from offset 0"
        );
        // The test binary and at least libc; nothing for an empty list.
        assert!(preload(&maps) >= 2);
        assert_eq!(preload(&[]), 0);
        assert!(crate::LiveTarget::preload_symbols(-1).is_err());
    }

    #[test]
    fn modules_of_this_process_without_memory() {
        // This test process's own mappings: its executable is found and biased correctly even
        // when no memory can be read (no link_map, no thread_db then).
        if !cfg!(all(target_arch = "x86_64", target_os = "linux")) {
            return;
        }
        let maps = crate::maps::read_proc_maps(std::process::id() as i32).unwrap();
        let entry = auxv_entry(&std::fs::read("/proc/self/auxv").unwrap());
        let mods = Modules::discover(&maps, entry, &NoMemory);
        let main = mods.main().expect("the test executable");
        assert_eq!(main.path, std::env::current_exe().unwrap());
        let (m, _) = mods.lookup("main").unwrap();
        assert_eq!(m, 0);
        let addr = mods.address("main", None, &[], &NoMemory).unwrap();
        assert!(main.start <= addr && addr < main.end);
        assert!(!mods.problems().is_empty(), "the r_debug read must fail");
        // libc's file holds the descriptors, so TLS layout needs no target memory.
        let db = mods.thread_db().expect("glibc's _thread_db_* descriptors");
        assert_eq!(db.dtv.bits % 64, 0);
        assert_eq!(
            mods.address("no_such_symbol_anywhere", None, &[], &NoMemory),
            Err(SymbolError::NotFound)
        );
    }
}
