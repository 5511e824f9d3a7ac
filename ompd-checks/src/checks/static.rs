//! Static checks: what the library file itself says, judged from [`StaticInfo`] by the supervisor
//! before any of the library's code runs (a library that runs code while loading can corrupt
//! nothing these checks look at).
//!
//! They are registered like every other check (ids, requirements, `--list`, coverage) with stage
//! [`Stage::Static`]; their verdicts come from [`judge`], never from a worker: a worker runs the
//! checks of one other stage, so the registered `run` function only reports that misuse.

use crate::{Check, Ctx, Profile, Severity, Stage, Verdict};
use ompd_loader::inspect::StaticInfo;
use ompd_report::Outcome;

/// The static checks.
pub static CHECKS: &[Check] = &[Check {
    id: "static.needed.no_openmp_runtime",
    requirements: &["OMPD-GEN-006"],
    summary: "the library does not list an OpenMP runtime in DT_NEEDED: it runs in the debugger, \
              never in the target, and must not drag a runtime into the debugger's process",
    severity: Severity::Should,
    entry_points: &[],
    stage: Stage::Static,
    since: Profile::Tr2,
    arg: "",
    run: judged_by_the_supervisor,
}];

/// The registered `run` of a static check: static checks are judged by [`judge`], from the file;
/// reaching this means a worker was asked to run one.
fn judged_by_the_supervisor(_: &mut Ctx, _: &'static str) -> Verdict {
    Verdict::new(
        Outcome::HarnessError,
        "static checks are judged from the file by the supervisor",
        "a worker was asked to run a static check",
        "",
    )
}

/// Sonames of OpenMP runtimes (LLVM, Intel, GNU), by prefix.
const RUNTIMES: &[&str] = &["libomp.so", "libiomp5.so", "libgomp.so", "libomp5.so"];

/// The verdict of static check `id` on a file.
pub fn judge(id: &str, info: &StaticInfo) -> Verdict {
    match id {
        "static.needed.no_openmp_runtime" => {
            let runtimes: Vec<&str> = info
                .needed
                .iter()
                .map(String::as_str)
                .filter(|n| RUNTIMES.iter().any(|r| n.starts_with(r)))
                .collect();
            let expected = "no OpenMP runtime among the DT_NEEDED entries";
            if runtimes.is_empty() {
                Verdict::new(Outcome::Pass, expected, "none", "")
            } else {
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
        }
        other => Verdict::new(
            Outcome::HarnessError,
            "a static check",
            format!("{other} is not a static check"),
            "",
        ),
    }
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
            sha256: String::new(),
        }
    }

    #[test]
    fn a_runtime_dependency_warns_and_none_passes() {
        let id = "static.needed.no_openmp_runtime";
        assert_eq!(judge(id, &info(&["libc.so.6"])).outcome, Outcome::Pass);
        let v = judge(id, &info(&["libomp.so.5", "libc.so.6"]));
        assert_eq!(v.outcome, Outcome::Warn);
        assert!(v.actual.contains("libomp.so.5"), "{}", v.actual);
        assert_eq!(judge(id, &info(&["libgomp.so.1"])).outcome, Outcome::Warn);
    }

    #[test]
    fn every_registered_static_check_has_a_judge() {
        for c in CHECKS {
            assert_ne!(
                judge(c.id, &info(&[])).outcome,
                Outcome::HarnessError,
                "{}",
                c.id
            );
        }
    }
}
