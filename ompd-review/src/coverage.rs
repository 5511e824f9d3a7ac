//! The coverage table: for every requirement id of the checklist, the checks that cover it, and
//! the ids no check covers yet (requirements binding the tool are listed apart: a library cannot
//! violate them).

use ompd_checks::Check;
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
}

impl Requirement {
    /// True when the requirement binds only the tool (the harness), not the library.
    pub fn is_tool_only(&self) -> bool {
        self.level == "TOOL" || self.level.ends_with("(test rule)")
    }
}

/// Parses the `id<TAB>level<TAB>text` table (comment lines start with `#`).
pub fn parse(tsv: &str) -> Result<Vec<Requirement>, String> {
    let mut out = Vec::new();
    for (n, line) in tsv.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut f = line.splitn(3, '\t');
        match (f.next(), f.next(), f.next()) {
            (Some(id), Some(level), Some(text)) if id.starts_with("OMPD-") => {
                out.push(Requirement {
                    id: id.into(),
                    level: level.into(),
                    text: text.into(),
                })
            }
            _ => return Err(format!("requirements line {}: malformed: {line:?}", n + 1)),
        }
    }
    Ok(out)
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
}

impl Coverage {
    /// Builds the table for `checks` over `reqs`.
    pub fn new(checks: &[&'static Check], reqs: Vec<Requirement>) -> Coverage {
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
        Coverage { rows, unknown }
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
            "\n{covered} of {library} library requirements covered by at least one check."
        );
        s
    }
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

    /// Severity follows the requirement: a check citing a plain MUST (or MUST*) requirement
    /// fails when it finds a violation, in every profile (`Must`); one citing no requirement
    /// that is a MUST in any profile never fails (it is not `Must`). Requirements whose level
    /// depends on the profile (`MUST (P60), AMBIG (P5x)`) leave the check free to be
    /// `MustFrom` or to grade each finding itself.
    #[test]
    fn a_check_is_as_severe_as_the_requirements_it_cites() {
        let levels: BTreeMap<String, String> =
            checklist().into_iter().map(|r| (r.id, r.level)).collect();
        let level = |id: &str| levels.get(id).map_or("", String::as_str);
        let mut wrong = Vec::new();
        for c in registry() {
            let plain_must: Vec<&str> = c
                .requirements
                .iter()
                .copied()
                .filter(|r| matches!(level(r), "MUST" | "MUST*"))
                .collect();
            let any_must = c.requirements.iter().any(|r| level(r).starts_with("MUST"));
            let indicator = INDICATORS.iter().any(|(id, _)| *id == c.id);
            if !plain_must.is_empty() && c.severity != Severity::Must && !indicator {
                wrong.push(format!(
                    "{} is {:?} but cites {plain_must:?}",
                    c.id, c.severity
                ));
            }
            if !any_must && c.severity == Severity::Must {
                wrong.push(format!("{} is Must but cites no MUST requirement", c.id));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
        for (id, _) in INDICATORS {
            let c = ompd_checks::find(id).expect("an indicator is a check");
            assert_eq!(c.severity, Severity::Should, "{id}");
        }
    }

    #[test]
    fn every_cited_requirement_is_in_the_checklist() {
        let cov = Coverage::new(registry(), checklist());
        assert!(cov.unknown.is_empty(), "{:?}", cov.unknown);
    }

    #[test]
    fn the_table_names_uncovered_requirements() {
        let reqs = parse("OMPD-A-001\tMUST\ta\nOMPD-A-002\tTOOL\tb\nOMPD-GEN-001\tMUST\tc\n")
            .expect("parses");
        let cov = Coverage::new(registry(), reqs);
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
