//! The MUST coverage gate: every MUST requirement that binds a profile is cited by a check that
//! runs for that profile, or listed in `golden/must-exceptions.tsv` with its reason. An
//! `unjudgeable` entry (reviewed: nothing a library does can be seen to break it) counts as
//! covered; an `open` entry (judgeable, not judged yet) counts as not covered but is known. The
//! gate fails on a MUST that is neither judged nor listed, and on a stale entry, so the list can
//! only shrink.

use super::{runs_for, Requirement};
use ompd_checks::{Check, Profile, Severity};
use serde::Serialize;

/// Why a MUST requirement is not judged by a check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It cannot be judged from outside the library (reviewed reason); counts as covered.
    Unjudgeable,
    /// It can be judged and is not yet; counts as not covered.
    Open,
}

impl Status {
    /// The status as the list spells it.
    pub fn name(self) -> &'static str {
        match self {
            Status::Unjudgeable => "unjudgeable",
            Status::Open => "open",
        }
    }
}

/// One entry of the exceptions list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Exception {
    /// `OMPD-…` id.
    pub id: String,
    /// Why no check judges it.
    pub status: Status,
    /// The reason, in one line.
    pub reason: String,
}

/// Parses the `id<TAB>status<TAB>reason` list (comment lines start with `#`).
pub fn parse(tsv: &str) -> Result<Vec<Exception>, String> {
    let rows = super::id_rows(tsv).map_err(|(n, line)| {
        format!("MUST exceptions line {n}: needs an id, a status and a reason: {line:?}")
    })?;
    let mut out = Vec::new();
    for (n, [id, status, reason]) in rows {
        let status = match status {
            "unjudgeable" => Status::Unjudgeable,
            "open" => Status::Open,
            _ => {
                return Err(format!(
                    "MUST exceptions line {n}: status {status:?} is neither unjudgeable nor open"
                ))
            }
        };
        if reason.len() <= 20 {
            return Err(format!(
                "MUST exceptions line {n}: {id}: the reason says nothing"
            ));
        }
        out.push(Exception {
            id: id.into(),
            status,
            reason: reason.into(),
        });
    }
    Ok(out)
}

/// The list shipped with the suite.
pub fn shipped() -> Vec<Exception> {
    parse(suite_data::MUST_EXCEPTIONS_TSV).expect("the shipped MUST exceptions parse")
}

/// One profile's MUST coverage with the exceptions folded in.
#[derive(Clone, Debug, Serialize)]
pub struct ProfileGate {
    /// The profile.
    pub profile: Profile,
    /// Checks that run for a library of the profile.
    pub checks: usize,
    /// MUST requirements that bind it.
    pub musts: usize,
    /// Those cited by a check that runs for it.
    pub judged: usize,
    /// Those listed `unjudgeable`.
    pub unjudgeable: usize,
    /// Those listed `open`.
    pub open: Vec<String>,
    /// Those neither judged nor listed: the gate fails on them.
    pub unlisted: Vec<String>,
}

impl ProfileGate {
    /// Judged and unjudgeable, in per cent of the MUSTs (100 when none binds).
    pub fn percent(&self) -> usize {
        (100 * (self.judged + self.unjudgeable))
            .checked_div(self.musts)
            .unwrap_or(100)
    }
}

/// The gate over every profile.
#[derive(Clone, Debug, Serialize)]
pub struct Gate {
    /// One row per profile.
    pub profiles: Vec<ProfileGate>,
    /// Entries that no longer apply, each with why.
    pub stale: Vec<String>,
}

/// Whether `id` is cited by a check that runs for `p` and can fail there (a check that only
/// warns at `p` shows no violation of a MUST).
fn judged(checks: &[&'static Check], id: &str, p: Profile) -> bool {
    checks.iter().any(|c| {
        runs_for(c, p) && c.requirements.contains(&id) && c.severity.at(p) == Severity::Must
    })
}

/// One profile's row.
fn row(
    checks: &[&'static Check],
    reqs: &[Requirement],
    ex: &[Exception],
    p: Profile,
) -> ProfileGate {
    let mut g = ProfileGate {
        profile: p,
        checks: checks.iter().filter(|c| runs_for(c, p)).count(),
        musts: 0,
        judged: 0,
        unjudgeable: 0,
        open: Vec::new(),
        unlisted: Vec::new(),
    };
    for r in reqs.iter().filter(|r| r.binds(p)) {
        g.musts += 1;
        if judged(checks, &r.id, p) {
            g.judged += 1;
            continue;
        }
        match ex.iter().find(|e| e.id == r.id).map(|e| e.status) {
            Some(Status::Unjudgeable) => g.unjudgeable += 1,
            Some(Status::Open) => g.open.push(r.id.clone()),
            None => g.unlisted.push(r.id.clone()),
        }
    }
    g
}

/// Why the entry `e` is stale, if it is: it names no MUST of any profile, or a check judges it
/// in every profile it binds.
fn staleness(checks: &[&'static Check], reqs: &[Requirement], e: &Exception) -> Option<String> {
    let Some(r) = reqs.iter().find(|r| r.id == e.id) else {
        return Some(format!("{} is not in the checklist", e.id));
    };
    let binding: Vec<Profile> = Profile::ALL
        .iter()
        .copied()
        .filter(|&p| r.binds(p))
        .collect();
    if binding.is_empty() {
        return Some(format!("{} ({}) binds no profile as a MUST", e.id, r.level));
    }
    binding.iter().all(|&p| judged(checks, &r.id, p)).then(|| {
        format!(
            "{} is judged by a check in every profile it binds: remove the entry",
            e.id
        )
    })
}

impl Gate {
    /// The gate of `checks` over `reqs` with the exceptions `ex`.
    pub fn new(checks: &[&'static Check], reqs: &[Requirement], ex: &[Exception]) -> Gate {
        let mut stale: Vec<String> = ex
            .iter()
            .filter_map(|e| staleness(checks, reqs, e))
            .collect();
        for (i, e) in ex.iter().enumerate() {
            if ex[..i].iter().any(|o| o.id == e.id) {
                stale.push(format!("{} is listed twice", e.id));
            }
        }
        Gate {
            profiles: Profile::ALL
                .iter()
                .map(|&p| row(checks, reqs, ex, p))
                .collect(),
            stale,
        }
    }

    /// The problems that fail the gate, one line each (empty: it passes).
    pub fn problems(&self) -> Vec<String> {
        let mut unlisted: Vec<(&str, Vec<String>)> = Vec::new();
        for g in &self.profiles {
            for id in &g.unlisted {
                match unlisted.iter_mut().find(|(i, _)| i == id) {
                    Some((_, ps)) => ps.push(g.profile.to_string()),
                    None => unlisted.push((id, vec![g.profile.to_string()])),
                }
            }
        }
        unlisted
            .into_iter()
            .map(|(id, ps)| {
                format!(
                    "{id} is a MUST for {} and no check that can fail there cites it: judge it, or list it in golden/must-exceptions.tsv with a reason",
                    ps.join(", ")
                )
            })
            .chain(self.stale.iter().cloned())
            .collect()
    }

    /// The per-profile table as Markdown.
    pub fn markdown(&self) -> String {
        use std::fmt::Write;
        let mut s = String::from(
            "| profile | checks that run | MUST requirements | judged by a check that can fail | unjudgeable (reasoned) | open | MUST coverage |\n|---|---|---|---|---|---|---|\n",
        );
        for g in &self.profiles {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} % |",
                g.profile,
                g.checks,
                g.musts,
                g.judged,
                g.unjudgeable,
                g.open.len(),
                g.percent()
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coverage::checklist;
    use ompd_checks::registry;

    /// The gate CI runs: every MUST of every profile judged or listed, and no stale entry.
    #[test]
    fn every_must_is_judged_or_listed_with_a_reason() {
        let gate = Gate::new(registry(), &checklist(), &shipped());
        let problems = gate.problems();
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn an_unlisted_must_and_a_stale_entry_fail_the_gate() {
        let reqs = crate::coverage::parse(
            "OMPD-ZZ-001\tMUST\ta\nOMPD-GEN-001\tMUST\tb\nOMPD-ZZ-002\tSHOULD\tc\n",
        )
        .expect("parses");
        let ex = parse(
            "OMPD-GEN-001\topen\tlisted though a check cites it\nOMPD-ZZ-002\tunjudgeable\tnot a MUST of any profile at all\n",
        )
        .expect("parses");
        let gate = Gate::new(registry(), &reqs, &ex);
        let p = gate.problems().join("\n");
        assert!(
            p.contains("OMPD-ZZ-001 is a MUST for OpenMP 5.0, OpenMP 5.1"),
            "{p}"
        );
        assert!(p.contains("OMPD-GEN-001 is judged"), "{p}");
        assert!(p.contains("OMPD-ZZ-002 (SHOULD) binds no profile"), "{p}");
    }

    #[test]
    fn an_open_entry_counts_as_not_covered_and_an_unjudgeable_one_as_covered() {
        let reqs =
            crate::coverage::parse("OMPD-ZZ-001\tMUST\ta\nOMPD-ZZ-002\tMUST\tb\n").expect("parses");
        let ex = parse(
            "OMPD-ZZ-001\topen\tneeds a target nobody has built yet\nOMPD-ZZ-002\tunjudgeable\tbinds the tool and nothing else\n",
        )
        .expect("parses");
        let gate = Gate::new(registry(), &reqs, &ex);
        let g = gate
            .profiles
            .iter()
            .find(|g| g.profile == Profile::V5_0)
            .unwrap();
        assert_eq!(
            (g.musts, g.unjudgeable, g.open.len(), g.percent()),
            (2, 1, 1, 50)
        );
        assert!(gate.problems().is_empty());
    }

    #[test]
    fn malformed_entries_are_refused() {
        assert!(parse("OMPD-X\tmaybe\tsome reason long enough here").is_err());
        assert!(parse("OMPD-X\topen\tshort").is_err());
        assert!(parse("OMPD-X\topen").is_err());
    }
}
