//! The self-description Intel's runtime (every release since 2020) keeps for the OMPD libraries
//! it shipped up to 2023.2, which read it instead of tables of their own: the ICV table
//! `ompd_icv_info`, the OMPT state table `ompt_state_info`, the API version string
//! `__kmp_version_omp_api`, and the `int __kmp_debug` they look up first. LLVM's libraries and
//! Intel's since 2024.2 never read them.
//!
//! Facts from the intel-openmp 2020.0.133 runtime, read from a live process under gdb: the ICV
//! table has the 18 entries of [`ICVS`] (no terminator) of `ompd_icv_info_t { ompd_icv_id_t id;
//! const char *name; ompd_scope_t scope; }` (24 bytes on x86-64: 0, 8, 16), the state table the
//! 21 OMPT 5.0 states, `ompt_state_undefined` first, of `ompt_state_info_t { const char
//! *state_name; int state_id; }` (16 bytes: 0, 8). Each struct's size, member sizes and offsets
//! are published in `ompd_sizeof__*` / `ompd_access__*` words like the runtime's other structs;
//! here they follow the target's natural alignment.

use super::Lowering;
use crate::model::Model;

/// The ICV table of the runtime: id, name and `ompd_scope_t` value (1 global, 2 address space,
/// 3 thread, 4 parallel, 6 task). Id 2 is unused.
pub const ICVS: &[(u64, &str, u64)] = &[
    (0, "undef", 1),
    (1, "dyn-var", 6),
    (3, "nthreads-var", 6),
    (4, "run-sched-var", 6),
    (5, "bind-var", 6),
    (6, "thread-limit-var", 2),
    (7, "max-active-levels-var", 6),
    (8, "active-levels-var", 4),
    (9, "levels-var", 4),
    (10, "cancel-var", 1),
    (11, "affinity-format-var", 2),
    (12, "default-device-var", 6),
    (13, "max-task-priority-var", 1),
    (14, "ompd-num-procs-var", 2),
    (15, "ompd-thread-num-var", 3),
    (16, "ompd-final-var", 6),
    (17, "ompd-implicit-var", 6),
    (18, "ompd-team-size-var", 4),
];

/// OMPT states the 5.0 runtime does not have (the 5.1 and 6.0 additions).
const NOT_IN_5_0: &[i64] = &[0x003, 0x004, 0x015, 0x016];

/// One member of a table struct: name, size and offset.
type Member = (&'static str, u64, u64);

impl Lowering {
    /// Writes the tables, the version string and `__kmp_debug`.
    pub(super) fn write_legacy_tables(&mut self, model: &Model) {
        self.global("__kmp_debug", 4, 0);
        let api = format!(
            "\0@(#) sim-target OMP API version: 5.0 ({})",
            model.omp_version
        );
        let a = self.cstring(&api, "__kmp_version_omp_api");
        self.symbols.insert("__kmp_version_omp_api".into(), a);
        self.icv_table();
        self.state_table();
    }

    fn icv_table(&mut self) {
        let p = self.arch.pointer as u64;
        let (members, size) = natural(&[("id", 8), ("name", p), ("scope", 4)]);
        self.describe("ompd_icv_info_t", &members, size);
        let base = self.alloc(size * ICVS.len() as u64, 8, "ompd_icv_info");
        self.symbols.insert("ompd_icv_info".into(), base);
        for (i, (id, name, scope)) in ICVS.iter().enumerate() {
            let entry = base + i as u64 * size;
            let name = self.cstring(name, "ompd_icv_info name");
            self.scalar(entry + members[0].2, 8, *id);
            self.ptr(entry + members[1].2, name);
            self.scalar(entry + members[2].2, 4, *scope);
        }
    }

    fn state_table(&mut self) {
        let p = self.arch.pointer as u64;
        let (members, size) = natural(&[("state_name", p), ("state_id", 4)]);
        self.describe("ompt_state_info_t", &members, size);
        let undefined = (ompd_abi::state::UNDEFINED, "ompt_state_undefined");
        let states: Vec<(i64, &str)> = std::iter::once(undefined)
            .chain(ompd_abi::state::ALL.iter().copied())
            .filter(|(v, _)| !NOT_IN_5_0.contains(v))
            .collect();
        let base = self.alloc(size * states.len() as u64, p, "ompt_state_info");
        self.symbols.insert("ompt_state_info".into(), base);
        for (i, (id, name)) in states.iter().enumerate() {
            let entry = base + i as u64 * size;
            let name = self.cstring(name, "ompt_state_info name");
            self.ptr(entry + members[0].2, name);
            self.scalar(entry + members[1].2, 4, *id as u64);
        }
    }

    /// The `ompd_sizeof__` and `ompd_access__` words of struct `ty`.
    fn describe(&mut self, ty: &str, members: &[Member], size: u64) {
        self.global(&format!("ompd_sizeof__{ty}"), 8, size);
        for (name, msize, offset) in members {
            self.global(&format!("ompd_sizeof__{ty}__{name}"), 8, *msize);
            self.global(&format!("ompd_access__{ty}__{name}"), 8, *offset);
        }
    }
}

/// Members (name, size) laid out at their natural alignment: each member with its offset, and
/// the struct's size.
fn natural(members: &[(&'static str, u64)]) -> (Vec<Member>, u64) {
    let mut offset: u64 = 0;
    let mut out = Vec::new();
    for (name, size) in members {
        offset = offset.next_multiple_of(*size);
        out.push((*name, *size, offset));
        offset += size;
    }
    let align = members.iter().map(|m| m.1).max().unwrap_or(1);
    (out, offset.next_multiple_of(align))
}

#[cfg(test)]
mod tests {
    use super::natural;

    #[test]
    fn tables_are_laid_out_as_in_the_2020_runtime_on_x86_64() {
        let (m, size) = natural(&[("id", 8), ("name", 8), ("scope", 4)]);
        assert_eq!((m[1].2, m[2].2, size), (8, 16, 24));
        let (m, size) = natural(&[("state_name", 8), ("state_id", 4)]);
        assert_eq!((m[1].2, size), (8, 16));
        let (m, size) = natural(&[("state_name", 4), ("state_id", 4)]);
        assert_eq!((m[1].2, size), (4, 8));
    }
}
