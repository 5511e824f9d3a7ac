//! An entry is as narrow as the checks it names: it never accepts both a pass and the finding a
//! check reaches at its severity (a failure for a MUST, a warning for a SHOULD or an ambiguous
//! text), for that would judge nothing; and its reason speaks of the targets it covers.

use super::Expectation;
use ompd_checks::{Check, Severity};
use ompd_report::{glob, Outcome};

/// Words that name what only a simulated target has: a layout, an arch other than the host's,
/// a generated image. A reason of an entry that covers real targets alone must not use them.
const SIMULATED_ONLY: [&str; 8] = [
    "image",
    "randomly placed",
    "big-endian",
    "32-bit",
    "layout",
    "lp64",
    "ilp32",
    "random:",
];

/// Why `e` is refused, if it is.
pub(super) fn refusal(e: &Expectation) -> Option<String> {
    let real_only = !e.target.matches("sim");
    if e.nondeterministic && !real_only {
        return Some(format!(
            "entry for {} is marked nondeterministic, but covers the simulated target, whose \
             answers are the same every run: name the places where it fails",
            e.check
        ));
    }
    if let Some(c) = judges_nothing(e) {
        if !e.nondeterministic {
            return Some(format!(
                "entry for {} accepts {} on {}, a pass and the finding it reaches at its \
                 severity: it judges nothing; narrow it to the places of each outcome, or, on a \
                 real target whose answers vary from run to run, mark it nondeterministic",
                e.check, e.outcome, c.id
            ));
        }
    }
    let word = SIMULATED_ONLY.iter().find(|w| e.reason.contains(*w));
    match word {
        Some(w) if real_only => Some(format!(
            "entry for {} covers real targets only, yet its reason speaks of \"{w}\", which only \
             a simulated target has: say what the library does on the real target",
            e.check
        )),
        _ => None,
    }
}

/// The first check `e` names whose pass and finding it both accepts.
fn judges_nothing(e: &Expectation) -> Option<&'static Check> {
    if !e.outcome.allows(Outcome::Pass) {
        return None;
    }
    ompd_checks::registry()
        .iter()
        .copied()
        .filter(|c| e.check.patterns().iter().any(|g| glob(g, c.id)))
        .find(|c| e.outcome.allows(finding(c.severity)))
}

/// The outcome of a violation of a check of `severity` (a MUST from some profile fails there).
fn finding(severity: Severity) -> Outcome {
    match severity {
        Severity::Must | Severity::MustFrom(_) => Outcome::Fail,
        Severity::Should | Severity::Ambig => Outcome::Warn,
    }
}

#[cfg(test)]
mod tests {
    use super::super::File;
    use std::path::Path;

    /// The refusal of a file with one entry (`check`, `outcome` and the other fields as TOML).
    fn refusal(entry: &str) -> Option<String> {
        let text = format!("vendor='x'\nlibraries=['x']\n[[expect]]\nreason='r'\n{entry}\n");
        File::parse(&text, Path::new("x.toml"))
            .err()
            .map(|e| e.to_string())
    }

    #[test]
    fn an_entry_that_accepts_a_pass_and_the_finding_is_refused() {
        let must = "check='thread.handle.by_pthread_id'";
        let should = "check='lib.inventory.no_unknown_ompd_symbols'";
        for (entry, word) in [
            (format!("{must}\noutcome=['pass','fail']"), "judges nothing"),
            (
                format!("{must}\noutcome=['pass','fail','skip']"),
                "judges nothing",
            ),
            (
                format!("{should}\noutcome=['pass','warn']"),
                "judges nothing",
            ),
            (
                format!("{must}\noutcome=['pass','fail']\nnondeterministic=true"),
                "simulated target",
            ),
        ] {
            let got = refusal(&entry).unwrap_or_default();
            assert!(got.contains(word), "{entry}: {got}");
        }
        for entry in [
            format!("{must}\noutcome=['pass','warn']"),
            format!("{must}\noutcome=['fail','skip']"),
            format!("{should}\noutcome=['skip','warn']"),
            format!("{must}\noutcome=['pass','fail']\nnondeterministic=true\ntarget='live'"),
        ] {
            assert_eq!(refusal(&entry), None, "{entry}");
        }
    }

    #[test]
    fn a_real_target_entry_s_reason_speaks_of_no_layout() {
        let entry = "check='thread.handle.by_pthread_id'\noutcome='fail'\ntarget='live'";
        let text = format!("vendor='x'\nlibraries=['x']\n[[expect]]\n{entry}\n");
        for (reason, refused) in [("on the packed layout it fails", true), ("it fails", false)] {
            let got = File::parse(&format!("{text}reason='{reason}'\n"), Path::new("x.toml"));
            assert_eq!(got.is_err(), refused, "{reason}");
        }
        let sim = format!("{text}reason='on the packed layout it fails'\ntarget='sim'\n");
        assert!(File::parse(&sim.replace("target='live'\n", ""), Path::new("x.toml")).is_ok());
    }
}
