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
    use ompd_checks::registry;

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
