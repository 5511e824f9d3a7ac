//! `cargo xtask docs [--check]`: the figures of the README and `docs/` that a command prints,
//! written into their pages by that command's output, never typed. A page marks each generated
//! block with a pair of HTML comments, `<!-- cargo xtask docs: NAME -->` and `<!-- end: NAME -->`;
//! the task rewrites what lies between from the block's source ([`BLOCKS`]).
//!
//! - `checks`: the registry's counts, from `ompd-conform list --format json`;
//! - `kit-score`: the mutation kit's score, from the committed kill matrix (which CI's `mutants`
//!   step holds equal to a full run of the kit);
//! - `bench-*` and `default-run`: the tables `cargo xtask bench` writes into `target/bench/` on
//!   this machine, and the summary its whole default run printed (left as they are when that
//!   directory has none: run the bench first).
//!
//! `--check` rewrites nothing and fails naming every stale block but the bench's (those are this
//! machine's figures of the day the bench ran); CI's `docs` step runs it, so a figure cannot
//! drift from what its command prints.

use std::path::{Path, PathBuf};

/// Where a generated block's text comes from.
#[derive(Clone, Copy)]
enum Source {
    /// The registry's counts (`ompd-conform list --format json`).
    Checks,
    /// The score line of the committed kill matrix.
    KitScore,
    /// A Markdown file `cargo xtask bench` writes into `target/bench/`.
    Bench(&'static str),
    /// The rows of these libraries of a Markdown table `cargo xtask bench` writes (its header
    /// kept).
    BenchRows(&'static str, &'static [&'static str]),
    /// The summary the bench's whole default run printed (its table, totals and gate line).
    BenchSummary,
}

/// Every generated block: the page (from the workspace root), the block's name and its source.
const BLOCKS: &[(&str, &str, Source)] = &[
    ("README.md", "checks", Source::Checks),
    ("README.md", "bench-fresh", Source::Bench("fresh.md")),
    ("docs/output.md", "default-run", Source::BenchSummary),
    ("docs/controls.md", "kit-score", Source::KitScore),
    (
        "docs/figures.md",
        "bench-targets",
        Source::Bench("targets.md"),
    ),
    (
        "docs/figures.md",
        "bench-libraries",
        Source::Bench("libraries.md"),
    ),
    (
        "docs/figures.md",
        "bench-phases",
        Source::Bench("phases.md"),
    ),
    (
        "docs/figures.md",
        "bench-traffic",
        Source::BenchRows("traffic.md", &["llvm-19", "intel-2026.2"]),
    ),
    (
        "docs/figures.md",
        "bench-scaling",
        Source::Bench("scaling.md"),
    ),
];

/// The marker that opens block `name`.
fn opening(name: &str) -> String {
    format!("<!-- cargo xtask docs: {name} -->")
}

/// The marker that closes block `name`.
fn closing(name: &str) -> String {
    format!("<!-- end: {name} -->")
}

/// `page` with block `name`'s text replaced by `body`; an error when the page lacks its markers.
pub fn splice(page: &str, name: &str, body: &str) -> Result<String, String> {
    let (open, close) = (opening(name), closing(name));
    let start = page
        .find(&open)
        .ok_or_else(|| format!("no `{open}` marker"))?
        + open.len();
    let end = page[start..]
        .find(&close)
        .ok_or_else(|| format!("no `{close}` marker after `{open}`"))?
        + start;
    let body = body.trim_end();
    Ok(format!("{}\n{body}\n{}", &page[..start], &page[end..]))
}

/// The text of a block from its source; `None` when the source is not on hand (no bench run).
fn generate(source: Source, exe: &Path, root: &Path) -> Result<Option<String>, String> {
    match source {
        Source::Checks => checks_summary(exe).map(Some),
        Source::KitScore => kit_score(&root.join("c-fixtures/mutants/kill-matrix.md")).map(Some),
        Source::Bench(file) => Ok(bench_file(file)),
        Source::BenchRows(file, libs) => Ok(bench_file(file).map(|t| rows_of(&t, libs))),
        Source::BenchSummary => Ok(bench_file("default.out.txt").and_then(|t| run_summary(&t))),
    }
}

/// The end of a run's human output: the summary table (its header and rows, which hold no
/// `": "`), then the totals, the gate's line and the count line after it, in a fenced block; the
/// lines naming the files written (this machine's paths) are left out.
fn run_summary(printed: &str) -> Option<String> {
    let lines: Vec<&str> = printed.lines().collect();
    let start = lines.iter().rposition(|l| l.starts_with("library "))?;
    let rows = lines[start..].iter().take_while(|l| !l.contains(": "));
    let totals = lines[start..]
        .iter()
        .position(|l| l.starts_with("totals: "))?;
    let tail = lines[start + totals..].iter().take(3);
    let kept: Vec<&str> = rows.chain(tail).copied().collect();
    Some(format!("```\n{}\n```", kept.join("\n")))
}

/// A file the bench wrote into `target/bench/`, if there is one.
fn bench_file(file: &str) -> Option<String> {
    std::fs::read_to_string(super::target_dir().join("bench").join(file)).ok()
}

/// The lines of a Markdown table whose first cell is one of `libs`, and every line that is not
/// a row of data (text, the header and its rule).
fn rows_of(table: &str, libs: &[&str]) -> String {
    let mut out = Vec::new();
    let mut in_table = 0;
    for l in table.lines() {
        let row = l.starts_with('|');
        in_table = if row { in_table + 1 } else { 0 };
        let header = in_table <= 2;
        if !row || header || first_cell(l).is_some_and(|c| libs.contains(&c)) {
            out.push(l);
        }
    }
    out.join("\n")
}

/// The first cell of a Markdown table row.
fn first_cell(row: &str) -> Option<&str> {
    row.trim_start_matches('|').split('|').next().map(str::trim)
}

/// Files the bench writes that are committed as they are: (from `target/bench/`, to the page's
/// directory). Copied when the bench left them; never checked (they are this machine's).
const COPIES: &[(&str, &str)] = &[("scaling.svg", "docs/bench-scaling.svg")];

/// Copies [`COPIES`] that the bench left and that differ; returns those copied.
fn copy_bench_files(root: &Path) -> Result<Vec<String>, String> {
    let mut copied = Vec::new();
    for &(from, to) in COPIES {
        let src = super::target_dir().join("bench").join(from);
        let Ok(bytes) = std::fs::read(&src) else {
            continue;
        };
        if std::fs::read(root.join(to)).ok().as_ref() != Some(&bytes) {
            std::fs::write(root.join(to), bytes)
                .map_err(|e| format!("cannot copy {} to {to}: {e}", src.display()))?;
            copied.push(to.to_string());
        }
    }
    Ok(copied)
}

/// The score line of a kill matrix, in a fenced block.
fn kit_score(matrix: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(matrix)
        .map_err(|e| format!("cannot read {}: {e}", matrix.display()))?;
    let line = text
        .lines()
        .find(|l| l.starts_with("score: "))
        .ok_or_else(|| format!("{} has no score line", matrix.display()))?;
    Ok(format!("```\n{line}\n```"))
}

/// One line of counts over the registry: checks by stage and severity, families, requirement
/// ids cited, and the checks of each API generation.
fn checks_summary(exe: &Path) -> Result<String, String> {
    let out = std::process::Command::new(exe)
        .args(["list", "--format", "json"])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(format!("`ompd-conform list` exited {}", out.status));
    }
    let list: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("`ompd-conform list` printed no check list: {e}"))?;
    Ok(counts(&list))
}

/// The API generations, oldest first (as `ompd-conform list` names them).
const GENERATIONS: [&str; 6] = ["2014-draft", "TR2.001", "5.0", "5.1", "5.2", "6.0"];

/// How a check's severity reads in the counts: `MUST`, `SHOULD`, `MUST from 6.0` (a SHOULD
/// until that generation), or the name a newer kind has in the list.
fn severity(c: &serde_json::Value) -> String {
    match &c["severity"] {
        serde_json::Value::String(s) if s == "ambig" => "ambiguous in the text".into(),
        serde_json::Value::String(s) => s.to_uppercase(),
        serde_json::Value::Object(o) => match o.get("must_from").and_then(|v| v.as_str()) {
            Some(g) => format!("MUST from {g}"),
            None => format!("{c}"),
        },
        other => other.to_string(),
    }
}

/// `(value, count)` of each distinct value of `key` over `list`, in first-seen order.
fn tally(
    list: &[serde_json::Value],
    key: impl Fn(&serde_json::Value) -> String,
) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for c in list {
        let k = key(c);
        match out.iter_mut().find(|(v, _)| *v == k) {
            Some((_, n)) => *n += 1,
            None => out.push((k, 1)),
        }
    }
    out
}

/// `a: n, b: m` of a tally.
fn listed(t: &[(String, usize)]) -> String {
    let parts: Vec<String> = t.iter().map(|(v, n)| format!("{n} {v}")).collect();
    parts.join(", ")
}

/// The counts line of a check list (`ompd-conform list --format json`).
fn counts(list: &[serde_json::Value]) -> String {
    use std::collections::BTreeSet;
    let field = |c: &serde_json::Value, k: &str| c[k].as_str().unwrap_or("").to_string();
    let families: BTreeSet<String> = list
        .iter()
        .map(|c| field(c, "id").split('.').next().unwrap_or("").to_string())
        .collect();
    let requirements: BTreeSet<&str> = list
        .iter()
        .flat_map(|c| c["requirements"].as_array().into_iter().flatten())
        .filter_map(|r| r.as_str())
        .collect();
    let stage = |c: &serde_json::Value| match field(c, "stage").as_str() {
        "static" => "judged from the file".to_string(),
        "library" => "per library".to_string(),
        "target" => "per target unit".to_string(),
        other => other.to_string(),
    };
    let mut stages = tally(list, stage);
    stages.sort_by_key(|(v, _)| v.clone());
    let mut severities = tally(list, severity);
    severities.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut since = tally(list, |c| field(c, "since"));
    let rank = |g: &str| {
        GENERATIONS
            .iter()
            .position(|x| *x == g)
            .unwrap_or(GENERATIONS.len())
    };
    since.sort_by_key(|(g, _)| rank(g));
    let since: Vec<String> = since.iter().map(|(g, n)| format!("{g}: {n}")).collect();
    format!(
        "**{} checks** in {} families ({}; {}), citing {} requirement ids. By the generation \
         that states their requirement: {}.",
        list.len(),
        families.len(),
        listed(&stages),
        listed(&severities),
        requirements.len(),
        since.join(", ")
    )
}

/// Runs the task: rewrites every block whose source is on hand, or with `check` only says which
/// are stale. Returns the exit code.
pub fn docs(args: &[String]) -> i32 {
    let check = match args {
        [] => false,
        [a] if a == "--check" => true,
        _ => {
            eprintln!("xtask docs: usage: cargo xtask docs [--check]");
            return 2;
        }
    };
    let exe = match super::runner() {
        Ok(e) => e,
        Err(code) => return code,
    };
    match apply(&super::root(), &exe, check) {
        Ok(changed) if !check => {
            let copied = match copy_bench_files(&super::root()) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("xtask docs: {e}");
                    return 1;
                }
            };
            for c in changed.iter().chain(&copied) {
                eprintln!("xtask docs: rewrote {c}");
            }
            0
        }
        Ok(stale) if stale.is_empty() => 0,
        Ok(stale) => {
            for s in &stale {
                eprintln!("xtask docs: {s} is stale: run `cargo xtask docs` and commit it");
            }
            1
        }
        Err(e) => {
            eprintln!("xtask docs: {e}");
            1
        }
    }
}

/// Regenerates every block under `root`; returns the blocks that differed (`PAGE: NAME`), which
/// it rewrites unless `check`.
fn apply(root: &Path, exe: &Path, check: bool) -> Result<Vec<String>, String> {
    let mut stale = Vec::new();
    for &(page, name, source) in BLOCKS {
        let of_the_bench = !matches!(source, Source::Checks | Source::KitScore);
        if check && of_the_bench {
            continue;
        }
        let Some(body) = generate(source, exe, root)? else {
            eprintln!("xtask docs: {page}: {name} left as it is (run `cargo xtask bench` first)");
            continue;
        };
        let path: PathBuf = root.join(page);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let new = splice(&text, name, &body).map_err(|e| format!("{page}: {e}"))?;
        if new != text {
            stale.push(format!("{page}: {name}"));
            if !check {
                std::fs::write(&path, new)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            }
        }
    }
    Ok(stale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_is_replaced_between_its_markers_only() {
        let page = "a\n<!-- cargo xtask docs: x -->\nold\n<!-- end: x -->\nb\n";
        let got = splice(page, "x", "new\n").unwrap();
        assert_eq!(
            got,
            "a\n<!-- cargo xtask docs: x -->\nnew\n<!-- end: x -->\nb\n"
        );
        assert_eq!(splice(&got, "x", "new").unwrap(), got);
        assert!(splice(page, "y", "z")
            .unwrap_err()
            .contains("no `<!-- cargo xtask docs: y"));
    }

    #[test]
    fn every_block_is_marked_in_its_page() {
        for &(page, name, _) in BLOCKS {
            let text = std::fs::read_to_string(super::super::root().join(page)).unwrap();
            assert!(splice(&text, name, "").is_ok(), "{page}: {name}");
        }
    }

    #[test]
    fn an_excerpt_keeps_the_header_and_the_rows_named() {
        let t = "text\n| lib | x |\n|---|---|\n| a | 1 |\n| b | 2 |\n| c | 3 |";
        assert_eq!(
            rows_of(t, &["a", "c"]),
            "text\n| lib | x |\n|---|---|\n| a | 1 |\n| c | 3 |"
        );
    }

    #[test]
    fn a_run_summary_is_its_table_totals_and_gate_without_paths() {
        let printed = "tree\nlibrary  pass\nl1  3\nJSON report: r.json\ntotals: 3 pass\n\
                       gate: 0 regressions (passed)\n3 passed, 0 failed\n";
        assert_eq!(
            run_summary(printed).unwrap(),
            "```\nlibrary  pass\nl1  3\ntotals: 3 pass\ngate: 0 regressions (passed)\n\
             3 passed, 0 failed\n```"
        );
        assert!(run_summary("no summary").is_none());
    }

    #[test]
    fn the_kit_score_is_the_committed_matrix_line() {
        let root = super::super::root();
        let score = kit_score(&root.join("c-fixtures/mutants/kill-matrix.md")).unwrap();
        assert!(score.starts_with("```\nscore: ") && score.ends_with("\n```"));
    }

    #[test]
    fn counts_count_each_field() {
        let list: Vec<serde_json::Value> = serde_json::from_str(
            r#"[{"id":"a.x","stage":"static","severity":"must","since":"6.0","requirements":["R1"]},
                {"id":"a.y","stage":"target","severity":"should","since":"5.0","requirements":["R1","R2"]},
                {"id":"b.z","stage":"library","severity":{"must_from":"6.0"},"since":"5.0","requirements":[]},
                {"id":"b.w","stage":"target","severity":"must","since":"TR2.001","requirements":[]}]"#,
        )
        .unwrap();
        assert_eq!(
            counts(&list),
            "**4 checks** in 2 families (1 judged from the file, 1 per library, 2 per target \
             unit; 2 MUST, 1 MUST from 6.0, 1 SHOULD), citing 2 requirement ids. By the \
             generation that states their requirement: TR2.001: 1, 5.0: 2, 6.0: 1."
        );
    }
}
