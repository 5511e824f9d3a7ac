//! Per-vendor expectations: which results a vendor library is known to produce, each with a
//! reason. Stored as TOML in `golden/expectations/`; `gate` judges a run against them to find
//! the unexpected results and the stale entries.
//!
//! ```toml
//! vendor = "LLVM"
//! libraries = ["llvm-*"]
//!
//! [[expect]]
//! check = "parallel.enclosing.outermost_unavailable"
//! outcome = "fail"
//! reason = "a NULL t_parent yields ompd_rc_unsupported instead of unavailable"
//! # optional: library, scenario, arch, layout (globs, default "*"), link; `outcome` may also be a
//! # list when builds of one vendor differ (e.g. ["fail", "crash"] where only some builds have a
//! # stack protector)
//! # optional conditions on the library and target (globs, default "*"):
//! #   version: the package version or the version string (either may match)
//! #   profile: the API profile detected ("2014-draft", "TR2.001", "5.0", "5.1", "5.2", "6.0")
//! #   target:  the target kind ("sim", "live" or "core")
//! # optional conditions on a real target (globs, default "*"), from the result's `real` object:
//! #   runtime: the OpenMP runtime a fixture ran on ("intel-2026.2", "system-llvm-19")
//! #   build:   the compiler that built the fixture ("gcc", "clang-19")
//! #   fixture: the fixture's scenario ("nested")
//! #   omp_debug: true or false, whether the fixture ran with OMP_DEBUG=enabled (default: either)
//! # nondeterministic = true: on real targets only, where the library's answers vary from run to
//! #   run; only then may an entry accept both a pass and the check's finding
//! ```
//!
//! An entry is refused when it accepts both a pass and the finding its check reaches at its
//! severity (a fail for a MUST, a warning for a SHOULD) without being nondeterministic, and when
//! it covers real targets alone and its reason speaks of layouts or images ([`narrow`]).
//!
//! `check`, `library`, `scenario`, `arch`, `layout`, `runtime`, `build` and `fixture` may each be a
//! list of globs, any of which matches (`layout = ["natural", "packed"]`): one finding that shows
//! in several places is one entry. A field a result does not have (the layout of a real target's
//! result, the runtime of a simulated one) matches only the default `*`. On a real target the
//! `scenario` is the fixture's scenario, or `attached` for a process or core file the user named.

mod narrow;

use ompd_report::{LibraryInfo, Outcome, ResultRecord};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// One expectations file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    /// The vendor, for humans.
    pub vendor: String,
    /// Library-name globs the file applies to.
    pub libraries: Vec<String>,
    /// The entries.
    #[serde(default)]
    pub expect: Vec<Expectation>,
    /// Where it was read from.
    #[serde(skip)]
    pub path: PathBuf,
    /// Where its libraries were judged when it was blessed (the file beside it,
    /// [`crate::judged::path_of`]; empty when there is none).
    #[serde(skip)]
    pub judged: crate::judged::Baseline,
}

/// The outcome(s) an entry accepts: one, or a list.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Outcomes {
    /// Exactly this outcome.
    One(Outcome),
    /// Any of these outcomes.
    Any(Vec<Outcome>),
}

impl Outcomes {
    /// True when the entry accepts every verdict a check reaches without crashing: a pass, a
    /// skip, a warning and a failure. Such an entry judges nothing and can never go stale, so
    /// it is refused at load.
    pub fn accepts_everything(&self) -> bool {
        [Outcome::Pass, Outcome::Skip, Outcome::Warn, Outcome::Fail]
            .iter()
            .all(|o| self.allows(*o))
    }

    /// Whether `o` is accepted.
    pub fn allows(&self, o: Outcome) -> bool {
        match self {
            Outcomes::One(x) => *x == o,
            Outcomes::Any(v) => v.contains(&o),
        }
    }
}

impl std::fmt::Display for Outcomes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcomes::One(x) => f.write_str(x.as_str()),
            Outcomes::Any(v) => {
                let names: Vec<&str> = v.iter().map(|o| o.as_str()).collect();
                write!(f, "{}", names.join(" or "))
            }
        }
    }
}

/// One glob, or a list of globs any of which matches.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Globs {
    /// This glob.
    One(String),
    /// Any of these globs.
    Any(Vec<String>),
}

impl Globs {
    /// The globs.
    pub fn patterns(&self) -> &[String] {
        match self {
            Globs::One(g) => std::slice::from_ref(g),
            Globs::Any(v) => v,
        }
    }

    /// Whether one of the globs matches `text`.
    pub fn matches(&self, text: &str) -> bool {
        self.patterns().iter().any(|g| glob(g, text))
    }

    /// True for the single glob `*` (the default: matches everything).
    pub fn is_wildcard(&self) -> bool {
        matches!(self, Globs::One(g) if g == "*")
    }

    /// Whether one of the globs matches a field a result may not have: an absent field matches
    /// only the wildcard.
    pub fn matches_opt(&self, text: Option<&str>) -> bool {
        match text {
            Some(t) => self.matches(t),
            None => self.is_wildcard(),
        }
    }
}

impl Default for Globs {
    fn default() -> Self {
        Globs::One("*".into())
    }
}

impl std::fmt::Display for Globs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.patterns().join(" | "))
    }
}

/// One expected result.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    /// Check id glob(s).
    pub check: Globs,
    /// The outcome expected (or several accepted ones).
    pub outcome: Outcomes,
    /// Why (required, one line).
    pub reason: String,
    /// Where to read more.
    #[serde(default)]
    pub link: Option<String>,
    /// Library-name glob(s), within the file's libraries (versions of one vendor can differ).
    #[serde(default)]
    pub library: Globs,
    /// Scenario glob(s).
    #[serde(default)]
    pub scenario: Globs,
    /// Architecture glob(s).
    #[serde(default)]
    pub arch: Globs,
    /// Layout glob(s) (a real target's result has no layout: only `*` matches it).
    #[serde(default)]
    pub layout: Globs,
    /// Glob(s) of the runtime a real target's fixture ran on.
    #[serde(default)]
    pub runtime: Globs,
    /// Glob(s) of the compiler that built a real target's fixture.
    #[serde(default)]
    pub build: Globs,
    /// Glob(s) of a real target's fixture scenario.
    #[serde(default)]
    pub fixture: Globs,
    /// Whether a real target's fixture ran with `OMP_DEBUG=enabled` (absent: either).
    #[serde(default)]
    pub omp_debug: Option<bool>,
    /// Library version glob(s): each matches the package version or the version string.
    #[serde(default)]
    pub version: Globs,
    /// API profile glob(s) (`5.0`, `TR2.001`, ...).
    #[serde(default)]
    pub profile: Globs,
    /// Target kind glob(s) (`sim`).
    #[serde(default)]
    pub target: Globs,
    /// The library's answers on these real targets vary from run to run (it reads memory the
    /// runtime does not keep), so the entry may accept a pass and the finding alike.
    #[serde(default)]
    pub nondeterministic: bool,
}

/// A malformed expectations file.
#[derive(Debug, thiserror::Error)]
pub enum ExpectError {
    /// Unreadable.
    #[error("cannot read {path}: {source}")]
    Io {
        /// File.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// Not valid TOML for this format.
    #[error("invalid expectations file {path}: {message}")]
    Invalid {
        /// File.
        path: String,
        /// What is wrong.
        message: String,
    },
}

use ompd_report::glob;

impl Expectation {
    /// True when this entry describes `r`'s unit and check (whatever its outcome). The library
    /// conditions (version, profile) are judged by [`Expectation::applies_to`].
    pub fn covers(&self, r: &ResultRecord) -> bool {
        self.check.matches(&r.check) && self.library.matches(&r.library) && self.describes_unit(r)
    }

    /// True when this entry's unit conditions (scenario, arch, layout, target and the real
    /// target's runtime, build, fixture and `OMP_DEBUG` setting) describe `r`'s unit, whatever
    /// its check and library.
    pub fn describes_unit(&self, r: &ResultRecord) -> bool {
        let real = r.real.as_ref();
        self.scenario.matches(&r.scenario)
            && self.arch.matches(&r.arch)
            && self.layout.matches_opt(r.layout.as_deref())
            && self.target.matches(&r.target)
            && self
                .runtime
                .matches_opt(real.and_then(|x| x.runtime.as_deref()))
            && self
                .build
                .matches_opt(real.and_then(|x| x.build.as_deref()))
            && self
                .fixture
                .matches_opt(real.and_then(|x| x.fixture.as_deref()))
            && self
                .omp_debug
                .is_none_or(|d| real.and_then(|x| x.omp_debug) == Some(d))
    }

    /// The unit conditions for humans: `scenario/arch/layout`, with the real target's conditions
    /// that are set (`nested/*/* runtime llvm-21 | intel-2026.2 nodebug`).
    pub fn unit_text(&self) -> String {
        let mut s = format!("{}/{}/{}", self.scenario, self.arch, self.layout);
        for (name, g) in [
            ("runtime", &self.runtime),
            ("build", &self.build),
            ("fixture", &self.fixture),
        ] {
            if !g.is_wildcard() {
                s.push_str(&format!(" {name} {g}"));
            }
        }
        match self.omp_debug {
            Some(true) => s.push_str(" omp_debug"),
            Some(false) => s.push_str(" nodebug"),
            None => {}
        }
        s
    }

    /// True when the entry's library conditions hold for `lib`: its name, its version (package
    /// version or version string; an unknown version matches only `*`) and its API profile.
    pub fn applies_to(&self, lib: &LibraryInfo) -> bool {
        let version = self.version.is_wildcard()
            || [&lib.package_version, &lib.version_string]
                .iter()
                .any(|v| v.as_deref().is_some_and(|v| self.version.matches(v)));
        let profile = self.profile.is_wildcard()
            || lib.profile.is_some_and(|p| {
                serde_json::to_value(p)
                    .ok()
                    .and_then(|v| v.as_str().map(|s| self.profile.matches(s)))
                    .unwrap_or(false)
            });
        self.library.matches(&lib.name) && version && profile
    }
}

impl File {
    /// Parses one file; every entry needs a reason, and each of its check globs must name a known
    /// check.
    pub fn load(path: &Path) -> Result<File, ExpectError> {
        let read = |p: &Path| {
            std::fs::read_to_string(p).map_err(|source| ExpectError::Io {
                path: p.display().to_string(),
                source,
            })
        };
        let beside = crate::judged::path_of(path);
        let judged = match beside.exists() {
            true => read(&beside)?,
            false => String::new(),
        };
        File::parse(&read(path)?, path)?.with_judged(&judged)
    }

    /// The file with its judged baseline parsed from `text`.
    pub fn with_judged(mut self, text: &str) -> Result<File, ExpectError> {
        self.judged =
            crate::judged::Baseline::parse(text).map_err(|message| ExpectError::Invalid {
                path: crate::judged::path_of(&self.path).display().to_string(),
                message,
            })?;
        Ok(self)
    }

    /// Parses `text` as the file at `path` (which need not exist: embedded files keep the path
    /// of their repository copy).
    pub fn parse(text: &str, path: &Path) -> Result<File, ExpectError> {
        let shown = path.display().to_string();
        let invalid = |message: String| ExpectError::Invalid {
            path: shown.clone(),
            message,
        };
        let mut f: File = toml::from_str(text)
            .map_err(|e| invalid(e.to_string().lines().next().unwrap_or("").to_string()))?;
        f.path = path.to_path_buf();
        let ids: Vec<&str> = ompd_checks::registry().iter().map(|c| c.id).collect();
        for e in &f.expect {
            if e.reason.trim().is_empty() {
                return Err(invalid(format!("entry for {} has no reason", e.check)));
            }
            if e.outcome.accepts_everything() {
                return Err(invalid(format!(
                    "entry for {} accepts every outcome ({}): it judges nothing and can never go stale; name the outcomes the library has",
                    e.check, e.outcome
                )));
            }
            if let Some(why) = narrow::refusal(e) {
                return Err(invalid(why));
            }
            for g in e.check.patterns() {
                if !ids.iter().any(|id| glob(g, id)) {
                    return Err(invalid(format!("entry {g} matches no known check")));
                }
            }
        }
        Ok(f)
    }

    /// Whether the file applies to library `name`.
    pub fn applies_to(&self, name: &str) -> bool {
        self.libraries.iter().any(|g| glob(g, name))
    }
}

/// The repository's expectations files, embedded in the runner at compile time
/// (`suite_data::EXPECTATIONS`); each keeps the path of its repository copy, which `--bless` rewrites.
pub fn embedded() -> Result<Vec<File>, ExpectError> {
    suite_data::EXPECTATIONS
        .iter()
        .map(|(name, text, judged)| {
            File::parse(text, &suite_data::expectations_dir().join(name))?.with_judged(judged)
        })
        .collect()
}

/// Loads every `*.toml` in `dir`, sorted by name.
pub fn load_dir(dir: &Path) -> Result<Vec<File>, ExpectError> {
    let io = |source| ExpectError::Io {
        path: dir.display().to_string(),
        source,
    };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    paths.iter().map(|p| File::load(p)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_need_a_reason_a_known_check_and_an_outcome_they_refuse() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("v.toml");
        std::fs::write(&p, "vendor='x'\nlibraries=['x']\n[[expect]]\ncheck='no.such.check'\noutcome='fail'\nreason='r'\n").unwrap();
        assert!(File::load(&p)
            .unwrap_err()
            .to_string()
            .contains("matches no known check"));
        std::fs::write(
            &p,
            "vendor='x'\nlibraries=['x']\n[[expect]]\ncheck='lib.*'\noutcome='fail'\nreason=' '\n",
        )
        .unwrap();
        assert!(File::load(&p)
            .unwrap_err()
            .to_string()
            .contains("no reason"));
        std::fs::write(
            &p,
            "vendor='x'\nlibraries=['x']\n[[expect]]\ncheck='lib.*'\noutcome=['pass','skip','warn','fail']\nreason='r'\n",
        )
        .unwrap();
        assert!(File::load(&p)
            .unwrap_err()
            .to_string()
            .contains("accepts every outcome"));
        std::fs::write(&p, "vendor='x'\nlibraries=['x']\nsurprise=1\n").unwrap();
        assert!(File::load(&p)
            .unwrap_err()
            .to_string()
            .contains("invalid expectations file"));
    }

    #[test]
    fn an_entry_may_accept_several_outcomes() {
        let f: File = toml::from_str(
            "vendor = \"v\"\nlibraries = [\"*\"]\n[[expect]]\ncheck = \"a.b.c\"\noutcome = [\"fail\", \"crash\"]\nreason = \"r\"\n[[expect]]\ncheck = \"a.b.d\"\noutcome = \"warn\"\nreason = \"r\"\n",
        )
        .expect("parses");
        assert!(f.expect[0].outcome.allows(Outcome::Crash));
        assert!(f.expect[0].outcome.allows(Outcome::Fail));
        assert!(!f.expect[0].outcome.allows(Outcome::Pass));
        assert_eq!(f.expect[0].outcome.to_string(), "fail or crash");
        assert!(f.expect[1].outcome.allows(Outcome::Warn));
        assert!(toml::from_str::<File>(
            "vendor = \"v\"\nlibraries = []\n[[expect]]\ncheck = \"x\"\noutcome = \"sometimes\"\nreason = \"r\"\n"
        )
        .is_err());
    }

    #[test]
    fn checks_and_units_may_be_lists_of_globs() {
        let f: File = toml::from_str(
            "vendor = \"v\"\nlibraries = [\"*\"]\n[[expect]]\ncheck = [\"a.b.*read\", \"a.b.c\"]\nlayout = [\"natural\", \"packed\"]\noutcome = \"fail\"\nreason = \"r\"\n",
        )
        .expect("parses");
        let e = &f.expect[0];
        assert!(e.check.matches("a.b.short_read") && e.check.matches("a.b.c"));
        assert!(!e.check.matches("a.b.d"));
        assert!(e.layout.matches("packed") && !e.layout.matches("random:1"));
        assert!(e.scenario.is_wildcard() && !e.layout.is_wildcard());
        assert_eq!(e.layout.to_string(), "natural | packed");
        assert_eq!(e.unit_text(), "*/*/natural | packed");
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("v.toml");
        std::fs::write(&p, "vendor='x'\nlibraries=['x']\n[[expect]]\ncheck=['lib.*', 'no.such.check']\noutcome='fail'\nreason='r'\n").unwrap();
        assert!(File::load(&p)
            .unwrap_err()
            .to_string()
            .contains("no.such.check matches no known check"));
    }

    fn rec(
        target: &str,
        layout: Option<&str>,
        real: Option<ompd_report::RealTargetInfo>,
    ) -> ResultRecord {
        ResultRecord {
            library: "l".into(),
            check: "a.b.c".into(),
            requirements: vec![],
            scenario: "nested".into(),
            arch: "lp64-le".into(),
            layout: layout.map(str::to_string),
            outcome: Outcome::Fail,
            expected: String::new(),
            actual: String::new(),
            detail: String::new(),
            flaky: false,
            target: target.into(),
            real,
            gate: None,
            replay: None,
        }
    }

    #[test]
    fn real_target_conditions_match_the_real_object_with_glob_semantics() {
        let f: File = toml::from_str(
            "vendor = \"v\"\nlibraries = [\"*\"]\n\
             [[expect]]\ncheck = \"a.b.c\"\nruntime = [\"intel-*\", \"llvm-21\"]\nbuild = \"gcc\"\noutcome = \"fail\"\nreason = \"r\"\n\
             [[expect]]\ncheck = \"a.b.c\"\nfixture = \"nest*\"\nomp_debug = false\noutcome = \"fail\"\nreason = \"r\"\n\
             [[expect]]\ncheck = \"a.b.c\"\nlayout = \"natural\"\noutcome = \"fail\"\nreason = \"r\"\n",
        )
        .expect("parses");
        let real = |runtime: &str, build: &str, debug: bool| {
            Some(ompd_report::RealTargetInfo {
                kind: "live".into(),
                fixture: Some("nested".into()),
                runtime: Some(runtime.into()),
                build: Some(build.into()),
                omp_debug: Some(debug),
                ..Default::default()
            })
        };
        let (by_runtime, nodebug, natural) = (&f.expect[0], &f.expect[1], &f.expect[2]);
        assert!(by_runtime.covers(&rec("live", None, real("intel-2026.2", "gcc", true))));
        assert!(by_runtime.covers(&rec("core", None, real("llvm-21", "gcc", true))));
        assert!(!by_runtime.covers(&rec("live", None, real("llvm-21", "clang-19", true))));
        assert!(!by_runtime.covers(&rec("live", None, real("system-llvm-19", "gcc", true))));
        // A simulated result has no runtime: only the wildcard matches it.
        assert!(!by_runtime.covers(&rec("sim", Some("natural"), None)));
        assert!(nodebug.covers(&rec("live", None, real("llvm-21", "gcc", false))));
        assert!(!nodebug.covers(&rec("live", None, real("llvm-21", "gcc", true))));
        assert!(!nodebug.covers(&rec("sim", Some("natural"), None)));
        // A real result has no layout: only the wildcard matches it.
        assert!(natural.covers(&rec("sim", Some("natural"), None)));
        assert!(!natural.covers(&rec("live", None, real("llvm-21", "gcc", true))));
        assert_eq!(
            by_runtime.unit_text(),
            "*/*/* runtime intel-* | llvm-21 build gcc"
        );
        assert_eq!(nodebug.unit_text(), "*/*/* fixture nest* nodebug");
    }
}
