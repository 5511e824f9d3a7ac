//! Shards: a run split over N machines (`--shard K/N`), each running the work items `k` of the
//! whole run's plan with `k % N == K - 1`, and [`merge`], which joins the N shard reports into the
//! report the unsharded run would have written: its results in the unsharded run's order, its
//! summary, and its library facts.
//!
//! A shard report says which shard it is and, for each result, its place in the unsharded run's
//! order (`Order`: the phase, the work item and the position within it), so that the merge needs
//! no plan of its own. Results every shard computes alike (the static checks, judged from the
//! file) are kept once.

use crate::{LibraryInfo, Report};
use serde::{Deserialize, Serialize};

/// Which shard of how many (`K/N`, 1-based in text, [`Shard::index`] 0-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// This shard, from 0.
    pub index: usize,
    /// How many shards the run has.
    pub count: usize,
}

impl Shard {
    /// Whether this shard runs work item `k` of the whole run.
    pub fn owns(&self, k: usize) -> bool {
        k % self.count == self.index
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index + 1, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    /// `K/N` with 1 ≤ K ≤ N.
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("--shard {s}: give K/N with 1 <= K <= N (e.g. 2/4)");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (k, n): (usize, usize) = (
            k.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if k == 0 || k > n {
            return Err(bad());
        }
        Ok(Shard {
            index: k - 1,
            count: n,
        })
    }
}

/// A result's place in the unsharded run's order: phase (static, simulated units, real targets,
/// property phase), work item within the phase, position within the item.
pub type Order = [u32; 3];

/// What a shard report adds: which shard, and each result's [`Order`] (parallel to
/// `Report::results`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardInfo {
    /// This shard, from 0.
    pub index: usize,
    /// How many shards the run has.
    pub count: usize,
    /// The order key of each result.
    pub order: Vec<Order>,
}

/// Joins the shard reports of one run (every shard of `1..=N` exactly once, all over the same
/// libraries) into the report of the unsharded run. Gate marks are dropped: the merged report is
/// judged afresh. The error names what is wrong in one line.
pub fn merge(mut shards: Vec<Report>) -> Result<Report, String> {
    let count = check_complete(&shards)?;
    shards.sort_by_key(|r| r.shard.as_ref().map_or(0, |s| s.index));
    let mut keyed = Vec::new();
    for r in &mut shards {
        let info = r.shard.take().unwrap_or_default();
        if info.order.len() != r.results.len() {
            return Err(format!(
                "shard {}/{count} lists {} order keys for {} results",
                info.index + 1,
                info.order.len(),
                r.results.len()
            ));
        }
        keyed.extend(info.order.into_iter().zip(std::mem::take(&mut r.results)));
    }
    keyed.sort_by_key(|(k, _)| *k);
    keyed.dedup_by_key(|(k, _)| *k);
    // Each shard folded its own runtime rows; a check and place two shards judged is one.
    crate::runtime_row::fold(&mut keyed);
    let mut out = Report::new();
    out.libraries = merged_libraries(&shards);
    out.incomplete = shards.iter().any(|r| r.incomplete);
    for r in &shards {
        for (lib, answers) in &r.answers {
            out.answers.insert(lib.clone(), answers.clone());
        }
    }
    for (_, mut rec) in keyed {
        rec.gate = None;
        out.push(rec);
    }
    Ok(out)
}

/// Every shard of one run, once each; returns N.
fn check_complete(shards: &[Report]) -> Result<usize, String> {
    let mut seen = Vec::new();
    for r in shards {
        let s = r
            .shard
            .as_ref()
            .ok_or("a report given to merge is no shard report (run with --shard K/N)")?;
        seen.push((s.index, s.count));
    }
    let count = seen.first().map_or(0, |s| s.1);
    if count == 0 {
        return Err("no shard reports given".into());
    }
    if let Some((_, n)) = seen.iter().find(|s| s.1 != count) {
        return Err(format!("shard reports of {count} and of {n} shards"));
    }
    for k in 0..count {
        match seen.iter().filter(|s| s.0 == k).count() {
            0 => return Err(format!("shard {}/{count} is missing", k + 1)),
            1 => {}
            _ => return Err(format!("shard {}/{count} is given twice", k + 1)),
        }
    }
    let libs = |r: &Report| {
        r.libraries
            .iter()
            .map(|l| l.name.clone())
            .collect::<Vec<_>>()
    };
    if shards.iter().any(|r| libs(r) != libs(&shards[0])) {
        return Err("the shard reports ran different libraries".into());
    }
    Ok(count)
}

/// Each library's facts, joined over the shards: the first shard's, with what it lacks (the
/// versions a library answers in a unit the shard did not run) taken from the others, and the
/// diagnostics and quarantined entry points of all.
fn merged_libraries(shards: &[Report]) -> Vec<LibraryInfo> {
    let mut libs = shards[0].libraries.clone();
    for r in &shards[1..] {
        for (into, from) in libs.iter_mut().zip(&r.libraries) {
            into.api_version = into.api_version.or(from.api_version);
            into.profile = into.profile.or(from.profile);
            if into.version_string.is_none() {
                into.version_string.clone_from(&from.version_string);
            }
            into.join_notes(from);
            for q in &from.quarantined {
                match into
                    .quarantined
                    .iter_mut()
                    .find(|x| x.entry_point == q.entry_point)
                {
                    Some(x) => x.checks = x.checks.max(q.checks),
                    None => into.quarantined.push(q.clone()),
                }
            }
        }
    }
    libs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_is_k_of_n() {
        let s: Shard = "2/4".parse().unwrap();
        assert_eq!(s, Shard { index: 1, count: 4 });
        assert_eq!(s.to_string(), "2/4");
        assert!(s.owns(1) && s.owns(5) && !s.owns(0) && !s.owns(2));
        for bad in ["0/4", "5/4", "2", "a/b", "1/0"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    fn shard(index: usize, count: usize, checks: &[(&str, Order)]) -> Report {
        let mut r = Report::new();
        r.libraries.push(LibraryInfo {
            name: "lib".into(),
            ..LibraryInfo::default()
        });
        let mut order = Vec::new();
        for (c, k) in checks {
            r.push(crate::ResultRecord {
                check: c.to_string(),
                ..crate::tests::rec(crate::Outcome::Pass)
            });
            order.push(*k);
        }
        r.shard = Some(ShardInfo {
            index,
            count,
            order,
        });
        r
    }

    #[test]
    fn merging_restores_the_unsharded_order_and_keeps_shared_results_once() {
        let a = shard(
            0,
            2,
            &[("s", [0, 0, 0]), ("u0", [1, 0, 0]), ("u2", [1, 2, 0])],
        );
        let b = shard(
            1,
            2,
            &[("s", [0, 0, 0]), ("u1", [1, 1, 0]), ("p", [3, 0, 0])],
        );
        let m = merge(vec![b, a]).unwrap();
        let got: Vec<_> = m.results.iter().map(|r| r.check.as_str()).collect();
        assert_eq!(got, ["s", "u0", "u1", "u2", "p"]);
        assert!(m.shard.is_none());
        assert_eq!(m.summary.values().sum::<usize>(), 5);
    }

    #[test]
    fn an_incomplete_or_mixed_set_of_shards_is_refused() {
        let one = || shard(0, 2, &[]);
        let err = merge(vec![one()]).unwrap_err();
        assert!(err.contains("shard 2/2 is missing"), "{err}");
        let err = merge(vec![one(), one()]).unwrap_err();
        assert!(err.contains("given twice"), "{err}");
        let err = merge(vec![one(), shard(1, 3, &[])]).unwrap_err();
        assert!(err.contains("of 2 and of 3 shards"), "{err}");
        let err = merge(vec![Report::new()]).unwrap_err();
        assert!(err.contains("no shard report"), "{err}");
    }
}
