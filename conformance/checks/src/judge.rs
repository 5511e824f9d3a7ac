//! Judging: [`Judge`] folds the facts a check establishes into a verdict; the helpers judge one
//! call each.

use crate::{Ctx, Severity, Verdict};
use ompd_abi::Rc;
use ompd_loader::library::{Call, Fail};
use ompd_report::Outcome;

/// Collects the facts a check establishes over many items and folds them into a verdict.
#[derive(Debug)]
pub struct Judge {
    expected: String,
    severity: Severity,
    cites: &'static [&'static str],
    /// A deviation allowed by a requirement the check does not cite: the suite's defect.
    uncited: Option<String>,
    failures: Vec<String>,
    allowed: Vec<String>,
    unsupported: Vec<String>,
    checked: usize,
}

impl Judge {
    /// Starts judging against `expected` (the requirement in words) at the ctx's severity.
    pub fn new(ctx: &Ctx, expected: impl Into<String>) -> Judge {
        Judge {
            expected: expected.into(),
            severity: ctx.severity,
            cites: ctx.cites,
            uncited: None,
            failures: Vec::new(),
            allowed: Vec::new(),
            unsupported: Vec::new(),
            checked: 0,
        }
    }

    /// Records one fact: `ok`, or a failure described by `what`.
    pub fn expect(&mut self, ok: bool, what: impl FnOnce() -> String) {
        self.checked += 1;
        if !ok {
            self.failures.push(what());
        }
    }

    /// Records a fact that held.
    pub fn holds(&mut self) {
        self.checked += 1;
    }

    /// Records a deviation the requirement `by` allows (graded lenient): a warning. `by` must be
    /// one the check cites; otherwise the verdict is a harness error naming it (the suite would
    /// excuse the library by a text it does not judge by).
    pub fn allowed(&mut self, by: &'static str, what: impl Into<String>) {
        self.checked += 1;
        let what = what.into();
        if !self.cites.contains(&by) && self.uncited.is_none() {
            self.uncited = Some(format!(
                "the check allows a deviation by {by}, which it does not cite: {what}"
            ));
        }
        self.allowed.push(what);
    }

    /// Records that the library declined in a way the spec permits (`ompd_rc_unsupported`).
    pub fn unsupported(&mut self, what: impl Into<String>) {
        self.checked += 1;
        self.unsupported.push(what.into());
    }

    /// Records a failure outright.
    pub fn fail(&mut self, what: impl Into<String>) {
        self.checked += 1;
        self.failures.push(what.into());
    }

    /// The failures recorded so far (a scratch judge's, to report again elsewhere).
    pub(crate) fn into_failures(self) -> Vec<String> {
        self.failures
    }

    /// Takes in the facts `other` established, each message led by `label` (one of several
    /// items judged apart).
    pub fn absorb(&mut self, other: Judge, label: &str) {
        let led = |v: Vec<String>| v.into_iter().map(move |m| format!("{label}: {m}"));
        self.checked += other.checked;
        self.uncited = self.uncited.take().or(other.uncited);
        self.failures.extend(led(other.failures));
        self.allowed.extend(led(other.allowed));
        self.unsupported.extend(led(other.unsupported));
    }

    /// [`Judge::verdict`], but a judge that established no fact skips saying `why` (what left
    /// nothing to judge), not with the generic reason.
    pub fn verdict_or_skip(self, why: impl FnOnce() -> String) -> Verdict {
        if self.checked == 0 {
            return Verdict::skip(why());
        }
        self.verdict()
    }

    /// Folds the facts: any failure fails (warns for SHOULD/ambiguous checks), then any allowed
    /// deviation warns, then all-unsupported is not-supported, else pass. Nothing checked skips.
    pub fn verdict(self) -> Verdict {
        let summarize = |v: &[String]| {
            let mut s = v[0].clone();
            if v.len() > 1 {
                s.push_str(&format!(" (and {} more)", v.len() - 1));
            }
            s
        };
        let n = self.checked;
        if let Some(defect) = self.uncited {
            return Verdict::harness_error(defect);
        }
        if n == 0 {
            return Verdict::skip("nothing to check in this scenario");
        }
        if !self.failures.is_empty() {
            let outcome = if self.severity == Severity::Must {
                Outcome::Fail
            } else {
                Outcome::Warn
            };
            let detail = format!("{} of {n} facts violated", self.failures.len());
            return Verdict::new(outcome, self.expected, summarize(&self.failures), detail);
        }
        if !self.allowed.is_empty() {
            let detail = format!(
                "{} of {n} facts used an allowed alternative",
                self.allowed.len()
            );
            return Verdict::new(
                Outcome::Warn,
                self.expected,
                summarize(&self.allowed),
                detail,
            );
        }
        if !self.unsupported.is_empty() && self.unsupported.len() == n {
            return Verdict::new(
                Outcome::NotSupported,
                self.expected,
                summarize(&self.unsupported),
                "",
            );
        }
        Verdict::new(Outcome::Pass, self.expected, format!("{n} facts hold"), "")
    }
}

/// Describes a call result for messages.
pub fn describe<T: std::fmt::Debug>(c: &Call<T>) -> String {
    match c {
        Ok(v) => format!("ok {v:?}"),
        Err(e) => e.to_string(),
    }
}

/// Judges a call that must fail with `want` (strict), where the codes in `lenient` are accepted
/// with a warning, each by the requirement named beside it; `ok` or a crash-free other code
/// fails.
pub fn expect_rc<T>(
    j: &mut Judge,
    what: &str,
    got: Call<T>,
    want: Rc,
    lenient: &[(Rc, &'static str)],
) {
    match got {
        Err(Fail::Rc(rc)) if rc == want => j.holds(),
        Err(Fail::Rc(rc)) => match lenient.iter().find(|(l, _)| *l == rc) {
            Some((_, by)) => j.allowed(by, format!("{what}: {rc} (spec prefers {want})")),
            None => j.fail(format!("{what}: {rc}, expected {want}")),
        },
        Err(Fail::Missing(n)) => j.fail(format!("{what}: {n} is not exported")),
        Err(e) => j.fail(format!("{what}: {e}, expected {want}")),
        Ok(_) => j.fail(format!("{what}: ok, expected {want}")),
    }
}

/// Judges the refusal of a getter whose answer may need state tracking: with the model's
/// runtime tracking no state `ompd_rc_needs_state_tracking` holds (OMPD-RC-008), with tracking
/// on it fails like every other code.
pub fn refused(j: &mut Judge, ctx: &Ctx, what: &str, e: &Fail) {
    match e {
        Fail::Rc(rc) if *rc == Rc::NEEDS_STATE_TRACKING && !ctx.model.debug_enabled() => j.holds(),
        Fail::Rc(rc) if *rc == Rc::NEEDS_STATE_TRACKING => j.fail(format!(
            "{what}: needs_state_tracking, but the runtime tracks state (ompd_state {})",
            ctx.model.ompd_state
        )),
        e => j.fail(format!("{what}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge(severity: Severity) -> Judge {
        Judge {
            expected: "x".into(),
            severity,
            cites: &["OMPD-X-001"],
            uncited: None,
            failures: Vec::new(),
            allowed: Vec::new(),
            unsupported: Vec::new(),
            checked: 0,
        }
    }

    #[test]
    fn a_judge_with_no_fact_skips_saying_why_and_a_judged_one_keeps_its_findings() {
        let v = judge(Severity::Must).verdict_or_skip(|| "the model has no value".into());
        assert_eq!(
            (v.outcome, v.detail.as_str()),
            (Outcome::Skip, "the model has no value")
        );
        let mut j = judge(Severity::Must);
        j.fail("wrong");
        let v = j.verdict_or_skip(|| unreachable!("a judged answer never skips"));
        assert_eq!((v.outcome, v.actual.as_str()), (Outcome::Fail, "wrong"));
        let mut j = judge(Severity::MustFrom(crate::Profile::V6_0).at(crate::Profile::V5_0));
        j.fail("wrong");
        assert_eq!(j.verdict().outcome, Outcome::Warn, "ambiguous before 6.0");
    }

    #[test]
    fn an_absorbed_judge_adds_its_facts_each_led_by_its_label() {
        let mut all = judge(Severity::Must);
        let mut one = judge(Severity::Should);
        one.holds();
        one.allowed("OMPD-X-001", "another code");
        all.absorb(one, "dyn-var");
        let mut two = judge(Severity::Should);
        two.fail("ok with 0");
        all.absorb(two, "stacksize-var");
        let v = all.verdict();
        assert_eq!(
            v.outcome,
            Outcome::Fail,
            "the absorbing judge's severity rules"
        );
        assert_eq!(v.actual, "stacksize-var: ok with 0");
        assert_eq!(v.detail, "1 of 3 facts violated");
    }

    #[test]
    fn a_deviation_allowed_by_a_requirement_the_check_does_not_cite_is_the_suite_s_defect() {
        let mut j = judge(Severity::Must);
        j.allowed("OMPD-X-002", "another code");
        let v = j.verdict();
        assert_eq!(v.outcome, Outcome::HarnessError);
        assert!(
            v.detail.contains("OMPD-X-002, which it does not cite"),
            "{}",
            v.detail
        );
    }
}
