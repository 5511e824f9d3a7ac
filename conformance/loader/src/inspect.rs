//! Static facts about a library file, read before any of its code runs: ELF class and machine,
//! SONAME, DT_NEEDED, the exported `ompd_*` symbols, the global C++ `operator new`/`delete`
//! forms it exports or imports, and the file's sha256.

use object::read::elf::{Dyn, ElfFile64};
use object::{Object, ObjectSymbol};
use std::path::Path;

/// What the file says about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaticInfo {
    /// `ELF64`, `ELF32`, or the format found.
    pub class: String,
    /// Machine architecture.
    pub machine: String,
    /// DT_SONAME.
    pub soname: Option<String>,
    /// DT_NEEDED entries, in order.
    pub needed: Vec<String>,
    /// Defined, global `ompd_*` dynamic symbols, sorted.
    pub exported_ompd: Vec<String>,
    /// How many defined, global dynamic symbols the file exports in all.
    pub exports: usize,
    /// The first few of them, sorted (what a file that is no OMPD library exports instead).
    pub exports_sample: Vec<String>,
    /// The global C++ `operator new`/`delete` forms (mangled names starting `_Znw`, `_Zna`,
    /// `_Zdl`, `_Zda`) the file exports: defined dynamic symbols of global or weak binding and
    /// default or protected visibility, which the dynamic linker may bind other objects' calls
    /// to; sorted.
    pub exported_operators: Vec<String>,
    /// The forms it imports (undefined dynamic symbols): it calls the process's global operators.
    pub imported_operators: Vec<String>,
    /// sha256 of the file (hex).
    pub sha256: String,
}

/// Why a file could not be inspected.
#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    /// Unreadable.
    #[error("cannot read {path}: {source}")]
    Io {
        /// File.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// An ELF shared object for another machine or class than this harness.
    #[error("{path} is an {found} shared object; this harness runs as {host} and can only load libraries built for that (use a harness built for {found})")]
    OtherTarget {
        /// File.
        path: String,
        /// The file's class and machine.
        found: String,
        /// The harness's class and machine.
        host: String,
    },
    /// An ELF shared object that exports no `ompd_*` symbol: no OMPD library.
    #[error("{path} is no OMPD library: it exports no ompd_* symbol ({found})")]
    NotOmpd {
        /// File.
        path: String,
        /// What it exports instead.
        found: String,
    },
    /// Not an ELF shared object we can load.
    #[error("{path} is not a loadable ELF shared object: {why}")]
    NotElf {
        /// File.
        path: String,
        /// Cause.
        why: String,
    },
}

/// Reads the static facts of `path`.
pub fn inspect(path: &Path) -> Result<StaticInfo, InspectError> {
    let shown = path.display().to_string();
    let data = std::fs::read(path).map_err(|source| InspectError::Io {
        path: shown.clone(),
        source,
    })?;
    let not_elf = |why: String| InspectError::NotElf {
        path: shown.clone(),
        why,
    };
    let file = object::File::parse(&*data).map_err(|e| not_elf(e.to_string()))?;
    if file.format() != object::BinaryFormat::Elf {
        return Err(not_elf(format!("format {:?}", file.format())));
    }
    if file.kind() != object::ObjectKind::Dynamic {
        return Err(not_elf(format!(
            "it is an ELF {:?} file, not a shared object",
            file.kind()
        )));
    }
    let class = if file.is_64() { "ELF64" } else { "ELF32" }.to_string();
    let machine = format!("{:?}", file.architecture());
    if let Some(host) = host() {
        let found = format!("{class} {machine}");
        if found != host {
            return Err(InspectError::OtherTarget {
                path: shown,
                found,
                host,
            });
        }
    }
    let mut exported: Vec<String> = file
        .dynamic_symbols()
        .filter(|s| s.is_definition() && s.is_global())
        .filter_map(|s| s.name().ok().map(str::to_string))
        .collect();
    exported.sort();
    exported.dedup();
    let exported_ompd: Vec<String> = exported
        .iter()
        .filter(|n| n.starts_with("ompd_"))
        .cloned()
        .collect();
    let (exported_operators, imported_operators) = operators(&file);
    let (soname, needed) = soname_and_needed(&data);
    // The bytes parsed above are the bytes hashed: no second read of the file.
    let sha256 = ompd_vendors::sha256_bytes(&data);
    Ok(StaticInfo {
        class,
        machine,
        soname,
        needed,
        exported_ompd,
        exports: exported.len(),
        exports_sample: exported.into_iter().take(3).collect(),
        exported_operators,
        imported_operators,
        sha256,
    })
}

/// DT_SONAME and the DT_NEEDED entries (in order) of an ELF64 file's dynamic section.
fn soname_and_needed(data: &[u8]) -> (Option<String>, Vec<String>) {
    let (mut soname, mut needed) = (None, Vec::new());
    if let Ok(elf) = ElfFile64::<object::Endianness>::parse(data) {
        let endian = elf.endian();
        let sections = elf.elf_section_table();
        if let Ok(Some((dyns, link))) = sections.dynamic(endian, data) {
            if let Ok(strings) = sections.strings(endian, data, link) {
                for d in dyns {
                    let tag = d.tag(endian);
                    let Ok(s) = d.string(endian, strings) else {
                        continue;
                    };
                    let s = String::from_utf8_lossy(s).into_owned();
                    if tag == object::elf::DT_NEEDED {
                        needed.push(s);
                    } else if tag == object::elf::DT_SONAME {
                        soname = Some(s);
                    }
                }
            }
        }
    }
    (soname, needed)
}

/// True for the mangled name of a global `operator new`, `new[]`, `delete` or `delete[]`.
pub fn is_global_operator(name: &str) -> bool {
    ["_Znw", "_Zna", "_Zdl", "_Zda"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// The global operator new/delete forms `file` exports and those it imports, each sorted.
fn operators(file: &object::File) -> (Vec<String>, Vec<String>) {
    let (mut exported, mut imported) = (Vec::new(), Vec::new());
    for s in file.dynamic_symbols() {
        let Ok(name) = s.name() else { continue };
        if !is_global_operator(name) {
            continue;
        }
        if s.is_undefined() {
            imported.push(name.to_string());
        } else if s.is_definition() && s.is_global() && exported_visibility(&s) {
            exported.push(name.to_string());
        }
    }
    for list in [&mut exported, &mut imported] {
        list.sort();
        list.dedup();
    }
    (exported, imported)
}

/// True when an ELF symbol's visibility lets other objects bind to it (default or protected).
fn exported_visibility(s: &object::Symbol) -> bool {
    match s.flags() {
        object::SymbolFlags::Elf { st_other, .. } => {
            let v = st_other.visibility();
            v == object::elf::STV_DEFAULT || v == object::elf::STV_PROTECTED
        }
        _ => true,
    }
}

/// Refuses a file that exports no `ompd_*` symbol, saying what it exports instead: nothing of it
/// is run, and no check can pass on it.
pub fn require_ompd(path: &Path, info: &StaticInfo) -> Result<(), InspectError> {
    if !info.exported_ompd.is_empty() {
        return Ok(());
    }
    let found = match info.exports {
        0 => "it exports no dynamic symbol at all".to_string(),
        n => format!(
            "{n} other dynamic symbols, e.g. {}{}",
            info.exports_sample.join(", "),
            info.soname
                .as_ref()
                .map_or(String::new(), |s| format!("; SONAME {s}"))
        ),
    };
    Err(InspectError::NotOmpd {
        path: path.display().to_string(),
        found,
    })
}

/// Reads what an inspection needs of this process once (its own ELF class and machine), so
/// that the processes forked after (a zygote's workers) do not each read it again.
pub fn prepare() {
    let _ = host();
}

/// This harness's own ELF class and machine (`ELF64 X86_64`), read from its executable.
fn host() -> Option<String> {
    static HOST: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    HOST.get_or_init(|| {
        let data = std::fs::read("/proc/self/exe").ok()?;
        let f = object::File::parse(&*data).ok()?;
        let class = if f.is_64() { "ELF64" } else { "ELF32" };
        Some(format!("{class} {:?}", f.architecture()))
    })
    .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_file_is_not_elf() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.so");
        std::fs::write(&p, "hello").unwrap();
        let e = inspect(&p).unwrap_err().to_string();
        assert!(e.contains("not a loadable ELF shared object"), "{e}");
    }

    #[test]
    fn an_object_file_is_not_a_shared_object() {
        let d = tempfile::tempdir().unwrap();
        let c = d.path().join("x.c");
        let o = d.path().join("x.o");
        std::fs::write(&c, "int ompd_x(void) { return 0; }\n").unwrap();
        let ok = std::process::Command::new("cc")
            .arg("-c")
            .arg(&c)
            .arg("-o")
            .arg(&o)
            .status()
            .unwrap();
        assert!(ok.success());
        let e = inspect(&o).unwrap_err().to_string();
        assert!(e.contains("not a shared object"), "{e}");
    }

    #[test]
    fn a_library_of_another_class_is_refused_by_name() {
        let d = tempfile::tempdir().unwrap();
        let c = d.path().join("x.c");
        let so = d.path().join("lib32.so");
        std::fs::write(&c, "int ompd_x(void) { return 0; }\n").unwrap();
        // An ELF32 object of this machine needs a multilib compiler; the test needs only the
        // header, so write a minimal ELF32 shared-object header by hand when cc cannot.
        let built = std::process::Command::new("cc")
            .args(["-m32", "-shared", "-fPIC", "-nostdlib", "-o"])
            .arg(&so)
            .arg(&c)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !built {
            let mut h = vec![0u8; 52];
            h[..4].copy_from_slice(b"\x7fELF");
            h[4] = 1; // ELFCLASS32
            h[5] = 1; // little-endian
            h[6] = 1; // EV_CURRENT
            h[16] = 3; // ET_DYN
            h[18] = 3; // EM_386
            h[20] = 1; // e_version
            h[40] = 52; // e_ehsize
            std::fs::write(&so, h).unwrap();
        }
        let e = inspect(&so).unwrap_err().to_string();
        assert!(
            e.contains("ELF32") && e.contains("this harness runs as ELF64"),
            "{e}"
        );
    }

    #[test]
    fn a_library_without_ompd_symbols_is_refused_saying_what_it_exports() {
        let p = Path::new("/lib/x86_64-linux-gnu/libm.so.6");
        let info = inspect(p).unwrap();
        let e = require_ompd(p, &info).unwrap_err().to_string();
        assert!(e.contains("libm.so.6 is no OMPD library"), "{e}");
        assert!(
            e.contains("other dynamic symbols, e.g. ") && e.contains("SONAME libm.so.6"),
            "{e}"
        );
        assert!(!e.contains('\n'));
    }

    #[test]
    fn the_c_library_is_elf_and_needs_nothing_from_ompd() {
        let info = inspect(Path::new("/lib/x86_64-linux-gnu/libc.so.6")).unwrap();
        assert_eq!(info.class, "ELF64");
        assert!(info.exported_ompd.is_empty());
        let libc = Path::new("/lib/x86_64-linux-gnu/libc.so.6");
        assert_eq!(info.sha256, ompd_vendors::sha256_file(libc).unwrap());
    }
}
