//! Outcomes, result records and the report (`ompd-conformance/report/v3`), with its human and
//! JSON renderings, and the reading of reports of either schema (a v1 report is upgraded to the
//! v2 shape as it is read, [`Report::from_json`]). Reporters only render: they never change an
//! outcome.

pub mod answers;
pub mod glob;
pub mod lines;
pub mod runtime_row;
pub mod shard;
pub use glob::glob;
pub use lines::data_lines;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// The outcome of one check on one unit, in severity order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The requirement holds.
    Pass,
    /// A SHOULD-level or ambiguous requirement is missed, or a spec-allowed alternative was used.
    Warn,
    /// The library reports, in a way the spec allows, that it does not support this.
    NotSupported,
    /// The check does not apply (precondition missing), with the reason in `detail`.
    Skip,
    /// A MUST-level requirement is violated.
    Fail,
    /// The worker died (signal, abort, unexpected exit) while the check ran.
    Crash,
    /// The check did not finish in time.
    Timeout,
    /// The harness itself failed; says nothing about the library.
    HarnessError,
}

impl Outcome {
    /// Every outcome, in order.
    pub const ALL: [Outcome; 8] = [
        Outcome::Pass,
        Outcome::Warn,
        Outcome::NotSupported,
        Outcome::Skip,
        Outcome::Fail,
        Outcome::Crash,
        Outcome::Timeout,
        Outcome::HarnessError,
    ];

    /// The report spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Warn => "warn",
            Outcome::NotSupported => "not-supported",
            Outcome::Skip => "skip",
            Outcome::Fail => "fail",
            Outcome::Crash => "crash",
            Outcome::Timeout => "timeout",
            Outcome::HarnessError => "harness-error",
        }
    }

    /// How much a result says where several results judge one thing (the stops of a breakpoint
    /// tour, the libraries' units on one runtime) and one is kept: a skip the least (it judged
    /// nothing), then pass, not-supported, warn, fail, crash, timeout and harness error.
    pub fn weight(self) -> u8 {
        match self {
            Outcome::Skip => 0,
            Outcome::Pass => 1,
            Outcome::NotSupported => 2,
            Outcome::Warn => 3,
            Outcome::Fail => 4,
            Outcome::Crash => 5,
            Outcome::Timeout => 6,
            Outcome::HarnessError => 7,
        }
    }

    /// True for outcomes that are findings against the library.
    pub fn is_failure(self) -> bool {
        matches!(self, Outcome::Fail | Outcome::Crash | Outcome::Timeout)
    }
}

/// A result relative to the expectations it was judged against (the gate, `gate` in the JSON).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Gate {
    /// As expected: an outcome an expectation entry accepts, or no entry and no finding.
    Match,
    /// A finding (fail, crash, timeout) that an expectation entry records.
    ExpectedFail,
    /// An entry covers the result but its outcome is gone: an expected failure (or warning)
    /// that now passes. Fails the gate unless `--allow-improvements`.
    UnexpectedPass,
    /// A warning (a SHOULD-level miss or an allowed alternative) that no entry accepts. Fails
    /// the gate unless `--allow-warnings`.
    NewWarning,
    /// A skip or not-supported where the judged baseline (`ompd_review::judged`) says the check
    /// judged the library (a pass, warning or failure), no result of the check judges it there
    /// now, and no entry records the skip: the library stopped answering. Fails the gate.
    Silenced,
    /// A crash that did not reproduce when re-run (`flaky`), and no entry accepts a crash.
    /// Fails the gate: the library did crash once.
    Flake,
    /// A finding (fail, crash, timeout, harness-error) that no entry accepts: a regression.
    Regression,
}

impl Gate {
    /// The report spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Gate::Match => "match",
            Gate::ExpectedFail => "expected-fail",
            Gate::UnexpectedPass => "unexpected-pass",
            Gate::NewWarning => "new-warning",
            Gate::Silenced => "silenced",
            Gate::Flake => "flake",
            Gate::Regression => "regression",
        }
    }
}

/// The target kind of a result on the simulated target (the others are real: `live`, `core`).
pub const TARGET_SIM: &str = "sim";

/// What a real target (live process or core file) was, for a result obtained on one. With the
/// result's `scenario` (the fixture's scenario, or [`ATTACHED`]) and `arch`, its
/// [`variant`](RealTargetInfo::variant) tells the unit apart.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RealTargetInfo {
    /// `live` (attached under ptrace) or `core` (an ELF core file).
    pub kind: String,
    /// The fixture program's scenario, when the harness ran a fixture.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixture: Option<String>,
    /// The OpenMP runtime the fixture ran on (`intel-2026.2`, `system-llvm-19`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    /// The runtime's file, for a runtime the user gave the run (`--runtime`), not one of the
    /// vendor cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_file: Option<String>,
    /// The compiler that built the fixture program (`gcc`, `clang-19`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// Whether the fixture ran with `OMP_DEBUG=enabled` (the runtime's state tracking).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub omp_debug: Option<bool>,
    /// The process attached to, or the one dumped to the core file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
    /// The core file a user named (a fixture's core file is a scratch file of the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core: Option<String>,
    /// A breakpoint tour: the fixture stopped at every OMPD breakpoint its runtime passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tour: Option<bool>,
}

impl RealTargetInfo {
    /// What tells the target apart within its scenario: `RUNTIME/BUILD` for a fixture
    /// (`/nodebug` appended when it ran without `OMP_DEBUG=enabled`, `/tour` for a breakpoint
    /// tour), the core file's name for a
    /// core file the user named, `pid-N` for a process the user named.
    pub fn variant(&self) -> String {
        if self.fixture.is_some() {
            let mut v = format!(
                "{}/{}",
                self.runtime.as_deref().unwrap_or("default"),
                self.build.as_deref().unwrap_or("unknown")
            );
            if self.omp_debug == Some(false) {
                v.push_str("/nodebug");
            }
            if self.tour == Some(true) {
                v.push_str("/tour");
            }
            return v;
        }
        match (&self.core, self.pid) {
            (Some(core), _) => Path::new(core)
                .file_name()
                .map_or_else(|| core.clone(), |n| n.to_string_lossy().into_owned()),
            (None, Some(pid)) => format!("pid-{pid}"),
            (None, None) => self.kind.clone(),
        }
    }
}

/// The scenario of a result of the property phase (a generated model).
pub const GENERATED_SCENARIO: &str = "generated";

/// The scenario of a result of the property phase's second population: the same generated
/// models placed at the address extremes (the `far` layout), reported on their own.
pub const GENERATED_FAR_SCENARIO: &str = "generated-far";

/// True for a result of the property phase (either population of generated models).
pub fn is_generated(scenario: &str) -> bool {
    scenario == GENERATED_SCENARIO || scenario == GENERATED_FAR_SCENARIO
}

/// The scenario of a result that needs no target (library-level and static checks, on the host
/// variant).
pub const HOST_SCENARIO: &str = "none";

/// The scenario of a result on a process or core file the user named (the harness ran no
/// fixture on it, so no scenario is known).
pub const ATTACHED: &str = "attached";

fn target_sim() -> String {
    TARGET_SIM.into()
}

/// One result: a check on one library and one unit: a scenario, architecture and layout of the
/// simulated target, or a scenario and variant of a real one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultRecord {
    /// Library name (vendor name or file name).
    pub library: String,
    /// Stable dotted check id.
    pub check: String,
    /// Requirement ids from the checklist.
    pub requirements: Vec<String>,
    /// Scenario: on the simulated target the scenario's name (`none` for library-level checks
    /// that need no target, `replay:NAME` for a replayed model); on a real target the fixture's
    /// scenario, or [`ATTACHED`] for a process or core file the user named.
    pub scenario: String,
    /// The target's architecture variant.
    pub arch: String,
    /// The layout policy of the simulated target; absent on a real target (its runtime and
    /// build are in `real`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
    /// Outcome.
    pub outcome: Outcome,
    /// What the requirement expects.
    pub expected: String,
    /// What the library did.
    pub actual: String,
    /// Anything else worth knowing (where it went wrong, how to reproduce).
    pub detail: String,
    /// A crash that did not reproduce when the check was re-run alone in a fresh worker.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub flaky: bool,
    /// The kind of target the check ran against: `sim` (the simulated target), `live` or `core`.
    #[serde(default = "target_sim")]
    pub target: String,
    /// The real target, for a result obtained on one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub real: Option<RealTargetInfo>,
    /// The result relative to the expectations (absent when the run used none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<Gate>,
    /// The command that reproduces this result when it is not the unit's own (a generated
    /// case's saved model); absent otherwise, where the unit's fields say how (v3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<String>,
}

impl ResultRecord {
    /// The unit within its target kind: `scenario/arch/layout` on the simulated target,
    /// `scenario/arch/variant` on a real one (`nested/lp64-le/intel-2026.2/gcc`, see
    /// [`RealTargetInfo::variant`]).
    pub fn unit(&self) -> String {
        let last = match (&self.real, &self.layout) {
            (Some(real), _) => real.variant(),
            (None, Some(layout)) => layout.clone(),
            (None, None) => "-".into(),
        };
        format!("{}/{}/{last}", self.scenario, self.arch)
    }

    /// Where the result was obtained: its [`unit`](ResultRecord::unit), with the target kind
    /// appended for a real target (`nested/lp64-le/intel-2026.2/gcc@live`): a live and a core
    /// unit share their scenario and variant.
    pub fn place(&self) -> String {
        if self.target == TARGET_SIM {
            self.unit()
        } else {
            format!("{}@{}", self.unit(), self.target)
        }
    }

    /// Moves a result read from a v1 report into the v2 shape: a real target's result named its
    /// runtime and build in `layout` (`intel-2026.2/clang-19`, or `process`, `core-file`) and
    /// its fixture scenario in `scenario` (`nested`, `nested-nodebug` for a run without
    /// `OMP_DEBUG`, or `pid-N`, the core file's name); they move into `real`, `scenario`
    /// becomes the fixture's scenario (or [`ATTACHED`]) and `layout` goes. Simulated results are
    /// unchanged.
    pub fn upgrade_from_v1(&mut self) {
        if self.target == TARGET_SIM {
            return;
        }
        let layout = self.layout.take().unwrap_or_default();
        let mut info = self.real.take().unwrap_or_else(|| RealTargetInfo {
            kind: self.target.clone(),
            ..RealTargetInfo::default()
        });
        let scenario = std::mem::replace(&mut self.scenario, ATTACHED.into());
        match layout.as_str() {
            "process" => {
                if info.pid.is_none() {
                    info.pid = scenario.strip_prefix("pid-").and_then(|p| p.parse().ok());
                }
            }
            "core-file" => {
                info.core.get_or_insert(scenario);
            }
            _ => {
                let (fixture, debug) = match scenario.strip_suffix("-nodebug") {
                    Some(f) => (f.to_string(), false),
                    None => (scenario, true),
                };
                let (runtime, build) = layout.split_once('/').unwrap_or((&layout, ""));
                info.runtime.get_or_insert_with(|| runtime.to_string());
                info.build.get_or_insert_with(|| build.to_string());
                info.omp_debug.get_or_insert(debug);
                self.scenario = info.fixture.get_or_insert(fixture).clone();
            }
        }
        self.real = Some(info);
    }
}

/// A library as the report describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LibraryInfo {
    /// Vendor name or file name.
    pub name: String,
    /// Absolute path.
    pub path: String,
    /// sha256 of the file.
    pub sha256: String,
    /// ELF class and machine, e.g. `ELF64 X86_64`.
    #[serde(default)]
    pub elf: String,
    /// DT_SONAME, when the file has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soname: Option<String>,
    /// DT_NEEDED entries, in order.
    #[serde(default)]
    pub needed: Vec<String>,
    /// `ompd_get_api_version` (for a TR-era library, TR 2.001's `ompd_get_version`), if it
    /// answered.
    pub api_version: Option<i64>,
    /// `ompd_get_version_string`, if it answered.
    pub version_string: Option<String>,
    /// The API generation profile the checks ran against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<ompd_abi::Generation>,
    /// Exported `ompd_*` entry points the suite knows.
    pub entry_points: Vec<String>,
    /// Loader quirks worked around, one line each.
    #[serde(default)]
    pub diagnostics: Vec<String>,
    /// Vendor package version, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_version: Option<String>,
    /// Entry points the run stopped calling because they hung or crashed in earlier checks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quarantined: Vec<QuarantinedEntry>,
    /// Why the library could not be loaded, when it could not (v3; also a diagnostic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_failed: Option<String>,
    /// The first line the library printed to stdout or stderr, the least over the run's units
    /// (v3; also a diagnostic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub printed: Option<String>,
}

/// The start of the one diagnostic that says a library wrote to stdout or stderr itself.
const WROTE: &str = "the library wrote to stdout/stderr (e.g. ";

impl LibraryInfo {
    /// Adds a diagnostic once. The note that the library wrote to stdout or stderr stands once,
    /// with the least example of all (so the same one whatever order units or shards come in).
    pub fn add_diagnostic(&mut self, d: &str) {
        if d.starts_with(WROTE) {
            match self.diagnostics.iter_mut().find(|x| x.starts_with(WROTE)) {
                Some(x) if d < x.as_str() => *x = d.to_string(),
                Some(_) => {}
                None => self.diagnostics.push(d.to_string()),
            }
        } else if !self.diagnostics.iter().any(|x| x == d) {
            self.diagnostics.push(d.to_string());
        }
    }

    /// Notes that the library wrote `first_line` (the first line of what it printed).
    pub fn note_output(&mut self, first_line: &str) {
        self.add_diagnostic(&format!("{WROTE}{first_line:?})"));
        keep_least(&mut self.printed, first_line);
    }

    /// Notes that the library could not be loaded, and why (the least reason stands, so the
    /// same one whatever order units or shards come in).
    pub fn note_load_failed(&mut self, why: &str) {
        self.add_diagnostic(&format!("load failed: {why}"));
        keep_least(&mut self.load_failed, why);
    }

    /// Joins the typed notes of `other` (the same library in another shard) into these.
    pub fn join_notes(&mut self, other: &LibraryInfo) {
        for d in &other.diagnostics {
            self.add_diagnostic(d);
        }
        if let Some(p) = &other.printed {
            keep_least(&mut self.printed, p);
        }
        if let Some(l) = &other.load_failed {
            keep_least(&mut self.load_failed, l);
        }
    }
}

/// Sets `slot` to `value` when it is empty or holds a greater one.
fn keep_least(slot: &mut Option<String>, value: &str) {
    if slot.as_deref().is_none_or(|s| value < s) {
        *slot = Some(value.to_string());
    }
}

/// An entry point quarantined in a library's run: once it hung (or crashed reproducibly) in
/// enough checks, the checks that would call it again were reported without calling it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuarantinedEntry {
    /// The entry point, e.g. `ompd_get_curr_task_handle`.
    pub entry_point: String,
    /// `hang` or `crash`.
    pub cause: String,
    /// How many checks it hung or crashed in before the quarantine (and while it set in).
    pub checks: usize,
    /// The first of them, with its unit and the call (`check on place: call`).
    pub first: String,
}

/// The whole report.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// Libraries run.
    pub libraries: Vec<LibraryInfo>,
    /// Every result.
    pub results: Vec<ResultRecord>,
    /// Count per outcome.
    pub summary: BTreeMap<Outcome, usize>,
    /// True when the run was cut short (the results are what it had).
    #[serde(default)]
    pub incomplete: bool,
    /// With `--golden`: each library's snapshot answers (path → value, see
    /// `crate::snapshot`), so that `compare` can diff them. Absent otherwise.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub answers: BTreeMap<String, BTreeMap<String, String>>,
    /// A shard run's report (`--shard K/N`): which shard, and each result's place in the
    /// unsharded run's order, for [`shard::merge`]. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<shard::ShardInfo>,
}

/// The report schema id.
pub const SCHEMA: &str = "ompd-conformance/report/v3";

/// The schema id of the second version, which [`Report::from_json`] reads as it is (v3 only
/// added fields).
pub const SCHEMA_V2: &str = "ompd-conformance/report/v2";

/// The schema id of the first version, which [`Report::from_json`] still reads.
pub const SCHEMA_V1: &str = "ompd-conformance/report/v1";

impl Report {
    /// An empty report.
    pub fn new() -> Report {
        Report {
            schema: SCHEMA.into(),
            summary: Outcome::ALL.iter().map(|o| (*o, 0)).collect(),
            ..Report::default()
        }
    }

    /// Reads a JSON report of schema v3, v2 (read as it is: v3 only added fields) or v1 (a v1
    /// report's results are moved into the v2
    /// shape, [`ResultRecord::upgrade_from_v1`], and its schema becomes [`SCHEMA`]). The error
    /// says what is wrong in one line.
    pub fn from_json(text: &str) -> Result<Report, String> {
        let mut r: Report = serde_json::from_str(text)
            .map_err(|e| format!("not an ompd-conform JSON report: {e}"))?;
        match r.schema.as_str() {
            SCHEMA => {}
            SCHEMA_V2 => r.schema = SCHEMA.into(),
            SCHEMA_V1 => {
                r.results.iter_mut().for_each(ResultRecord::upgrade_from_v1);
                r.schema = SCHEMA.into();
            }
            other => {
                return Err(format!(
                    "schema `{other}`, expected `{SCHEMA}`, `{SCHEMA_V2}` or `{SCHEMA_V1}`"
                ))
            }
        }
        Ok(r)
    }

    /// The rows a run's results are judged and shown in: every library, then the runtime row
    /// ([`runtime_row::ROW`], facts of no file) when a runtime check's result went there.
    pub fn rows(&self) -> Vec<LibraryInfo> {
        let mut rows = self.libraries.clone();
        if self.results.iter().any(|r| r.library == runtime_row::ROW) {
            rows.push(LibraryInfo {
                name: runtime_row::ROW.into(),
                ..LibraryInfo::default()
            });
        }
        rows
    }

    /// Adds a result and counts it.
    pub fn push(&mut self, r: ResultRecord) {
        *self.summary.entry(r.outcome).or_insert(0) += 1;
        self.results.push(r);
    }

    /// Number of results with this outcome.
    pub fn count(&self, o: Outcome) -> usize {
        self.summary.get(&o).copied().unwrap_or(0)
    }

    /// The final line: `N passed, N failed` and `, N skipped` when any were skipped. Passed counts
    /// pass, warn and not-supported; failed counts fail, crash, timeout and harness-error.
    pub fn closing_line(&self) -> String {
        let passed = self.count(Outcome::Pass)
            + self.count(Outcome::Warn)
            + self.count(Outcome::NotSupported);
        let failed = self.count(Outcome::Fail)
            + self.count(Outcome::Crash)
            + self.count(Outcome::Timeout)
            + self.count(Outcome::HarnessError);
        let skipped = self.count(Outcome::Skip);
        let mut s = format!("{passed} passed, {failed} failed");
        if skipped > 0 {
            write!(s, ", {skipped} skipped").expect("writing to a String");
        }
        s
    }

    /// The human rendering: libraries, findings grouped by check, totals, closing line.
    pub fn human(&self) -> String {
        let mut out = self.library_header();
        self.human_findings(&mut out);
        out
    }

    /// The lines naming each library: API version, profile, version string, sha256, ELF facts
    /// and loader notes.
    pub fn library_header(&self) -> String {
        let mut out = String::new();
        for lib in &self.libraries {
            let _ = writeln!(out, "library {}  {}", lib.name, lib.path);
            let _ = writeln!(
                out,
                "  api version {} (profile {})  version string {:?}",
                lib.api_version
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "?".into()),
                lib.profile.map(|p| p.name()).unwrap_or("?"),
                lib.version_string.as_deref().unwrap_or("?")
            );
            let _ = writeln!(
                out,
                "  sha256 {}  {} entry points exported",
                lib.sha256,
                lib.entry_points.len()
            );
            let _ = writeln!(
                out,
                "  {}  soname {}  DT_NEEDED {}",
                lib.elf,
                lib.soname.as_deref().unwrap_or("(none)"),
                if lib.needed.is_empty() {
                    "(none)".to_string()
                } else {
                    lib.needed.join(", ")
                }
            );
            for d in &lib.diagnostics {
                let _ = writeln!(out, "  note: {d}");
            }
            for q in &lib.quarantined {
                let _ = writeln!(
                    out,
                    "  QUARANTINED {} ({} in {} checks; later checks calling it were not run; \
                     first: {})",
                    q.entry_point, q.cause, q.checks, q.first
                );
            }
        }
        out
    }

    fn human_findings(&self, out: &mut String) {
        let mut by_check: BTreeMap<(&str, &str), Vec<&ResultRecord>> = BTreeMap::new();
        for r in &self.results {
            by_check.entry((&r.library, &r.check)).or_default().push(r);
        }
        for ((lib, check), rs) in &by_check {
            let worst = rs.iter().map(|r| r.outcome).max().unwrap_or(Outcome::Pass);
            let n = rs.len();
            let bad: Vec<_> = rs.iter().filter(|r| r.outcome != Outcome::Pass).collect();
            let _ = writeln!(
                out,
                "{:<13} {lib}  {check}  ({} of {n} units not pass)",
                worst.as_str().to_uppercase(),
                bad.len()
            );
            if matches!(worst, Outcome::Pass) {
                continue;
            }
            let req = rs[0].requirements.join(", ");
            let _ = writeln!(out, "    requirement: {req}");
            for r in bad.iter().take(4) {
                let _ = writeln!(
                    out,
                    "    [{}] {}: expected {}; got {}{}",
                    r.outcome.as_str(),
                    r.place(),
                    r.expected,
                    r.actual,
                    if r.detail.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", r.detail)
                    }
                );
            }
            if bad.len() > 4 {
                let _ = writeln!(out, "    … and {} more", bad.len() - 4);
            }
        }
        let counts: Vec<String> = Outcome::ALL
            .iter()
            .filter(|o| self.count(**o) > 0)
            .map(|o| format!("{} {}", self.count(*o), o.as_str()))
            .collect();
        let _ = writeln!(out, "totals: {}", counts.join(", "));
        if self.incomplete {
            let _ = writeln!(out, "the run was interrupted: these results are incomplete");
        }
        out.push_str(&self.closing_line());
        out.push('\n');
    }

    /// Writes the JSON rendering to `path` atomically (temporary file, then rename).
    pub fn write_json(&self, path: &Path) -> std::io::Result<()> {
        let json = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        write_atomic(path, &json)
    }
}

/// `name` as a file name: each character other than an ASCII letter, digit, `-`, `_` or `.`
/// becomes `_` (a library path or check id names a report or replay file).
pub fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Writes `data` to `path` through a temporary file in the same directory and a rename, so that
/// readers never see a partial file.
pub fn write_atomic(path: &Path, data: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(data)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {

    #[test]
    fn a_name_becomes_a_file_name() {
        assert_eq!(super::file_safe("llvm-19"), "llvm-19");
        assert_eq!(
            super::file_safe("/opt/x/libompd.so:icv.value.dyn-var"),
            "_opt_x_libompd.so_icv.value.dyn-var"
        );
        assert_eq!(super::file_safe("a_b c"), "a_b_c");
    }

    #[test]
    fn the_output_note_stands_once_with_the_least_example_in_any_order() {
        let mut a = LibraryInfo::default();
        let mut b = LibraryInfo::default();
        for (i, line) in ["zeta", "alpha", "mid"].iter().enumerate() {
            a.note_output(line);
            b.note_output(["mid", "zeta", "alpha"][i]);
            a.add_diagnostic("load failed: x");
        }
        assert_eq!(
            a.diagnostics,
            vec![format!("{WROTE}\"alpha\")"), "load failed: x".to_string()]
        );
        assert_eq!(b.diagnostics, vec![format!("{WROTE}\"alpha\")")]);
    }
    use super::*;

    /// A result of `outcome` (for the crate's tests).
    pub(crate) fn rec(outcome: Outcome) -> ResultRecord {
        ResultRecord {
            library: "l".into(),
            check: "c".into(),
            requirements: vec!["OMPD-X".into()],
            scenario: "s".into(),
            arch: "lp64-le".into(),
            layout: Some("natural".into()),
            outcome,
            expected: "e".into(),
            actual: "a".into(),
            detail: String::new(),
            flaky: false,
            target: TARGET_SIM.into(),
            real: None,
            gate: None,
            replay: None,
        }
    }

    #[rstest::rstest]
    #[case(&[Outcome::Pass, Outcome::Warn, Outcome::Fail], "2 passed, 1 failed")]
    #[case(&[Outcome::Pass, Outcome::Warn, Outcome::Fail, Outcome::Skip], "2 passed, 1 failed, 1 skipped")]
    #[case(&[Outcome::NotSupported, Outcome::Crash, Outcome::HarnessError], "1 passed, 2 failed")]
    #[case(&[], "0 passed, 0 failed")]
    fn closing_line_counts_and_mentions_skips_only_when_present(
        #[case] outcomes: &[Outcome],
        #[case] line: &str,
    ) {
        let mut r = Report::new();
        for o in outcomes {
            r.push(rec(*o));
        }
        assert_eq!(r.closing_line(), line);
    }

    #[test]
    fn human_rendering_of_a_small_fixed_report() {
        let mut r = Report::new();
        r.libraries.push(LibraryInfo {
            name: "l".into(),
            path: "/x/libompd.so".into(),
            sha256: "ab".repeat(32),
            elf: "ELF64 X86_64".into(),
            soname: Some("libompd.so".into()),
            api_version: Some(201811),
            version_string: Some("LLVM OpenMP".into()),
            entry_points: vec!["ompd_initialize".into()],
            diagnostics: vec!["preloaded libstdc++.so.6".into()],
            ..LibraryInfo::default()
        });
        r.push(rec(Outcome::Pass));
        let mut f = rec(Outcome::Fail);
        f.check = "d".into();
        f.detail = "1 of 3 facts violated".into();
        r.push(f);
        let mut s = rec(Outcome::Skip);
        s.check = "e".into();
        r.push(s);
        insta::assert_snapshot!("human_small_report", r.human());
    }

    #[test]
    fn json_has_the_v2_shape() {
        let mut r = Report::new();
        r.push(rec(Outcome::NotSupported));
        let v: serde_json::Value = serde_json::to_value(&r).unwrap();
        assert_eq!(v["schema"], SCHEMA);
        assert_eq!(v["results"][0]["outcome"], "not-supported");
        assert_eq!(v["summary"]["harness-error"], 0);
        assert_eq!(v["summary"]["not-supported"], 1);
    }

    #[test]
    fn atomic_write_replaces_the_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
    }

    /// A v1 report as the runs before v2 wrote it: a simulated result, and real results on a
    /// fixture (with and without OMP_DEBUG), a process and a core file the user named.
    const V1: &str = r#"{"schema": "ompd-conformance/report/v1", "libraries": [],
      "summary": {}, "incomplete": false, "results": [
      {"library": "l", "check": "c", "requirements": [], "scenario": "serial", "arch": "lp64-le",
       "layout": "natural", "outcome": "pass", "expected": "", "actual": "", "detail": ""},
      {"library": "l", "check": "c", "requirements": [], "scenario": "nested", "arch": "lp64-le",
       "layout": "intel-2026.2/clang-19", "outcome": "fail", "expected": "", "actual": "",
       "detail": "", "target": "core"},
      {"library": "l", "check": "c", "requirements": [], "scenario": "nested-nodebug",
       "arch": "lp64-le", "layout": "llvm-21/gcc", "outcome": "pass", "expected": "",
       "actual": "", "detail": "", "target": "live",
       "real": {"kind": "live", "fixture": "nested", "runtime": "llvm-21", "build": "gcc",
                "omp_debug": false, "pid": 7}},
      {"library": "l", "check": "c", "requirements": [], "scenario": "pid-42", "arch": "lp64-le",
       "layout": "process", "outcome": "pass", "expected": "", "actual": "", "detail": "",
       "target": "live"},
      {"library": "l", "check": "c", "requirements": [], "scenario": "core.99", "arch": "lp64-le",
       "layout": "core-file", "outcome": "pass", "expected": "", "actual": "", "detail": "",
       "target": "core", "real": {"kind": "core", "core": "/tmp/x/core.99"}}]}"#;

    #[test]
    fn a_v1_report_is_read_into_the_v2_shape() {
        let r = Report::from_json(V1).unwrap();
        assert_eq!(r.schema, SCHEMA);
        let places: Vec<String> = r.results.iter().map(ResultRecord::place).collect();
        assert_eq!(
            places,
            [
                "serial/lp64-le/natural",
                "nested/lp64-le/intel-2026.2/clang-19@core",
                "nested/lp64-le/llvm-21/gcc/nodebug@live",
                "attached/lp64-le/pid-42@live",
                "attached/lp64-le/core.99@core",
            ]
        );
        assert_eq!(r.results[0].layout.as_deref(), Some("natural"));
        assert!(r.results[1..].iter().all(|x| x.layout.is_none()));
        let info = r.results[1].real.as_ref().unwrap();
        assert_eq!(
            (
                info.fixture.as_deref(),
                info.runtime.as_deref(),
                info.build.as_deref()
            ),
            (Some("nested"), Some("intel-2026.2"), Some("clang-19"))
        );
        assert_eq!((info.kind.as_str(), info.omp_debug), ("core", Some(true)));
        let nodebug = r.results[2].real.as_ref().unwrap();
        assert_eq!(
            (r.results[2].scenario.as_str(), nodebug.omp_debug),
            ("nested", Some(false))
        );
        assert_eq!(r.results[3].real.as_ref().unwrap().pid, Some(42));
        // A v2 report reads back as written; another schema is refused in one line.
        let v2 = serde_json::to_string(&r).unwrap();
        assert_eq!(Report::from_json(&v2).unwrap(), r);
        let other = Report::from_json(&V1.replace("report/v1", "report/v9")).unwrap_err();
        assert!(
            other.contains("report/v9") && !other.contains('\n'),
            "{other}"
        );
    }
}
