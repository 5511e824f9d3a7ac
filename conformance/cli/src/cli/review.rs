//! Reviewing a run: the expectations gate, bless and JUnit, the answer snapshots, regression
//! tracking between two reports and the HTML matrix.

use super::{
    harness, usage, Format, ReviewArgs, RunArgs, EXIT_FINDINGS, EXIT_INTERRUPTED, EXIT_OK,
};
use ompd_report::Report;
use std::path::PathBuf;
// ---- the expectations gate, bless and JUnit ----

/// The expectation files of a run: `--expectations` files (a missing one is created empty for
/// the run's libraries under `--bless`), none with `--no-expectations`, else the embedded
/// repository files. A malformed file is a usage error.
pub(super) fn expectation_files(
    review: &ReviewArgs,
    bless: bool,
    libs: &[ompd_vendors::Resolved],
) -> Result<Vec<ompd_review::expectations::File>, String> {
    use ompd_review::expectations::{embedded, File};
    if review.no_expectations {
        return Ok(Vec::new());
    }
    if review.expectations.is_empty() {
        return embedded().map_err(|e| e.to_string());
    }
    let mut out = Vec::new();
    for p in &review.expectations {
        if bless && !p.exists() {
            out.push(File {
                vendor: p
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                libraries: libs.iter().map(|l| l.name.clone()).collect(),
                expect: Vec::new(),
                path: p.clone(),
                judged: Default::default(),
            });
            continue;
        }
        out.push(File::load(p).map_err(|e| e.to_string())?);
    }
    Ok(out)
}

/// After the report is out: writes each library's unexpected results, the JUnit report, and
/// (with `--bless`) the new expectations. Returns the gate's exit code (0 or 100; after a
/// successful bless, the verdict against the blessed files).
pub(super) fn run_gate(
    report: &Report,
    ev: &ompd_review::gate::Evaluation,
    review: &ReviewArgs,
    (quiet, bless): (bool, bool),
    stopped: bool,
) -> Result<i32, i32> {
    let date = ompd_review::bless::today();
    let dir = review.results_dir();
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return Err(harness(format!("cannot create {}: {e}", dir.display())));
    }
    for (li, lg) in ev.libraries.iter().enumerate() {
        let path = ompd_review::bless::unexpected_path(&dir, &lg.library);
        let text = ompd_review::bless::unexpected_toml(report, ev, li, &date);
        ompd_report::write_atomic(&path, text.as_bytes())
            .map_err(|e| harness(format!("cannot write {}: {e}", path.display())))?;
        if !quiet && !ompd_review::bless::plan(report, ev, li).is_empty() {
            eprintln!(
                "ompd-conform: unexpected results of {} (expectations format): {}",
                lg.library,
                path.display()
            );
        }
    }
    if let Some(path) = &review.junit {
        let xml = ompd_review::output::junit(report, ev)
            .map_err(|e| harness(format!("cannot render the JUnit report: {e}")))?;
        ompd_report::write_atomic(path, xml.as_bytes())
            .map_err(|e| harness(format!("cannot write {}: {e}", path.display())))?;
    }
    if !bless {
        return Ok(if ev.fails() { EXIT_FINDINGS } else { EXIT_OK });
    }
    if stopped {
        eprintln!("ompd-conform: error: not blessing an incomplete run");
        return Ok(EXIT_INTERRUPTED);
    }
    let written =
        ompd_review::bless::bless(report, ev, &date).map_err(|e| harness(e.to_string()))?;
    for w in &written {
        eprintln!("ompd-conform: blessed {w}");
    }
    // Judge the run again against the files as written.
    let mut files = Vec::new();
    for f in &ev.files {
        match ompd_review::expectations::File::load(&f.path) {
            Ok(g) => files.push(g),
            Err(_) if !f.path.exists() && f.expect.is_empty() => {}
            Err(e) => return Err(harness(e.to_string())),
        }
    }
    let mut again = ompd_review::gate::Evaluation::new(report, files, review.allow_improvements)
        .allowing_warnings(review.allow_warnings);
    let kinds: Vec<&str> = ev.silence_kinds.iter().map(String::as_str).collect();
    again.limit_silence(report, &kinds);
    if again.fails() {
        eprintln!("ompd-conform: error: the blessed expectations still do not match the run");
        return Ok(EXIT_FINDINGS);
    }
    Ok(EXIT_OK)
}

// ---- answer snapshots (ompd_engine::snapshot) ----

/// With `--golden`, compares each library's answers with its stored snapshot (printing the
/// diff on stderr) or, with `--bless`, writes them. Returns whether any snapshot differs.
pub(super) fn answer_snapshots(report: &Report, args: &RunArgs) -> Result<bool, i32> {
    if !args.answer_snapshots {
        return Ok(false);
    }
    let dir = args
        .answer_snapshots_dir
        .clone()
        .unwrap_or_else(ompd_engine::snapshot::default_dir);
    let mut differs = false;
    for (lib, answers) in &report.answers {
        let path = ompd_engine::snapshot::path_of(&dir, lib);
        if args.bless {
            std::fs::create_dir_all(&dir)
                .map_err(|e| harness(format!("cannot create {}: {e}", dir.display())))?;
            ompd_report::write_atomic(
                &path,
                ompd_engine::snapshot::render(lib, answers).as_bytes(),
            )
            .map_err(|e| harness(format!("cannot write {}: {e}", path.display())))?;
            eprintln!(
                "ompd-conform: wrote the answer snapshot of {lib} ({} answers) to {}",
                answers.len(),
                path.display()
            );
            continue;
        }
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(harness(format!(
                    "no answer snapshot of {lib} at {}; create it with `cargo xtask conform {lib} --golden --bless`",
                    path.display()
                )))
            }
            Err(e) => return Err(harness(format!("cannot read {}: {e}", path.display()))),
        };
        let stored = ompd_engine::snapshot::parse(&text)
            .map_err(|e| harness(format!("{}: {e}", path.display())))?;
        let changes = ompd_engine::snapshot::diff(&stored, answers);
        if changes.is_empty() {
            eprintln!(
                "ompd-conform: {lib} matches its answer snapshot ({} answers)",
                answers.len()
            );
            continue;
        }
        differs = true;
        eprintln!(
            "ompd-conform: {lib} differs from its answer snapshot {} ({} answers changed; \
             `cargo xtask conform {lib} --golden --bless` accepts them):",
            path.display(),
            changes.len()
        );
        for c in &changes {
            eprintln!("  {c}");
        }
    }
    Ok(differs)
}

// ---- end of answer snapshots ----

// ---- regression tracking (ompd_review::regression) ----

/// Compares two reports; exit 100 when a result regressed, or (without `allow_warnings`) warns
/// where it passed.
pub(super) fn compare(
    old: &std::path::Path,
    new: &std::path::Path,
    format: Format,
    allow_warnings: bool,
) -> i32 {
    let (a, b) = match (
        ompd_review::regression::load(old),
        ompd_review::regression::load(new),
    ) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return harness(e),
    };
    let c = ompd_review::regression::compare(&a, &b);
    match format {
        Format::Human => print!("{}", c.human()),
        Format::Json => match serde_json::to_string_pretty(&c) {
            Ok(s) => println!("{s}"),
            Err(e) => return harness(format!("cannot render the comparison: {e}")),
        },
    }
    let new_warnings = if allow_warnings {
        0
    } else {
        c.new_warning_count()
    };
    if c.regression_count() + new_warnings > 0 {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    }
}

// ---- end of regression tracking ----

// --- HTML matrix (issue 5, html branch) ---

/// Writes the HTML matrix of `reports` to `path` atomically (of one run's report judged by
/// `ev`, its summary is the run's own); a failed write is a harness error.
pub(super) fn write_html(
    reports: &[Report],
    ev: Option<&ompd_review::gate::Evaluation>,
    path: &std::path::Path,
) -> Result<(), i32> {
    let page = match (reports, ev) {
        ([report], Some(ev)) => ompd_review::html::render_judged(report, ev),
        _ => ompd_review::html::render(reports),
    };
    ompd_report::write_atomic(path, page.as_bytes())
        .map_err(|e| harness(format!("cannot write {}: {e}", path.display())))
}

/// Reads saved JSON reports (v1 read into the v2 shape): an unreadable file is a harness error
/// (1), a file that is not a report a usage error (2).
pub(super) fn read_reports(paths: &[PathBuf]) -> Result<Vec<Report>, i32> {
    let mut reports = Vec::new();
    for p in paths {
        let text = std::fs::read_to_string(p)
            .map_err(|e| harness(format!("cannot read {}: {e}", p.display())))?;
        let report =
            Report::from_json(&text).map_err(|e| usage(format!("{}: {e}", p.display())))?;
        reports.push(report);
    }
    Ok(reports)
}

/// `ompd-conform html REPORT.json... --output FILE`.
pub(super) fn html_cmd(paths: &[PathBuf], output: &std::path::Path) -> i32 {
    match read_reports(paths).and_then(|reports| write_html(&reports, None, output)) {
        Ok(()) => EXIT_OK,
        Err(code) => code,
    }
}

// --- end HTML matrix ---
