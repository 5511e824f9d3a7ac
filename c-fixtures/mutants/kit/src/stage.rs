//! Staging: one directory per mutant, holding the forwarder, a link to the inner library and
//! the file naming the mutant; and running the suite on one staged build.

use crate::Args;
use ompd_mutants::table::{self, Flavour, Mutant, MUTANTS, QUICK};
use ompd_mutants::{INNER_FILE, MUTANT_FILE};
use ompd_report::Report;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The suite's plan for each mutant: every scenario, two arch variants that differ in both
/// pointer width and byte order, the natural layout, no generated cases.
const PLAN: &[&str] = &[
    "--arch", "lp64-le", "--arch", "ilp32-be", "--layout", "natural", "--cases", "0",
];

/// The far placement's plan, for the clean baseline and the [`table::FAR_PLACED`] mutants: the
/// scenario with the most threads, regions and tasks on both widths, placed at the address
/// extremes.
const FAR_PLAN: &[&str] = &[
    "--scenario",
    "nested-tasks",
    "--arch",
    "lp64-le",
    "--arch",
    "ilp32-be",
    "--layout",
    "far",
    "--cases",
    "0",
];

/// The mutants of this run: the quick subset, the ones named, or all.
pub fn chosen(quick: bool, only: &[String]) -> Vec<&'static Mutant> {
    MUTANTS
        .iter()
        .filter(|m| {
            if !only.is_empty() {
                only.iter().any(|n| n == m.name)
            } else {
                !quick || QUICK.contains(&m.name)
            }
        })
        .collect()
}

/// Stages the build `name` (`None`: the clean baseline) of the flavour's forwarder around its
/// inner library and returns its library's path.
fn stage(args: &Args, name: Option<&str>, flavour: Flavour) -> Result<PathBuf, String> {
    let (forwarder, inner) = match flavour {
        Flavour::V5_2 | Flavour::Runtime => (&args.forwarder, &args.inner),
        Flavour::V6_0 => (&args.forwarder, &args.inner_60),
        Flavour::Tr2 => (&args.forwarder_tr, &args.inner_tr),
    };
    let dir = args.out.join(name.unwrap_or(flavour.clean()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let lib = dir.join("libompd.so");
    std::fs::copy(forwarder, &lib)
        .map_err(|e| format!("cannot copy {}: {e}", forwarder.display()))?;
    let inner = std::fs::canonicalize(inner)
        .map_err(|e| format!("no inner library {}: {e}", inner.display()))?;
    std::os::unix::fs::symlink(inner, dir.join(INNER_FILE))
        .map_err(|e| format!("cannot link the inner library: {e}"))?;
    if let Some(n) = name {
        std::fs::write(dir.join(MUTANT_FILE), n).map_err(|e| format!("cannot name {n}: {e}"))?;
        patch(&lib, n)?;
    }
    Ok(lib)
}

/// Applies the mutant's patch of the file itself, if it has one (every occurrence).
fn patch(lib: &Path, name: &str) -> Result<(), String> {
    let Some((from, to)) = table::find(name).and_then(|m| table::file_patch(m.deviation)) else {
        return Ok(());
    };
    let mut bytes =
        std::fs::read(lib).map_err(|e| format!("cannot read {}: {e}", lib.display()))?;
    let mut hits = 0;
    let mut i = 0;
    while let Some(at) = bytes[i..].windows(from.len()).position(|w| w == from) {
        bytes[i + at..i + at + to.len()].copy_from_slice(to);
        i += at + to.len();
        hits += 1;
    }
    if hits == 0 {
        return Err(format!(
            "{name}: the forwarder holds no {:?} to patch",
            String::from_utf8_lossy(from)
        ));
    }
    std::fs::write(lib, bytes).map_err(|e| format!("cannot write {}: {e}", lib.display()))
}

/// The plan for a mutant that targets a check judged at breakpoint stops: the breakpoint tour
/// of the `tasks` fixture (parallel and task breakpoints), live only, those checks only.
const TOUR_PLAN: &[&str] = &["--run", "tasks", "--no-core", "--check", "bp.*"];

/// The plan of a mutant judged on its own runtime ([`Flavour::Runtime`]): the breakpoint tours
/// and the live units of the `tasks` and `nested` fixtures, and the tour of `teams`, on the
/// runtime's staged copy, the runtime's checks and the library's against its runtime. `nested`
/// is there for the thread states: every runtime keeps its thread in `taskwait` in another
/// state than the program's, so on `tasks` alone the clean baseline already has that finding.
/// `teams` is there for 6.0's teams breakpoints.
const RUNTIME_PLAN: &[&str] = &[
    "--run",
    "tasks",
    "--run",
    "nested",
    "--run",
    "teams",
    "--no-core",
    "--check",
    "runtime.*",
    "--check",
    "lib.api_version.matches_runtime",
];

/// What every plan adds: a short per-call deadline, no expectations, the JSON report.
const EVERY_PLAN: &[&str] = &[
    "--call-timeout",
    "2",
    "--no-expectations",
    "--quiet",
    "--format",
    "json",
];

/// Stages the build of `flavour` and runs the suite on it; returns its report. A mutant that
/// targets a `bp.*` check (judged only on breakpoint tours) also runs [`TOUR_PLAN`], the
/// [`table::FAR_PLACED`] mutants [`FAR_PLAN`], and the clean baseline both, so that every place
/// a mutant runs has a baseline result; their results join the report.
pub fn run_one(args: &Args, name: Option<&str>, flavour: Flavour) -> Result<Report, String> {
    let lib = stage(args, name, flavour)?;
    if flavour == Flavour::Runtime {
        return run_on_own_runtime(args, &lib, name);
    }
    let mut report = run_plan(args, &lib, name, PLAN, "report.json")?;
    let tours = name
        .and_then(table::find)
        .is_none_or(|m| m.targets.iter().any(|t| t.starts_with("bp.")));
    if tours {
        let tour = run_plan(args, &lib, name, TOUR_PLAN, "tour.json")?;
        report.results.extend(tour.results);
    }
    if name.is_none_or(|n| table::FAR_PLACED.contains(&n)) {
        let far = run_plan(args, &lib, name, FAR_PLAN, "far.json")?;
        report.results.extend(far.results);
    }
    Ok(report)
}

/// Stages the base runtime beside `lib` (with the mutant's [`RuntimePatch`](table::RuntimePatch),
/// if it has one) and runs [`RUNTIME_PLAN`] on it.
fn run_on_own_runtime(args: &Args, lib: &Path, name: Option<&str>) -> Result<Report, String> {
    let cache = args
        .vendor_cache
        .clone()
        .unwrap_or_else(ompd_vendors::default_cache_dir);
    let patch = name
        .and_then(table::find)
        .and_then(|m| table::runtime_patch(m.deviation));
    let dir = lib.parent().unwrap_or(Path::new("."));
    let copy = crate::runtime::stage(&crate::runtime::base(&cache)?, dir, patch)?;
    let copy = copy.to_string_lossy();
    let plan: Vec<&str> = RUNTIME_PLAN
        .iter()
        .copied()
        .chain(["--runtime", &copy])
        .collect();
    run_plan(args, lib, name, &plan, "report.json")
}

/// Runs the suite on `lib` with `plan`, its report written to `file` beside `lib`.
fn run_plan(
    args: &Args,
    lib: &Path,
    name: Option<&str>,
    plan: &[&str],
    file: &str,
) -> Result<Report, String> {
    let dir = lib.parent().unwrap_or(Path::new("."));
    let report = dir.join(file);
    let status = Command::new(&args.runner)
        .arg("run")
        .arg(lib)
        .args(plan)
        .args(EVERY_PLAN)
        .arg("--output")
        .arg(&report)
        .arg("--results-dir")
        .arg(dir)
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("cannot run {}: {e}", args.runner.display()))?;
    let text = std::fs::read(&report)
        .map_err(|e| format!("{}: no report ({status}): {e}", name.unwrap_or("clean")))?;
    serde_json::from_slice(&text).map_err(|e| format!("{}: bad report: {e}", report.display()))
}
