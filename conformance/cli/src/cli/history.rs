//! `ompd-conform history`: the timeline of every check over the releases of a vendor line, from
//! saved reports or from a run of every known vendor of the line (`--line intel`).

use super::review::read_reports;
use super::{harness, usage, Format, HistoryArgs, EXIT_FINDINGS, EXIT_OK};
use ompd_review::history;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `history`; the exit code is 0, or 1 (a run or file failed), 2 (usage).
pub(super) fn history(args: &HistoryArgs) -> i32 {
    if args.reports.is_empty() && args.lines.is_empty() {
        return usage("history needs saved reports or --line NAME (see --help)".into());
    }
    let mut paths = args.reports.clone();
    let scratch = match tempfile::Builder::new().prefix("ompd-history-").tempdir() {
        Ok(d) => d,
        Err(e) => return harness(format!("cannot make a scratch directory: {e}")),
    };
    for line in &args.lines {
        match run_line(line, args, scratch.path()) {
            Ok(p) => paths.push(p),
            Err(code) => return code,
        }
    }
    let reports = match read_reports(&paths) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let timelines = match history::timelines(&reports) {
        Ok(t) => t,
        Err(e) => return usage(e),
    };
    if let Some(path) = &args.html {
        let page = history::html::render(&timelines, args.all);
        if let Err(e) = ompd_report::write_atomic(path, page.as_bytes()) {
            return harness(format!("cannot write {}: {e}", path.display()));
        }
    }
    match args.format {
        Format::Human => {
            for t in &timelines {
                println!("{}", history::render(t, args.all));
            }
        }
        Format::Json => match serde_json::to_string_pretty(&timelines) {
            Ok(s) => println!("{s}"),
            Err(e) => return harness(format!("cannot render the timelines: {e}")),
        },
    }
    EXIT_OK
}

/// The known vendors of `line`, in release order.
fn vendors_of(line: &str) -> Result<Vec<&'static str>, i32> {
    let mut names: Vec<&'static str> = ompd_vendors::known()
        .iter()
        .map(|v| v.name)
        .filter(|n| history::line_of(n).0 == line)
        .collect();
    names.sort_by_key(|n| history::line_of(n).1);
    if names.is_empty() {
        let mut lines: Vec<&str> = ompd_vendors::known()
            .iter()
            .map(|v| history::line_of(v.name).0)
            .collect();
        lines.dedup();
        return Err(usage(format!(
            "no known vendor line {line} (known: {})",
            lines.join(", ")
        )));
    }
    Ok(names)
}

/// Runs every vendor of `line` (a child `ompd-conform run`, progress on stderr) and returns the
/// path of its JSON report: `--save-dir`'s `LINE.json`, or one in `scratch`.
fn run_line(line: &str, args: &HistoryArgs, scratch: &Path) -> Result<PathBuf, i32> {
    let names = vendors_of(line)?;
    let dir = args.save_dir.as_deref().unwrap_or(scratch);
    if let Err(e) = std::fs::create_dir_all(dir) {
        return Err(harness(format!("cannot create {}: {e}", dir.display())));
    }
    let path = dir.join(format!("{line}.json"));
    let exe = std::env::current_exe()
        .map_err(|e| harness(format!("cannot find this program's path: {e}")))?;
    let mut cmd = Command::new(exe);
    cmd.arg("run").args(&names);
    cmd.args(["--format", "json", "--output"]).arg(&path);
    if let Some(n) = args.cases {
        cmd.args(["--cases", &n.to_string()]);
    }
    eprintln!("history: running the {line} line: {}", names.join(" "));
    let status = cmd
        .status()
        .map_err(|e| harness(format!("cannot run the {line} line: {e}")))?;
    match status.code() {
        Some(EXIT_OK | EXIT_FINDINGS) => Ok(path),
        _ => Err(harness(format!(
            "the run of the {line} line ended with {status}; no timeline"
        ))),
    }
}
