//! Which expectation entries may cover a result, found without matching every entry against
//! every result: a library's applicable entries by check id ([`ByCheck`]), and a library's
//! results grouped by check id with one result of each distinct unit ([`Results`]). The gate
//! asks the same questions as over the whole lists, with the same answers, in time that grows
//! with the entries a check has rather than with all of them.

use crate::expectations::Expectation;
use ompd_report::ResultRecord;
use std::collections::{BTreeMap, HashMap, HashSet};

/// The entries of a library (in the order the gate tries them) that may cover each check id:
/// those whose check globs match it.
pub(crate) struct ByCheck<'f> {
    entries: Vec<&'f Expectation>,
    of: HashMap<String, Vec<usize>>,
}

impl<'f> ByCheck<'f> {
    /// An index over `entries`, in the order the gate tries them.
    pub(crate) fn new(entries: Vec<&'f Expectation>) -> Self {
        ByCheck {
            entries,
            of: HashMap::new(),
        }
    }

    /// The first entry (its position in the list) that covers `r`, as the first of all the
    /// entries that covers it.
    pub(crate) fn first_covering(&mut self, r: &ResultRecord) -> Option<usize> {
        if !self.of.contains_key(&r.check) {
            let of_check = (0..self.entries.len())
                .filter(|&k| self.entries[k].check.matches(&r.check))
                .collect();
            self.of.insert(r.check.clone(), of_check);
        }
        self.of[&r.check].iter().copied().find(|&k| {
            let x = self.entries[k];
            x.library.matches(&r.library) && x.describes_unit(r)
        })
    }
}

/// A library's results, by check id, and one result of each distinct unit.
pub(crate) struct Results<'r> {
    by_check: BTreeMap<&'r str, Vec<&'r ResultRecord>>,
    units: Vec<&'r ResultRecord>,
}

/// What an entry's unit conditions ([`Expectation::describes_unit`]) read of a result: its
/// scenario, arch, layout, target kind, and a real target's runtime, build, fixture and
/// `OMP_DEBUG` setting.
type UnitKey<'r> = ([&'r str; 3], [Option<&'r str>; 4], Option<bool>);

/// The unit of `r` as [`UnitKey`].
fn unit_key(r: &ResultRecord) -> UnitKey<'_> {
    let real = r.real.as_ref();
    (
        [&r.scenario, &r.arch, &r.target],
        [
            r.layout.as_deref(),
            real.and_then(|x| x.runtime.as_deref()),
            real.and_then(|x| x.build.as_deref()),
            real.and_then(|x| x.fixture.as_deref()),
        ],
        real.and_then(|x| x.omp_debug),
    )
}

impl<'r> Results<'r> {
    /// `mine` grouped; `units` keeps the first result of each unit among those `keep` selects.
    pub(crate) fn new(mine: &[&'r ResultRecord], keep: impl Fn(&ResultRecord) -> bool) -> Self {
        let mut by_check: BTreeMap<&str, Vec<&ResultRecord>> = BTreeMap::new();
        let mut seen: HashSet<UnitKey> = HashSet::new();
        let mut units = Vec::new();
        for &r in mine {
            by_check.entry(r.check.as_str()).or_default().push(r);
            if keep(r) && seen.insert(unit_key(r)) {
                units.push(r);
            }
        }
        Results { by_check, units }
    }

    /// The check ids `x`'s check globs match.
    pub(crate) fn checks_of<'a>(
        &'a self,
        x: &'a Expectation,
    ) -> impl Iterator<Item = &'r str> + 'a {
        self.by_check.keys().copied().filter(|c| x.check.matches(c))
    }

    /// True when `x` covers one of the results.
    pub(crate) fn any_covered(&self, x: &Expectation) -> bool {
        self.checks_of(x)
            .flat_map(|c| &self.by_check[c])
            .any(|r| x.covers(r))
    }

    /// True when `x` describes the unit of one of the kept results.
    pub(crate) fn any_unit_described(&self, x: &Expectation) -> bool {
        self.units.iter().any(|r| x.describes_unit(r))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::expectations::File;
    use ompd_report::Outcome;

    /// A simulated result of library `v-1` on `lp64-le/natural` (the gate's and this module's tests judge these).
    pub(crate) fn rec(check: &str, scenario: &str, outcome: Outcome) -> ResultRecord {
        ResultRecord {
            library: "v-1".into(),
            check: check.into(),
            requirements: vec![],
            scenario: scenario.into(),
            arch: "lp64-le".into(),
            layout: Some("natural".into()),
            outcome,
            expected: String::new(),
            actual: "a".into(),
            detail: String::new(),
            flaky: false,
            target: "sim".into(),
            real: None,
            gate: None,
            replay: None,
        }
    }

    fn on(check: &str, scenario: &str, arch: &str) -> ResultRecord {
        ResultRecord {
            arch: arch.into(),
            ..rec(check, scenario, Outcome::Fail)
        }
    }

    #[test]
    fn the_index_answers_as_a_scan_of_every_entry() {
        let text = "vendor = 'v'\nlibraries = ['v-*']\n\
            [[expect]]\ncheck = 'icv.*'\nscenario = 'serial'\noutcome = 'fail'\nreason = 'r'\n\
            [[expect]]\ncheck = ['task.frame.*', 'icv.value.dyn-var']\narch = '*-be'\noutcome = 'fail'\nreason = 'r'\n\
            [[expect]]\ncheck = '*'\nlibrary = 'v-2'\noutcome = 'fail'\nreason = 'r'\n\
            [[expect]]\ncheck = 'icv.value.*'\noutcome = 'fail'\nreason = 'r'\n\
            [[expect]]\ncheck = 'state.get.*'\nscenario = 'nested-tasks'\noutcome = 'fail'\nreason = 'r'\n\
            [[expect]]\ncheck = 'thread.*'\nscenario = 'untracked'\noutcome = 'fail'\nreason = 'r'\n";
        let f = File::parse(text, std::path::Path::new("v.toml")).unwrap();
        let all: Vec<&Expectation> = f.expect.iter().collect();
        let mut index = ByCheck::new(all.clone());
        let results: Vec<ResultRecord> = [
            ("icv.value.dyn-var", "serial", "lp64-le"),
            ("icv.value.dyn-var", "nested-tasks", "ilp32-be"),
            ("icv.value.dyn-var", "nested-tasks", "lp64-le"),
            ("task.frame.matches_model", "serial", "lp64-be"),
            ("task.frame.matches_model", "serial", "lp64-le"),
            ("thread.id.round_trip", "serial", "lp64-le"),
            ("thread.id.round_trip", "untracked", "lp64-le"),
        ]
        .iter()
        .map(|&(c, s, a)| on(c, s, a))
        .collect();
        let found: Vec<Option<usize>> = results.iter().map(|r| index.first_covering(r)).collect();
        let scanned: Vec<Option<usize>> = results
            .iter()
            .map(|r| all.iter().position(|x| x.covers(r)))
            .collect();
        assert_eq!(found, scanned);
        assert_eq!(
            found,
            [Some(0), Some(1), Some(3), Some(1), None, None, Some(5)]
        );
        let mine: Vec<&ResultRecord> = results.iter().collect();
        let keep = |r: &ResultRecord| r.check != "thread.id.round_trip";
        let grouped = Results::new(&mine, keep);
        for x in &all {
            assert_eq!(grouped.any_covered(x), mine.iter().any(|r| x.covers(r)));
            let described = mine.iter().any(|r| keep(r) && x.describes_unit(r));
            assert_eq!(grouped.any_unit_described(x), described);
        }
        assert!(
            !grouped.any_unit_described(all[5]),
            "the untracked unit has only a result not kept"
        );
    }
}
