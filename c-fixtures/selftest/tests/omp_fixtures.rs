//! The OpenMP fixture programs keep their protocol and record consistent truth on every runtime.
//!
//! For every built program (gcc, clang-19) × every runtime (the program's own, found without a
//! shim, then Intel `libiomp5`, LLVM 21 `libomp` and the system LLVM 19 `libomp.so.5` through a
//! [`c_fixtures::runtime_shim`]) × every scenario, the test runs the fixture with
//! `OMP_DEBUG=enabled` and the OMPT truth tool, waits for `READY`, checks from `/proc` that the
//! intended runtime is the one mapped and that every recorded tid is a thread of the process,
//! decodes the `TRUTH`/`OMPT` hex lines with `c_fixtures::truth`, checks the records for
//! internal consistency and against the scenario's known shape and ICV settings, then sends
//! SIGUSR1 and requires `DONE` and exit status 0. No ptrace is involved. A missing program or
//! runtime is skipped with a printed reason. Every problem of every run is collected, so one
//! failure report lists them all.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use c_fixtures::truth::{
    self, task_flags, ExplicitTask, Ompt, OmptThread, Role, ThreadTruth, Truth,
};
use c_fixtures::{icv, Program, Scenario};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// How long a fixture may take to print READY, and to finish after SIGUSR1.
const STEP_TIMEOUT: Duration = Duration::from_secs(20);

fn vendor_cache() -> PathBuf {
    ompd_vendors::default_cache_dir()
}

/// A running fixture: killed and reaped when dropped, so that no fixture outlives a panic.
struct Running {
    child: Child,
    lines: Receiver<String>,
    stderr: Option<JoinHandle<String>>,
}

impl Running {
    fn spawn(mut cmd: std::process::Command) -> Running {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stderr = child.stderr.take().expect("piped stderr");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Running {
            child,
            lines,
            stderr: Some(stderr),
        }
    }

    fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).expect("pid fits i32")
    }

    /// The next stdout line, or `None` at end of output or after `deadline`.
    fn line(&self, deadline: Instant) -> Option<String> {
        let left = deadline.saturating_duration_since(Instant::now());
        self.lines.recv_timeout(left).ok()
    }

    /// Waits for the exit until `deadline`; the status, or `None` on timeout.
    fn wait(&mut self, deadline: Instant) -> Option<ExitStatus> {
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Kills the process (if still running) and returns what it wrote on stderr.
    fn finish(&mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.finish();
    }
}

/// One runtime configuration of a program.
struct Config {
    /// Label for messages.
    name: String,
    /// The shim directory, or `None` for the program's own runtime.
    shim: Option<PathBuf>,
    /// The canonical runtime file that must be mapped; `None`: whatever file the needed
    /// SONAME resolves to without a shim.
    runtime: Option<PathBuf>,
    /// The runtime supports OMPT (loads the tool).
    ompt: bool,
}

/// What one run of one fixture gave, or the problems found.
struct RunReport {
    problems: Vec<String>,
}

/// Paths of the OpenMP runtime files mapped into `pid`, and whether the truth tool is.
fn mapped_runtimes(pid: i32) -> (BTreeSet<PathBuf>, bool) {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
    let mut runtimes = BTreeSet::new();
    let mut tool = false;
    for path in maps.lines().filter_map(|l| l.split_whitespace().nth(5)) {
        let path = Path::new(path);
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "libompt_truth.so" {
            tool = true;
        } else if ["libgomp.so", "libomp.so", "libiomp5.so"]
            .iter()
            .any(|p| name.starts_with(p))
        {
            runtimes.insert(std::fs::canonicalize(path).unwrap_or_else(|_| path.into()));
        }
    }
    (runtimes, tool)
}

fn run_one(program: &Program, config: &Config, scenario: &Scenario) -> RunReport {
    let mut problems = Vec::new();
    let mut cmd = program.command(scenario, config.shim.as_deref());
    cmd.env("OMP_DEBUG", "enabled")
        .env("OMP_TOOL_LIBRARIES", c_fixtures::ompt_tool())
        .env("FIXTURE_TIMEOUT", "60");
    let mut fixture = Running::spawn(cmd);
    let pid = fixture.pid();

    let deadline = Instant::now() + STEP_TIMEOUT;
    let (mut truth_hex, mut ompt_hex, mut ready) = (None, None, false);
    while let Some(line) = fixture.line(deadline) {
        if let Some(hex) = line.strip_prefix("TRUTH ") {
            truth_hex = Some(hex.to_string());
        } else if let Some(hex) = line.strip_prefix("OMPT ") {
            ompt_hex = Some(hex.to_string());
        } else if let Some(rest) = line.strip_prefix("READY ") {
            if rest.trim() != pid.to_string() {
                problems.push(format!("READY names pid {rest}, the process is {pid}"));
            }
            ready = true;
            break;
        } else {
            problems.push(format!("unexpected output line before READY: {line}"));
        }
    }
    if !ready {
        let stderr = fixture.finish();
        problems.push(format!(
            "no READY within {STEP_TIMEOUT:?}; stderr: {stderr}"
        ));
        return RunReport { problems };
    }

    // The process is stopped where the scenario puts it: look at it from /proc.
    let (runtimes, tool_mapped) = mapped_runtimes(pid);
    match &config.runtime {
        Some(want) => {
            if runtimes.len() != 1 || !runtimes.contains(want) {
                problems.push(format!(
                    "mapped OpenMP runtimes {runtimes:?}, expected only {}",
                    want.display()
                ));
            }
        }
        None => {
            let matches = runtimes.iter().all(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(program.needed_runtime_soname))
            });
            if runtimes.len() != 1 || !matches {
                problems.push(format!(
                    "mapped OpenMP runtimes {runtimes:?}, expected one {}",
                    program.needed_runtime_soname
                ));
            }
        }
    }
    if tool_mapped != config.ompt {
        problems.push(format!(
            "libompt_truth.so mapped: {tool_mapped}, expected {}",
            config.ompt
        ));
    }
    let tasks: BTreeSet<i64> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();

    match truth_hex
        .as_deref()
        .ok_or_else(|| "no TRUTH line".to_string())
        .and_then(|h| truth::decode_hex(h).map_err(|e| e.to_string()))
        .and_then(|b| Truth::decode(&b).map_err(|e| e.to_string()))
    {
        Ok(t) => {
            check_truth(scenario, &t, pid, &tasks, &mut problems);
            let ompt = ompt_hex.as_deref().map(|h| {
                truth::decode_hex(h)
                    .map_err(|e| e.to_string())
                    .and_then(|b| Ompt::decode(&b).map_err(|e| e.to_string()))
            });
            match (config.ompt, ompt) {
                (true, Some(Ok(o))) => {
                    if !t.ompt {
                        problems.push("the OMPT record is complete but truth.ompt is 0".into());
                    }
                    // The initial teams of a teams region share nesting level 0, which the
                    // region keys of check_ompt cannot tell apart (the harness lifts no OMPT
                    // view of a teams construct either).
                    if scenario.teams.0 == 0 {
                        check_ompt(&t, &o, &mut problems);
                    }
                }
                (true, Some(Err(e))) => problems.push(format!("OMPT record: {e}")),
                (true, None) => problems.push("no OMPT line though the runtime has OMPT".into()),
                (false, None) => {
                    if t.ompt {
                        problems.push("truth.ompt is 1 on a runtime without OMPT".into());
                    }
                }
                (false, Some(_)) => problems.push("an OMPT line on a runtime without OMPT".into()),
            }
        }
        Err(e) => problems.push(format!("truth record: {e}")),
    }

    // Release, then require DONE and exit status 0.
    if let Err(e) = kill(Pid::from_raw(pid), Signal::SIGUSR1) {
        problems.push(format!("cannot send SIGUSR1: {e}"));
    }
    let deadline = Instant::now() + STEP_TIMEOUT;
    let mut done = false;
    while let Some(line) = fixture.line(deadline) {
        if line == "DONE" {
            done = true;
        } else {
            problems.push(format!("unexpected output line after READY: {line}"));
        }
    }
    let status = fixture.wait(deadline);
    let stderr = fixture.finish();
    if !done {
        problems.push(format!("no DONE after SIGUSR1; stderr: {stderr}"));
    }
    match status {
        Some(s) if s.success() => {}
        Some(s) => problems.push(format!("exit status {s}; stderr: {stderr}")),
        None => problems.push(format!("still running {STEP_TIMEOUT:?} after SIGUSR1")),
    }
    RunReport { problems }
}

/// The known shape of a slot: (level, active level, ancestor thread numbers, team sizes,
/// explicit task).
type Shape = (i64, i64, Vec<i64>, Vec<i64>, Option<ExplicitTask>);

fn expected_shape(scenario: &str, slot: i64) -> Shape {
    match scenario {
        "nested" | "barrier" => (2, 2, vec![0, slot / 2, slot % 2], vec![1, 2, 2], None),
        "serialized" => (2, 1, vec![0, slot, 0], vec![1, 3, 1], None),
        "tasks" => {
            let task = match slot {
                1 => Some(ExplicitTask {
                    id: 1,
                    parent: 0,
                    creator: 0,
                    untied: true,
                }),
                2 => Some(ExplicitTask {
                    id: 3,
                    parent: 2,
                    creator: 2,
                    untied: false,
                }),
                _ => None,
            };
            (1, 1, vec![0, slot], vec![1, 3], task)
        }
        "locks" => (1, 1, vec![0, slot], vec![1, 3], None),
        "teams" if slot > 0 => (1, 1, vec![0, slot - 1], vec![1, 2], None),
        _ => (0, 0, vec![0], vec![1], None),
    }
}

fn check_truth(
    scenario: &Scenario,
    t: &Truth,
    pid: i32,
    tasks: &BTreeSet<i64>,
    problems: &mut Vec<String>,
) {
    let mut fail = |m: String| problems.push(m);
    if t.pid != i64::from(pid) {
        fail(format!("truth.pid {} != {pid}", t.pid));
    }
    if t.scenario != scenario.number {
        fail(format!(
            "truth.scenario {} != {}",
            t.scenario, scenario.number
        ));
    }
    let n = scenario.expected_records as i64;
    if (t.expected, t.arrived) != (n, n) {
        fail(format!(
            "expected/arrived {}/{} != {n}",
            t.expected, t.arrived
        ));
    }
    if !t.omp_debug {
        fail("truth.omp_debug is 0 with OMP_DEBUG=enabled".into());
    }
    let roles: Vec<(usize, Role)> = t.threads.iter().map(|x| (x.slot, x.role)).collect();
    let want: Vec<(usize, Role)> = scenario.roles.iter().copied().enumerate().collect();
    if roles != want {
        fail(format!("slots/roles {roles:?}, expected {want:?}"));
    }
    let tids: BTreeSet<i64> = t.threads.iter().map(|x| x.tid).collect();
    let pthreads: BTreeSet<u64> = t.threads.iter().map(|x| x.pthread).collect();
    if tids.len() != t.threads.len() || pthreads.len() != t.threads.len() || pthreads.contains(&0) {
        fail("tids or pthread ids are not distinct and non-zero".into());
    }
    if let Some(stray) = tids.iter().find(|tid| !tasks.contains(tid)) {
        fail(format!(
            "recorded tid {stray} is not a thread of process {pid}"
        ));
    }
    let devices: BTreeSet<i64> = t
        .threads
        .iter()
        .filter_map(|x| x.omp.as_ref().map(|o| o.default_device))
        .collect();
    if devices.len() != 1 || !devices.iter().all(|d| [0, icv::DEFAULT_DEVICE].contains(d)) {
        fail(format!(
            "default devices {devices:?}: not one value of 0 or 1"
        ));
    }
    for x in &t.threads {
        check_thread(scenario.name, x, problems);
    }
}

fn check_thread(scenario: &str, x: &ThreadTruth, problems: &mut Vec<String>) {
    let mut fail = |m: String| problems.push(format!("slot {}: {m}", x.slot));
    let Some(o) = &x.omp else {
        if x.role != Role::Foreign || x.function.is_none() {
            fail("no OpenMP view, or a foreign thread without its start routine".into());
        }
        return;
    };
    if x.function.is_some() {
        fail("a function recorded for an outlined OpenMP body".into());
    }
    // Internal consistency of the API's answers.
    let level = o.level as usize;
    if o.ancestor.len() != level + 1 || o.team_size.len() != level + 1 {
        fail("ancestor/team_size arrays do not cover levels 0..=level".into());
        return;
    }
    // Inside a teams region but outside any parallel region the kmp runtimes answer
    // omp_get_num_threads() with the thread limit, where omp_get_team_size(0) is 1.
    let in_teams_region = scenario == "teams" && level == 0;
    if o.ancestor[level] != o.thread_num || o.team_size[level] != o.num_threads && !in_teams_region
    {
        fail("ancestor/team size at the own level differ from thread_num/num_threads".into());
    }
    let teams = match scenario {
        "teams" => (i64::from(x.slot > 0), 2),
        _ => (0, 1),
    };
    if (o.team_num, o.num_teams) != teams {
        fail(format!(
            "team {} of {}, expected {teams:?}",
            o.team_num, o.num_teams
        ));
    }
    if o.ancestor
        .iter()
        .zip(&o.team_size)
        .any(|(a, s)| *a < 0 || a >= s)
    {
        fail(format!(
            "ancestor {:?} outside team sizes {:?}",
            o.ancestor, o.team_size
        ));
    }
    if o.active_level > o.level {
        fail("active level above level".into());
    }
    // The scenario's known shape.
    let (lv, active, anc, team, task) = expected_shape(scenario, x.slot as i64);
    if (o.level, o.active_level, &o.ancestor, &o.team_size) != (lv, active, &anc, &team) {
        fail(format!(
            "level {} active {} ancestors {:?} teams {:?}, expected {lv} {active} {anc:?} {team:?}",
            o.level, o.active_level, o.ancestor, o.team_size
        ));
    }
    if o.task != task {
        fail(format!("explicit task {:?}, expected {task:?}", o.task));
    }
    if o.in_final != (scenario == "tasks" && x.slot == 2) {
        fail(format!("in_final {}", o.in_final));
    }
    if o.wait_addr.is_some() != (x.role == Role::Lock) {
        fail(format!("wait_addr {:?} for role {:?}", o.wait_addr, x.role));
    }
    // The ICV settings; a teams region's come from the runtime's initial-team rules (its
    // thread_limit clause, for one), which the fixture does not judge.
    if scenario == "teams" {
        return;
    }
    let dynamic = icv::DYNAMIC != (scenario == "nested" && x.slot == 3);
    let got = (
        o.max_active_levels,
        o.sched_kind,
        o.sched_chunk,
        o.thread_limit,
        o.max_threads,
        o.proc_bind,
        o.dynamic,
        o.cancellation,
        o.max_task_priority,
    );
    let want = (
        icv::MAX_ACTIVE_LEVELS,
        icv::SCHED_KIND,
        icv::SCHED_CHUNK,
        icv::THREAD_LIMIT,
        icv::max_threads_at(level),
        icv::proc_bind_at(level),
        dynamic,
        icv::CANCELLATION,
        icv::MAX_TASK_PRIORITY,
    );
    if got != want {
        fail(format!("ICVs {got:?}, expected {want:?}"));
    }
    if o.num_procs < 1 {
        fail(format!("num_procs {}", o.num_procs));
    }
}

/// Explicit tasks above the innermost implicit task in a thread's ancestor chain.
fn explicit_depth(task: Option<ExplicitTask>) -> usize {
    match task {
        None => 0,
        Some(t) if t.parent == 0 => 1,
        Some(_) => 2,
    }
}

fn check_ompt(t: &Truth, o: &Ompt, problems: &mut Vec<String>) {
    let omp_threads: Vec<&ThreadTruth> = t.threads.iter().filter(|x| x.omp.is_some()).collect();
    if o.recorded != omp_threads.len() as i64 || o.threads.len() != omp_threads.len() {
        problems.push(format!(
            "OMPT: {} recorded, {} slots, expected {}",
            o.recorded,
            o.threads.len(),
            omp_threads.len()
        ));
    }
    let mut thread_data = BTreeSet::new();
    let mut innermost_implicit = BTreeSet::new();
    let mut explicit = BTreeSet::new();
    // (nesting level, ancestor numbers above it) -> parallel data: one region per key.
    let mut regions: BTreeMap<(usize, Vec<i64>), u64> = BTreeMap::new();
    for x in omp_threads {
        let mut fail = |m: String| problems.push(format!("OMPT slot {}: {m}", x.slot));
        let api = x.omp.as_ref().expect("filtered");
        let Some(ot) = o.slot(x.slot) else {
            fail("missing".into());
            continue;
        };
        if ot.tid != x.tid {
            fail(format!("tid {} != truth tid {}", ot.tid, x.tid));
        }
        let state = if x.role == Role::Serial {
            truth::OMPT_STATE_WORK_SERIAL
        } else {
            truth::OMPT_STATE_WORK_PARALLEL
        };
        if ot.state != state {
            fail(format!("state {:#x}, expected {state:#x}", ot.state));
        }
        if truth::ompt_series(ot.thread_data) != Some(truth::OMPT_THREAD_DATA_BASE)
            || !thread_data.insert(ot.thread_data)
        {
            fail(format!(
                "thread data {:#x} not a distinct thread value",
                ot.thread_data
            ));
        }
        check_ompt_chain(api, ot, &mut regions, &mut fail);
        let depth = explicit_depth(api.task);
        if let Some(task) = ot.tasks.get(depth) {
            if depth == 0 && !innermost_implicit.insert(task.data) {
                fail(format!(
                    "implicit task data {:#x} shared with another thread",
                    task.data
                ));
            }
        }
        for task in ot.tasks.iter().take(depth) {
            if !explicit.insert(task.data) {
                fail(format!("explicit task data {:#x} seen twice", task.data));
            }
        }
    }
    let distinct: BTreeSet<u64> = regions.values().copied().collect();
    if distinct.len() != regions.len() {
        problems.push(format!(
            "OMPT: different regions share parallel data: {regions:?}"
        ));
    }
}

fn check_ompt_chain(
    api: &truth::OmpView,
    ot: &OmptThread,
    regions: &mut BTreeMap<(usize, Vec<i64>), u64>,
    fail: &mut impl FnMut(String),
) {
    let level = api.level as usize;
    // ompt_get_parallel_info: one answer per nesting level, innermost first.
    if ot.parallel.len() != level + 1 {
        fail(format!(
            "{} parallel levels, expected {}",
            ot.parallel.len(),
            level + 1
        ));
        return;
    }
    let mut seen = BTreeSet::new();
    for (i, p) in ot.parallel.iter().enumerate() {
        let nesting = level - i;
        if p.team_size != api.team_size[nesting] {
            fail(format!("parallel level {i}: team size {}", p.team_size));
        }
        if truth::ompt_series(p.data) != Some(truth::OMPT_PARALLEL_DATA_BASE)
            || !seen.insert(p.data)
        {
            fail(format!(
                "parallel level {i}: data {:#x} not distinct",
                p.data
            ));
        }
        let key = (nesting, api.ancestor[..nesting].to_vec());
        if *regions.entry(key).or_insert(p.data) != p.data {
            fail(format!(
                "parallel level {i}: data {:#x} differs from its team's",
                p.data
            ));
        }
    }
    // ompt_get_task_info: the explicit tasks, then one implicit task per nesting level.
    let depth = explicit_depth(api.task);
    if ot.tasks.len() != depth + level + 1 {
        fail(format!(
            "{} task levels, expected {}",
            ot.tasks.len(),
            depth + level + 1
        ));
        return;
    }
    let mut seen = BTreeSet::new();
    for (i, task) in ot.tasks.iter().enumerate() {
        if !seen.insert(task.data) {
            fail(format!("task level {i}: data {:#x} repeats", task.data));
        }
        if i < depth {
            let untied = task.flags & task_flags::UNTIED != 0;
            let ok = task.flags & task_flags::EXPLICIT != 0
                && truth::ompt_series(task.data) == Some(truth::OMPT_EXPLICIT_TASK_DATA_BASE)
                && (i > 0 || (untied == api.task.is_some_and(|t| t.untied)))
                && (i > 0 || (task.flags & task_flags::FINAL != 0) == api.in_final)
                && task.parallel_data == ot.parallel[0].data
                && task.thread_num == api.thread_num;
            if !ok {
                fail(format!("explicit task level {i}: {task:?}"));
            }
            continue;
        }
        let j = i - depth;
        let nesting = level - j;
        let kind = if nesting == 0 {
            task_flags::INITIAL
        } else {
            task_flags::IMPLICIT
        };
        // Directly below explicit tasks the runtimes give the executing thread's implicit
        // task, which is the truth's ancestor too (the truth records the executing thread).
        let ok = task.flags & kind != 0
            && truth::ompt_series(task.data) == Some(truth::OMPT_IMPLICIT_TASK_DATA_BASE)
            && task.parallel_data == ot.parallel[j].data
            && task.thread_num == api.ancestor[nesting];
        if !ok {
            fail(format!(
                "implicit task level {i} (nesting {nesting}): {task:?}"
            ));
        }
    }
}

#[test]
fn every_program_runtime_and_scenario() {
    for (compiler, reason) in c_fixtures::missing_programs() {
        println!("skipped: the {compiler:?} build of the fixture: {reason}");
    }
    let (runtimes, missing) = c_fixtures::find_runtimes(&vendor_cache());
    for (name, reason) in &missing {
        println!("skipped: runtime {name}: {reason}");
    }
    let shims = tempfile::tempdir().expect("tempdir");
    let mut configs = Vec::new();
    for runtime in &runtimes {
        let shim = c_fixtures::runtime_shim(&runtime.library, &shims.path().join(&runtime.name))
            .unwrap_or_else(|e| panic!("shim for {}: {e}", runtime.library.display()));
        configs.push(Config {
            name: runtime.name.clone(),
            shim: Some(shim),
            runtime: Some(std::fs::canonicalize(&runtime.library).expect("canonical runtime")),
            ompt: true,
        });
    }

    let started = Instant::now();
    let mut runs = 0;
    let mut problems = Vec::new();
    for program in c_fixtures::fixture_programs() {
        let own = Config {
            name: format!("own {}", program.needed_runtime_soname),
            shim: None,
            runtime: None,
            ompt: program.compiler.default_runtime_has_ompt(),
        };
        for config in std::iter::once(&own).chain(&configs) {
            for scenario in c_fixtures::scenarios() {
                if !scenario.builds.contains(&program.compiler) {
                    continue;
                }
                let report = run_one(program, config, scenario);
                runs += 1;
                for p in report.problems {
                    problems.push(format!(
                        "{:?} on {} / {}: {p}",
                        program.compiler, config.name, scenario.name
                    ));
                }
            }
        }
    }
    println!("{runs} fixture runs in {:?}", started.elapsed());
    assert!(runs > 0, "no fixture program was built");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn programs_link_their_runtime_and_export_the_record() {
    for program in c_fixtures::fixture_programs() {
        let out = std::process::Command::new("readelf")
            .args(["-d", "-W"])
            .arg(&program.path)
            .output()
            .expect("readelf");
        let dynamic = String::from_utf8_lossy(&out.stdout);
        assert!(
            dynamic
                .lines()
                .any(|l| l.contains("(NEEDED)") && l.contains(program.needed_runtime_soname)),
            "{program:?}: no NEEDED {}:\n{dynamic}",
            program.needed_runtime_soname
        );
        assert!(
            !dynamic.contains("(RPATH)") && !dynamic.contains("(RUNPATH)"),
            "{program:?}: a run path would defeat the runtime shim:\n{dynamic}"
        );
        assert_eq!(
            symbol_size(&program.path, truth::TRUTH_SYMBOL),
            Some(truth::TRUTH_SIZE as u64),
            "{program:?}"
        );
    }
    assert_eq!(
        symbol_size(c_fixtures::ompt_tool(), truth::OMPT_SYMBOL),
        Some(truth::OMPT_SIZE as u64)
    );
    let built: Vec<_> = c_fixtures::fixture_programs()
        .iter()
        .map(|p| p.compiler)
        .chain(c_fixtures::missing_programs().iter().map(|(c, _)| *c))
        .collect();
    assert_eq!(
        built,
        [c_fixtures::Compiler::Gcc, c_fixtures::Compiler::Clang19],
        "every compiler is either built or missing with a reason"
    );
}

/// The size of `name` in the file's `.symtab`, which must agree with `.dynsym`.
fn symbol_size(path: &Path, name: &str) -> Option<u64> {
    use object::{Object, ObjectSymbol};
    let data = std::fs::read(path).expect("read ELF");
    let file = object::File::parse(&*data).expect("parse ELF");
    let find = |mut symbols: object::SymbolIterator<'_, '_>| {
        symbols.find(|s| s.name() == Ok(name)).map(|s| s.size())
    };
    let symtab = find(file.symbols());
    let dynsym = find(file.dynamic_symbols());
    assert_eq!(
        symtab,
        dynsym,
        "{name} in {}: .symtab vs .dynsym",
        path.display()
    );
    symtab
}

#[test]
fn scenario_table_is_well_formed() {
    let all = c_fixtures::scenarios();
    let names: BTreeSet<_> = all.iter().map(|s| s.name).collect();
    assert_eq!(names.len(), all.len());
    for (i, s) in all.iter().enumerate() {
        assert_eq!(s.number, i as i64 + 1, "{}", s.name);
        assert_eq!(s.roles.len(), s.expected_records, "{}", s.name);
        assert_eq!(s.args, [s.name]);
        assert_eq!(c_fixtures::scenario(s.name), Some(s));
        assert!(!s.description.is_empty());
    }
}

#[test]
fn bad_argument_and_timeout_exit_non_zero() {
    let Some(program) = c_fixtures::fixture_programs().first() else {
        println!("skipped: no fixture program was built");
        return;
    };
    let status = std::process::Command::new(&program.path)
        .arg("no-such-scenario")
        .stderr(Stdio::null())
        .status()
        .expect("run fixture");
    assert_eq!(status.code(), Some(2));

    // Never released: the safety alarm ends it with status 3 (after READY).
    let scenario = c_fixtures::scenario("nested").expect("nested");
    let mut cmd = program.command(scenario, None);
    cmd.env("FIXTURE_TIMEOUT", "1");
    let mut fixture = Running::spawn(cmd);
    let deadline = Instant::now() + STEP_TIMEOUT;
    let mut ready = false;
    while let Some(line) = fixture.line(deadline) {
        ready |= line.starts_with("READY ");
    }
    assert!(ready, "READY before the timeout");
    assert_eq!(fixture.wait(deadline).and_then(|s| s.code()), Some(3));
}

#[test]
fn runtime_shim_links_every_name_to_the_runtime() {
    let dir = tempfile::tempdir().expect("tempdir");
    let runtime = dir.path().join("libfake.so.1");
    std::fs::write(&runtime, b"not really a library").expect("write");
    let shim = dir.path().join("shim");
    for _ in 0..2 {
        let made = c_fixtures::runtime_shim(&runtime, &shim).expect("shim");
        assert_eq!(made, std::fs::canonicalize(&shim).expect("canonical shim"));
        for name in c_fixtures::SHIM_NAMES {
            let link = made.join(name);
            assert_eq!(
                std::fs::read_link(&link).expect("symlink"),
                std::fs::canonicalize(&runtime).expect("canonical runtime")
            );
        }
    }
    assert!(c_fixtures::runtime_shim(&dir.path().join("absent.so"), &shim).is_err());
}
