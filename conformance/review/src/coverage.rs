//! The coverage table: for every requirement id of the checklist, the checks that cover it, and
//! the ids no check covers yet (requirements binding the tool are listed apart: a library cannot
//! violate them). [`gate`] folds in the reasoned MUST exceptions and is the coverage gate.

pub mod gate;

use gate::{Exception, Gate};
use ompd_checks::{Check, Profile};
use serde::Serialize;

/// One requirement of the checklist.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Requirement {
    /// `OMPD-…` id.
    pub id: String,
    /// Level as the checklist grades it (MUST, MUST*, SHOULD, AMBIG, TOOL, or per-profile).
    pub level: String,
    /// The requirement in one line.
    pub text: String,
    /// True when TR 2.001 states it too, at the level 5.x gives it (the table's fourth column
    /// says `TR16`): then a MUST of 5.x binds TR 2.001 libraries as well.
    pub tr16: bool,
}

impl Requirement {
    /// True when the requirement binds only the tool (the harness), not the library.
    pub fn is_tool_only(&self) -> bool {
        self.level == "TOOL" || self.level.ends_with("(test rule)")
    }

    /// True when it is a MUST for a library of profile `p`: by its level ([`must_for`]), or, for
    /// TR 2.001, as a 5.x MUST that the TR states too.
    pub fn binds(&self, p: Profile) -> bool {
        must_for(&self.id, &self.level, p)
            || (p == Profile::Tr2 && self.tr16 && must_for(&self.id, &self.level, Profile::V5_0))
    }
}

/// A row of an id-keyed table: its line number and its three fields.
pub(crate) type IdRow<'a> = (usize, [&'a str; 3]);

/// The rows of a three-column table keyed by requirement id (`OMPD-…<TAB>…<TAB>…`; blank lines
/// and lines starting with `#` skipped): (line number, the three fields), or the first line that
/// is not such a row.
pub(crate) fn id_rows(tsv: &str) -> Result<Vec<IdRow<'_>>, (usize, &str)> {
    let mut out = Vec::new();
    for (n, line) in ompd_report::data_lines(tsv) {
        let mut f = line.splitn(3, '\t');
        match (f.next(), f.next(), f.next()) {
            (Some(id), Some(b), Some(c)) if id.starts_with("OMPD-") => out.push((n, [id, b, c])),
            _ => return Err((n, line)),
        }
    }
    Ok(out)
}

/// Parses the `id<TAB>level<TAB>text[<TAB>TR16]` table (comment lines start with `#`).
pub fn parse(tsv: &str) -> Result<Vec<Requirement>, String> {
    let rows =
        id_rows(tsv).map_err(|(n, line)| format!("requirements line {n}: malformed: {line:?}"))?;
    rows.into_iter()
        .map(|(n, [id, level, rest])| {
            let (text, tr16) = match rest.split_once('\t') {
                None => (rest, false),
                Some((text, "TR16")) => (text, true),
                Some((_, other)) => {
                    return Err(format!(
                        "requirements line {n}: fourth column {other:?} is not TR16"
                    ))
                }
            };
            Ok(Requirement {
                id: id.into(),
                level: level.into(),
                text: text.into(),
                tr16,
            })
        })
        .collect()
}

/// The checklist shipped with the suite.
pub fn checklist() -> Vec<Requirement> {
    parse(suite_data::REQUIREMENTS_TSV).expect("the shipped requirements table parses")
}

/// A requirement with the checks citing it.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The requirement.
    #[serde(flatten)]
    pub requirement: Requirement,
    /// Ids of the checks that cite it.
    pub checks: Vec<&'static str>,
}

/// The whole table.
#[derive(Clone, Debug, Serialize)]
pub struct Coverage {
    /// One row per requirement, in checklist order.
    pub rows: Vec<Row>,
    /// Requirement ids cited by a check but absent from the checklist (check, id).
    pub unknown: Vec<(&'static str, &'static str)>,
    /// Per profile: the checks that run and the MUST requirements they judge, with the listed
    /// exceptions folded in.
    pub gate: Gate,
    /// The MUST exceptions the table was built with.
    pub exceptions: Vec<Exception>,
}

impl Coverage {
    /// Builds the table for `checks` over `reqs`, with the MUST exceptions `exceptions`.
    pub fn new(
        checks: &[&'static Check],
        reqs: Vec<Requirement>,
        exceptions: Vec<Exception>,
    ) -> Coverage {
        let gate = Gate::new(checks, &reqs, &exceptions);
        let rows: Vec<Row> = reqs
            .into_iter()
            .map(|r| Row {
                checks: checks
                    .iter()
                    .filter(|c| c.requirements.contains(&r.id.as_str()))
                    .map(|c| c.id)
                    .collect(),
                requirement: r,
            })
            .collect();
        let unknown = checks
            .iter()
            .flat_map(|c| c.requirements.iter().map(move |r| (c.id, *r)))
            .filter(|(_, r)| !rows.iter().any(|row| row.requirement.id == *r))
            .collect();
        Coverage {
            rows,
            unknown,
            gate,
            exceptions,
        }
    }

    /// Library requirements with no check.
    pub fn uncovered(&self) -> impl Iterator<Item = &Row> {
        self.rows
            .iter()
            .filter(|r| r.checks.is_empty() && !r.requirement.is_tool_only())
    }

    /// The table as Markdown: id, level, number of checks and their ids, then a summary line.
    pub fn markdown(&self) -> String {
        use std::fmt::Write;
        let mut s = String::from("| requirement | level | checks |\n|---|---|---|\n");
        for r in &self.rows {
            let checks = if r.requirement.is_tool_only() {
                "(binds the tool)".to_string()
            } else if let Some(e) = r
                .checks
                .is_empty()
                .then(|| self.exceptions.iter().find(|e| e.id == r.requirement.id))
                .flatten()
            {
                format!("{}: {}", e.status.name(), e.reason)
            } else if r.checks.is_empty() {
                "**not covered**".to_string()
            } else {
                r.checks.join(", ")
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} |",
                r.requirement.id, r.requirement.level, checks
            );
        }
        let library = self
            .rows
            .iter()
            .filter(|r| !r.requirement.is_tool_only())
            .count();
        let covered = library - self.uncovered().count();
        let _ = writeln!(
            s,
            "\n{covered} of {library} library requirements covered by at least one check.\n"
        );
        s.push_str(&self.gate.markdown());
        s
    }
}

/// Whether a requirement graded `level` (with id `id`) is a MUST for a library of profile `p`.
/// A plain `MUST`/`MUST*` binds every 5.x profile, except on an `OMPD-LEG-*` id (a routine of
/// TR 2.001 only), where it binds TR 2.001 alone; a qualified one binds the profiles it names
/// (`(P60…)`: 6.0, `(P52+…)`: 5.2 on, `(P51+…)`: 5.1 on, `(TR16)`: TR 2.001; `(P60 for …)` names
/// a part the 6.0 text adds to a MUST of every 5.x profile). The checklist
/// grades nothing for the 2014 draft (its text states no requirement in the specification's
/// terms), so no id binds it.
pub fn must_for(id: &str, level: &str, p: Profile) -> bool {
    if p == Profile::Draft2014 {
        return false;
    }
    let tr = p == Profile::Tr2;
    level.split([',', '/']).map(str::trim).any(|seg| {
        let Some(rest) = seg.strip_prefix("MUST") else {
            return false;
        };
        let q = rest.trim_start_matches('*').trim();
        if q.starts_with("(P60 for ") {
            // A 6.0 rule within a requirement that binds every 5.x profile.
            tr == id.starts_with("OMPD-LEG-")
        } else if q.starts_with("(P60") {
            p >= Profile::V6_0
        } else if q.starts_with("(P52+") {
            p >= Profile::V5_2
        } else if q.starts_with("(P51+") {
            p >= Profile::V5_1
        } else if q.starts_with("(TR16") {
            tr
        } else if q.starts_with("(test rule)") {
            false
        } else {
            tr == id.starts_with("OMPD-LEG-")
        }
    })
}

/// True when `c` runs for a library of profile `p`: its requirement is not newer, and the
/// profile has every routine it calls (under its name or the TR's), in the form it calls.
pub fn runs_for(c: &Check, p: Profile) -> bool {
    c.since <= p && c.entry_points.iter().all(|e| e.served_in(p)) && c.older_form(p).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ompd_checks::{registry, Severity};
    use std::collections::BTreeMap;

    /// Checks that judge an indicator of a MUST requirement, not a violation of it: what they
    /// find does not break the requirement by itself, so it warns. (check id, why)
    const INDICATORS: &[(&str, &str)] = &[
        (
            "static.needed.no_openmp_runtime",
            "a DT_NEEDED entry on the OpenMP runtime loads the runtime into the debugger's \
             process; it does not show that the library needs to run inside the target \
             (OMPD-GEN-006)",
        ),
        (
            "lib.inventory.no_unknown_ompd_symbols",
            "an extra exported ompd_* symbol breaks neither OMPD-GEN-001 nor OMPD-GEN-002, which \
             require the profile's routines to be exported",
        ),
    ];

    /// Checks that judge only the SHOULD part of a MUST requirement (its level grades a SHOULD
    /// part, or its test rule a warning): that requirement does not make them fail. (check id,
    /// requirement, why)
    const SHOULD_PARTS: &[(&str, &str, &str)] = &[
        (
            "fault.code.alloc",
            "OMPD-MEM-006",
            "MUST (non-ok), SHOULD (nomem): the check judges which non-ok code follows a failed \
             alloc_memory (nomem), the SHOULD part; fault.<routine>.alloc judge the MUST part",
        ),
        (
            "aspace.process_initialize.foreign_runtime_code",
            "OMPD-PROC-002",
            "its test rule grades ok a FAIL and another non-ok code than incompatible a WARN: the \
             check judges the code, aspace.process_initialize.foreign_runtime the decline",
        ),
    ];

    /// Checks that judge TR 2.001 libraries alone: their run skips a 5.x library. (check id, why)
    const TR_ONLY: &[(&str, &str)] = &[(
        "tr.thread_handle.non_openmp_thread",
        "TR 2.001's answer for a thread that never entered OpenMP (bad_input); 5.x answers \
         unavailable, which thread.handle.non_openmp_thread judges",
    )];

    /// Severity follows the requirement, profile by profile (the checklist grades nothing for
    /// the 2014 draft, so its checks keep the severity of the later texts there): where a check runs for a profile
    /// and one requirement it cites is a MUST there ([`Requirement::binds`]: its level read by
    /// [`must_for`], qualified levels included, and TR 2.001's own statements), the check fails
    /// on a violation (`Must` at that profile); where none is, it never fails.
    #[test]
    fn a_check_is_as_severe_as_the_requirements_it_cites() {
        let reqs: BTreeMap<String, Requirement> =
            checklist().into_iter().map(|r| (r.id.clone(), r)).collect();
        let must = |id: &str, p: Profile| reqs.get(id).is_some_and(|r| r.binds(p));
        let mut wrong = Vec::new();
        for c in registry() {
            let indicator = INDICATORS.iter().any(|(id, _)| *id == c.id);
            let tr_only = TR_ONLY.iter().any(|(id, _)| *id == c.id);
            let graded = |p: &Profile| {
                *p != Profile::Draft2014 && runs_for(c, *p) && (!tr_only || *p == Profile::Tr2)
            };
            for p in Profile::ALL.into_iter().filter(graded) {
                let should_part =
                    |r: &str| SHOULD_PARTS.iter().any(|(id, q, _)| *id == c.id && *q == r);
                let binding: Vec<&str> = c
                    .requirements
                    .iter()
                    .copied()
                    .filter(|r| must(r, p) && !should_part(r))
                    .collect();
                let fails = c.severity.at(p) == Severity::Must;
                if !binding.is_empty() && !fails && !indicator {
                    wrong.push(format!(
                        "{} at {p:?} never fails, yet cites {binding:?}",
                        c.id
                    ));
                }
                if binding.is_empty() && fails {
                    wrong.push(format!("{} at {p:?} fails, yet cites no MUST there", c.id));
                }
            }
        }
        assert!(
            wrong.is_empty(),
            "{}\n{} in all",
            wrong.join("\n"),
            wrong.len()
        );
        for (id, _) in INDICATORS {
            let c = ompd_checks::find(id).expect("an indicator is a check");
            assert_eq!(c.severity, Severity::Should, "{id}");
        }
        for (id, req, _) in SHOULD_PARTS {
            let c = ompd_checks::find(id).expect("a SHOULD-part check is a check");
            assert_eq!(c.severity, Severity::Should, "{id}");
            assert!(c.requirements.contains(req), "{id} cites {req}");
            let r = &reqs[*req];
            let warn_part = r.level.contains("SHOULD") || r.text.contains("= WARN");
            assert!(r.level.contains("MUST") && warn_part, "{req}: {}", r.level);
        }
    }

    /// `MustFrom(p)` fails from profile `p` on: one of the requirements the check cites must be
    /// a MUST from `p` on, and not in the profile before it, as its level names.
    #[test]
    fn a_must_from_check_starts_where_its_requirement_does() {
        let levels: BTreeMap<String, String> =
            checklist().into_iter().map(|r| (r.id, r.level)).collect();
        let binds = |id: &str, p: Profile| levels.get(id).is_some_and(|l| must_for(id, l, p));
        let mut wrong = Vec::new();
        for c in registry() {
            let Severity::MustFrom(p) = c.severity else {
                continue;
            };
            let before = Profile::ALL[Profile::ALL.iter().position(|x| *x == p).unwrap_or(1) - 1];
            let starts = c
                .requirements
                .iter()
                .any(|r| binds(r, p) && !binds(r, before));
            if !starts {
                let cited: Vec<String> = c
                    .requirements
                    .iter()
                    .map(|r| format!("{r} ({})", levels.get(*r).map_or("?", String::as_str)))
                    .collect();
                wrong.push(format!(
                    "{} is MustFrom({p:?}) but cites {}",
                    c.id,
                    cited.join(", ")
                ));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn a_requirement_binds_the_profiles_its_level_names() {
        assert!(must_for("OMPD-GEN-001", "MUST", Profile::V5_0));
        assert!(!must_for("OMPD-GEN-001", "MUST", Profile::Tr2));
        assert!(must_for("OMPD-LEG-001", "MUST", Profile::Tr2));
        assert!(!must_for("OMPD-LEG-001", "MUST", Profile::V5_0));
        assert!(must_for("OMPD-X", "MUST (P52+)", Profile::V6_0));
        assert!(!must_for("OMPD-X", "MUST (P52+)", Profile::V5_1));
        assert!(!must_for("OMPD-GEN-001", "MUST", Profile::Draft2014));
        assert!(must_for("OMPD-X", "MUST (P60), AMBIG (P5x)", Profile::V6_0));
        assert!(must_for(
            "OMPD-X",
            "MUST (P60 for implicit-task rule)",
            Profile::V5_0
        ));
        assert!(!must_for(
            "OMPD-X",
            "MUST (P60), AMBIG (P5x)",
            Profile::V5_2
        ));
        assert!(must_for(
            "OMPD-X",
            "MUST (P51+), AMBIG (P50)",
            Profile::V5_1
        ));
        assert!(!must_for(
            "OMPD-X",
            "MUST (P51+), AMBIG (P50)",
            Profile::V5_0
        ));
        assert!(must_for(
            "OMPD-X",
            "SHOULD (P5x), MUST (P60)",
            Profile::V6_0
        ));
        assert!(!must_for(
            "OMPD-X",
            "SHOULD (P5x), MUST (P60)",
            Profile::V5_0
        ));
        assert!(must_for("OMPD-X", "MUST (TR16)", Profile::Tr2));
        assert!(!must_for("OMPD-X", "MUST (test rule)", Profile::V5_0));
        assert!(!must_for("OMPD-X", "SHOULD", Profile::V5_0));
    }

    #[test]
    fn the_5_2_device_checks_run_from_5_2_on() {
        let reqs = checklist();
        let gate = Gate::new(registry(), &reqs, &[]);
        let at = |p: Profile| {
            gate.profiles
                .iter()
                .find(|r| r.profile == p)
                .unwrap()
                .checks
        };
        assert!(at(Profile::V5_2) >= at(Profile::V5_0) + 3);
        assert!(at(Profile::V6_0) >= at(Profile::V5_2));
        assert!(at(Profile::Tr2) < at(Profile::V5_0));
    }

    #[test]
    fn every_cited_requirement_is_in_the_checklist() {
        let cov = Coverage::new(registry(), checklist(), Vec::new());
        assert!(cov.unknown.is_empty(), "{:?}", cov.unknown);
    }

    #[test]
    fn the_table_names_uncovered_requirements() {
        let reqs = parse("OMPD-A-001\tMUST\ta\nOMPD-A-002\tTOOL\tb\nOMPD-GEN-001\tMUST\tc\n")
            .expect("parses");
        let cov = Coverage::new(registry(), reqs, Vec::new());
        let md = cov.markdown();
        assert!(
            md.contains("| OMPD-A-001 | MUST | **not covered** |"),
            "{md}"
        );
        assert!(md.contains("(binds the tool)"), "{md}");
        assert!(md.contains("1 of 2 library requirements covered"), "{md}");
        assert!(parse("OMPD-X\tonly two").is_err());
    }
}
