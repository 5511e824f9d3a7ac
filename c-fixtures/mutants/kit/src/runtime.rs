//! Runtime mutants: a copy of a real OpenMP runtime, the libraries' own, whose symbol table
//! (`.symtab`, where the runtimes keep `ompd_dll_locations*` and `ompd_bp_*`) no longer names a
//! symbol, or lets two breakpoints trade addresses ([`RuntimePatch`]). The code is untouched: a
//! debugger reading the copy's symbols is misled as it would be by a runtime built wrong, and the
//! `runtime.*` checks must say so.

use object::read::elf::{ElfFile64, SectionHeader, Sym};
use object::Endianness;
use ompd_mutants::table::RuntimePatch;
use std::path::{Path, PathBuf};

/// The runtime the runtime mutants copy: the newest Intel release. On the clang build it passes
/// every `runtime.*` check, and its OpenMP version (202111) is the reference 5.2 build's API
/// version, so the clean baseline passes `lib.api_version.matches_runtime` on it.
pub const BASE_RUNTIME: &str = "intel-2026.2";

/// The base runtime's file in the vendor cache `cache`.
pub fn base(cache: &Path) -> Result<PathBuf, String> {
    let (found, missing) = fixture_protocol::find_runtimes(cache);
    found
        .into_iter()
        .find(|r| r.name == BASE_RUNTIME)
        .map(|r| r.library)
        .ok_or_else(|| {
            let why = missing
                .iter()
                .find(|(n, _)| n == BASE_RUNTIME)
                .map_or("not in the vendor cache", |(_, w)| w.as_str());
            format!(
                "the runtime mutants need {BASE_RUNTIME}'s runtime: {why} (cargo xtask vendors)"
            )
        })
}

/// Copies the runtime `base` into `dir` (as `libiomp5.so`) with `patch` applied; returns the copy.
pub fn stage(base: &Path, dir: &Path, patch: Option<RuntimePatch>) -> Result<PathBuf, String> {
    let mut bytes =
        std::fs::read(base).map_err(|e| format!("cannot read {}: {e}", base.display()))?;
    if let Some(p) = patch {
        apply(&mut bytes, p).map_err(|e| format!("{}: {e}", base.display()))?;
    }
    let copy = dir.join("libiomp5.so");
    std::fs::write(&copy, bytes).map_err(|e| format!("cannot write {}: {e}", copy.display()))?;
    Ok(copy)
}

/// One `.symtab` entry: its file offset and its name's.
struct Entry {
    at: usize,
    name_at: usize,
}

/// Size of an ELF64 symbol; `st_value` and `st_size` are its last 16 bytes.
const SYM64: usize = 24;

/// Applies `patch` to the ELF64 file `bytes`.
fn apply(bytes: &mut [u8], patch: RuntimePatch) -> Result<(), String> {
    match patch {
        RuntimePatch::Hide(name) => {
            let e = entry(bytes, name)?;
            bytes[e.name_at] = b'x';
        }
        RuntimePatch::Swap(a, b) => {
            let (a, b) = (entry(bytes, a)?, entry(bytes, b)?);
            for i in 8..SYM64 {
                bytes.swap(a.at + i, b.at + i);
            }
        }
    }
    Ok(())
}

/// The `.symtab` entry called `name`.
fn entry(bytes: &[u8], name: &str) -> Result<Entry, String> {
    let file = ElfFile64::<Endianness>::parse(bytes).map_err(|e| e.to_string())?;
    let endian = file.endian();
    let sections = file.elf_section_table();
    let symtab = sections
        .symbols(endian, bytes, object::elf::SHT_SYMTAB)
        .map_err(|e| e.to_string())?;
    let offset = |index| {
        sections
            .section(index)
            .map(|s| s.sh_offset(endian) as usize)
            .map_err(|e| e.to_string())
    };
    let (table_at, strings_at) = (offset(symtab.section())?, offset(symtab.string_section())?);
    let index = symtab
        .symbols()
        .iter()
        .position(|s| symtab.symbol_name(endian, s) == Ok(name.as_bytes()))
        .ok_or_else(|| format!("no {name} in its .symtab"))?;
    Ok(Entry {
        at: table_at + index * SYM64,
        name_at: strings_at + symtab.symbols()[index].st_name(endian) as usize,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kit's own binary is an ELF64 file with a `.symtab`: hiding and swapping its `main`
    /// and another symbol shows the patch lands where the symbol table says.
    #[test]
    fn hide_and_swap_edit_the_named_entries() {
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let names = ["main", "_start"];
        let before: Vec<Entry> = names.iter().map(|n| entry(&me, n).unwrap()).collect();
        let mut swapped = me.clone();
        apply(&mut swapped, RuntimePatch::Swap(names[0], names[1])).unwrap();
        assert_eq!(
            swapped[before[0].at + 8..before[0].at + SYM64],
            me[before[1].at + 8..before[1].at + SYM64]
        );
        let mut hidden = me.clone();
        apply(&mut hidden, RuntimePatch::Hide("main")).unwrap();
        assert!(entry(&hidden, "main").is_err());
        assert!(entry(&hidden, "xain").is_ok());
    }
}
