//! The callback traffic of one call, per entry point: over every call a unit's checks made into
//! the library, the least, median and most symbol lookups, memory reads, bytes read and
//! byte-order conversions of one call.

use ompd_serve::ledger::Counters;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Least, median and most of one count over an entry point's calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spread {
    /// Least.
    pub min: u64,
    /// Median (the lower middle value).
    pub median: u64,
    /// Most.
    pub max: u64,
}

impl Spread {
    fn of(mut v: Vec<u64>) -> Spread {
        v.sort_unstable();
        Spread {
            min: v.first().copied().unwrap_or(0),
            median: v.get(v.len().saturating_sub(1) / 2).copied().unwrap_or(0),
            max: v.last().copied().unwrap_or(0),
        }
    }
}

/// One entry point's traffic per call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Traffic {
    /// The entry point.
    pub entry_point: String,
    /// Calls measured.
    pub calls: usize,
    /// Symbol lookups per call.
    pub lookups: Spread,
    /// Memory and string reads per call.
    pub reads: Spread,
    /// Bytes read per call.
    pub bytes: Spread,
    /// Byte-order conversions per call.
    pub conversions: Spread,
}

/// The traffic of `calls` (site, counters of one call), per OMPD entry point by name (the
/// harness's own sites left out).
pub fn per_entry_point(calls: &[(&'static str, Counters)]) -> Vec<Traffic> {
    let mut by: BTreeMap<&str, Vec<&Counters>> = BTreeMap::new();
    for (ep, c) in calls {
        if ompd_abi::EntryPoint::from_name(ep).is_some() {
            by.entry(ep).or_default().push(c);
        }
    }
    by.into_iter()
        .map(|(ep, cs)| {
            let spread = |f: fn(&Counters) -> u64| Spread::of(cs.iter().map(|c| f(c)).collect());
            Traffic {
                entry_point: ep.to_string(),
                calls: cs.len(),
                lookups: spread(|c| c.lookups),
                reads: spread(|c| c.reads),
                bytes: spread(|c| c.read_bytes),
                conversions: spread(|c| c.conversions),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spreads_are_per_entry_point() {
        let c = |lookups, reads| Counters {
            lookups,
            reads,
            ..Counters::default()
        };
        let (a, b) = ("ompd_get_thread_handle", "ompd_get_icv_from_scope");
        let calls = [
            (b, c(1, 5)),
            (a, c(0, 2)),
            (b, c(3, 1)),
            ("harness", c(7, 7)),
            (b, c(2, 9)),
        ];
        let t = per_entry_point(&calls);
        assert_eq!(t.len(), 2);
        assert_eq!((t[1].entry_point.as_str(), t[1].calls), (a, 1));
        let t = [t[1].clone(), t[0].clone()];
        assert_eq!(
            t[1].lookups,
            Spread {
                min: 1,
                median: 2,
                max: 3
            }
        );
        assert_eq!(
            t[1].reads,
            Spread {
                min: 1,
                median: 5,
                max: 9
            }
        );
        assert_eq!(t[1].calls, 3);
    }
}
