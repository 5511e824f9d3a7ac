//! What a check concludes ([`Verdict`]) and how strongly a violation counts ([`Severity`]).

use crate::Profile;
use ompd_report::Outcome;
use serde::Serialize;

/// How strongly the specification states a requirement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// A violation fails.
    Must,
    /// A MUST from this profile on (a violation fails a library of the profile or a newer one);
    /// the older texts leave it open, so a deviation there warns (ambiguous).
    MustFrom(Profile),
    /// A violation warns.
    Should,
    /// The text is ambiguous: a deviation warns.
    Ambig,
}

impl Severity {
    /// The severity for a library of `profile`: [`Severity::MustFrom`] resolved to
    /// [`Severity::Must`] or [`Severity::Ambig`]; the others as they are.
    pub fn at(self, profile: Profile) -> Severity {
        match self {
            Severity::MustFrom(from) if profile >= from => Severity::Must,
            Severity::MustFrom(_) => Severity::Ambig,
            s => s,
        }
    }
}

/// What a check concluded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Outcome.
    pub outcome: Outcome,
    /// What the requirement expects.
    pub expected: String,
    /// What the library did.
    pub actual: String,
    /// Where and why.
    pub detail: String,
}

impl Verdict {
    /// A verdict with every field given.
    pub fn new(
        outcome: Outcome,
        expected: impl Into<String>,
        actual: impl Into<String>,
        detail: impl Into<String>,
    ) -> Verdict {
        Verdict {
            outcome,
            expected: expected.into(),
            actual: actual.into(),
            detail: detail.into(),
        }
    }

    /// The check does not apply.
    pub fn skip(reason: impl Into<String>) -> Verdict {
        Verdict::new(Outcome::Skip, "", "", reason)
    }

    /// The harness could not run the check (a malformed table row, a failing tool).
    pub fn harness_error(detail: impl Into<String>) -> Verdict {
        Verdict::new(Outcome::HarnessError, "", "", detail)
    }
}
