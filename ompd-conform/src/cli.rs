//! The `ompd-conform` command line: `run`, `list`, `vendors fetch|list`, and the hidden worker.
//!
//! Exit codes: 0 every result matched the expectations (expected failures included); 100 the
//! gate failed: a regression (a fail, crash or timeout no expectation accepts), a flaky crash,
//! or, without `--allow-improvements`, an unexpected pass or a stale expectation entry; 1 the
//! harness could not do its job (a library did not load, a worker could not start, a file could
//! not be written); 2 usage (including a malformed expectations file); 130 the run was stopped.

use crate::checks;
use crate::report::{Outcome, Report};
use crate::run::RunOptions;
use crate::supervisor;
use crate::vendors;
use clap::{Parser, Subcommand, ValueEnum};
use ompd_serve::arch::Arch;
use sim_target::layout::Policy;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Every result passed.
pub const EXIT_OK: i32 = 0;
/// The harness failed.
pub const EXIT_HARNESS: i32 = 1;
/// Bad usage.
pub const EXIT_USAGE: i32 = 2;
/// The gate failed: conformance regressions (or unexpected passes, stale entries) were found.
pub const EXIT_FINDINGS: i32 = 100;
/// The run was interrupted (SIGINT, SIGTERM) or hit `--run-timeout`; the report written is
/// marked incomplete.
pub const EXIT_INTERRUPTED: i32 = 130;

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
    /// The coverage table: for every requirement id of the checklist, the checks covering it.
    Coverage {
        /// Output format (human is Markdown).
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    // --- HTML matrix (issue 5, html branch) ---
    /// Render saved JSON reports (`run --format json --output`) as one HTML conformance matrix:
    /// the libraries of every report side by side.
    Html {
        /// JSON reports (`ompd-conformance/report/v1`), in column order.
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
    },
    // ---- end of regression tracking ----
    /// Internal: run one unit (used by the supervisor).
    #[command(name = "__worker", hide = true)]
    Worker,
    /// Internal: throughput figures of one library as JSON (used by `cargo xtask bench`).
    #[command(name = "__bench", hide = true)]
    Bench {
        /// Library path or vendor name.
        library: String,
        /// Runs of the measured unit per pass.
        #[arg(long, default_value_t = 20)]
        reps: usize,
    },
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

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Readable text ending with `N passed, N failed`.
    Human,
    /// The `ompd-conformance/report/v1` JSON document.
    Json,
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// Libraries: a path to an OMPD shared object, or a vendor name (see `vendors list`).
    libraries: Vec<String>,
    /// List the checks instead of running them.
    #[arg(long)]
    list: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Write the report to this file (atomically) instead of stdout.
    #[arg(long)]
    output: Option<PathBuf>,
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
    /// Layout policy: natural, packed, random:SEED, intel-2026.2 (repeatable).
    #[arg(long)]
    layout: Vec<String>,
    /// Check id or `prefix*` (repeatable; default: all).
    #[arg(long)]
    check: Vec<String>,
    /// Parallel workers (default: number of cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Seconds one check may take before its worker is stopped.
    #[arg(long, default_value_t = 60)]
    timeout: u64,
    /// Seconds the whole run may take; checks not reached by then are reported as skipped and the
    /// report is marked incomplete (default: no limit).
    #[arg(long, value_name = "SECS")]
    run_timeout: Option<u64>,
    /// Do not re-run a crashed check alone in a fresh worker (by default each crash is re-run
    /// once, to tell a flake from a reproducible crash).
    #[arg(long)]
    no_rerun: bool,
    /// Pass this environment variable on to the workers that load the library (repeatable;
    /// workers otherwise get only PATH and OMPD_CONFORM_TRACE).
    #[arg(long, value_name = "NAME")]
    keep_env: Vec<String>,
    /// Vendor cache directory (default: $OMPD_VENDOR_CACHE or target/ompd-vendors).
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Generated cases per property pass (0 turns the property phase off).
    #[arg(long, default_value_t = 256)]
    cases: u32,
    /// Seed of the generated cases.
    #[arg(long, default_value_t = supervisor::DEFAULT_SEED)]
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
    /// Adopt this run as the new baseline: rewrite each library's expectations file (the
    /// repository file it came from, or the `--expectations` file, created when missing).
    #[arg(long, conflicts_with = "no_expectations")]
    bless: bool,
    /// Write a JUnit XML report to this file (atomically).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Directory for each library's unexpected results in the expectations format
    /// (`LIB.unexpected.toml`; default: target/ompd-conform).
    #[arg(long, value_name = "DIR")]
    results_dir: Option<PathBuf>,
    // ---- golden snapshots (ompd_engine::snapshot) ----
    /// Also record each library's observable answers on the default scenarios and compare them
    /// with its golden snapshot (`golden/snapshots/LIB.txt`): a difference is printed as a diff
    /// and exits 100. The answers go into the JSON report (`answers`).
    #[arg(long)]
    golden: bool,
    /// Directory of the golden snapshots (default: the repository's golden/snapshots).
    #[arg(long, value_name = "DIR")]
    golden_dir: Option<PathBuf>,
    // ---- end of golden snapshots ----
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
    // --- HTML matrix (issue 5, html branch) ---
    /// Also write the HTML conformance matrix of the run to this file (atomically).
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    // --- end HTML matrix ---
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

/// Parses the command line and runs it; returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
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
        Cmd::Worker => crate::worker::main(),
        Cmd::Bench { library, reps } => bench(&library, reps),
        Cmd::List { format } => list(format),
        Cmd::Coverage { format } => coverage(format),
        Cmd::Vendors { cmd } => vendors_cmd(cmd),
        Cmd::Compare { old, new, format } => compare(&old, &new, format),
        Cmd::Html { reports, output } => html_cmd(&reports, &output),
        Cmd::Run(args) if args.list => list(args.format),
        Cmd::Run(args) => run(*args),
    }
}

fn bench(library: &str, reps: usize) -> i32 {
    let lib = match vendors::resolve(library, &vendors::default_cache_dir()) {
        Ok(l) => l,
        Err(e) => return harness(e.to_string()),
    };
    match crate::bench::measure(&lib, reps) {
        // The figures are the last line: the library may print while it runs in this process.
        Ok(f) => match serde_json::to_string(&f) {
            Ok(s) => {
                println!("\n{s}");
                EXIT_OK
            }
            Err(e) => harness(format!("cannot render the figures: {e}")),
        },
        Err(e) => harness(format!("cannot measure {library}: {e}")),
    }
}

fn list(format: Format) -> i32 {
    let all = checks::registry();
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
fn list_text(checks: &[&checks::Check]) -> String {
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
    let cov = crate::coverage::Coverage::new(checks::registry(), crate::coverage::checklist());
    match format {
        Format::Json => match serde_json::to_string_pretty(&cov) {
            Ok(s) => println!("{s}"),
            Err(e) => return harness(format!("cannot render the coverage table: {e}")),
        },
        Format::Human => print!("{}", cov.markdown()),
    }
    EXIT_OK
}

fn vendors_cmd(cmd: VendorCmd) -> i32 {
    let cache = vendors::default_cache_dir();
    match cmd {
        VendorCmd::Fetch { names, force } => {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            match vendors::fetch(&cache, &names, force, &mut |l| eprintln!("{l}")) {
                Ok(m) => {
                    for l in vendors::list_lines(&m) {
                        println!("{l}");
                    }
                    EXIT_OK
                }
                Err(e) => harness(e.to_string()),
            }
        }
        VendorCmd::List => match vendors::Manifest::load(&cache) {
            Ok(m) => {
                for l in vendors::list_lines(&m) {
                    println!("{l}");
                }
                EXIT_OK
            }
            Err(e) => harness(e.to_string()),
        },
    }
}

fn options(args: &RunArgs) -> Result<RunOptions, String> {
    let mut o = RunOptions::default();
    if !args.scenario.is_empty() {
        // An unknown name is refused here, in one line naming the known ones.
        o.scenarios = args
            .scenario
            .iter()
            .map(|s| crate::worker::Scenario::built_in(s))
            .collect::<Result<_, _>>()?;
    }
    if !args.replay.is_empty() {
        if args.scenario.is_empty() {
            o.scenarios.clear();
        }
        for p in &args.replay {
            let text = std::fs::read_to_string(p)
                .map_err(|e| format!("cannot read replay file {}: {e}", p.display()))?;
            let m: sim_target::model::Model = serde_json::from_str(&text)
                .map_err(|e| format!("replay file {} is not a model: {e}", p.display()))?;
            m.validate()
                .map_err(|e| format!("replay file {}: {e}", p.display()))?;
            let name = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "replay".into());
            o.scenarios
                .push(crate::worker::Scenario::model(format!("replay:{name}"), m));
        }
    }
    if !args.arch.is_empty() {
        o.archs = args
            .arch
            .iter()
            .map(|a| a.parse::<Arch>())
            .collect::<Result<_, _>>()?;
    }
    if !args.layout.is_empty() {
        o.layouts = args
            .layout
            .iter()
            .map(|l| l.parse::<Policy>())
            .collect::<Result<_, _>>()?;
    }
    for f in &args.check {
        if !checks::registry()
            .iter()
            .any(|c| supervisor::selected(c.id, std::slice::from_ref(f)))
        {
            return Err(format!("`--check {f}` matches no check (see --list)"));
        }
    }
    o.checks = args.check.clone();
    if let Some(j) = args.jobs {
        if j == 0 {
            return Err("--jobs must be at least 1".into());
        }
        o.jobs = j;
    }
    if args.timeout == 0 {
        return Err("--timeout must be at least 1 second".into());
    }
    o.check_timeout = Duration::from_secs(args.timeout);
    if args.run_timeout == Some(0) {
        return Err("--run-timeout must be at least 1 second".into());
    }
    o.rerun_crashes = !args.no_rerun;
    o.keep_env = args.keep_env.clone();
    for f in &args.run_fixture {
        if fixture_protocol::scenario(f).is_none() {
            let known: Vec<_> = fixture_protocol::scenarios()
                .iter()
                .map(|s| s.name)
                .collect();
            return Err(format!(
                "unknown fixture `{f}` (known: {})",
                known.join(", ")
            ));
        }
    }
    for c in &args.core {
        if !c.is_file() {
            return Err(format!("core file {} does not exist", c.display()));
        }
        // A corrupt or foreign file is refused here, once, not in every unit.
        if let Err(e) = live_target::core::CoreTarget::open(c) {
            return Err(format!("{} is not a usable core file: {e}", c.display()));
        }
    }
    for p in &args.pid {
        if *p <= 0 || !Path::new(&format!("/proc/{p}")).exists() {
            return Err(format!("no process with pid {p}"));
        }
    }
    o.real
        .extend(args.pid.iter().map(|p| crate::real_runs::RealRun::Pid(*p)));
    o.real.extend(
        args.core
            .iter()
            .map(|c| crate::real_runs::RealRun::Core(c.clone())),
    );
    let wants_real = args.live || args.cores || !args.run_fixture.is_empty() || !o.real.is_empty();
    o.sim = !wants_real || args.sim;
    // Generated cases complement the default scenario set; a run narrowed to scenarios or
    // replayed models runs exactly those.
    o.property = (o.sim && args.cases > 0 && args.scenario.is_empty() && args.replay.is_empty())
        .then(|| crate::property::PropertyOptions {
            cases: args.cases,
            seed: args.seed,
            max_shrink_iters: args.shrink_iters,
            replay_dir: args
                .replay_dir
                .clone()
                .unwrap_or_else(crate::property::default_replay_dir),
        });
    Ok(o)
}

fn run(args: RunArgs) -> i32 {
    // ---- golden snapshots ----
    if args.golden_dir.is_some() && !args.golden {
        return usage("--golden-dir locates golden snapshots: it needs --golden".into());
    }
    // ---- end of golden snapshots ----
    let mut opts = match options(&args) {
        Ok(o) => o,
        Err(e) => return usage(e),
    };
    let cache = args
        .cache
        .clone()
        .unwrap_or_else(vendors::default_cache_dir);
    let mut names = args.libraries.clone();
    let mut discovered: Vec<(String, PathBuf)> = Vec::new();
    if names.is_empty() && !args.run_fixture.is_empty() && !args.live && !args.cores {
        // No library named for fixture runs: the ones the runtimes name.
        if let Err(e) = vendors::fetch(&cache, &[], false, &mut |_| {}) {
            return harness(e.to_string());
        }
        let built = match crate::real_runs::build_fixtures(&cache) {
            Ok(b) => b,
            Err(e) => return harness(e),
        };
        match crate::real_runs::discover_libraries(&built, &cache, &args.run_fixture[0]) {
            Ok(found) => {
                discovered.extend(found.into_iter().map(|f| ("fixture runtime".into(), f)))
            }
            Err(e) => return harness(e),
        }
    }
    if names.is_empty()
        && !opts.real.is_empty()
        && !args.live
        && !args.cores
        && args.run_fixture.is_empty()
    {
        // No library named for a process or core file: the ones its runtime names.
        for t in &opts.real {
            let Some(target) = t.named() else { continue };
            match crate::real::discover(&target) {
                Ok(found) => {
                    discovered.extend(found.into_iter().map(|f| (t.label(), f)));
                }
                Err(e) => return harness(format!("{}: {e}", t.label())),
            }
        }
    }
    for (from, f) in discovered {
        // A known vendor's library is named as the vendor, so its loader quirks (an undeclared
        // C++ runtime, an unshipped libomp) are worked around.
        let canonical = f.canonicalize().unwrap_or_else(|_| f.clone());
        let vendor = vendors::known().iter().find(|v| {
            vendors::resolve(v.name, &cache)
                .is_ok_and(|r| r.path.canonicalize().is_ok_and(|p| p == canonical))
        });
        let f = vendor.map_or_else(|| f.display().to_string(), |v| v.name.to_string());
        if !args.quiet {
            eprintln!("{from}: ompd_dll_locations names {f}");
        }
        if !names.contains(&f) {
            names.push(f);
        }
    }
    if names.is_empty() {
        // No library named: every known vendor, fetched on demand.
        let progress = |l: &str| {
            if !args.quiet {
                eprintln!("{l}");
            }
        };
        if let Err(e) = vendors::fetch(&cache, &[], false, &mut |l| progress(l)) {
            return harness(e.to_string());
        }
        names = vendors::known()
            .iter()
            .map(|v| v.name.to_string())
            .collect();
    }
    let mut libs = Vec::new();
    for n in &names {
        match vendors::resolve(n, &cache) {
            Ok(mut r) => {
                r.preload.extend(args.preload.iter().cloned());
                libs.push(r)
            }
            Err(e) => return harness(e.to_string()),
        }
    }
    if args.live || args.cores || !args.run_fixture.is_empty() {
        // Compiled here, on first need: the runner's build compiles no C.
        let built = match crate::real_runs::build_fixtures(&cache) {
            Ok(b) => b,
            Err(e) => return harness(e),
        };
        let (fixtures, missing) = crate::real_runs::fixture_targets(
            &built,
            &cache,
            &args.run_fixture,
            !args.cores,
            !args.no_core,
        );
        for m in &missing {
            eprintln!("warning: live fixtures: {m}");
        }
        if fixtures.is_empty() {
            return harness(format!(
                "no fixture target can run: {}",
                if missing.is_empty() {
                    "none planned".into()
                } else {
                    missing.join("; ")
                }
            ));
        }
        opts.real.extend(fixtures);
    }
    let files = match expectation_files(&args, &libs) {
        Ok(f) => f,
        Err(e) => return usage(e),
    };
    let statics = match crate::run::inspect_all(&libs) {
        Ok(s) => s,
        Err(e) => return harness(e.to_string()),
    };
    let show = !args.quiet && std::io::stderr().is_terminal();
    let stop = Arc::new(supervisor::Stop::with_deadline(
        args.run_timeout.map(Duration::from_secs),
    ));
    if let Err(e) = stop_on_signals(Arc::clone(&stop)) {
        return harness(format!("cannot handle SIGINT/SIGTERM: {e}"));
    }
    let bar = show.then(|| progress_bar(&libs, &opts));
    let mut report = crate::run::run(&libs, &statics, &opts, &stop, &|line| {
        if let Some(b) = &bar {
            b.inc(1);
            b.set_message(line.to_string());
        }
    });
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    // A stopped run records no answers: its snapshot would be partial.
    if args.golden && stop.reason().is_none() {
        let exec = supervisor::Exec::of(&opts, &stop);
        for l in &libs {
            let answers = crate::collect::collect(l, exec);
            report.answers.insert(l.name.clone(), answers);
        }
    }
    let ev = crate::gate::Evaluation::new(&report, files, args.allow_improvements);
    ev.mark(&mut report);
    if let Err(code) = emit(&report, &crate::output::human(&report, &ev), &args) {
        return code;
    }
    if let Some(path) = &args.html {
        if let Err(code) = write_html(std::slice::from_ref(&report), path) {
            return code;
        }
    }
    // Answers of a run stopped while they were collected are partial: neither compared nor
    // blessed (the stop is reported below).
    let golden_differs = match stop.reason() {
        Some(_) => false,
        None => match golden(&report, &args) {
            Ok(d) => d,
            Err(code) => return code,
        },
    };
    let gate_code = match run_gate(&report, &ev, &args, stop.reason().is_some()) {
        Ok(c) => c,
        Err(code) => return code,
    };
    for l in &report.libraries {
        if let Some(d) = l
            .diagnostics
            .iter()
            .find_map(|d| d.strip_prefix("load failed: "))
        {
            eprintln!("ompd-conform: error: cannot load {}: {d}", l.name);
        }
    }
    if let Some(why) = stop.reason() {
        eprintln!("ompd-conform: error: the run stopped early ({why}); the report is incomplete");
        return EXIT_INTERRUPTED;
    }
    if report.count(Outcome::HarnessError) > 0 {
        return EXIT_HARNESS;
    }
    match gate_code {
        EXIT_OK if golden_differs => EXIT_FINDINGS,
        code => code,
    }
}

// ---- the expectations gate, bless and JUnit ----

/// The expectation files of a run: `--expectations` files (a missing one is created empty for
/// the run's libraries under `--bless`), none with `--no-expectations`, else the embedded
/// repository files. A malformed file is a usage error.
fn expectation_files(
    args: &RunArgs,
    libs: &[vendors::Resolved],
) -> Result<Vec<crate::expectations::File>, String> {
    use crate::expectations::{embedded, File};
    if args.no_expectations {
        return Ok(Vec::new());
    }
    if args.expectations.is_empty() {
        return embedded().map_err(|e| e.to_string());
    }
    let mut out = Vec::new();
    for p in &args.expectations {
        if args.bless && !p.exists() {
            out.push(File {
                vendor: p
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                libraries: libs.iter().map(|l| l.name.clone()).collect(),
                expect: Vec::new(),
                path: p.clone(),
            });
            continue;
        }
        out.push(File::load(p).map_err(|e| e.to_string())?);
    }
    Ok(out)
}

/// A progress bar over the run's units (and one step per library's property phase).
fn progress_bar(libs: &[vendors::Resolved], opts: &RunOptions) -> indicatif::ProgressBar {
    let units: usize = libs.iter().map(|l| crate::run::plan(l, opts).len()).sum();
    let property = if opts.property.is_some() {
        libs.len()
    } else {
        0
    };
    let bar = indicatif::ProgressBar::new((units + property) as u64);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{elapsed_precise} [{bar:30}] {pos}/{len} {wide_msg}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// After the report is out: writes each library's unexpected results, the JUnit report, and
/// (with `--bless`) the new expectations. Returns the gate's exit code (0 or 100; after a
/// successful bless, the verdict against the blessed files).
fn run_gate(
    report: &Report,
    ev: &crate::gate::Evaluation,
    args: &RunArgs,
    stopped: bool,
) -> Result<i32, i32> {
    let date = crate::bless::today();
    let dir = args
        .results_dir
        .clone()
        .unwrap_or_else(crate::bless::default_dir);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return Err(harness(format!("cannot create {}: {e}", dir.display())));
    }
    for (li, lg) in ev.libraries.iter().enumerate() {
        let path = crate::bless::unexpected_path(&dir, &lg.library);
        let text = crate::bless::unexpected_toml(report, ev, li, &date);
        crate::report::write_atomic(&path, text.as_bytes())
            .map_err(|e| harness(format!("cannot write {}: {e}", path.display())))?;
        if !args.quiet && !crate::bless::plan(report, ev, li).is_empty() {
            eprintln!(
                "ompd-conform: unexpected results of {} (expectations format): {}",
                lg.library,
                path.display()
            );
        }
    }
    if let Some(path) = &args.junit {
        let xml = crate::output::junit(report, ev)
            .map_err(|e| harness(format!("cannot render the JUnit report: {e}")))?;
        crate::report::write_atomic(path, xml.as_bytes())
            .map_err(|e| harness(format!("cannot write {}: {e}", path.display())))?;
    }
    if !args.bless {
        return Ok(if ev.fails() { EXIT_FINDINGS } else { EXIT_OK });
    }
    if stopped {
        eprintln!("ompd-conform: error: not blessing an incomplete run");
        return Ok(EXIT_INTERRUPTED);
    }
    let written = crate::bless::bless(report, ev, &date).map_err(|e| harness(e.to_string()))?;
    for w in &written {
        eprintln!("ompd-conform: blessed {w}");
    }
    // Judge the run again against the files as written.
    let mut files = Vec::new();
    for f in &ev.files {
        match crate::expectations::File::load(&f.path) {
            Ok(g) => files.push(g),
            Err(_) if !f.path.exists() && f.expect.is_empty() => {}
            Err(e) => return Err(harness(e.to_string())),
        }
    }
    let again = crate::gate::Evaluation::new(report, files, args.allow_improvements);
    if again.fails() {
        eprintln!("ompd-conform: error: the blessed expectations still do not match the run");
        return Ok(EXIT_FINDINGS);
    }
    Ok(EXIT_OK)
}

// ---- golden snapshots (ompd_engine::snapshot) ----

/// With `--golden`, compares each library's answers with its stored snapshot (printing the
/// diff on stderr) or, with `--bless`, writes them. Returns whether any snapshot differs.
fn golden(report: &Report, args: &RunArgs) -> Result<bool, i32> {
    if !args.golden {
        return Ok(false);
    }
    let dir = args
        .golden_dir
        .clone()
        .unwrap_or_else(crate::snapshot::default_dir);
    let mut differs = false;
    for (lib, answers) in &report.answers {
        let path = crate::snapshot::path_of(&dir, lib);
        if args.bless {
            std::fs::create_dir_all(&dir)
                .map_err(|e| harness(format!("cannot create {}: {e}", dir.display())))?;
            crate::report::write_atomic(&path, crate::snapshot::render(lib, answers).as_bytes())
                .map_err(|e| harness(format!("cannot write {}: {e}", path.display())))?;
            eprintln!(
                "ompd-conform: wrote the golden snapshot of {lib} ({} answers) to {}",
                answers.len(),
                path.display()
            );
            continue;
        }
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(harness(format!(
                    "no golden snapshot of {lib} at {}; create it with `cargo xtask conform {lib} --golden --bless`",
                    path.display()
                )))
            }
            Err(e) => return Err(harness(format!("cannot read {}: {e}", path.display()))),
        };
        let stored = crate::snapshot::parse(&text)
            .map_err(|e| harness(format!("{}: {e}", path.display())))?;
        let changes = crate::snapshot::diff(&stored, answers);
        if changes.is_empty() {
            eprintln!(
                "ompd-conform: {lib} matches its golden snapshot ({} answers)",
                answers.len()
            );
            continue;
        }
        differs = true;
        eprintln!(
            "ompd-conform: {lib} differs from its golden snapshot {} ({} answers changed; \
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

// ---- end of golden snapshots ----

// ---- regression tracking (ompd_review::regression) ----

fn compare(old: &std::path::Path, new: &std::path::Path, format: Format) -> i32 {
    let (a, b) = match (crate::regression::load(old), crate::regression::load(new)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return harness(e),
    };
    let c = crate::regression::compare(&a, &b);
    match format {
        Format::Human => print!("{}", c.human()),
        Format::Json => match serde_json::to_string_pretty(&c) {
            Ok(s) => println!("{s}"),
            Err(e) => return harness(format!("cannot render the comparison: {e}")),
        },
    }
    if c.regression_count() > 0 {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    }
}

// ---- end of regression tracking ----

/// Turns SIGINT and SIGTERM into a stop of the run: they are blocked in this thread (and so in
/// every thread spawned after it) and taken by one thread that waits for them. Workers unblock
/// them again; they run in process groups of their own, so a Ctrl-C at the terminal reaches only
/// the supervisor, which stops them and writes what it has.
fn stop_on_signals(stop: Arc<supervisor::Stop>) -> nix::Result<()> {
    use nix::sys::signal::{SigSet, Signal};
    let mut set = SigSet::empty();
    set.add(Signal::SIGINT);
    set.add(Signal::SIGTERM);
    set.thread_block()?;
    std::thread::spawn(move || {
        if let Ok(sig) = set.wait() {
            stop.interrupt(format!("interrupted by {}", sig.as_str()));
        }
    });
    Ok(())
}

fn emit(report: &Report, human: &str, args: &RunArgs) -> Result<(), i32> {
    match (args.format, &args.output) {
        (Format::Json, Some(path)) => {
            // The human report goes out first, so a failing write loses nothing computed.
            print!("{human}");
            report
                .write_json(path)
                .map_err(|e| harness(format!("cannot write {}: {e}", path.display())))?;
        }
        (Format::Json, None) => match serde_json::to_string_pretty(report) {
            Ok(s) => println!("{s}"),
            Err(e) => return Err(harness(format!("cannot render the report: {e}"))),
        },
        (Format::Human, Some(path)) => {
            crate::report::write_atomic(path, human.as_bytes())
                .map_err(|e| harness(format!("cannot write {}: {e}", path.display())))?;
            println!("{}", report.closing_line());
        }
        (Format::Human, None) => print!("{human}"),
    }
    Ok(())
}

// --- HTML matrix (issue 5, html branch) ---

/// Writes the HTML matrix of `reports` to `path` atomically; a failed write is a harness error.
fn write_html(reports: &[Report], path: &std::path::Path) -> Result<(), i32> {
    crate::report::write_atomic(path, crate::html::render(reports).as_bytes())
        .map_err(|e| harness(format!("cannot write {}: {e}", path.display())))
}

/// `ompd-conform html REPORT.json... --output FILE`: an unreadable file is a harness error (1), a
/// file that is not a v1 report a usage error (2).
fn html_cmd(paths: &[PathBuf], output: &std::path::Path) -> i32 {
    let mut reports = Vec::new();
    for p in paths {
        let text = match std::fs::read_to_string(p) {
            Ok(t) => t,
            Err(e) => return harness(format!("cannot read {}: {e}", p.display())),
        };
        // A v1 report is read into the v2 shape.
        let report = match Report::from_json(&text) {
            Ok(r) => r,
            Err(e) => return usage(format!("{}: {e}", p.display())),
        };
        reports.push(report);
    }
    match write_html(&reports, output) {
        Ok(()) => EXIT_OK,
        Err(code) => code,
    }
}

// --- end HTML matrix ---

/// The exit code a report calls for.
/// The exit code a report calls for without expectations (`--no-expectations`).
pub fn exit_code(report: &Report) -> i32 {
    if report.count(Outcome::HarnessError) > 0 {
        EXIT_HARNESS
    } else if Outcome::ALL
        .iter()
        .any(|o| o.is_failure() && report.count(*o) > 0)
    {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_renders_the_lifecycle_family() {
        let lib: Vec<&checks::Check> = checks::registry()
            .iter()
            .copied()
            .filter(|c| c.id.starts_with("lib."))
            .collect();
        insta::assert_snapshot!("list_lifecycle_family", list_text(&lib));
    }
}
