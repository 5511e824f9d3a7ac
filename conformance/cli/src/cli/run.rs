//! `ompd-conform run`: the run's options, the libraries it runs (named, discovered or every
//! known vendor), the fixture targets, the run itself and how it ends.

use super::review::{answer_snapshots, expectation_files, run_gate, write_html};
use super::{
    harness, usage, Format, ReviewArgs, RunArgs, EXIT_FINDINGS, EXIT_HARNESS, EXIT_INTERRUPTED,
    EXIT_OK,
};
use ompd_engine::phases::{self, Phase};
use ompd_engine::run::RunOptions;
use ompd_report::{Outcome, Report};
use ompd_serve::arch::Arch;
use sim_target::layout::Policy;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The run's options from its arguments, or why they are unusable (a usage error).
fn options(args: &RunArgs) -> Result<RunOptions, String> {
    let mut o = RunOptions::default();
    simulated_options(args, &mut o)?;
    for f in &args.check {
        if !ompd_checks::registry()
            .iter()
            .any(|c| ompd_engine::supervisor::selected(c.id, std::slice::from_ref(f)))
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
    o.call_deadline = call_deadline(args.call_timeout)?;
    o.quarantine_after = args.quarantine_after;
    if args.run_timeout == Some(0) {
        return Err("--run-timeout must be at least 1 second".into());
    }
    o.rerun_crashes = !args.no_rerun;
    o.shard = args.shard;
    if args.shard.is_some() && (args.bless || args.answer_snapshots) {
        return Err(
            "--shard runs part of a run: bless or record answers (--bless, --golden) \
                    from an unsharded run"
                .into(),
        );
    }
    o.spawn = args.spawn.into();
    o.keep_env = args.keep_env.clone();
    real_options(args, &mut o)?;
    let wants_real = args.live || args.cores || !args.run_fixture.is_empty() || !o.real.is_empty();
    o.sim = !wants_real || args.sim;
    // Generated cases complement the default scenario set; a run narrowed to scenarios or
    // replayed models runs exactly those.
    o.property = (o.sim && args.cases > 0 && args.scenario.is_empty() && args.replay.is_empty())
        .then(|| ompd_engine::property::PropertyOptions {
            cases: args.cases,
            far_cases: ompd_engine::property::far_cases(args.cases, args.full),
            seed: args.seed,
            max_shrink_iters: args.shrink_iters,
            replay_dir: args
                .replay_dir
                .clone()
                .unwrap_or_else(ompd_engine::property::default_replay_dir),
        });
    Ok(o)
}

/// The per-call deadline of `--call-timeout SECS` (fractions allowed; 0 turns it off).
fn call_deadline(secs: f64) -> Result<Option<Duration>, String> {
    if secs == 0.0 {
        return Ok(None);
    }
    Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| *d >= Duration::from_millis(10))
        .map(Some)
        .ok_or_else(|| {
            format!("--call-timeout {secs}: give seconds, at least 0.01 (0 turns it off)")
        })
}

/// The simulated targets of a run: `--scenario`, `--replay`, `--arch`, `--layout`.
fn simulated_options(args: &RunArgs, o: &mut RunOptions) -> Result<(), String> {
    if !args.scenario.is_empty() {
        // An unknown name is refused here, in one line naming the known ones.
        o.scenarios = args
            .scenario
            .iter()
            .map(|s| ompd_engine::worker::Scenario::built_in(s))
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
            o.scenarios.push(ompd_engine::worker::Scenario::model(
                format!("replay:{name}"),
                m,
            ));
        }
    }
    if !args.arch.is_empty() {
        o.archs = args
            .arch
            .iter()
            .map(|a| a.parse::<Arch>())
            .collect::<Result<_, _>>()?;
    }
    o.full = args.full || !args.layout.is_empty();
    o.fresh_everywhere = args.full;
    if !args.layout.is_empty() {
        o.layouts = args
            .layout
            .iter()
            .map(|l| l.parse::<Policy>())
            .collect::<Result<_, _>>()?;
    }
    Ok(())
}

/// The real targets of a run: `--run-fixture` names, `--core` files, `--pid` processes.
fn real_options(args: &RunArgs, o: &mut RunOptions) -> Result<(), String> {
    let fixtures = args.live || args.cores || !args.run_fixture.is_empty();
    if !args.runtime.is_empty() && !fixtures {
        return Err(
            "--runtime names the runtime fixtures run on: it needs --live, --cores or --run".into(),
        );
    }
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
    o.real.extend(
        args.pid
            .iter()
            .map(|p| ompd_engine::real_runs::RealRun::Pid(*p)),
    );
    o.real.extend(
        args.core
            .iter()
            .map(|c| ompd_engine::real_runs::RealRun::Core(c.clone())),
    );
    Ok(())
}

pub(super) fn run(args: RunArgs) -> i32 {
    let began = std::time::Instant::now();
    // ---- answer snapshots ----
    if args.answer_snapshots_dir.is_some() && !args.answer_snapshots {
        return usage("--golden-dir locates answer snapshots: it needs --golden".into());
    }
    // ---- end of answer snapshots ----
    let mut opts = match options(&args) {
        Ok(o) => o,
        Err(e) => return usage(e),
    };
    let cache = args
        .cache
        .clone()
        .unwrap_or_else(ompd_vendors::default_cache_dir);
    // The fixtures' runtimes, looked for only by a run that starts fixtures.
    let fixtures = args.live || args.cores || !args.run_fixture.is_empty();
    let runtimes = match fixtures {
        true => match ompd_engine::real_runs::runtimes(&cache, &args.runtime) {
            Ok(r) => r,
            Err(e) => return usage(e),
        },
        false => Default::default(),
    };
    let libs = match discovered(&args, &opts, &cache, &runtimes.0)
        .and_then(|found| library_names(&args, found, &cache))
        .and_then(|names| resolve(&args, &names, &cache))
    {
        Ok(l) => l,
        Err(code) => return code,
    };
    if fixtures {
        match fixture_targets(&args, &cache, runtimes) {
            Ok(f) => opts.real.extend(f),
            Err(code) => return code,
        }
    }
    let files = match expectation_files(&args.review, args.bless, &libs) {
        Ok(f) => f,
        Err(e) => return usage(e),
    };
    let (mut report, stop) = match execute(&args, &libs, &opts) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let ev = phases::timed(Phase::Judge, || {
        let mut ev =
            ompd_review::gate::Evaluation::new(&report, files, args.review.allow_improvements)
                .allowing_warnings(args.review.allow_warnings);
        if args.shard.is_some() {
            ev.defer_stale();
        }
        ev.limit_silence(&report, &silence_kinds(&args, opts.sim));
        ev.mark(&mut report);
        ev
    });
    let code = phases::timed(Phase::Report, || finish(&report, &ev, &args, &stop));
    // Reaped, the zygotes' time and their workers' counts in the run's.
    ompd_engine::zygote::release_all();
    match &args.phases {
        Some(path) => write_phases(path, began.elapsed()).map_or_else(|e| e, |()| code),
        None => code,
    }
}

/// Writes where the run's time went (`--phases`); an error is reported in one line.
fn write_phases(path: &Path, wall: Duration) -> Result<(), i32> {
    let text = serde_json::to_string_pretty(&phases::Breakdown::now(wall))
        .map_err(|e| harness(format!("cannot encode the phases: {e}")))?;
    ompd_report::write_atomic(path, text.as_bytes())
        .map_err(|e| harness(format!("cannot write {}: {e}", path.display())))
}

/// The target kinds a run judges silence on: the simulated target when the run ran it (`sim`:
/// a run of real targets runs only its library-level checks there) and was not narrowed to some
/// scenarios, arch variants or layouts (or replays), the real ones unless it was narrowed to
/// some runtimes; none for a shard (it ran part of the run).
fn silence_kinds(args: &RunArgs, sim: bool) -> Vec<&'static str> {
    let mut kinds = Vec::new();
    if args.shard.is_some() {
        return kinds;
    }
    let sim_narrowed = !sim
        || !args.scenario.is_empty()
        || !args.arch.is_empty()
        || !args.layout.is_empty()
        || !args.replay.is_empty();
    if !sim_narrowed {
        kinds.push("sim");
    }
    if args.runtime.is_empty() {
        kinds.extend(["live", "core"]);
    }
    kinds
}

/// The libraries a run finds itself when none is named: the ones a fixture's runtime names (for
/// fixture runs), or the ones a process's or core file's runtime names; each with where from.
fn discovered(
    args: &RunArgs,
    opts: &RunOptions,
    cache: &Path,
    runtimes: &[fixture_protocol::Runtime],
) -> Result<Vec<(String, PathBuf)>, i32> {
    let mut discovered: Vec<(String, PathBuf)> = Vec::new();
    if !args.libraries.is_empty() || args.live || args.cores {
        return Ok(discovered);
    }
    if !args.run_fixture.is_empty() {
        // No library named for fixture runs: the ones the runtimes name.
        if let Err(e) = ompd_vendors::fetch(cache, &[], false, &mut |_| {}) {
            return Err(harness(e.to_string()));
        }
        let built = ompd_engine::real_runs::build_fixtures(cache).map_err(harness)?;
        let found =
            ompd_engine::real_runs::discover_libraries(&built, runtimes, &args.run_fixture[0])
                .map_err(harness)?;
        discovered.extend(found.into_iter().map(|f| ("fixture runtime".into(), f)));
        return Ok(discovered);
    }
    // No library named for a process or core file: the ones its runtime names.
    for t in &opts.real {
        let Some(target) = t.named() else { continue };
        match ompd_engine::real::discover(&target) {
            Ok(found) => discovered.extend(found.into_iter().map(|f| (t.label(), f))),
            Err(e) => return Err(harness(format!("{}: {e}", t.label()))),
        }
    }
    Ok(discovered)
}

/// The names of the libraries to run: the named ones and the discovered ones (a known vendor's
/// library named as the vendor), or, when there are none, every known vendor (fetched on demand)
/// and every built reference library.
fn library_names(
    args: &RunArgs,
    discovered: Vec<(String, PathBuf)>,
    cache: &Path,
) -> Result<Vec<String>, i32> {
    let mut names = args.libraries.clone();
    for (from, f) in discovered {
        // A known vendor's library is named as the vendor, so its loader quirks (an undeclared
        // C++ runtime, an unshipped libomp) are worked around.
        let canonical = f.canonicalize().unwrap_or_else(|_| f.clone());
        let vendor = ompd_vendors::known().iter().find(|v| {
            ompd_vendors::resolve(v.name, cache)
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
        if let Err(e) = ompd_vendors::fetch(cache, &[], false, &mut |l| progress(l)) {
            return Err(harness(e.to_string()));
        }
        names = ompd_vendors::known()
            .iter()
            .map(|v| v.name.to_string())
            .collect();
        // The reference builds run beside the vendors (`cargo xtask conform` builds them).
        for r in &ompd_vendors::REFERENCES {
            if r.path().is_some() {
                names.push(r.name.to_string());
            } else if !args.quiet {
                eprintln!(
                    "{}: not built (cargo build -p {}), so not run",
                    r.name, r.package
                );
            }
        }
    }
    Ok(names)
}

/// Resolves each library name to its file, with the `--preload` libraries.
fn resolve(
    args: &RunArgs,
    names: &[String],
    cache: &Path,
) -> Result<Vec<ompd_vendors::Resolved>, i32> {
    let mut libs = Vec::new();
    for n in names {
        let mut r = ompd_vendors::resolve(n, cache).map_err(|e| harness(e.to_string()))?;
        r.preload.extend(args.preload.iter().cloned());
        libs.push(r)
    }
    Ok(libs)
}

/// The fixture targets of a `--live`, `--cores` or `--run-fixture` run (compiled here, on first
/// need: the runner's build compiles no C); none that can run is a harness failure.
fn fixture_targets(
    args: &RunArgs,
    cache: &Path,
    runtimes: ompd_engine::real_runs::Runtimes,
) -> Result<Vec<ompd_engine::real_runs::RealRun>, i32> {
    let built = ompd_engine::real_runs::build_fixtures(cache).map_err(harness)?;
    let (fixtures, missing) = ompd_engine::real_runs::fixture_targets(
        &built,
        runtimes,
        &args.run_fixture,
        !args.cores,
        !args.no_core,
    );
    for m in &missing {
        eprintln!("warning: live fixtures: {m}");
    }
    if fixtures.is_empty() {
        return Err(harness(format!(
            "no fixture target can run: {}",
            if missing.is_empty() {
                "none planned".into()
            } else {
                missing.join("; ")
            }
        )));
    }
    Ok(fixtures)
}

/// Inspects the libraries, runs the suite (stopped by Ctrl-C, SIGTERM or `--run-timeout`; with a
/// progress bar on a terminal) and, with `--golden`, records each library's answers; a stopped
/// run records no answers (its snapshot would be partial).
fn execute(
    args: &RunArgs,
    libs: &[ompd_vendors::Resolved],
    opts: &RunOptions,
) -> Result<(Report, Arc<ompd_engine::supervisor::Stop>), i32> {
    let statics = ompd_engine::run::inspect_all(libs).map_err(|e| harness(e.to_string()))?;
    let stop = Arc::new(ompd_engine::supervisor::Stop::with_deadline(
        args.run_timeout.map(Duration::from_secs),
    ));
    if let Err(e) = stop_on_signals(Arc::clone(&stop)) {
        return Err(harness(format!("cannot handle SIGINT/SIGTERM: {e}")));
    }
    let show = !args.quiet && std::io::stderr().is_terminal();
    let bar = show.then(|| progress_bar(libs, opts));
    let mut report = ompd_engine::run::run(libs, &statics, opts, &stop, &|line| {
        if let Some(b) = &bar {
            b.inc(1);
            b.set_message(line.to_string());
        }
    });
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    if args.answer_snapshots && stop.reason().is_none() {
        let quarantine = ompd_engine::quarantine::Quarantine::new(opts.quarantine_after);
        let exec = ompd_engine::supervisor::Exec::of(opts, &stop, &quarantine);
        for l in libs {
            let answers = ompd_engine::collect::collect(l, exec);
            report.answers.insert(l.name.clone(), answers);
        }
    }
    Ok((report, stop))
}

/// Writes the run's renderings, compares its answers, applies the gate and says how the run
/// ended: the exit code.
fn finish(
    report: &Report,
    ev: &ompd_review::gate::Evaluation,
    args: &RunArgs,
    stop: &ompd_engine::supervisor::Stop,
) -> i32 {
    if let Err(code) = emit(
        report,
        &ompd_review::output::human(report, ev, &args.review.view()),
        &args.review,
    ) {
        return code;
    }
    if let Some(path) = &args.review.html {
        if let Err(code) = write_html(std::slice::from_ref(report), Some(ev), path) {
            return code;
        }
    }
    // Answers of a run stopped while they were collected are partial: neither compared nor
    // blessed (the stop is reported below).
    let snapshots_differ = match stop.reason() {
        Some(_) => false,
        None => match answer_snapshots(report, args) {
            Ok(d) => d,
            Err(code) => return code,
        },
    };
    let gate_code = match run_gate(
        report,
        ev,
        &args.review,
        (args.quiet, args.bless),
        stop.reason().is_some(),
    ) {
        Ok(c) => c,
        Err(code) => return code,
    };
    for l in &report.libraries {
        if let Some(d) = &l.load_failed {
            eprintln!("ompd-conform: error: cannot load {}: {d}", l.name);
        }
    }
    match ending(report, stop.reason(), gate_code) {
        EXIT_OK if snapshots_differ => EXIT_FINDINGS,
        code => code,
    }
}

/// How a run whose report is written ends: stopped early (`stopped`, why), with a harness
/// failure, or as the gate says (`gate`).
pub(super) fn ending(report: &Report, stopped: Option<String>, gate: i32) -> i32 {
    if let Some(why) = stopped {
        eprintln!("ompd-conform: error: the run stopped early ({why}); the report is incomplete");
        return EXIT_INTERRUPTED;
    }
    if report.count(Outcome::HarnessError) > 0 {
        return EXIT_HARNESS;
    }
    gate
}

/// A progress bar over the run's units (and one step per library's property phase).
fn progress_bar(libs: &[ompd_vendors::Resolved], opts: &RunOptions) -> indicatif::ProgressBar {
    let units: usize = libs
        .iter()
        .map(|l| ompd_engine::run::plan(l, opts).len())
        .sum();
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

/// Turns SIGINT and SIGTERM into a stop of the run: they are blocked in this thread (and so in
/// every thread spawned after it) and taken by one thread that waits for them. Workers unblock
/// them again; they run in process groups of their own, so a Ctrl-C at the terminal reaches only
/// the supervisor, which stops them and writes what it has.
fn stop_on_signals(stop: Arc<ompd_engine::supervisor::Stop>) -> nix::Result<()> {
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

/// Writes the report as `review` asks: JSON or human, to a file (atomically) or stdout.
pub(super) fn emit(report: &Report, human: &str, review: &ReviewArgs) -> Result<(), i32> {
    match (review.format, &review.output) {
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
            ompd_report::write_atomic(path, human.as_bytes())
                .map_err(|e| harness(format!("cannot write {}: {e}", path.display())))?;
            println!("{}", report.closing_line());
        }
        (Format::Human, None) => print!("{human}"),
    }
    Ok(())
}
