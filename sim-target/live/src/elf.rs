//! One module's symbol table, read from its ELF file with the `object` crate.
//!
//! Both `.symtab` and `.dynsym` are read, LOCAL symbols included (an OpenMP runtime's
//! `ompd_*` layout variables and `__kmp_gtid` are LOCAL), thread-local symbols (`STT_TLS`) are
//! marked, and only defined symbols are kept. The table also keeps what relocating and TLS need:
//! the page-aligned `p_vaddr` of the first `PT_LOAD` (the load bias is the start of the module's
//! offset-0 mapping minus it), and the bytes of glibc's `_thread_db_*` layout descriptors when
//! the module defines them (libc).

use object::read::elf::{ElfFile64, FileHeader, ProgramHeader};
use object::{elf, Endianness, Object, ObjectSection, ObjectSymbol, SymbolKind};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

/// The page size the load address is aligned to (x86-64).
pub const PAGE: u64 = 4096;

/// glibc's descriptor of the offset of the DTV pointer in the thread control block.
pub const THREAD_DB_DTVP: &str = "_thread_db_pthread_dtvp";
/// glibc's descriptor of `l_tls_modid` in `struct link_map`.
pub const THREAD_DB_TLS_MODID: &str = "_thread_db_link_map_l_tls_modid";
/// glibc's descriptor of one DTV entry (its `bits` is the entry size in bits).
pub const THREAD_DB_DTV: &str = "_thread_db_dtv_dtv";
/// The three descriptors TLS resolution needs.
pub const THREAD_DB_DESCRIPTORS: [&str; 3] = [THREAD_DB_DTVP, THREAD_DB_TLS_MODID, THREAD_DB_DTV];

/// One defined symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// The symbol's name (without version).
    pub name: String,
    /// `st_value`: a link-time address, or for a thread-local symbol the offset in the module's
    /// TLS block.
    pub value: u64,
    /// `st_size`.
    pub size: u64,
    /// GLOBAL or WEAK binding (as opposed to LOCAL).
    pub global: bool,
    /// `STT_TLS`.
    pub tls: bool,
}

/// One of glibc's `_thread_db_*` descriptors: `uint32_t[3]` = `{bits, count, offset}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadDbDesc {
    /// Size of the field (of one element for arrays) in bits.
    pub bits: u32,
    /// Number of elements (1 for a scalar field).
    pub count: u32,
    /// Offset of the field in its structure, in bytes.
    pub offset: u32,
}

impl ThreadDbDesc {
    /// Decodes the 12 little-endian bytes of a descriptor.
    pub fn parse(bytes: &[u8]) -> Option<ThreadDbDesc> {
        let w = |i: usize| -> Option<u32> {
            Some(u32::from_le_bytes(
                bytes.get(i * 4..i * 4 + 4)?.try_into().ok()?,
            ))
        };
        Some(ThreadDbDesc {
            bits: w(0)?,
            count: w(1)?,
            offset: w(2)?,
        })
    }
}

/// Why a module's file gave no symbol table.
#[derive(Debug, thiserror::Error)]
pub enum ElfError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// Not a 64-bit little-endian x86-64 ELF file, or a damaged one.
    #[error("{path}: {reason}")]
    Format {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
}

/// The defined symbols of one module, by name, and its first `PT_LOAD` address.
#[derive(Clone, Default)]
pub struct SymbolTable {
    symbols: HashMap<String, Symbol>,
    load_vaddr: u64,
    thread_db: HashMap<&'static str, ThreadDbDesc>,
}

impl std::fmt::Debug for SymbolTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SymbolTable")
            .field("symbols", &self.symbols.len())
            .field("load_vaddr", &format_args!("{:#x}", self.load_vaddr))
            .field("thread_db", &self.thread_db)
            .finish()
    }
}

impl SymbolTable {
    /// Reads the module file at `path` (it is opened only if it starts with the ELF magic).
    pub fn from_file(path: &Path) -> Result<SymbolTable, ElfError> {
        use std::io::Read;
        let io = |source| ElfError::Io {
            path: path.display().to_string(),
            source,
        };
        let mut f = std::fs::File::open(path).map_err(io)?;
        let mut magic = [0u8; 4];
        f.read_exact(&mut magic).map_err(io)?;
        if &magic != b"\x7fELF" {
            return Err(ElfError::Format {
                path: path.display().to_string(),
                reason: "not an ELF file".into(),
            });
        }
        let data = std::fs::read(path).map_err(io)?;
        SymbolTable::parse(&data).map_err(|reason| ElfError::Format {
            path: path.display().to_string(),
            reason,
        })
    }

    /// [`SymbolTable::from_file`], remembered for the life of the process per file identity
    /// (path, device, inode, size, modification time): attaching to many processes of the same
    /// program, or opening many cores of it, reads each module file once.
    pub fn cached(path: &Path) -> Result<Arc<SymbolTable>, ElfError> {
        use std::os::unix::fs::MetadataExt;
        type Key = (PathBuf, u64, u64, u64, Option<SystemTime>);
        static CACHE: OnceLock<Mutex<HashMap<Key, Arc<SymbolTable>>>> = OnceLock::new();
        let meta = std::fs::metadata(path).map_err(|source| ElfError::Io {
            path: path.display().to_string(),
            source,
        })?;
        let key = (
            path.to_path_buf(),
            meta.dev(),
            meta.ino(),
            meta.len(),
            meta.modified().ok(),
        );
        let cache = CACHE.get_or_init(Default::default);
        if let Some(t) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return Ok(t.clone());
        }
        let table = Arc::new(SymbolTable::from_file(path)?);
        cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, table.clone());
        Ok(table)
    }

    /// Reads the symbol table of an ELF file held in memory.
    pub fn parse(data: &[u8]) -> Result<SymbolTable, String> {
        let file = ElfFile64::<Endianness>::parse(data).map_err(|e| e.to_string())?;
        let endian = file.endian();
        if endian != Endianness::Little {
            return Err("a big-endian ELF file; only x86-64 is supported".into());
        }
        let machine = file.elf_header().e_machine(endian);
        if machine != elf::EM_X86_64 {
            return Err(format!(
                "ELF machine {machine}, not x86-64 ({})",
                elf::EM_X86_64
            ));
        }
        let load_vaddr = file
            .elf_program_headers()
            .iter()
            .find(|p| p.p_type(endian) == elf::PT_LOAD)
            .map(|p| p.p_vaddr(endian) & !(PAGE - 1))
            .ok_or("no PT_LOAD segment")?;

        let mut table = SymbolTable {
            symbols: HashMap::new(),
            load_vaddr,
            thread_db: HashMap::new(),
        };
        for sym in file.symbols().chain(file.dynamic_symbols()) {
            if sym.is_undefined() {
                continue;
            }
            let tls = sym.kind() == SymbolKind::Tls;
            if !matches!(
                sym.kind(),
                SymbolKind::Data | SymbolKind::Text | SymbolKind::Tls | SymbolKind::Unknown
            ) {
                continue;
            }
            let Ok(name) = sym.name() else { continue };
            if name.is_empty() {
                continue;
            }
            let new = Symbol {
                name: name.to_string(),
                value: sym.address(),
                size: sym.size(),
                global: !sym.is_local(),
                tls,
            };
            // One entry per name: a GLOBAL definition wins over a LOCAL one; otherwise the
            // first seen (.symtab before .dynsym) stays.
            match table.symbols.get(name) {
                Some(old) if old.global || !new.global => {}
                _ => {
                    table.symbols.insert(name.to_string(), new);
                }
            }
        }
        for desc in THREAD_DB_DESCRIPTORS {
            let Some(sym) = table.symbols.get(desc) else {
                continue;
            };
            let bytes = file.sections().find_map(|s| {
                s.data_range(sym.value, 12)
                    .ok()
                    .flatten()
                    .filter(|_| s.kind() != object::SectionKind::UninitializedData)
            });
            if let Some(d) = bytes.and_then(ThreadDbDesc::parse) {
                table.thread_db.insert(desc, d);
            }
        }
        Ok(table)
    }

    /// The defined symbol `name`.
    pub fn get(&self, name: &str) -> Option<&Symbol> {
        self.symbols.get(name)
    }

    /// How many distinct names are defined.
    pub fn len(&self) -> usize {
        self.symbols.len()
    }

    /// Whether no symbol is defined.
    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }

    /// The page-aligned `p_vaddr` of the first `PT_LOAD` segment.
    pub fn load_vaddr(&self) -> u64 {
        self.load_vaddr
    }

    /// The `_thread_db_*` descriptor `name` as the file holds it, if this module defines it.
    pub fn thread_db(&self, name: &str) -> Option<ThreadDbDesc> {
        self.thread_db.get(name).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_db_descriptors_decode_and_short_ones_do_not() {
        let mut b = Vec::new();
        for w in [128u32, 0, 0] {
            b.extend(w.to_le_bytes());
        }
        assert_eq!(
            ThreadDbDesc::parse(&b),
            Some(ThreadDbDesc {
                bits: 128,
                count: 0,
                offset: 0
            })
        );
        assert_eq!(ThreadDbDesc::parse(&b[..11]), None);
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(SymbolTable::parse(b"\x7fELF not really").is_err());
        assert!(SymbolTable::parse(&[]).is_err());
    }

    #[test]
    fn the_test_runner_itself_has_symbols() {
        // The running test binary is an x86-64 ELF with a .symtab (on the supported host).
        if !cfg!(all(target_arch = "x86_64", target_os = "linux")) {
            return;
        }
        let exe = std::env::current_exe().unwrap();
        let t = SymbolTable::from_file(&exe).unwrap();
        assert!(t.get("main").is_some_and(|s| s.global && !s.tls));
        assert_eq!(t.load_vaddr() % PAGE, 0);
        assert!(SymbolTable::from_file(Path::new("/proc/self/cmdline")).is_err());
    }
}
