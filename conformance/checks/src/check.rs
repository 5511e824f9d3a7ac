//! A registered check ([`Check`]): its data (id, requirement ids, severity, entry points, stage,
//! the facts it needs on a real target, its part in the property phase, whether it provokes)
//! and its function. Everything the runner knows about a check is a field here.

use crate::known::Fact;
use crate::{Arg, Ctx, Profile, Severity, Verdict};
use ompd_abi::EntryPoint;
use ompd_loader::inspect::StaticInfo;
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

/// Where a check is defined: the file and line of the row that writes it, as the compiler saw
/// them ([`crate::here!`]). A family built by a macro from a table records the line of the row
/// whose tokens name the check, or, where the macro writes the checks itself, of its invocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Site {
    /// The source file, from the workspace root (`conformance/checks/src/checks/lib.rs`).
    pub file: &'static str,
    /// Its 1-based line.
    pub line: u32,
}

/// The [`Site`] of the row it is written in: in a macro's body, the line of the invocation that
/// the row's tokens come from.
#[macro_export]
macro_rules! here {
    () => {
        $crate::Site {
            file: file!(),
            line: line!(),
        }
    };
}

/// A registered check.
#[derive(Debug, Serialize)]
pub struct Check {
    /// Where it is defined (`CHECKS.tsv` is generated from it).
    #[serde(skip)]
    pub at: Site,
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
    /// The model facts the check judges against, which a real target (a live process, a core
    /// file) must know for the check to run there; `None`: simulated targets only, so a new check
    /// never judges a real process against a value nobody recorded.
    #[serde(skip)]
    pub real: Option<&'static [Fact]>,
    /// Its part in the property phase (target-stage checks only).
    #[serde(skip)]
    pub property: Property,
    /// Whether it calls with well-formed input, or provokes on purpose.
    #[serde(skip)]
    pub input: Input,
    /// What the row tells `run` (e.g. the ICV of a per-ICV check).
    #[serde(skip)]
    pub arg: Arg,
    /// The check.
    #[serde(skip)]
    pub run: Run,
}

impl Check {
    /// The defaults of a table row, which a row completes with `..Check::TARGET`: a target-stage
    /// check of the 5.0 generation, simulated targets only, over generated cases too, with
    /// well-formed input and no argument. Its id, requirements, summary, entry points and `run`
    /// are no check's: every row names its own (the registry's tests hold it).
    pub const TARGET: Check = Check {
        at: Site { file: "", line: 0 },
        id: "",
        requirements: &[],
        summary: "",
        severity: Severity::Must,
        entry_points: &[],
        stage: Stage::Target,
        since: Profile::V5_0,
        real: None,
        property: Property::Cases,
        input: Input::WellFormed,
        arg: Arg::None,
        run: Run::Worker(unset),
    };

    /// A routine it calls whose name a library of `profile` declares with another form than
    /// the 5.x one the check calls ([`EntryPoint::form_since`]: TR 2.001's `ompd_get_state`,
    /// every routine of the 2014 draft); such a library skips the check. `ompd_initialize` is
    /// not one: the worker calls it in the library's own form, and a check lists it to judge
    /// that call. Nor are the routines of the `tr.*` family, which calls the TR's forms.
    pub fn older_form(&self, profile: Profile) -> Option<EntryPoint> {
        if self.id.starts_with("tr.") {
            return None;
        }
        self.entry_points
            .iter()
            .copied()
            .find(|e| *e != EntryPoint::Initialize && e.other_form_in(profile))
    }

    /// True when the row names its own `run` (not the placeholder of [`Check::TARGET`]).
    pub fn has_run(&self) -> bool {
        !matches!(self.run, Run::Worker(f) if std::ptr::fn_addr_eq(f, unset as WorkerFn))
    }
}

/// A check function run in a worker.
pub type WorkerFn = fn(&mut Ctx, Arg) -> Verdict;

/// The placeholder `run` of [`Check::TARGET`]: a row that kept it reports a harness error.
fn unset(_: &mut Ctx, _: Arg) -> Verdict {
    Verdict::harness_error("this check's table row names no run function")
}

/// Where a target-stage check runs besides the scenario units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Property {
    /// Also over the property phase's generated cases.
    Cases,
    /// On the scenario units only: what it probes does not depend on the runtime state (the
    /// NULL matrix: argument checking; fault injection: the error paths of failing callbacks,
    /// at a cost that grows with every callback a routine makes), so generated cases would only
    /// repeat the scenarios.
    ScenariosOnly,
    /// On the scenario units only, drawing random cases of its own (the corrupted images run a
    /// seeded loop over corruptions of every unit; generated states would multiply that cost
    /// without reaching other code).
    OwnCases,
}

/// How a check calls the library.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    /// Well-formed arguments against a well-formed target: a hang or crash here says the entry
    /// point is broken (it counts toward the engine's quarantine).
    WellFormed,
    /// Malformed on purpose (NULL arguments, failing callbacks, corrupted images): a hang or
    /// crash here is a finding about that input only.
    Provoking,
}

/// How a check is judged.
#[derive(Clone, Copy)]
pub enum Run {
    /// In a worker, with the unit's context and the row's `arg`.
    Worker(WorkerFn),
    /// By the supervisor, from the library file alone, before any of its code runs.
    File(fn(&StaticInfo) -> Verdict),
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Run::Worker(_) => "Run::Worker",
            Run::File(_) => "Run::File",
        })
    }
}
