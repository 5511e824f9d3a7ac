//! The `ompd-conform` command line: `run`, `list`, `vendors fetch|list`, and the hidden worker.
//!
//! Exit codes: 0 every result passed (or warned, or was not supported, or skipped); 100 the
//! suite found conformance failures (fail, crash, timeout); 1 the harness could not do its job
//! (a library did not load, a worker could not start, a file could not be written); 2 usage.

use crate::checks;
use crate::report::{Outcome, Report};
use crate::supervisor::{self, RunOptions};
use crate::vendors;
use clap::{Parser, Subcommand, ValueEnum};
use sim_target::arch::Arch;
use sim_target::layout::Policy;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Every result passed.
pub const EXIT_OK: i32 = 0;
/// The harness failed.
pub const EXIT_HARNESS: i32 = 1;
/// Bad usage.
pub const EXIT_USAGE: i32 = 2;
/// Conformance failures were found.
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
        Format::Human => {
            let w = all.iter().map(|c| c.id.len()).max().unwrap_or(0);
            for c in all {
                println!("{:<w$}  {}", c.id, c.requirements.join(", "));
            }
            println!("{} checks", all.len());
        }
    }
    EXIT_OK
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
        for s in &args.scenario {
            if sim_target::model::scenario(s).is_none() {
                let known: Vec<_> = sim_target::model::default_scenarios()
                    .iter()
                    .map(|s| s.name)
                    .collect();
                return Err(format!(
                    "unknown scenario `{s}` (known: {})",
                    known.join(", ")
                ));
            }
        }
        o.scenarios = args.scenario.clone();
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
            o.models.push((format!("replay:{name}"), m));
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
    // Generated cases complement the default scenario set; a run narrowed to scenarios or
    // replayed models runs exactly those.
    o.property =
        (args.cases > 0 && args.scenario.is_empty() && args.replay.is_empty()).then(|| {
            crate::property::PropertyOptions {
                cases: args.cases,
                seed: args.seed,
                max_shrink_iters: args.shrink_iters,
                replay_dir: args
                    .replay_dir
                    .clone()
                    .unwrap_or_else(crate::property::default_replay_dir),
            }
        });
    Ok(o)
}

fn run(args: RunArgs) -> i32 {
    let opts = match options(&args) {
        Ok(o) => o,
        Err(e) => return usage(e),
    };
    let cache = args
        .cache
        .clone()
        .unwrap_or_else(vendors::default_cache_dir);
    let mut names = args.libraries.clone();
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
    let statics = match supervisor::inspect_all(&libs) {
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
    let report = supervisor::run(&libs, &statics, &opts, &stop, &|line| {
        if show {
            eprintln!("{line}");
        }
    });
    if let Err(code) = emit(&report, &args) {
        return code;
    }
    if let Some(path) = &args.html {
        if let Err(code) = write_html(std::slice::from_ref(&report), path) {
            return code;
        }
    }
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
    exit_code(&report)
}

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

fn emit(report: &Report, args: &RunArgs) -> Result<(), i32> {
    match (args.format, &args.output) {
        (Format::Json, Some(path)) => {
            // The human report goes out first, so a failing write loses nothing computed.
            print!("{}", report.human());
            report
                .write_json(path)
                .map_err(|e| harness(format!("cannot write {}: {e}", path.display())))?;
        }
        (Format::Json, None) => match serde_json::to_string_pretty(report) {
            Ok(s) => println!("{s}"),
            Err(e) => return Err(harness(format!("cannot render the report: {e}"))),
        },
        (Format::Human, Some(path)) => {
            crate::report::write_atomic(path, report.human().as_bytes())
                .map_err(|e| harness(format!("cannot write {}: {e}", path.display())))?;
            println!("{}", report.closing_line());
        }
        (Format::Human, None) => print!("{}", report.human()),
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
        let bytes = match std::fs::read(p) {
            Ok(b) => b,
            Err(e) => return harness(format!("cannot read {}: {e}", p.display())),
        };
        let report: Report = match serde_json::from_slice(&bytes) {
            Ok(r) => r,
            Err(e) => return usage(format!("{} is not a report: {e}", p.display())),
        };
        if report.schema != crate::report::SCHEMA {
            return usage(format!(
                "{} has schema `{}`, not `{}`",
                p.display(),
                report.schema,
                crate::report::SCHEMA
            ));
        }
        reports.push(report);
    }
    match write_html(&reports, output) {
        Ok(()) => EXIT_OK,
        Err(code) => code,
    }
}

// --- end HTML matrix ---

/// The exit code a report calls for.
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
