//! Static checks: what the library file itself says, judged from [`StaticInfo`] by the supervisor
//! before any of the library's code runs (a library that runs code while loading can corrupt
//! nothing these checks look at).
//!
//! They are registered like every other check (ids, requirements, `--list`, coverage) with stage
//! [`Stage::Static`]; their `run` is a [`Run::File`]: the supervisor judges it from the file,
//! never a worker.

use crate::{Check, Profile, Run, Severity, Stage, Verdict};
use ompd_loader::inspect::StaticInfo;
use ompd_report::Outcome;

/// The static checks.
pub static CHECKS: &[Check] = &[
    Check {
        at: crate::here!(),
        id: "static.needed.no_openmp_runtime",
        requirements: &["OMPD-GEN-006"],
        summary:
            "the library does not list an OpenMP runtime in DT_NEEDED: it runs in the debugger, \
              never in the target, and must not drag a runtime into the debugger's process",
        severity: Severity::Should,
        entry_points: &[],
        stage: Stage::Static,
        since: Profile::Draft2014,
        real: None,
        run: Run::File(no_openmp_runtime),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "static.exports.no_global_new_delete",
        requirements: &["OMPD-MEM-002"],
        summary: "the library's dynamic symbol table defines no global operator new or delete \
              (_Znw*, _Zna*, _Zdl*, _Zda*) of global or weak binding and default or protected \
              visibility: its overloads, if any, stay its own and cannot interpose the tool's",
        severity: Severity::Must,
        entry_points: &[],
        stage: Stage::Static,
        since: Profile::Tr2,
        real: None,
        run: Run::File(no_global_new_delete),
        ..Check::TARGET
    },
];

/// `static.exports.no_global_new_delete`: no exported global operator new/delete.
fn no_global_new_delete(info: &StaticInfo) -> Verdict {
    let expected = "no global operator new or delete among the exported dynamic symbols";
    let imports = if info.imported_operators.is_empty() {
        String::new()
    } else {
        format!(
            "; it imports {} (the process's operators, whose calls the heap watch judges)",
            info.imported_operators.join(", ")
        )
    };
    if info.exported_operators.is_empty() {
        return Verdict::new(Outcome::Pass, expected, format!("none{imports}"), "");
    }
    Verdict::new(
        Outcome::Fail,
        expected,
        format!("exports {}", info.exported_operators.join(", ")),
        format!(
            "a tool that loads the library into its global scope may bind its own new/delete to these{imports}"
        ),
    )
}

/// Sonames of OpenMP runtimes (LLVM, Intel, GNU), by prefix.
const RUNTIMES: &[&str] = &["libomp.so", "libiomp5.so", "libgomp.so", "libomp5.so"];

/// `static.needed.no_openmp_runtime`: no OpenMP runtime among the DT_NEEDED entries.
fn no_openmp_runtime(info: &StaticInfo) -> Verdict {
    let runtimes: Vec<&str> = info
        .needed
        .iter()
        .map(String::as_str)
        .filter(|n| RUNTIMES.iter().any(|r| n.starts_with(r)))
        .collect();
    let expected = "no OpenMP runtime among the DT_NEEDED entries";
    if runtimes.is_empty() {
        return Verdict::new(Outcome::Pass, expected, "none", "");
    }
    Verdict::new(
        Outcome::Warn,
        expected,
        format!("DT_NEEDED lists {}", runtimes.join(", ")),
        format!(
            "loading the library loads the runtime into the debugger (DT_NEEDED: {})",
            info.needed.join(", ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(needed: &[&str]) -> StaticInfo {
        StaticInfo {
            class: "ELF64".into(),
            machine: "X86_64".into(),
            soname: None,
            needed: needed.iter().map(|s| s.to_string()).collect(),
            exported_ompd: vec![],
            exports: 0,
            exports_sample: vec![],
            exported_operators: vec![],
            imported_operators: vec![],
            sha256: String::new(),
        }
    }

    #[test]
    fn a_runtime_dependency_warns_and_none_passes() {
        let judge = no_openmp_runtime;
        assert_eq!(judge(&info(&["libc.so.6"])).outcome, Outcome::Pass);
        let v = judge(&info(&["libomp.so.5", "libc.so.6"]));
        assert_eq!(v.outcome, Outcome::Warn);
        assert!(v.actual.contains("libomp.so.5"), "{}", v.actual);
        assert_eq!(judge(&info(&["libgomp.so.1"])).outcome, Outcome::Warn);
    }

    #[test]
    fn an_exported_operator_fails_and_an_imported_one_passes() {
        let mut i = info(&[]);
        i.imported_operators = vec!["_Znwm".into()];
        let v = no_global_new_delete(&i);
        assert_eq!(v.outcome, Outcome::Pass);
        assert!(v.actual.contains("imports _Znwm"), "{}", v.actual);
        i.exported_operators = vec!["_ZdlPv".into(), "_Znwm".into()];
        let v = no_global_new_delete(&i);
        assert_eq!(v.outcome, Outcome::Fail);
        assert!(v.actual.contains("_ZdlPv, _Znwm"), "{}", v.actual);
    }

    #[test]
    fn every_static_check_is_judged_from_the_file() {
        for c in CHECKS {
            assert!(matches!(c.run, Run::File(_)), "{}", c.id);
        }
    }
}
