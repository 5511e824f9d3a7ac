//! An ELF core file (gdb's `gcore` or the kernel's) as a target.
//!
//! The `object` crate reads the program headers and notes: `PT_LOAD` segments, one
//! `NT_PRSTATUS` per thread (`pr_pid` at byte 32, `pr_reg` at byte 112, `fs_base` its 22nd
//! word), `NT_PRPSINFO` (the process id), `NT_AUXV` (the entry point marks the executable) and
//! `NT_FILE` (which file each mapping came from). Memory is read by three rules:
//!
//! 1. an address inside a `PT_LOAD`'s dumped bytes (`[vaddr, vaddr + filesz)`) is read from the
//!    core;
//! 2. an address no `PT_LOAD` covers (gdb omits read-only file mappings) is read from the file
//!    `NT_FILE` says was mapped there, or is an error;
//! 3. an address in a `PT_LOAD`'s `[filesz, memsz)` (not dumped: the kernel skips never-written
//!    anonymous memory and unmodified file pages) is read from the mapped file if there is one,
//!    else it reads as zeros.
//!
//! The mapped files are the ones on this machine now: a core is only read faithfully where
//! they have not changed since it was written. A damaged core is a [`CoreError`], never a panic.

use crate::maps::{parse_nt_file, Mapping};
use crate::modules::{auxv_entry, Modules};
use crate::pages::{End, FilePages};
use crate::ReadMemory;
use crate::{check_read_len, Thread};
use object::elf;
use object::read::elf::{FileHeader, ProgramHeader};
use object::read::ReadCache;
use object::Endianness;
use ompd_serve::arch::Arch;
use ompd_serve::source::{Source, SymbolError, TargetKind};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Offset of `pr_pid` in the x86-64 `struct elf_prstatus`.
const PRSTATUS_PID: usize = 32;
/// Offset of `pr_reg` (a `user_regs_struct`) in the x86-64 `struct elf_prstatus`.
const PRSTATUS_REG: usize = 112;
/// Index of `fs_base` among the 27 words of the x86-64 `user_regs_struct`.
const REG_FS_BASE: usize = 21;
/// Offset of `pr_pid` in the x86-64 `struct elf_prpsinfo`.
const PRPSINFO_PID: usize = 24;
/// At most this many bytes of notes are read (a damaged header may claim more).
const MAX_NOTES: u64 = 64 << 20;

/// Why a core file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// The file could not be read.
    #[error("core {path}: {source}")]
    Io {
        /// The core file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Not an x86-64 little-endian ELF core, or a damaged one.
    #[error("core {path}: {reason}")]
    Format {
        /// The core file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The file ends before data its headers describe.
    #[error("core {path}: truncated: {what} needs bytes up to {needed}, the file has {len}")]
    Truncated {
        /// The core file.
        path: PathBuf,
        /// What lies beyond the end.
        what: String,
        /// The offset the data ends at.
        needed: u64,
        /// The file's length.
        len: u64,
    },
}

/// One `PT_LOAD` segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Segment {
    vaddr: u64,
    memsz: u64,
    filesz: u64,
    offset: u64,
}

impl Segment {
    fn end(&self) -> u64 {
        self.vaddr + self.memsz
    }
}

/// A mapped file named by `NT_FILE`, opened if it still exists (read a page at a time, each
/// page once).
#[derive(Debug)]
struct MappedFile {
    mapping: Mapping,
    file: Option<FilePages>,
}

/// The core's memory, by the three rules; the core and the mapped files are read a page at a
/// time, each page once ([`crate::pages`]: a core never changes).
#[derive(Debug)]
struct CoreMem {
    path: PathBuf,
    core: FilePages,
    segments: Vec<Segment>,
    files: Vec<MappedFile>,
}

impl MappedFile {
    /// The file of `mapping`, opened if it still exists.
    fn open(mapping: &Mapping) -> MappedFile {
        let file = mapping.file().and_then(|p| File::open(p).ok());
        MappedFile {
            mapping: mapping.clone(),
            file: file.map(FilePages::new),
        }
    }
}

impl CoreMem {
    fn segment(&self, addr: u64) -> Option<&Segment> {
        self.segments
            .iter()
            .find(|s| s.vaddr <= addr && addr < s.end())
    }

    fn mapped_file(&self, addr: u64) -> Option<&MappedFile> {
        self.files.iter().find(|f| f.mapping.contains(addr))
    }

    /// Fills `buf` from the file mapped at `addr`; past the file's end it reads as zeros.
    fn read_mapped(&self, f: &MappedFile, addr: u64, buf: &mut [u8]) -> Result<(), String> {
        let path = f.mapping.path.as_deref().unwrap_or("?");
        let file = f
            .file
            .as_ref()
            .ok_or_else(|| format!("the mapped file {path} cannot be opened"))?;
        let at = f.mapping.offset + (addr - f.mapping.start);
        match file.read_at(buf, at) {
            (_, Some(End::Failed(e))) => Err(format!("reading the mapped file {path}: {e}")),
            // Past the file's end the bytes stay zeros.
            (done, _) => {
                buf[done..].fill(0);
                Ok(())
            }
        }
    }
}

impl ReadMemory for CoreMem {
    fn read_memory(&self, addr: u64, len: u64) -> Result<Vec<u8>, String> {
        let n = check_read_len(addr, len)?;
        let mut buf = vec![0u8; n];
        let mut done = 0usize;
        while done < n {
            let at = addr + done as u64;
            let want = (n - done) as u64;
            let piece = if let Some(seg) = self.segment(at) {
                let inside = at - seg.vaddr;
                if inside < seg.filesz {
                    // Rule 1: dumped.
                    let k = want.min(seg.filesz - inside) as usize;
                    self.core
                        .read_exact_at(&mut buf[done..done + k], seg.offset + inside)
                        .map_err(|e| {
                            format!(
                                "core {}: {len} bytes at {addr:#x}: reading {at:#x}: {e}",
                                self.path.display()
                            )
                        })?;
                    k
                } else {
                    // Rule 3: not dumped; the mapped file, else zeros.
                    let mut k = want.min(seg.memsz - inside);
                    if let Some(f) = self.mapped_file(at) {
                        k = k.min(f.mapping.end - at);
                        self.read_mapped(f, at, &mut buf[done..done + k as usize])
                            .map_err(|e| format!("{len} bytes at {addr:#x}: {e}"))?;
                    }
                    k as usize
                }
            } else if let Some(f) = self.mapped_file(at) {
                // Rule 2: omitted from the core; the mapped file.
                let next_segment = self
                    .segments
                    .iter()
                    .map(|s| s.vaddr)
                    .filter(|&v| v > at)
                    .min()
                    .unwrap_or(u64::MAX);
                let k = want.min(f.mapping.end - at).min(next_segment - at) as usize;
                self.read_mapped(f, at, &mut buf[done..done + k])
                    .map_err(|e| format!("{len} bytes at {addr:#x}: {e}"))?;
                k
            } else {
                return Err(format!(
                    "core {}: {len} bytes at {addr:#x}: {at:#x} is neither in the core nor in a mapped file",
                    self.path.display()
                ));
            };
            done += piece;
        }
        Ok(buf)
    }
}

/// An ELF core file. [`Source::duplicate`] gives another handle on the same opened core.
#[derive(Clone)]
pub struct CoreTarget {
    inner: Arc<Opened>,
}

/// What one opened core holds.
struct Opened {
    pid: Option<u32>,
    threads: Vec<Thread>,
    modules: Modules,
    mem: CoreMem,
}

impl std::fmt::Debug for CoreTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let t = &self.inner;
        f.debug_struct("CoreTarget")
            .field("path", &t.mem.path)
            .field("pid", &t.pid)
            .field("threads", &t.threads)
            .field("segments", &t.mem.segments.len())
            .field(
                "modules",
                &t.modules
                    .list()
                    .iter()
                    .map(|m| m.path.display().to_string())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// What the notes of a core say.
#[derive(Default)]
struct Notes {
    threads: Vec<Thread>,
    pid: Option<u32>,
    auxv: Vec<u8>,
    files: Vec<Mapping>,
}

fn le_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn le_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

impl CoreTarget {
    /// Opens and checks the core file at `path` and finds its threads and modules.
    pub fn open(path: impl AsRef<Path>) -> Result<CoreTarget, CoreError> {
        let path = path.as_ref().to_path_buf();
        let format = |reason: String| CoreError::Format {
            path: path.clone(),
            reason,
        };
        let io = |source| CoreError::Io {
            path: path.clone(),
            source,
        };
        let core = File::open(&path).map_err(io)?;
        let len = core.metadata().map_err(io)?.len();
        let cache = ReadCache::new(core.try_clone().map_err(io)?);
        let header = elf::FileHeader64::<Endianness>::parse(&cache)
            .map_err(|e| format(format!("not a 64-bit ELF file: {e}")))?;
        let endian = check_header(header).map_err(format)?;
        let phdrs = header
            .program_headers(endian, &cache)
            .map_err(|e| format(format!("program headers: {e}")))?;
        let mut segments = Vec::new();
        let mut notes = Notes::default();
        for (i, ph) in phdrs.iter().enumerate() {
            let (offset, filesz) = (ph.p_offset(endian), ph.p_filesz(endian));
            let p_type = ph.p_type(endian);
            if p_type != elf::PT_LOAD && p_type != elf::PT_NOTE {
                continue;
            }
            let what = if p_type == elf::PT_LOAD {
                format!("PT_LOAD {i}")
            } else {
                format!("PT_NOTE {i}")
            };
            let file_end = offset
                .checked_add(filesz)
                .ok_or_else(|| format(format!("{what}: offset + size overflows")))?;
            if file_end > len {
                return Err(CoreError::Truncated {
                    path: path.clone(),
                    what,
                    needed: file_end,
                    len,
                });
            }
            if p_type == elf::PT_LOAD {
                segments.extend(load_segment(ph, endian, &what).map_err(format)?);
            } else {
                read_note_segment(ph, endian, &cache, &what, &mut notes).map_err(format)?;
            }
        }
        if notes.threads.is_empty() {
            return Err(format("no NT_PRSTATUS note: no threads".into()));
        }
        sort_segments(&mut segments).map_err(format)?;
        crate::order_threads(&mut notes.threads, notes.pid);
        let files = notes.files.iter().map(MappedFile::open).collect();
        let mem = CoreMem {
            path,
            core: FilePages::new(core),
            segments,
            files,
        };
        let modules = Modules::discover(&notes.files, auxv_entry(&notes.auxv), &mem);
        Ok(CoreTarget {
            inner: Arc::new(Opened {
                pid: notes.pid,
                threads: notes.threads,
                modules,
                mem,
            }),
        })
    }

    /// Parses the symbol tables of the files the core file at `path` maps into this process's
    /// cache (opening it does: [`crate::modules::Modules::discover`] reads them through
    /// [`crate::elf::SymbolTable::cached`]); how many modules it has, or why it cannot be read.
    pub fn preload_symbols(path: impl AsRef<Path>) -> Result<usize, CoreError> {
        Ok(CoreTarget::open(path)?.inner.modules.list().len())
    }

    /// The core file's path.
    pub fn path(&self) -> &Path {
        &self.inner.mem.path
    }

    /// The process id (from `NT_PRPSINFO`), if the core says.
    pub fn pid(&self) -> Option<u32> {
        self.inner.pid
    }

    /// The threads, main thread first, then by tid (the indices thread contexts use).
    pub fn threads(&self) -> &[Thread] {
        &self.inner.threads
    }

    /// The modules of the dumped process (their files as found on this machine).
    pub fn modules(&self) -> &Modules {
        &self.inner.modules
    }

    /// The mappings `NT_FILE` names.
    pub fn file_mappings(&self) -> Vec<Mapping> {
        self.inner
            .mem
            .files
            .iter()
            .map(|f| f.mapping.clone())
            .collect()
    }
}
type Header = elf::FileHeader64<Endianness>;
type ProgramHeader64 = elf::ProgramHeader64<Endianness>;

/// The byte order of a core's ELF header, once it is known to be a little-endian x86-64 core.
fn check_header(header: &Header) -> Result<Endianness, String> {
    let endian = header
        .endian()
        .map_err(|e| format!("bad ELF byte order: {e}"))?;
    if endian != Endianness::Little {
        return Err("big-endian; only x86-64 cores are supported".into());
    }
    if header.e_type(endian) != elf::ET_CORE {
        return Err(format!(
            "ELF type {}, not a core file ({})",
            header.e_type(endian),
            elf::ET_CORE
        ));
    }
    if header.e_machine(endian) != elf::EM_X86_64 {
        return Err(format!(
            "ELF machine {}, not x86-64",
            header.e_machine(endian)
        ));
    }
    Ok(endian)
}

/// The memory a `PT_LOAD` header (`what`) describes; `None` for an empty one.
fn load_segment(
    ph: &ProgramHeader64,
    endian: Endianness,
    what: &str,
) -> Result<Option<Segment>, String> {
    let (offset, filesz) = (ph.p_offset(endian), ph.p_filesz(endian));
    let (vaddr, memsz) = (ph.p_vaddr(endian), ph.p_memsz(endian));
    if filesz > memsz || vaddr.checked_add(memsz).is_none() {
        return Err(format!(
            "{what}: vaddr {vaddr:#x}, memsz {memsz:#x}, filesz {filesz:#x} are inconsistent"
        ));
    }
    Ok((memsz > 0).then_some(Segment {
        vaddr,
        memsz,
        filesz,
        offset,
    }))
}

/// Reads the notes of a `PT_NOTE` header (`what`) into `notes`.
fn read_note_segment(
    ph: &ProgramHeader64,
    endian: Endianness,
    cache: &ReadCache<File>,
    what: &str,
    notes: &mut Notes,
) -> Result<(), String> {
    let filesz = ph.p_filesz(endian);
    if filesz > MAX_NOTES {
        return Err(format!("{what}: {filesz} bytes of notes"));
    }
    let mut it = ph
        .notes(endian, cache)
        .map_err(|e| format!("{what}: {e}"))?
        .ok_or_else(|| format!("{what}: no notes"))?;
    while let Some(note) = it.next().map_err(|e| format!("{what}: {e}"))? {
        read_note(note.name(), note.n_type(endian), note.desc(), notes)
            .map_err(|e| format!("{what}: {e}"))?;
    }
    Ok(())
}

/// Sorts the `PT_LOAD` segments by address and refuses overlapping ones.
fn sort_segments(segments: &mut [Segment]) -> Result<(), String> {
    segments.sort_by_key(|s| s.vaddr);
    for pair in segments.windows(2) {
        if pair[0].end() > pair[1].vaddr {
            return Err(format!(
                "PT_LOAD segments at {:#x} and {:#x} overlap",
                pair[0].vaddr, pair[1].vaddr
            ));
        }
    }
    Ok(())
}

/// Takes what the suite needs from one note.
fn read_note(
    name: &[u8],
    n_type: elf::NoteType,
    desc: &[u8],
    notes: &mut Notes,
) -> Result<(), String> {
    if name != elf::ELF_NOTE_CORE && name != elf::ELF_NOTE_LINUX {
        return Ok(());
    }
    if n_type == elf::NT_PRSTATUS {
        let tid = le_u32(desc, PRSTATUS_PID);
        let fs_base = le_u64(desc, PRSTATUS_REG + 8 * REG_FS_BASE);
        let (Some(tid), Some(fs_base)) = (tid, fs_base) else {
            return Err(format!(
                "NT_PRSTATUS of {} bytes is too short for x86-64",
                desc.len()
            ));
        };
        notes.threads.push(Thread { tid, fs_base });
    } else if n_type == elf::NT_PRPSINFO {
        notes.pid = le_u32(desc, PRPSINFO_PID);
    } else if n_type == elf::NT_AUXV {
        notes.auxv = desc.to_vec();
    } else if n_type == elf::NT_FILE {
        notes.files = parse_nt_file(desc)?.0;
    }
    Ok(())
}

impl Source for CoreTarget {
    fn kind(&self) -> TargetKind {
        TargetKind::Core
    }

    fn arch(&self) -> Arch {
        Arch::LP64_LE
    }

    fn read(&self, addr: u64, len: u64) -> Result<Vec<u8>, String> {
        self.inner.mem.read_memory(addr, len)
    }

    fn symbol(&self, name: &str, thread: Option<usize>) -> Result<u64, SymbolError> {
        let t = &self.inner;
        t.modules.address(name, thread, &t.threads, &t.mem)
    }

    fn is_thread_local(&self, name: &str) -> Option<bool> {
        self.inner.modules.lookup(name).map(|(_, sym)| sym.tls)
    }

    fn thread_count(&self) -> usize {
        self.inner.threads.len()
    }

    fn find_thread(&self, kind: u64, id: &[u8]) -> Option<usize> {
        crate::find_thread(&self.inner.threads, kind, id)
    }

    fn thread_id_bytes(&self, index: usize, kind: u64) -> Option<Vec<u8>> {
        crate::thread_id_bytes(&self.inner.threads, index, kind)
    }

    fn duplicate(&self) -> Option<Box<dyn Source>> {
        Some(Box::new(self.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A core of two segments and two mapped files, one of them under a segment:
    /// - `[0x1000, 0x2000)` dumped (core bytes 0..0x1000, all 0xC1),
    /// - `[0x2000, 0x3000)` same segment, not dumped, file-backed (file A, all 0xAA, 0x800 long),
    /// - `[0x5000, 0x6000)` a segment not dumped and anonymous (zeros),
    /// - `[0x8000, 0x9000)` no segment, file-backed (file B from offset 0x10, bytes 0, 1, 2...),
    /// - anything else unreadable.
    fn fixture(dir: &Path) -> CoreMem {
        let core = dir.join("core");
        std::fs::write(&core, vec![0xC1u8; 0x1000]).unwrap();
        let a = dir.join("a");
        std::fs::write(&a, vec![0xAAu8; 0x800]).unwrap();
        let b = dir.join("b");
        std::fs::write(&b, (0..=255u8).cycle().take(0x2000).collect::<Vec<_>>()).unwrap();
        let mapped = |start: u64, end: u64, offset: u64, p: &Path| MappedFile {
            mapping: Mapping {
                start,
                end,
                offset,
                path: Some(p.display().to_string()),
            },
            file: File::open(p).ok().map(FilePages::new),
        };
        CoreMem {
            path: core.clone(),
            core: FilePages::new(File::open(&core).unwrap()),
            segments: vec![
                Segment {
                    vaddr: 0x1000,
                    memsz: 0x2000,
                    filesz: 0x1000,
                    offset: 0,
                },
                Segment {
                    vaddr: 0x5000,
                    memsz: 0x1000,
                    filesz: 0,
                    offset: 0x1000,
                },
            ],
            files: vec![
                mapped(0x2000, 0x3000, 0, &a),
                mapped(0x8000, 0x9000, 0x10, &b),
            ],
        }
    }

    #[test]
    fn the_three_read_rules() {
        let dir = tempfile::tempdir().unwrap();
        let mem = fixture(dir.path());
        // Rule 1, and across into rule 3 (the file), and past the file's end (zeros).
        assert_eq!(
            mem.read_memory(0x1ffe, 4).unwrap(),
            [0xC1, 0xC1, 0xAA, 0xAA]
        );
        assert_eq!(mem.read_memory(0x27fe, 4).unwrap(), [0xAA, 0xAA, 0, 0]);
        // Rule 3 without a file: zeros.
        assert_eq!(mem.read_memory(0x5ff0, 16).unwrap(), [0; 16]);
        // Rule 2: no segment, the mapped file at its offset.
        assert_eq!(mem.read_memory(0x8000, 3).unwrap(), [0x10, 0x11, 0x12]);
        // Nothing there: an error naming the first unreadable address.
        let e = mem.read_memory(0x5ff0, 32).unwrap_err();
        assert!(e.contains("0x6000 is neither"), "{e}");
        assert!(mem.read_memory(0x9000, 1).is_err());
        assert!(mem.read_memory(0, 1).is_err());
        assert!(mem.read_memory(u64::MAX - 1, 4).is_err());
        assert!(mem.read_memory(0x1000, crate::MAX_READ + 1).is_err());
        assert_eq!(mem.read_memory(0x1000, 0).unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn a_vanished_mapped_file_is_an_error_where_it_is_needed() {
        let dir = tempfile::tempdir().unwrap();
        let mut mem = fixture(dir.path());
        mem.files[1].file = None;
        assert!(mem
            .read_memory(0x8000, 1)
            .unwrap_err()
            .contains("cannot be opened"));
        // Dumped bytes do not need it.
        assert_eq!(mem.read_memory(0x1000, 1).unwrap(), [0xC1]);
    }
}
