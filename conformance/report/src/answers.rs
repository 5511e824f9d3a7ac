//! The answer-snapshot format: a library's observable answers as `path = value` lines
//! (`golden/snapshots/<library>.txt`), read back and compared. The engine records the answers
//! (`ompd_engine::snapshot`); the review compares two reports' answers; both meet here.

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

/// The answers of one library: path → value, sorted by path.
pub type Answers = BTreeMap<String, String>;

/// The snapshot file of `library` under `dir`.
pub fn path_of(dir: &Path, library: &str) -> PathBuf {
    dir.join(format!("{library}.txt"))
}

/// Parses a snapshot file (comments and blank lines skipped).
pub fn parse(text: &str) -> Result<Answers, String> {
    let mut out = Answers::new();
    for (n, l) in crate::data_lines(text) {
        let (k, v) = l
            .split_once(" = ")
            .ok_or_else(|| format!("line {n}: not `path = value`"))?;
        out.insert(k.to_string(), v.to_string());
    }
    Ok(out)
}

/// One difference between two sets of answers.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Change {
    /// An answer only in the new set.
    Added {
        /// Path.
        path: String,
        /// New value.
        value: String,
    },
    /// An answer only in the old set.
    Removed {
        /// Path.
        path: String,
        /// Old value.
        value: String,
    },
    /// An answer in both, with different values.
    Changed {
        /// Path.
        path: String,
        /// Old value.
        old: String,
        /// New value.
        new: String,
    },
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Change::Added { path, value } => write!(f, "+ {path}: {value}"),
            Change::Removed { path, value } => write!(f, "- {path}: {value}"),
            Change::Changed { path, old, new } => write!(f, "~ {path}: {old} → {new}"),
        }
    }
}

/// The differences from `old` to `new`, in path order.
pub fn diff(old: &Answers, new: &Answers) -> Vec<Change> {
    let mut out = Vec::new();
    for (k, v) in old {
        match new.get(k) {
            None => out.push(Change::Removed {
                path: k.clone(),
                value: v.clone(),
            }),
            Some(n) if n != v => out.push(Change::Changed {
                path: k.clone(),
                old: v.clone(),
                new: n.clone(),
            }),
            Some(_) => {}
        }
    }
    for (k, v) in new {
        if !old.contains_key(k) {
            out.push(Change::Added {
                path: k.clone(),
                value: v.clone(),
            });
        }
    }
    out.sort_by(|a, b| path_of_change(a).cmp(path_of_change(b)));
    out
}

fn path_of_change(c: &Change) -> &str {
    match c {
        Change::Added { path, .. }
        | Change::Removed { path, .. }
        | Change::Changed { path, .. } => path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answers(pairs: &[(&str, &str)]) -> Answers {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn parse_skips_comments_and_reads_every_answer() {
        let a = parse("# header\n\ns/lp64-le/setup = ok\ns/lp64-le/icv/x = 4\n").unwrap();
        assert_eq!(
            a,
            answers(&[("s/lp64-le/icv/x", "4"), ("s/lp64-le/setup", "ok")])
        );
        assert!(parse("no equals sign here").is_err());
    }

    #[test]
    fn diff_names_added_removed_and_changed_answers() {
        let old = answers(&[("a", "1"), ("b", "2"), ("c", "3")]);
        let new = answers(&[("a", "1"), ("b", "4"), ("d", "5")]);
        let d: Vec<String> = diff(&old, &new).iter().map(|c| c.to_string()).collect();
        assert_eq!(d, ["~ b: 2 → 4", "- c: 3", "+ d: 5"]);
        assert!(diff(&old, &old).is_empty());
    }
}
