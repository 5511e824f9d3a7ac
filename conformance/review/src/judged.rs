//! The judged baseline: where each library was judged (a pass, warning or failure) in the run
//! its expectations were blessed from, so that a check that stops judging it shows.
//!
//! It lives beside each expectations file (`llvm.toml` → `llvm.judged.tsv`), one row per check,
//! target kind and scenario, naming the libraries of the file judged there:
//! `check<TAB>target<TAB>scenario<TAB>library library…`. Only the scenario phase counts (the
//! generated cases of the property phase vary with `--cases`). The gate calls a check
//! *silenced* for a library where the row names the library and the run's results there are all
//! skips or not-supported, and no expectation entry covers them ([`ompd_report::Gate::Silenced`]).

use ompd_report::{Outcome, ResultRecord};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Where a result was judged: check, target kind, scenario.
pub type Place = (String, String, String);

/// The judged baseline of one expectations file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Baseline {
    rows: BTreeMap<Place, BTreeSet<String>>,
}

/// True for an outcome that judged the library.
pub fn judges(o: Outcome) -> bool {
    matches!(
        o,
        Outcome::Pass | Outcome::Warn | Outcome::Fail | Outcome::Crash | Outcome::Timeout
    )
}

/// The place of a result of the scenario phase (`None` for a generated case).
pub fn place(r: &ResultRecord) -> Option<Place> {
    (!ompd_report::is_generated(&r.scenario))
        .then(|| (r.check.clone(), r.target.clone(), r.scenario.clone()))
}

/// The baseline file beside the expectations file `toml`.
pub fn path_of(toml: &Path) -> PathBuf {
    toml.with_extension("judged.tsv")
}

impl Baseline {
    /// Parses the rows; `#` comments and blank lines are skipped.
    pub fn parse(text: &str) -> Result<Baseline, String> {
        let mut rows = BTreeMap::new();
        for (n, l) in ompd_report::data_lines(text) {
            let f: Vec<&str> = l.split('\t').collect();
            let [check, target, scenario, libs] = f.as_slice() else {
                return Err(format!(
                    "line {n}: not check, target, scenario and libraries"
                ));
            };
            let libs: BTreeSet<String> = libs.split(' ').map(str::to_string).collect();
            rows.insert(
                (check.to_string(), target.to_string(), scenario.to_string()),
                libs,
            );
        }
        Ok(Baseline { rows })
    }

    /// The file's text.
    pub fn render(&self) -> String {
        let mut s = String::from(
            "# Where each library was judged (pass, warn or fail) when its expectations were blessed:\n\
             # check<TAB>target<TAB>scenario<TAB>libraries. Written by ompd-conform run --bless.\n",
        );
        for ((check, target, scenario), libs) in &self.rows {
            let libs: Vec<&str> = libs.iter().map(String::as_str).collect();
            s.push_str(&format!(
                "{check}\t{target}\t{scenario}\t{}\n",
                libs.join(" ")
            ));
        }
        s
    }

    /// True when `lib` was judged at `place`.
    pub fn judged(&self, lib: &str, place: &Place) -> bool {
        self.rows.get(place).is_some_and(|l| l.contains(lib))
    }

    /// Records where `lib` is judged now, at the places a run ran (`ran`) of the target kinds in
    /// `targets`: a place it `judged` names the library, another one no longer does. Places
    /// the run did not run, other kinds and other libraries stay as they were.
    pub fn record(
        &mut self,
        lib: &str,
        targets: &BTreeSet<String>,
        ran: &BTreeSet<Place>,
        judged: &BTreeSet<Place>,
    ) {
        for p in ran.iter().filter(|p| targets.contains(&p.1)) {
            if judged.contains(p) {
                self.rows
                    .entry(p.clone())
                    .or_default()
                    .insert(lib.to_string());
            } else if let Some(libs) = self.rows.get_mut(p) {
                libs.remove(lib);
            }
        }
        self.rows.retain(|_, libs| !libs.is_empty());
    }
}

/// Every place of `results` (of the scenario phase).
pub fn places<'a>(results: impl Iterator<Item = &'a ResultRecord>) -> BTreeSet<Place> {
    results.filter_map(place).collect()
}

/// The places where `results` (one library's) judged the library.
pub fn judged_places<'a>(results: impl Iterator<Item = &'a ResultRecord>) -> BTreeSet<Place> {
    results
        .filter(|r| judges(r.outcome))
        .filter_map(place)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(check: &str, target: &str) -> Place {
        (check.into(), target.into(), "serial".into())
    }

    #[test]
    fn a_baseline_renders_what_it_parses_and_records_one_library_per_target_kind() {
        let mut b = Baseline::default();
        let sim: BTreeSet<String> = ["sim".to_string()].into();
        let all: BTreeSet<Place> = [p("x.y", "sim"), p("x.z", "live"), p("x.w", "sim")].into();
        b.record("a", &sim, &all, &all);
        b.record("b", &sim, &all, &[p("x.y", "sim")].into());
        assert!(b.judged("a", &p("x.y", "sim")) && b.judged("b", &p("x.y", "sim")));
        assert!(
            !b.judged("a", &p("x.z", "live")),
            "a live place of a sim-only run"
        );
        assert_eq!(Baseline::parse(&b.render()).unwrap(), b);
        // A run of one check that judges nothing there leaves the other checks' rows alone.
        b.record("a", &sim, &[p("x.y", "sim")].into(), &BTreeSet::new());
        assert!(!b.judged("a", &p("x.y", "sim")) && b.judged("b", &p("x.y", "sim")));
        assert!(
            b.judged("a", &p("x.w", "sim")),
            "a place the run did not run"
        );
        assert!(Baseline::parse("x.y\tsim\n").is_err());
        assert_eq!(
            path_of(Path::new("e/llvm.toml")),
            Path::new("e/llvm.judged.tsv")
        );
    }
}
