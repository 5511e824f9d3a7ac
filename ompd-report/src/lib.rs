//! Outcomes, result records and the report (`ompd-conformance/report/v1`), with its human and
//! JSON renderings. Reporters only render: they never change an outcome.

pub mod glob;
pub use glob::glob;

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
            Gate::Flake => "flake",
            Gate::Regression => "regression",
        }
    }
}

/// The target kind of a result on the simulated target (the others are real: `live`, `core`).
pub const TARGET_SIM: &str = "sim";

/// What a real target (live process or core file) was, for a result obtained on one: the
/// `scenario` and `layout` columns name it too (fixture scenario, `runtime/build`), as keys.
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
}

fn target_sim() -> String {
    TARGET_SIM.into()
}

/// One result: a check on one library, scenario, architecture and layout.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultRecord {
    /// Library name (vendor name or file name).
    pub library: String,
    /// Stable dotted check id.
    pub check: String,
    /// Requirement ids from the checklist.
    pub requirements: Vec<String>,
    /// Scenario name (`none` for library-level checks that need no target).
    pub scenario: String,
    /// Architecture variant.
    pub arch: String,
    /// Layout policy.
    pub layout: String,
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
}

impl ResultRecord {
    /// Where the result was obtained: `scenario/arch/layout`, with the target kind appended for
    /// a real target (`nested/lp64-le/intel-2026.2/gcc@live`): a live and a core unit share
    /// their scenario and layout.
    pub fn place(&self) -> String {
        if self.target == TARGET_SIM {
            format!("{}/{}/{}", self.scenario, self.arch, self.layout)
        } else {
            format!(
                "{}/{}/{}@{}",
                self.scenario, self.arch, self.layout, self.target
            )
        }
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
    /// `ompd_get_api_version`, if it answered.
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
}

/// The report schema id.
pub const SCHEMA: &str = "ompd-conformance/report/v1";

impl Report {
    /// An empty report.
    pub fn new() -> Report {
        Report {
            schema: SCHEMA.into(),
            summary: Outcome::ALL.iter().map(|o| (*o, 0)).collect(),
            ..Report::default()
        }
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
                    "    [{}] {}/{}/{}: expected {}; got {}{}",
                    r.outcome.as_str(),
                    r.scenario,
                    r.arch,
                    r.layout,
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
mod tests {
    use super::*;

    fn rec(outcome: Outcome) -> ResultRecord {
        ResultRecord {
            library: "l".into(),
            check: "c".into(),
            requirements: vec!["OMPD-X".into()],
            scenario: "s".into(),
            arch: "lp64-le".into(),
            layout: "natural".into(),
            outcome,
            expected: "e".into(),
            actual: "a".into(),
            detail: String::new(),
            flaky: false,
            target: TARGET_SIM.into(),
            real: None,
            gate: None,
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
    fn json_has_the_v1_shape() {
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
}
