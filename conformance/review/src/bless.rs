//! Adopting a run as the new baseline: the unexpected results of a run written in the
//! expectations format (`LIB.unexpected.toml`, every run), and `--bless`, which rewrites the
//! expectations files: new entries for regressions and flakes, entries whose outcome changed
//! updated (removed when everything they cover now passes), stale entries removed; and the
//! judged baseline beside each file records where its libraries are judged now (a silenced
//! check leaves it, and the diff shows). Comments and the layout of untouched entries are kept.
//!
//! A new entry is as broad as the run allows: one for the whole check when every result of the
//! check that no entry covers is unexpected, else one per scenario, per scenario × arch, or per
//! unit (its layout on the simulated target; its kind, runtime, build and `OMP_DEBUG` setting on
//! a real one). Its reason says where it came from (`blessed on DATE from run: ACTUAL`) for a human to
//! replace.

use crate::expectations::{File, Outcomes};
use crate::gate::{EntryRef, Evaluation};
use crate::judged;
use ompd_report::glob;
use ompd_report::{Gate, Outcome, Report, ResultRecord};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// An entry to add.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct NewEntry {
    /// Library glob (`None`: every library of the file).
    pub library: Option<String>,
    /// Check id.
    pub check: String,
    /// Scenario glob.
    pub scenario: String,
    /// Arch glob.
    pub arch: String,
    /// The unit's own conditions as TOML `key = value` pairs (the values already TOML): its
    /// `layout` on the simulated target; `target`, `runtime`, `build` and `omp_debug` on a real
    /// one. Empty: every unit of the scenario and arch.
    pub unit: Vec<(&'static str, String)>,
    /// Outcomes seen, in severity order.
    pub outcomes: Vec<Outcome>,
    /// What the library did (first result).
    pub actual: String,
}

/// What a run changes in the expectations of one library.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// Entries to add.
    pub add: Vec<NewEntry>,
    /// Entries whose outcome becomes the outcomes seen.
    pub reoutcome: BTreeMap<EntryRef, Vec<Outcome>>,
    /// Entries to remove: stale, or everything they cover now passes.
    pub remove: BTreeSet<EntryRef>,
}

impl Plan {
    /// True when the run matched its expectations exactly.
    pub fn is_empty(&self) -> bool {
        self.add.is_empty() && self.reoutcome.is_empty() && self.remove.is_empty()
    }
}

fn sorted(set: BTreeSet<Outcome>) -> Vec<Outcome> {
    set.into_iter().collect()
}

/// The plan for library number `li` of the evaluation.
pub fn plan(report: &Report, ev: &Evaluation, li: usize) -> Plan {
    let lg = &ev.libraries[li];
    let mut out = Plan::default();
    // Entries with any result they do not accept: their outcome becomes what was seen.
    let mut seen: BTreeMap<EntryRef, (BTreeSet<Outcome>, bool)> = BTreeMap::new();
    for j in &lg.judged {
        if let Some(e) = j.entry {
            let s = seen.entry(e).or_default();
            s.0.insert(report.results[j.result].outcome);
            s.1 |= !matches!(j.gate, Gate::Match | Gate::ExpectedFail);
        }
    }
    for (e, (outcomes, changed)) in seen {
        if !changed {
            continue;
        }
        if outcomes.iter().all(|o| *o == Outcome::Pass) {
            out.remove.insert(e);
        } else {
            out.reoutcome.insert(e, sorted(outcomes));
        }
    }
    out.remove.extend(lg.stale.iter().copied());
    // Results no entry covers, by check.
    let mut uncovered: BTreeMap<&str, Vec<(&ResultRecord, bool)>> = BTreeMap::new();
    for j in lg.judged.iter().filter(|j| j.entry.is_none()) {
        let r = &report.results[j.result];
        let bad = matches!(j.gate, Gate::Regression | Gate::Flake | Gate::NewWarning);
        uncovered.entry(&r.check).or_default().push((r, bad));
    }
    for (check, rs) in uncovered {
        if !rs.iter().any(|(_, bad)| *bad) {
            continue;
        }
        add_entries(&lg.library, check, &rs, &mut out.add);
    }
    out
}

/// The conditions that single out `r`'s unit within its scenario and arch, as TOML pairs (see
/// [`NewEntry::unit`]).
fn unit_conditions(r: &ResultRecord) -> Vec<(&'static str, String)> {
    let Some(real) = &r.real else {
        return r.layout.iter().map(|l| ("layout", quote(l))).collect();
    };
    let mut out = vec![("target", quote(&r.target))];
    out.extend(real.runtime.iter().map(|x| ("runtime", quote(x))));
    out.extend(real.build.iter().map(|x| ("build", quote(x))));
    out.extend(real.omp_debug.map(|d| ("omp_debug", d.to_string())));
    out
}

/// The broadest patterns covering the unexpected results of one check and no other result.
fn add_entries(lib: &str, check: &str, rs: &[(&ResultRecord, bool)], add: &mut Vec<NewEntry>) {
    let qualifies = |s: &str, a: &str, unit: &[(&'static str, String)]| {
        let covered: Vec<_> = rs
            .iter()
            .filter(|(r, _)| {
                glob(s, &r.scenario)
                    && glob(a, &r.arch)
                    && (unit.is_empty() || unit_conditions(r) == unit)
            })
            .collect();
        (!covered.is_empty() && covered.iter().all(|(_, bad)| *bad)).then(|| NewEntry {
            library: Some(lib.to_string()),
            check: check.to_string(),
            scenario: s.into(),
            arch: a.into(),
            unit: unit.to_vec(),
            outcomes: sorted(covered.iter().map(|(r, _)| r.outcome).collect()),
            actual: covered[0].0.actual.clone(),
        })
    };
    if let Some(e) = qualifies("*", "*", &[]) {
        add.push(e);
        return;
    }
    let bad: Vec<&ResultRecord> = rs.iter().filter(|(_, b)| *b).map(|(r, _)| *r).collect();
    let scenarios: BTreeSet<&str> = bad.iter().map(|r| r.scenario.as_str()).collect();
    for s in scenarios {
        if let Some(e) = qualifies(s, "*", &[]) {
            add.push(e);
            continue;
        }
        let arches: BTreeSet<&str> = bad
            .iter()
            .filter(|r| r.scenario == s)
            .map(|r| r.arch.as_str())
            .collect();
        for a in arches {
            if let Some(e) = qualifies(s, a, &[]) {
                add.push(e);
                continue;
            }
            let units: BTreeSet<Vec<(&'static str, String)>> = bad
                .iter()
                .filter(|r| r.scenario == s && r.arch == a)
                .map(|r| unit_conditions(r))
                .collect();
            for u in units {
                add.extend(qualifies(s, a, &u));
            }
        }
    }
}

/// A condition as TOML: one string, or an array of strings.
fn globs_value(g: &crate::expectations::Globs) -> String {
    match g {
        crate::expectations::Globs::One(one) => quote(one),
        crate::expectations::Globs::Any(v) => {
            let items: Vec<String> = v.iter().map(|x| quote(x)).collect();
            format!("[{}]", items.join(", "))
        }
    }
}

/// A TOML basic string.
pub fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn outcome_value(os: &[Outcome]) -> String {
    match os {
        [one] => quote(one.as_str()),
        many => {
            let v: Vec<String> = many.iter().map(|o| quote(o.as_str())).collect();
            format!("[{}]", v.join(", "))
        }
    }
}

/// Today's date (UTC) as `YYYY-MM-DD`.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    civil(secs / 86_400)
}

/// Days since 1970-01-01 as a proleptic Gregorian date.
fn civil(days: u64) -> String {
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The `reason` of a blessed entry.
pub fn blessed_reason(date: &str, actual: &str) -> String {
    let one_line = actual.split_whitespace().collect::<Vec<_>>().join(" ");
    let short: String = one_line.chars().take(160).collect();
    let cut = if short.len() < one_line.len() {
        "…"
    } else {
        ""
    };
    format!("blessed on {date} from run: {short}{cut}")
}

/// A new entry in TOML.
pub fn render_new(e: &NewEntry, date: &str) -> String {
    let mut s = String::from("[[expect]]\n");
    let _ = writeln!(s, "check = {}", quote(&e.check));
    if let Some(l) = &e.library {
        let _ = writeln!(s, "library = {}", quote(l));
    }
    for (k, v) in [("scenario", &e.scenario), ("arch", &e.arch)] {
        if v != "*" {
            let _ = writeln!(s, "{k} = {}", quote(v));
        }
    }
    for (k, v) in &e.unit {
        let _ = writeln!(s, "{k} = {v}");
    }
    let _ = writeln!(s, "outcome = {}", outcome_value(&e.outcomes));
    let _ = writeln!(s, "reason = {}", quote(&blessed_reason(date, &e.actual)));
    s
}

/// The run's unexpected results of library `li` as an expectations file (valid on its own).
pub fn unexpected_toml(report: &Report, ev: &Evaluation, li: usize, date: &str) -> String {
    let lib = &ev.libraries[li].library;
    let p = plan(report, ev, li);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Unexpected results of {lib} on {date}, in the expectations format.\n\
         # `ompd-conform run {lib} --bless` adopts them into its expectations file."
    );
    let _ = writeln!(
        s,
        "vendor = {}",
        quote(&format!("{lib} (unexpected results)"))
    );
    let _ = writeln!(s, "libraries = [{}]", quote(lib));
    if p.is_empty() {
        s.push_str("# every result matched the expectations\n");
    }
    for e in &p.remove {
        let x = ev.entry(*e);
        let _ = writeln!(
            s,
            "\n# remove from {}: {} ({}) on {}: {}",
            ev.files[e.file].path.display(),
            x.check,
            x.outcome,
            x.unit_text(),
            if ev.libraries[li].stale.contains(e) {
                "stale, it covers nothing the run ran"
            } else {
                "everything it covers now passes"
            }
        );
    }
    for (e, os) in &p.reoutcome {
        let x = ev.entry(*e);
        let _ = writeln!(
            s,
            "\n# changed in {}: was outcome {}\n[[expect]]",
            ev.files[e.file].path.display(),
            x.outcome
        );
        let _ = writeln!(s, "check = {}", globs_value(&x.check));
        for (k, v) in [
            ("library", &x.library),
            ("scenario", &x.scenario),
            ("arch", &x.arch),
            ("layout", &x.layout),
            ("version", &x.version),
            ("profile", &x.profile),
            ("target", &x.target),
            ("runtime", &x.runtime),
            ("build", &x.build),
            ("fixture", &x.fixture),
        ] {
            if !v.is_wildcard() {
                let _ = writeln!(s, "{k} = {}", globs_value(v));
            }
        }
        if let Some(d) = x.omp_debug {
            let _ = writeln!(s, "omp_debug = {d}");
        }
        let _ = writeln!(s, "outcome = {}", outcome_value(os));
        let _ = writeln!(s, "reason = {}", quote(&x.reason));
    }
    for e in &p.add {
        s.push('\n');
        s.push_str(&render_new(e, date));
    }
    s
}

/// Why blessing failed.
#[derive(Debug, thiserror::Error)]
pub enum BlessError {
    /// No file applies to the library.
    #[error("no expectations file applies to {0}: pass --expectations FILE (created when missing) to bless it")]
    NoFile(String),
    /// The file cannot be rewritten entry by entry.
    #[error("cannot rewrite {path}: {why}")]
    Rewrite {
        /// File.
        path: String,
        /// Why.
        why: String,
    },
    /// Reading or writing failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// File.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
}

/// Rewrites every expectations file the run's libraries use so that the run matches them;
/// returns the files written with a one-line summary each.
pub fn bless(report: &Report, ev: &Evaluation, date: &str) -> Result<Vec<String>, BlessError> {
    let Changes {
        mut adds,
        removed,
        reoutcome,
        libs_of_file,
    } = changes(report, ev)?;
    let mut touched: BTreeSet<usize> = adds.keys().copied().collect();
    touched.extend(removed.iter().map(|e| e.file));
    touched.extend(reoutcome.keys().map(|e| e.file));
    let mut written = Vec::new();
    for fi in touched {
        let f = &ev.files[fi];
        // Entries found for every library of the run that uses this file become one entry.
        let libs = libs_of_file.get(&fi).cloned().unwrap_or_default();
        let new_entries = merged(report, adds.remove(&fi).unwrap_or_default(), &libs);
        let rm: BTreeSet<usize> = removed
            .iter()
            .filter(|e| e.file == fi)
            .map(|e| e.index)
            .collect();
        let re: BTreeMap<usize, Vec<Outcome>> = reoutcome
            .iter()
            .filter(|(e, _)| e.file == fi)
            .map(|(e, os)| (e.index, os.iter().copied().collect()))
            .collect();
        rewrite_file(f, &rm, &re, &new_entries, date)?;
        written.push(format!(
            "{}: {} added, {} updated, {} removed",
            f.path.display(),
            new_entries.len(),
            re.len(),
            rm.len()
        ));
    }
    written.extend(record_judged(report, ev)?);
    Ok(written)
}

/// Records where each library of the run was judged, at the places it ran of the target kinds
/// whose silence the run judges, in the judged baseline of the first file applying to it;
/// returns the files written.
fn record_judged(report: &Report, ev: &Evaluation) -> Result<Vec<String>, BlessError> {
    let mut baselines: BTreeMap<usize, judged::Baseline> = BTreeMap::new();
    for lg in &ev.libraries {
        let Some(&fi) = lg.files.first() else {
            continue;
        };
        let results = || lg.judged.iter().map(|j| &report.results[j.result]);
        baselines
            .entry(fi)
            .or_insert_with(|| ev.files[fi].judged.clone())
            .record(
                &lg.library,
                &ev.silence_kinds,
                &judged::places(results()),
                &judged::judged_places(results()),
            );
    }
    let mut written = Vec::new();
    for (fi, b) in baselines {
        let path = judged::path_of(&ev.files[fi].path);
        if b == ev.files[fi].judged && path.exists() {
            continue;
        }
        ompd_report::write_atomic(&path, b.render().as_bytes()).map_err(|source| {
            BlessError::Io {
                path: path.display().to_string(),
                source,
            }
        })?;
        written.push(format!("{}: where each library is judged", path.display()));
    }
    Ok(written)
}

/// What blessing a run changes in the expectation files.
struct Changes {
    /// Entries to add, by file: (library, entry).
    adds: BTreeMap<usize, Vec<(String, NewEntry)>>,
    /// Entries to remove.
    removed: BTreeSet<EntryRef>,
    /// Entries whose outcomes change.
    reoutcome: BTreeMap<EntryRef, BTreeSet<Outcome>>,
    /// The libraries of the run that use each file.
    libs_of_file: BTreeMap<usize, BTreeSet<String>>,
}

/// Gathers every library's plan into the changes of each file.
fn changes(report: &Report, ev: &Evaluation) -> Result<Changes, BlessError> {
    let mut adds: BTreeMap<usize, Vec<(String, NewEntry)>> = BTreeMap::new();
    let mut remove: BTreeSet<EntryRef> = BTreeSet::new();
    let mut keep: BTreeSet<EntryRef> = BTreeSet::new();
    let mut reoutcome: BTreeMap<EntryRef, BTreeSet<Outcome>> = BTreeMap::new();
    let mut libs_of_file: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
    for (li, lg) in ev.libraries.iter().enumerate() {
        let p = plan(report, ev, li);
        for j in &lg.judged {
            if let Some(e) = j.entry {
                keep.insert(e);
            }
        }
        remove.extend(p.remove.iter().copied());
        for (e, os) in p.reoutcome {
            reoutcome.entry(e).or_default().extend(os);
        }
        let Some(&target) = lg.files.first() else {
            if p.add.is_empty() {
                continue;
            }
            return Err(BlessError::NoFile(lg.library.clone()));
        };
        libs_of_file
            .entry(target)
            .or_default()
            .insert(lg.library.clone());
        adds.entry(target)
            .or_default()
            .extend(p.add.into_iter().map(|e| (lg.library.clone(), e)));
    }
    // An entry another library of the run still uses with its outcome is not removed; one
    // that everything it covers now passes for one library but fails for another is updated.
    let removed: BTreeSet<EntryRef> = remove
        .iter()
        .filter(|e| !reoutcome.contains_key(e))
        .filter(|e| {
            !keep.contains(e)
                || ev
                    .libraries
                    .iter()
                    .flat_map(|l| &l.judged)
                    .filter(|j| j.entry == Some(**e))
                    .all(|j| report.results[j.result].outcome == Outcome::Pass)
        })
        .copied()
        .collect();
    Ok(Changes {
        adds,
        removed,
        reoutcome,
        libs_of_file,
    })
}

/// The new entries of a file from what each library needs added: one entry for all of the
/// file's libraries when they all need it, else one per library.
fn merged(
    report: &Report,
    adds: Vec<(String, NewEntry)>,
    libs: &BTreeSet<String>,
) -> Vec<NewEntry> {
    let mut merged: BTreeMap<NewEntry, BTreeSet<String>> = BTreeMap::new();
    for (lib, e) in adds {
        let key = NewEntry {
            library: None,
            actual: String::new(),
            ..e.clone()
        };
        merged.entry(key).or_default().insert(lib);
    }
    let mut new_entries = Vec::new();
    for (key, ls) in merged {
        let actual = report
            .results
            .iter()
            .find(|r| r.check == key.check && ls.contains(&r.library) && r.outcome.is_failure())
            .map(|r| r.actual.clone())
            .unwrap_or_default();
        if libs.len() > 1 && &ls == libs {
            new_entries.push(NewEntry { actual, ..key });
        } else {
            for l in ls {
                new_entries.push(NewEntry {
                    library: Some(l),
                    actual: actual.clone(),
                    ..key.clone()
                });
            }
        }
    }
    new_entries
}

/// Rewrites one expectation file (a missing one starts empty), checking the result parses.
fn rewrite_file(
    f: &File,
    rm: &BTreeSet<usize>,
    re: &BTreeMap<usize, Vec<Outcome>>,
    new_entries: &[NewEntry],
    date: &str,
) -> Result<(), BlessError> {
    let text = match std::fs::read_to_string(&f.path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(BlessError::Io {
                path: f.path.display().to_string(),
                source,
            })
        }
    };
    let new_text = rewrite(&text, f, rm, re, new_entries, date)?;
    File::parse(&new_text, &f.path).map_err(|e| BlessError::Rewrite {
        path: f.path.display().to_string(),
        why: e.to_string(),
    })?;
    ompd_report::write_atomic(&f.path, new_text.as_bytes()).map_err(|source| BlessError::Io {
        path: f.path.display().to_string(),
        source,
    })?;
    Ok(())
}

/// `text` (the file `f` was parsed from; empty for a new file) with entries removed, outcomes
/// replaced and entries appended.
pub fn rewrite(
    text: &str,
    f: &File,
    remove: &BTreeSet<usize>,
    reoutcome: &BTreeMap<usize, Vec<Outcome>>,
    add: &[NewEntry],
    date: &str,
) -> Result<String, BlessError> {
    let err = |why: String| BlessError::Rewrite {
        path: f.path.display().to_string(),
        why,
    };
    let mut out = String::new();
    if text.trim().is_empty() {
        let _ = writeln!(out, "vendor = {}", quote(&f.vendor));
        let libs: Vec<String> = f.libraries.iter().map(|l| quote(l)).collect();
        let _ = writeln!(out, "libraries = [{}]", libs.join(", "));
    } else {
        let lines: Vec<&str> = text.lines().collect();
        let heads: Vec<usize> = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.trim() == "[[expect]]")
            .map(|(i, _)| i)
            .collect();
        if heads.len() != f.expect.len() {
            return Err(err(format!(
                "{} `[[expect]]` lines for {} entries",
                heads.len(),
                f.expect.len()
            )));
        }
        // Each entry starts at the comments and blank lines just above its `[[expect]]`.
        let start = |h: usize| {
            let mut s = h;
            while s > 0 && {
                let t = lines[s - 1].trim();
                t.is_empty() || t.starts_with('#')
            } {
                s -= 1;
            }
            s
        };
        let starts: Vec<usize> = heads.iter().map(|h| start(*h)).collect();
        let first = starts.first().copied().unwrap_or(lines.len());
        for l in &lines[..first] {
            let _ = writeln!(out, "{l}");
        }
        for (i, &s) in starts.iter().enumerate() {
            let end = starts.get(i + 1).copied().unwrap_or(lines.len());
            if remove.contains(&i) {
                continue;
            }
            let mut skipping = false;
            for l in &lines[s..end] {
                if skipping {
                    skipping = !l.contains(']');
                    continue;
                }
                match (reoutcome.get(&i), l.trim_start().strip_prefix("outcome")) {
                    (Some(os), Some(rest)) if rest.trim_start().starts_with('=') => {
                        let _ = writeln!(out, "outcome = {}", outcome_value(os));
                        let v = rest.trim_start()[1..].trim();
                        skipping = v.starts_with('[') && !v.contains(']');
                    }
                    _ => {
                        let _ = writeln!(out, "{l}");
                    }
                }
            }
        }
    }
    for e in add {
        if !out.ends_with("\n\n") {
            out.push('\n');
        }
        out.push_str(&render_new(e, date));
    }
    Ok(out)
}

/// Where a library's unexpected results are written: `DIR/LIB.unexpected.toml`.
pub fn unexpected_path(dir: &Path, lib: &str) -> PathBuf {
    dir.join(format!("{}.unexpected.toml", ompd_report::file_safe(lib)))
}

/// `target/ompd-conform` beside the vendor cache.
pub fn default_dir() -> PathBuf {
    ompd_vendors::beside_cache("ompd-conform")
}

/// The outcomes an entry accepts, as a list.
pub fn accepted(o: &Outcomes) -> Vec<Outcome> {
    match o {
        Outcomes::One(x) => vec![*x],
        Outcomes::Any(v) => v.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(civil(0), "1970-01-01");
        assert_eq!(civil(20_413), "2025-11-21");
        assert_eq!(civil(11_016), "2000-02-29");
    }

    #[test]
    fn rewriting_keeps_comments_and_edits_entries() {
        let text = "# header\nvendor = 'v'\nlibraries = ['v']\n\n# first\n[[expect]]\ncheck = 'lib.*'\noutcome = 'fail'\nreason = 'a'\n\n# second\n[[expect]]\ncheck = 'icv.*'\noutcome = ['fail',\n  'crash']\nreason = 'b'\n";
        let f = File::parse(text, Path::new("v.toml")).unwrap();
        let add = NewEntry {
            library: Some("v".into()),
            check: "icv.enumerate.standard_names".into(),
            scenario: "serial".into(),
            arch: "*".into(),
            unit: vec![],
            outcomes: vec![Outcome::Fail],
            actual: "got \"x\"\nand more".into(),
        };
        let out = rewrite(
            text,
            &f,
            &[0].into(),
            &[(1, vec![Outcome::Pass, Outcome::Crash])].into(),
            &[add],
            "2026-01-02",
        )
        .unwrap();
        assert!(out.starts_with("# header\nvendor = 'v'\n"));
        assert!(!out.contains("# first"), "{out}");
        assert!(out.contains("# second\n[[expect]]\ncheck = 'icv.*'\noutcome = [\"pass\", \"crash\"]\nreason = 'b'\n"), "{out}");
        assert!(out.contains("reason = \"blessed on 2026-01-02 from run: got \\\"x\\\" and more\""));
        let g = File::parse(&out, Path::new("v.toml")).unwrap();
        assert_eq!(g.expect.len(), 2);
        assert_eq!(
            g.expect[1].scenario,
            crate::expectations::Globs::One("serial".into())
        );
    }
}
