//! A registered check ([`Check`]): its data (id, requirement ids, severity, entry points, stage)
//! and its function.

use crate::{Ctx, Profile, Severity, Verdict};
use ompd_abi::EntryPoint;
use serde::{Deserialize, Serialize};

/// When a check runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// Once per library, from the file alone, before any of its code runs.
    Static,
    /// Once per library, in a fresh instance with no target (lifecycle order matters).
    Library,
    /// In every unit (scenario × arch × layout), after initialize and process initialize.
    Target,
}

/// A registered check.
#[derive(Debug, Serialize)]
pub struct Check {
    /// Stable dotted id.
    pub id: &'static str,
    /// Requirement ids from the checklist.
    pub requirements: &'static [&'static str],
    /// The requirement in one line, in our words.
    pub summary: &'static str,
    /// Severity of a violation.
    pub severity: Severity,
    /// OMPD entry points the check calls.
    pub entry_points: &'static [EntryPoint],
    /// When it runs.
    pub stage: Stage,
    /// The oldest API generation whose specification states the requirement; libraries of an
    /// older profile skip the check.
    pub since: Profile,
    /// Argument passed to `run` (e.g. the ICV name of a per-ICV check).
    #[serde(skip)]
    pub arg: &'static str,
    /// The check.
    #[serde(skip)]
    pub run: fn(&mut Ctx, &'static str) -> Verdict,
}
