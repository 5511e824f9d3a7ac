//! Static facts about a library file, read before any of its code runs: ELF class and machine,
//! SONAME, DT_NEEDED, the exported `ompd_*` symbols and the file's sha256.

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
    let class = if file.is_64() { "ELF64" } else { "ELF32" }.to_string();
    let machine = format!("{:?}", file.architecture());
    let mut exported_ompd: Vec<String> = file
        .dynamic_symbols()
        .filter(|s| s.is_definition() && s.is_global())
        .filter_map(|s| s.name().ok().map(str::to_string))
        .filter(|n| n.starts_with("ompd_"))
        .collect();
    exported_ompd.sort();
    exported_ompd.dedup();
    let (mut soname, mut needed) = (None, Vec::new());
    if let Ok(elf) = ElfFile64::<object::Endianness>::parse(&*data) {
        let endian = elf.endian();
        let sections = elf.elf_section_table();
        if let Ok(Some((dyns, link))) = sections.dynamic(endian, &*data) {
            if let Ok(strings) = sections.strings(endian, &*data, link) {
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
    let sha256 = crate::vendors::sha256_file(path).map_err(|e| not_elf(e.to_string()))?;
    Ok(StaticInfo {
        class,
        machine,
        soname,
        needed,
        exported_ompd,
        sha256,
    })
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
    fn the_c_library_is_elf_and_needs_nothing_from_ompd() {
        let info = inspect(Path::new("/lib/x86_64-linux-gnu/libc.so.6")).unwrap();
        assert_eq!(info.class, "ELF64");
        assert!(info.exported_ompd.is_empty());
        assert_eq!(info.sha256.len(), 64);
    }
}
