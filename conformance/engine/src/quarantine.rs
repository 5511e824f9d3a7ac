//! Quarantine: an entry point that hung, or crashed reproducibly, in enough checks of a library
//! is not called again in that library's run. Each worker started afterwards gets the list
//! ([`crate::worker::Unit::quarantined`]); a check that would call one is reported without the
//! call, as `timeout` (or `crash`) saying "not run", and every check that does not call one still
//! runs and is judged. The report lists the quarantined entry points per library.
//!
//! A hang counts once per distinct check: each costs the per-call deadline, so the quarantine must
//! set in early even when one unit holds every check that calls the entry point. A crash costs
//! only a fresh worker, so it must also show in as many distinct units (target, arch, layout):
//! a library that crashes on one shape of target only (a deep nesting, one generated case) keeps
//! being judged on every other.
//!
//! Only checks that call with well-formed arguments against a well-formed target count
//! ([`ompd_checks::Check::input`] is false): a library may hang on a corrupted image or crash on
//! a NULL argument and still answer every proper call, so those findings quarantine nothing.

use crate::worker::Quarantined;
use ompd_report::{Outcome, QuarantinedEntry};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Why an entry point is quarantined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Cause {
    /// A call did not return within the per-call deadline.
    Hang,
    /// The worker died of a fatal signal in a call, again when the check was re-run alone.
    Crash,
}

impl Cause {
    /// The word reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Hang => "hang",
            Cause::Crash => "crash",
        }
    }

    fn verb(self) -> &'static str {
        match self {
            Cause::Hang => "hung",
            Cause::Crash => "crashed",
        }
    }

    fn outcome(self) -> Outcome {
        match self {
            Cause::Hang => Outcome::Timeout,
            Cause::Crash => Outcome::Crash,
        }
    }
}

/// What the run saw of one entry point and cause in one library.
#[derive(Debug, Default)]
struct Seen {
    checks: BTreeSet<String>,
    units: BTreeSet<String>,
    first: String,
}

/// Where an entry point hung or crashed: the check and its unit.
#[derive(Clone, Copy, Debug)]
pub struct Where<'a> {
    /// The check id.
    pub check: &'a str,
    /// The unit, as reports name its place (`serial/lp64-le/natural`).
    pub unit: &'a str,
}

/// What a library's run saw, by entry point and cause.
type ByEntryPoint = BTreeMap<(String, Cause), Seen>;

/// The quarantine of a run: shared by every unit, keyed by library path.
#[derive(Debug)]
pub struct Quarantine {
    after: usize,
    seen: Mutex<BTreeMap<PathBuf, ByEntryPoint>>,
}

impl Quarantine {
    /// A quarantine that sets in once an entry point hung in `after` distinct checks of a library,
    /// or crashed in `after` distinct checks and units; 0 never quarantines.
    pub fn new(after: usize) -> Quarantine {
        Quarantine {
            after,
            seen: Mutex::new(BTreeMap::new()),
        }
    }

    /// Books that `entry_point` hung or crashed (`cause`) in `at` in the library at `lib`;
    /// `first` says where and how, for the report.
    pub fn note(&self, lib: &Path, entry_point: &str, cause: Cause, at: Where, first: String) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let s = seen
            .entry(lib.to_path_buf())
            .or_default()
            .entry((entry_point.to_string(), cause))
            .or_default();
        if s.checks.is_empty() {
            s.first = first;
        }
        s.checks.insert(at.check.to_string());
        s.units.insert(at.unit.to_string());
    }

    /// The entry points quarantined in the library at `lib` now, with what the checks that would
    /// call them report.
    pub fn active(&self, lib: &Path) -> Vec<Quarantined> {
        self.entries(lib)
            .into_iter()
            .map(|(ep, cause, n, first)| Quarantined {
                note: format!(
                    "not run: {ep} {} in {n} earlier checks (first: {first})",
                    cause.verb()
                ),
                entry_point: ep,
                outcome: cause.outcome(),
            })
            .collect()
    }

    /// The report's list for the library at `lib`.
    pub fn report(&self, lib: &Path) -> Vec<QuarantinedEntry> {
        self.entries(lib)
            .into_iter()
            .map(|(entry_point, cause, checks, first)| QuarantinedEntry {
                entry_point,
                cause: cause.as_str().into(),
                checks,
                first,
            })
            .collect()
    }

    fn entries(&self, lib: &Path) -> Vec<(String, Cause, usize, String)> {
        if self.after == 0 {
            return Vec::new();
        }
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.get(lib)
            .into_iter()
            .flatten()
            .filter(|((_, cause), s)| {
                s.checks.len() >= self.after
                    && (*cause == Cause::Hang || s.units.len() >= self.after)
            })
            .map(|((ep, cause), s)| (ep.clone(), *cause, s.checks.len(), s.first.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_in_after_distinct_checks_of_one_library() {
        let q = Quarantine::new(2);
        let (a, b) = (Path::new("/a.so"), Path::new("/b.so"));
        let ep = "ompd_get_curr_task_handle";
        let note = |lib, cause, check, unit| {
            let first = format!("{check} on {unit}");
            q.note(lib, ep, cause, Where { check, unit }, first);
        };
        note(a, Cause::Hang, "task.x", "serial");
        note(a, Cause::Hang, "task.x", "nested");
        note(b, Cause::Hang, "task.y", "serial");
        assert!(q.active(a).is_empty(), "one check, twice, is one check");
        note(a, Cause::Crash, "task.y", "serial");
        note(a, Cause::Crash, "task.z", "serial");
        assert!(q.active(a).is_empty(), "crashes in one unit are one shape");
        note(a, Cause::Hang, "task.y", "serial");
        let active = q.active(a);
        assert_eq!(active.len(), 1);
        assert_eq!(active[0].outcome, Outcome::Timeout);
        assert_eq!(
            active[0].note,
            "not run: ompd_get_curr_task_handle hung in 2 earlier checks (first: task.x on serial)"
        );
        assert!(q.active(b).is_empty(), "per library");
        assert_eq!(q.report(a)[0].cause, "hang");
        assert_eq!(q.report(a)[0].checks, 2);
        note(a, Cause::Crash, "task.y", "nested");
        assert_eq!(q.active(a).len(), 2, "crashes in two checks and two units");
        assert!(Quarantine::new(0).active(a).is_empty());
    }
}
