//! The `ompd-conform` command line: `run`, `list`, `coverage`, `html`, `compare`, `merge`, `history`,
//! `vendors fetch|list`, and the hidden bench commands; a worker or fork-server start is routed
//! to the engine before the command line is read ([`ompd_engine::route`]).
//!
//! Exit codes: the one table in [`exit`], which `--help` prints.

pub mod exit;
mod history;
mod merge;
mod review;
mod run;

use review::{compare, html_cmd};

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Every result passed ([`exit::OK`]).
pub const EXIT_OK: i32 = exit::OK.code;
/// The harness failed ([`exit::HARNESS`]).
pub const EXIT_HARNESS: i32 = exit::HARNESS.code;
/// Bad usage ([`exit::USAGE`]).
pub const EXIT_USAGE: i32 = exit::USAGE.code;
/// The gate failed ([`exit::FINDINGS`]).
pub const EXIT_FINDINGS: i32 = exit::FINDINGS.code;
/// The run was stopped early ([`exit::INTERRUPTED`]).
pub const EXIT_INTERRUPTED: i32 = exit::INTERRUPTED.code;

/// Command line.
#[derive(Debug, Parser)]
#[command(
    name = "ompd-conform",
    version,
    about = "Conformance suite for OMPD libraries, run against a simulated OpenMP target"
)]
pub struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Run the checks against libraries (paths or vendor names; none = every known vendor).
    Run(Box<RunArgs>),
    /// List every check with its requirement ids.
    List {
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// The coverage table: for every requirement id of the checklist, the checks covering it,
    /// and per profile the MUST coverage; exits 100 when a MUST is neither judged nor listed in
    /// `golden/must-exceptions.tsv`, or an entry there is stale.
    Coverage {
        /// Output format (human is Markdown).
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    // --- HTML matrix (issue 5, html branch) ---
    /// Render saved JSON reports (`run --format json --output`) as one HTML conformance matrix:
    /// the libraries of every report side by side.
    Html {
        /// JSON reports (`ompd-conformance/report/v3`, v2 or v1), in column order.
        #[arg(required = true)]
        reports: Vec<PathBuf>,
        /// The HTML file to write (atomically).
        #[arg(long, short)]
        output: PathBuf,
    },
    // --- end HTML matrix ---
    /// Manage the vendor library cache.
    Vendors {
        #[command(subcommand)]
        cmd: VendorCmd,
    },
    // ---- regression tracking (ompd_review::regression) ----
    /// Compare two JSON reports: regressions, fixes, changed outcomes, new and removed checks,
    /// changed snapshot answers. Exit 0 without regressions, 100 with, 1 for an unreadable file.
    Compare {
        /// The older report (`--format json`).
        old: PathBuf,
        /// The newer report.
        new: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// A result that passed in OLD and warns in NEW is reported but does not fail the
        /// comparison (exit 0 when nothing regressed).
        #[arg(long)]
        allow_warnings: bool,
    },
    // ---- end of regression tracking ----
    /// Join the JSON reports of a sharded run (`run --shard K/N`, every shard once) into the
    /// report of the whole run, judge it against the expectations and render it as `run` does.
    Merge {
        /// The shard reports (`--format json --output`), in any order.
        #[arg(required = true)]
        reports: Vec<PathBuf>,
        #[command(flatten)]
        review: ReviewArgs,
        /// Print no progress lines.
        #[arg(long, short)]
        quiet: bool,
    },
    /// The timeline of every check over the releases of a vendor line (`intel`, `llvm`): each
    /// release's outcome, when each finding appeared and was fixed, and the first bad release's
    /// replay command. From saved reports, or by running the line's vendors (`--line`).
    History(HistoryArgs),
    /// Internal: throughput figures of one library as JSON (used by `cargo xtask bench`).
    #[command(name = "__bench", hide = true)]
    Bench {
        /// Library path or vendor name.
        library: String,
        /// Runs of the measured unit per pass.
        #[arg(long, default_value_t = 20)]
        reps: usize,
        /// Also write the figures to this file.
        #[arg(long)]
        save: Option<PathBuf>,
    },
    /// Internal: tables and plot of saved bench figures (used by `cargo xtask bench`).
    #[command(name = "__bench-report", hide = true)]
    BenchReport {
        /// Directory of the `NAME.bench.json` files, where the tables and plot go.
        dir: PathBuf,
        /// Library names, in table order.
        names: Vec<String>,
    },
}

/// `--spawn`: how fresh workers start.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum SpawnArg {
    /// Forked by a zygote.
    Fork,
    /// Executed again.
    Exec,
}

impl From<SpawnArg> for ompd_engine::process::Spawn {
    fn from(s: SpawnArg) -> Self {
        match s {
            SpawnArg::Fork => ompd_engine::process::Spawn::Fork,
            SpawnArg::Exec => ompd_engine::process::Spawn::Exec,
        }
    }
}

#[derive(Debug, Subcommand)]
enum VendorCmd {
    /// Download and unpack vendor libraries into the cache (default: all known).
    Fetch {
        /// Vendor names.
        names: Vec<String>,
        /// Download again even when cached.
        #[arg(long)]
        force: bool,
    },
    /// One line per known vendor: name, version, path.
    List,
}

/// `history`'s arguments.
#[derive(Debug, clap::Args)]
struct HistoryArgs {
    /// Saved JSON reports (`run --format json --output`) holding the releases, in any order.
    reports: Vec<PathBuf>,
    /// Run every known vendor of this line first (`intel`, `llvm`; repeatable).
    #[arg(long = "line", value_name = "NAME")]
    lines: Vec<String>,
    /// Generated cases of the property phase in `--line` runs (default: the run's).
    #[arg(long)]
    cases: Option<usize>,
    /// Keep each `--line` run's report in this directory as `LINE.json`.
    #[arg(long, value_name = "DIR")]
    save_dir: Option<PathBuf>,
    /// Show every check, not only those whose outcome changes or that have a finding.
    #[arg(long)]
    all: bool,
    /// Also write the timelines as a self-contained HTML page (atomically).
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Readable text ending with `N passed, N failed`.
    Human,
    /// The `ompd-conformance/report/v3` JSON document.
    Json,
}

/// How a run's report is rendered and judged: shared by `run` and `merge`.
#[derive(Debug, clap::Args)]
struct ReviewArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Write the report to this file (atomically) instead of stdout.
    #[arg(long)]
    output: Option<PathBuf>,
    /// Expectations file for the libraries it applies to (repeatable; default: the repository's
    /// `golden/expectations/*.toml`, embedded in the runner).
    #[arg(long, value_name = "FILE", conflicts_with = "no_expectations")]
    expectations: Vec<PathBuf>,
    /// Judge the run without expectations: every fail, crash or timeout fails the gate.
    #[arg(long)]
    no_expectations: bool,
    /// Unexpected passes and stale expectation entries do not fail the gate.
    #[arg(long)]
    allow_improvements: bool,
    /// Warnings no expectation entry accepts are reported but do not fail the gate.
    #[arg(long)]
    allow_warnings: bool,
    /// Write a JUnit XML report to this file (atomically).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Directory for each library's unexpected results in the expectations format
    /// (`LIB.unexpected.toml`; default: target/ompd-conform).
    #[arg(long, value_name = "DIR")]
    results_dir: Option<PathBuf>,
    /// Also write the HTML conformance matrix of the run to this file (atomically).
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Print a line for every check worth one (skips, warnings and expected failures
    /// included), not only the unexpected results and one count of expected failures a family.
    #[arg(long)]
    verbose: bool,
}

impl ReviewArgs {
    /// The human rendering this review asks for, naming the files the run writes.
    fn view(&self) -> ompd_review::output::View {
        let mut reports = Vec::new();
        if let (Format::Json, Some(path)) = (self.format, &self.output) {
            reports.push(("JSON report", path.clone()));
        }
        if let Some(path) = &self.junit {
            reports.push(("JUnit report", path.clone()));
        }
        if let Some(path) = &self.html {
            reports.push(("HTML matrix", path.clone()));
        }
        ompd_review::output::View {
            verbose: self.verbose,
            written: ompd_review::summary::Written {
                reports,
                unexpected_dir: Some(self.results_dir()),
            },
        }
    }

    /// Where each library's `LIB.unexpected.toml` goes.
    fn results_dir(&self) -> PathBuf {
        self.results_dir
            .clone()
            .unwrap_or_else(ompd_review::bless::default_dir)
    }
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// Libraries: a path to an OMPD shared object, or a vendor name (see `vendors list`).
    libraries: Vec<String>,
    /// List the checks instead of running them.
    #[arg(long)]
    list: bool,
    #[command(flatten)]
    review: ReviewArgs,
    /// Scenario to run (repeatable; default: the default set).
    #[arg(long)]
    scenario: Vec<String>,
    /// Run the model in this JSON file (as written by a failing property test) instead of the
    /// default scenarios (repeatable).
    #[arg(long)]
    replay: Vec<PathBuf>,
    /// Architecture variant (repeatable; default: all four).
    #[arg(long)]
    arch: Vec<String>,
    /// Layout policy: natural, packed, random:SEED, intel-2026.2, far (repeatable; a named
    /// layout runs on every scenario and architecture).
    #[arg(long)]
    layout: Vec<String>,
    /// Run the full product, for nightly runs: every layout on every scenario and architecture
    /// (by default the far placement runs on a sample of four cells, and on the first 32 of the
    /// generated cases; here on all of them), and the checks that load fresh copies of the
    /// library (layout words, a process without its runtime) on every unit (by default on one
    /// unit per library).
    #[arg(long)]
    full: bool,
    /// Check id or `prefix*` (repeatable; default: all).
    #[arg(long)]
    check: Vec<String>,
    /// Write where the run's time went, per phase (`cargo xtask bench`'s breakdown), to this
    /// JSON file.
    #[arg(long, value_name = "FILE", hide = true)]
    phases: Option<PathBuf>,
    /// Parallel workers (default: number of cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Seconds one check may take before its worker is stopped (a backstop: a single call is
    /// held to --call-timeout).
    #[arg(long, default_value_t = 60)]
    timeout: u64,
    /// Seconds one call into the library may take: the worker's watchdog then ends it, and the
    /// check is reported `timeout` naming the call and its arguments (0: no per-call deadline).
    #[arg(long, value_name = "SECS", default_value_t = ompd_engine::run::DEFAULT_CALL_DEADLINE.as_secs_f64())]
    call_timeout: f64,
    /// Distinct checks an entry point may hang or reproducibly crash in (with well-formed input)
    /// before the rest of the library's run stops calling it: each check that would call it is
    /// reported `timeout` (or `crash`) as "not run", and the report lists it (0: never).
    #[arg(long, value_name = "N", default_value_t = ompd_engine::run::DEFAULT_QUARANTINE_AFTER)]
    quarantine_after: usize,
    /// Seconds the whole run may take; checks not reached by then are reported as skipped and the
    /// report is marked incomplete (default: no limit).
    #[arg(long, value_name = "SECS")]
    run_timeout: Option<u64>,
    /// Run only shard K of N (1 <= K <= N): the work items (simulated units, real targets, each
    /// library's property phase) whose number modulo N is K-1. Join the N shard reports with
    /// `merge`, which judges stale expectation entries.
    #[arg(long, value_name = "K/N")]
    shard: Option<ompd_report::shard::Shard>,
    /// Do not re-run a crashed check alone in a fresh worker (by default each crash is re-run
    /// once, to tell a flake from a reproducible crash).
    #[arg(long)]
    no_rerun: bool,
    /// How fresh workers start: forked by a zygote process that has done everything but load
    /// the library (`fork`), or this binary executed again for each (`exec`, slower; the
    /// same isolation).
    #[arg(long, value_enum, default_value_t = SpawnArg::Fork)]
    spawn: SpawnArg,
    /// Pass this environment variable on to the workers that load the library (repeatable;
    /// workers otherwise get only PATH and OMPD_CONFORM_TRACE).
    #[arg(long, value_name = "NAME")]
    keep_env: Vec<String>,
    /// Vendor cache directory (default: $OMPD_VENDOR_CACHE or target/ompd-vendors).
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Generated cases per property pass (0 turns the property phase off).
    #[arg(long, default_value_t = ompd_engine::property::DEFAULT_CASES)]
    cases: u32,
    /// Seed of the generated cases.
    #[arg(long, default_value_t = ompd_engine::supervisor::DEFAULT_SEED)]
    seed: u64,
    /// Shrink steps allowed per property finding.
    #[arg(long, default_value_t = 128)]
    shrink_iters: u32,
    /// Directory for the minimal reproducers of property findings (default: target/ompd-replays).
    #[arg(long)]
    replay_dir: Option<PathBuf>,
    /// Load this library (a path, or a name the dynamic loader finds) with RTLD_GLOBAL before each
    /// library under test: the way around a dependency it uses without declaring it in DT_NEEDED
    /// (repeatable).
    #[arg(long, value_name = "LIBRARY")]
    preload: Vec<PathBuf>,
    /// Print no progress lines.
    #[arg(long, short)]
    quiet: bool,
    // ---- the expectations gate, bless and JUnit (see `run_gate`) ----
    /// Adopt this run as the new baseline: rewrite each library's expectations file (the
    /// repository file it came from, or the `--expectations` file, created when missing).
    #[arg(long, conflicts_with = "no_expectations")]
    bless: bool,
    // ---- answer snapshots (ompd_engine::snapshot) ----
    /// Also record each library's observable answers on the default scenarios and compare them
    /// with its answer snapshot (`golden/snapshots/LIB.txt`): a difference is printed as a diff
    /// and exits 100. The answers go into the JSON report (`answers`).
    #[arg(long = "golden")]
    answer_snapshots: bool,
    /// Directory of the answer snapshots (default: the repository's golden/snapshots).
    #[arg(long = "golden-dir", value_name = "DIR")]
    answer_snapshots_dir: Option<PathBuf>,
    // ---- end of answer snapshots ----
    // ---- real targets (ompd_engine::real, ompd_engine::real_runs) ----
    /// Also run every check that applies to a real process against the OpenMP fixture programs
    /// (each build × scenario × runtime of the vendor cache), live under ptrace and from a core
    /// file of each (`gcore`). Without --sim the simulated scenarios are not run.
    #[arg(long)]
    live: bool,
    /// Run this fixture scenario live and from its core file (repeatable; implies --live for
    /// those scenarios only).
    #[arg(long = "run", value_name = "FIXTURE")]
    run_fixture: Vec<String>,
    /// Attach to this running process (it is stopped while each library's unit runs and left
    /// running). With no library named, the libraries come from its `ompd_dll_locations`.
    #[arg(long, value_name = "PID")]
    pid: Vec<i32>,
    /// Run against this ELF core file. With no library named, the libraries come from the
    /// dumped runtime's `ompd_dll_locations`.
    #[arg(long, value_name = "FILE")]
    core: Vec<PathBuf>,
    /// Run the fixtures on this OpenMP runtime (an LLVM- or Intel-family libomp/libiomp5 shared
    /// object) instead of the vendor cache's: the runtime the libraries under test ship with.
    /// The runtime-interface checks judge it (repeatable; needs --live, --cores or --run).
    #[arg(long, value_name = "SO")]
    runtime: Vec<PathBuf>,
    /// Live fixtures only: do not dump them to core files.
    #[arg(long, conflicts_with = "cores")]
    no_core: bool,
    /// Run the fixtures from core files only (`gcore` of each stopped fixture), no live units;
    /// with --run, for those scenarios.
    #[arg(long)]
    cores: bool,
    /// Also run the simulated scenarios when real targets are given.
    #[arg(long)]
    sim: bool,
    // ---- end of real targets ----
}

/// A usage error: one line, exit 2.
fn usage(msg: String) -> i32 {
    eprintln!("ompd-conform: error: {msg}");
    EXIT_USAGE
}

/// A harness error: one line, exit 1.
fn harness(msg: String) -> i32 {
    eprintln!("ompd-conform: error: {msg}");
    EXIT_HARNESS
}

/// The command line, with the exit-code table after `--help` and `run --help`.
fn parse() -> Result<Cli, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    let command = Cli::command()
        .after_help(exit::help())
        .mut_subcommand("run", |run| run.after_help(exit::help()));
    Cli::from_arg_matches(&command.try_get_matches()?)
}

/// Parses the command line and runs it; returns the process exit code.
pub fn main() -> i32 {
    if let Some(code) = ompd_engine::route() {
        return code;
    }
    let cli = match parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return EXIT_OK;
            }
            let text = e.render().to_string();
            let first = text
                .lines()
                .next()
                .unwrap_or("invalid arguments")
                .trim_start_matches("error: ");
            return usage(format!("{first} (see --help)"));
        }
    };
    match cli.cmd {
        Cmd::Bench {
            library,
            reps,
            save,
        } => bench(&library, reps, save.as_deref()),
        Cmd::BenchReport { dir, names } => bench_report(&dir, &names),
        Cmd::List { format } => list(format),
        Cmd::Coverage { format } => coverage(format),
        Cmd::Vendors { cmd } => vendors_cmd(cmd),
        Cmd::Compare {
            old,
            new,
            format,
            allow_warnings,
        } => compare(&old, &new, format, allow_warnings),
        Cmd::Html { reports, output } => html_cmd(&reports, &output),
        Cmd::Merge {
            reports,
            review,
            quiet,
        } => merge::merge(&reports, &review, quiet),
        Cmd::History(args) => history::history(&args),
        Cmd::Run(args) if args.list => list(args.review.format),
        Cmd::Run(args) => {
            let code = run::run(*args);
            ompd_engine::zygote::release_all();
            code
        }
    }
}

fn bench(library: &str, reps: usize, save: Option<&std::path::Path>) -> i32 {
    let lib = match ompd_vendors::resolve(library, &ompd_vendors::default_cache_dir()) {
        Ok(l) => l,
        Err(e) => return harness(e.to_string()),
    };
    let f = match ompd_engine::bench::measure(&lib, reps) {
        Ok(f) => f,
        Err(e) => return harness(format!("cannot measure {library}: {e}")),
    };
    let s = match serde_json::to_string(&f) {
        Ok(s) => s,
        Err(e) => return harness(format!("cannot render the figures: {e}")),
    };
    if let Some(path) = save {
        if let Err(e) = ompd_report::write_atomic(path, s.as_bytes()) {
            return harness(format!("cannot write {}: {e}", path.display()));
        }
    }
    // The figures are the last line: the library may print while it runs in this process.
    println!("\n{s}");
    EXIT_OK
}

/// `__bench-report DIR`: the traffic and scaling tables and the scaling plot of the figures
/// saved in `DIR` (`NAME.bench.json`, in `names` order), written next to them.
fn bench_report(dir: &std::path::Path, names: &[String]) -> i32 {
    let mut libs = Vec::new();
    for n in names {
        let path = dir.join(format!("{n}.bench.json"));
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => return harness(format!("cannot read {}: {e}", path.display())),
        };
        match serde_json::from_str::<ompd_engine::bench::Figures>(&text) {
            Ok(f) => libs.push((n.clone(), f)),
            Err(e) => return usage(format!("{}: {e}", path.display())),
        }
    }
    use ompd_engine::bench::plot;
    let svg = match plot::scaling_svg(&libs) {
        Ok(s) => s,
        Err(e) => return harness(format!("cannot draw the scaling plot: {e}")),
    };
    let scaling = plot::scaling_table(&libs);
    let phases = match phase_breakdowns(dir, names) {
        Ok(p) => ompd_engine::phases::table(&p),
        Err(code) => return code,
    };
    for (file, text) in [
        ("phases.md", phases.as_str()),
        ("scaling.svg", svg.as_str()),
        ("scaling.md", scaling.as_str()),
        ("traffic.md", plot::traffic_table(&libs).as_str()),
    ] {
        let path = dir.join(file);
        if let Err(e) = ompd_report::write_atomic(&path, text.as_bytes()) {
            return harness(format!("cannot write {}: {e}", path.display()));
        }
    }
    print!(
        "{scaling}\nwhere the time goes (processor seconds per phase, summed over threads and workers):\n{phases}"
    );
    EXIT_OK
}

/// The breakdowns `run --phases` saved in `dir` (`NAME.phases.json`), in `names` order, then the
/// whole default run's (`default.phases.json`) when there is one.
fn phase_breakdowns(
    dir: &std::path::Path,
    names: &[String],
) -> Result<Vec<(String, ompd_engine::phases::Breakdown)>, i32> {
    let mut out = Vec::new();
    for n in names {
        let path = dir.join(format!("{n}.phases.json"));
        let text = std::fs::read_to_string(&path)
            .map_err(|e| harness(format!("cannot read {}: {e}", path.display())))?;
        let b =
            serde_json::from_str(&text).map_err(|e| usage(format!("{}: {e}", path.display())))?;
        out.push((n.clone(), b));
    }
    // The whole default run's, when the bench timed one.
    let whole = std::fs::read_to_string(dir.join("default.phases.json"));
    if let Some(b) = whole.ok().and_then(|t| serde_json::from_str(&t).ok()) {
        out.push(("whole default run".into(), b));
    }
    Ok(out)
}

fn list(format: Format) -> i32 {
    let all = ompd_checks::registry();
    match format {
        Format::Json => match serde_json::to_string_pretty(&all) {
            Ok(s) => println!("{s}"),
            Err(e) => return harness(format!("cannot render the check list: {e}")),
        },
        Format::Human => print!("{}", list_text(all)),
    }
    EXIT_OK
}

/// The human rendering of `list`: one line per check with its requirement ids, then the count.
fn list_text(checks: &[&ompd_checks::Check]) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let w = checks.iter().map(|c| c.id.len()).max().unwrap_or(0);
    for c in checks {
        let _ = writeln!(s, "{:<w$}  {}", c.id, c.requirements.join(", "));
    }
    let _ = writeln!(s, "{} checks", checks.len());
    s
}

fn coverage(format: Format) -> i32 {
    let cov = ompd_review::coverage::Coverage::new(
        ompd_checks::registry(),
        ompd_review::coverage::checklist(),
        ompd_review::coverage::gate::shipped(),
    );
    match format {
        Format::Json => match serde_json::to_string_pretty(&cov) {
            Ok(s) => println!("{s}"),
            Err(e) => return harness(format!("cannot render the coverage table: {e}")),
        },
        Format::Human => print!("{}", cov.markdown()),
    }
    let problems = cov.gate.problems();
    for p in &problems {
        eprintln!("coverage gate: {p}");
    }
    if problems.is_empty() {
        EXIT_OK
    } else {
        EXIT_FINDINGS
    }
}

fn vendors_cmd(cmd: VendorCmd) -> i32 {
    let cache = ompd_vendors::default_cache_dir();
    match cmd {
        VendorCmd::Fetch { names, force } => {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            match ompd_vendors::fetch(&cache, &names, force, &mut |l| eprintln!("{l}")) {
                Ok(m) => {
                    for l in ompd_vendors::list_lines(&m) {
                        println!("{l}");
                    }
                    EXIT_OK
                }
                Err(e) => harness(e.to_string()),
            }
        }
        VendorCmd::List => match ompd_vendors::Manifest::load(&cache) {
            Ok(m) => {
                for l in ompd_vendors::list_lines(&m) {
                    println!("{l}");
                }
                EXIT_OK
            }
            Err(e) => harness(e.to_string()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_names_the_report_schema_the_runner_writes() {
        use clap::CommandFactory;
        let mut command = Cli::command();
        let run = command.find_subcommand_mut("run").expect("run");
        let help = run.render_long_help().to_string();
        assert!(help.contains(ompd_report::SCHEMA), "{help}");
        assert!(!help.contains(ompd_report::SCHEMA_V1), "{help}");
    }

    #[test]
    fn list_renders_the_lifecycle_family() {
        let lib: Vec<&ompd_checks::Check> = ompd_checks::registry()
            .iter()
            .copied()
            .filter(|c| c.id.starts_with("lib."))
            .collect();
        insta::assert_snapshot!("list_lifecycle_family", list_text(&lib));
    }
}
