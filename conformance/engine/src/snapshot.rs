//! Answer snapshots: a fixed list of probes records a library's observable answers on the default
//! scenario set (handle relations, ICV values and strings, states and wait ids, return codes, an
//! ownership summary). Nothing here judges: the answers are compared with the stored snapshot
//! `golden/snapshots/<library>.txt`, and any difference is shown as a diff.
//!
//! Every answer is a `path = value` line; the path is `scenario/arch/probe...`. Addresses and
//! other run-specific values are redacted: handles become classes under the library's own compare
//! routine (`T0`, `P1`, `K2`: thread, parallel, task), and addresses become stable ids in order of
//! first appearance (`<addr#0>`), so the same library gives the same snapshot on every run.

use ompd_abi::{self as abi, Scope};
use ompd_checks::Ctx;
use ompd_loader::library::{
    AnyHandle, AspaceH, Call, Fail, Handle, Kind, Library, ParallelH, TaskH, ThreadH,
};
use ompd_serve::arch::Arch;
use sim_target::layout::Policy;
use sim_target::model::ThreadId;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

pub use ompd_report::answers::{diff, parse, path_of, Answers, Change};

/// The arch variants the snapshot covers (natural layout): the host's, and a 32-bit big-endian
/// one that exercises every conversion.
pub const ARCHS: [Arch; 2] = [Arch::LP64_LE, Arch::ILP32_BE];

/// The layout policy of every snapshot unit.
pub const LAYOUT: Policy = Policy::Natural;

/// The most handles of one kind kept as class representatives (the default scenarios need fewer).
const MAX_CLASSES: usize = 32;

/// The default directory of the stored snapshots (`golden/snapshots`).
pub fn default_dir() -> PathBuf {
    suite_data::snapshots_dir()
}

// ---------------------------------------------------------------------------------------------
// Worker side: the probes.

/// Numbers run-specific values (addresses) by first appearance.
#[derive(Default)]
struct Redact {
    seen: BTreeMap<(&'static str, u64), usize>,
    next: BTreeMap<&'static str, usize>,
}

impl Redact {
    fn id(&mut self, kind: &'static str, v: u64) -> String {
        if v == 0 {
            return "NULL".into();
        }
        let n = match self.seen.get(&(kind, v)) {
            Some(n) => *n,
            None => {
                let n = self.next.entry(kind).or_insert(0);
                let id = *n;
                *n += 1;
                self.seen.insert((kind, v), id);
                id
            }
        };
        format!("<{kind}#{n}>")
    }
}

/// Handles of one kind grouped by the library's compare routine: a handle's class is the first
/// representative comparing equal to it.
struct Classes<'l, K: Kind> {
    prefix: &'static str,
    reps: Vec<Handle<'l, K>>,
}

impl<'l, K: Kind> Classes<'l, K> {
    fn new(prefix: &'static str) -> Self {
        Classes {
            prefix,
            reps: Vec::new(),
        }
    }

    /// The class of `h` (a new one when nothing compares equal); compare failures are named.
    fn of(
        &mut self,
        h: Handle<'l, K>,
        cmp: impl Fn(&Handle<'l, K>, &Handle<'l, K>) -> Call<i32>,
    ) -> String {
        for (i, r) in self.reps.iter().enumerate() {
            match cmp(r, &h) {
                Ok(0) => return format!("{}{i}", self.prefix),
                Ok(_) => {}
                Err(e) => return format!("compare with {}{i}: {e}", self.prefix),
            }
        }
        if self.reps.len() >= MAX_CLASSES {
            return format!("{}?", self.prefix);
        }
        self.reps.push(h);
        format!("{}{}", self.prefix, self.reps.len() - 1)
    }

    /// The sign of the compare answer for every ordered pair of classes.
    fn relations(
        &self,
        out: &mut Vec<(String, String)>,
        what: &str,
        cmp: impl Fn(&Handle<'l, K>, &Handle<'l, K>) -> Call<i32>,
    ) {
        let p = self.prefix;
        for (i, a) in self.reps.iter().enumerate() {
            for (j, b) in self.reps.iter().enumerate() {
                if i == j {
                    continue;
                }
                let v = match cmp(a, b) {
                    Ok(0) => "=".to_string(),
                    Ok(x) if x < 0 => "<".to_string(),
                    Ok(_) => ">".to_string(),
                    Err(e) => e.to_string(),
                };
                out.push((format!("relations/{what}/{p}{i}-{p}{j}"), v));
            }
        }
    }
}

fn rc_text<T>(c: &Call<T>) -> String {
    match c {
        Ok(_) => "ok".into(),
        Err(Fail::Rc(rc)) => rc.to_string(),
        Err(e) => e.to_string(),
    }
}

fn scope_name(s: Scope) -> String {
    s.name()
        .map(str::to_string)
        .unwrap_or_else(|| format!("scope({})", s.0))
}

/// Runs every probe against the unit's target and returns the answers (paths relative to the
/// unit). Never panics on a library's answer; a refusal is an answer like any other.
pub fn probe(ctx: &Ctx) -> Vec<(String, String)> {
    let Some(ah) = ctx.aspace.as_ref() else {
        let why = match (&ctx.setup.initialize, &ctx.setup.process_initialize) {
            (Some(Err(e)), _) => format!("ompd_initialize: {e}"),
            (_, Some(Err(e))) => format!("ompd_process_initialize: {e}"),
            _ => "not attempted".into(),
        };
        return vec![("setup".into(), why)];
    };
    let mark = ompd_serve::callbacks::ledger().mark();
    let mut p = Probe {
        ctx,
        lib: ctx.lib,
        ah,
        out: Vec::new(),
        red: Redact::default(),
        threads: Classes::new("T"),
        parallels: Classes::new("P"),
        tasks: Classes::new("K"),
        by_gtid: Vec::new(),
        state_names: BTreeMap::new(),
    };
    p.put("setup", "ok".into());
    p.versions();
    p.states();
    for t in ctx.threads() {
        p.thread(t);
    }
    p.members();
    p.task_regions();
    let icvs = p.icv_enumeration();
    p.icv_values(&icvs);
    p.relations();
    p.display_control_vars();
    p.ownership(mark)
}

/// One run of the probes: the answers so far and the handles gathered, by class.
struct Probe<'c, 'l> {
    ctx: &'c Ctx<'l>,
    lib: &'l Library,
    ah: &'c AspaceH<'l>,
    out: Vec<(String, String)>,
    red: Redact,
    threads: Classes<'l, abi::ThreadHandle>,
    parallels: Classes<'l, abi::ParallelHandle>,
    tasks: Classes<'l, abi::TaskHandle>,
    /// Thread-scope handles by gtid, for the ICV probes.
    by_gtid: Vec<(usize, ThreadH<'l>)>,
    state_names: BTreeMap<i64, String>,
}

impl<'l> Probe<'_, 'l> {
    fn put(&mut self, k: impl Into<String>, v: String) {
        self.out.push((k.into(), v));
    }

    fn versions(&mut self) {
        let v = match self.lib.get_omp_version(self.ah) {
            Ok(v) => v.to_string(),
            Err(e) => e.to_string(),
        };
        self.put("omp-version", v);
        let v = match self.lib.get_omp_version_string(self.ah) {
            Ok(s) => format!("{s:?}"),
            Err(e) => e.to_string(),
        };
        self.put("omp-version-string", v);
    }

    /// States: the enumeration (each thread's state and wait id come with the thread).
    fn states(&mut self) {
        let mut states = Vec::new();
        let mut cur = abi::state::UNDEFINED;
        loop {
            match self.lib.enumerate_states(self.ah, cur) {
                Ok((v, name, more)) => {
                    states.push((v, name));
                    if more == 0 || states.len() > 256 {
                        break;
                    }
                    cur = v;
                }
                Err(e) => {
                    states.push((-1, format!("<{e}>")));
                    break;
                }
            }
        }
        self.state_names = states.iter().cloned().collect();
        // One answer per state, so that a state added or renumbered is one line of the diff.
        for (v, n) in &states {
            self.put(format!("states/enumerate/{n}"), format!("{v:#x}"));
        }
    }

    /// One thread: its id round trip, state, region chain, current task, and handle class.
    fn thread(&mut self, t: ThreadId) {
        let (ctx, lib) = (self.ctx, self.lib);
        let at = format!("thread[{}]", t.0);
        let th = match ctx.thread_handle(self.ah, t) {
            Ok(h) => h,
            Err(e) => return self.put(format!("{at}/handle"), e.to_string()),
        };
        let id = ctx.thread_id(t, abi::thread_id_kind::PTHREAD);
        let v = match lib.get_thread_id(&th, abi::thread_id_kind::PTHREAD, id.len()) {
            Ok(b) if b == id => "same".into(),
            Ok(_) => "different".into(),
            Err(e) => e.to_string(),
        };
        self.put(format!("{at}/thread-id-roundtrip"), v);
        let v = match lib.get_state(&th, true) {
            Ok((s, w)) => format!(
                "{} wait_id={}",
                self.state_names
                    .get(&s)
                    .cloned()
                    .unwrap_or_else(|| format!("{s:#x}")),
                w.map(|w| self.red.id("wait", w)).unwrap_or_default()
            ),
            Err(e) => e.to_string(),
        };
        self.put(format!("{at}/state"), v);
        self.parallel_chain(&at, &th);
        self.current_task(&at, &th);
        // The thread's handle class last: it keeps the handle.
        let tcmp = |a: &ThreadH, b: &ThreadH| lib.thread_compare(a, b);
        let c = match ctx.thread_handle(self.ah, t) {
            Ok(h2) => self.threads.of(h2, tcmp),
            Err(e) => e.to_string(),
        };
        self.put(format!("{at}/handle"), c);
        self.by_gtid.push((t.0, th));
    }

    /// The enclosing-region chain from the thread's current region.
    fn parallel_chain(&mut self, at: &str, th: &ThreadH<'l>) {
        let lib = self.lib;
        let pcmp = |a: &ParallelH, b: &ParallelH| lib.parallel_compare(a, b);
        let mut chain = Vec::new();
        let mut ph = lib.get_curr_parallel_handle(th);
        let mut first = true;
        loop {
            match ph {
                Ok(h) => {
                    let next = lib.get_enclosing_parallel_handle(&h);
                    let c = self.parallels.of(h, pcmp);
                    if first {
                        self.put(format!("{at}/parallel"), c.clone());
                        first = false;
                    }
                    chain.push(c);
                    ph = next;
                    if chain.len() > 16 {
                        break;
                    }
                }
                Err(e) => {
                    chain.push(e.to_string());
                    break;
                }
            }
        }
        self.put(format!("{at}/parallel-chain"), chain.join(" > "));
    }

    /// The current task with its chains, function and frames.
    fn current_task(&mut self, at: &str, th: &ThreadH<'l>) {
        let lib = self.lib;
        let k = match lib.get_curr_task_handle(th) {
            Ok(k) => k,
            Err(e) => return self.put(format!("{at}/task"), e.to_string()),
        };
        for (what, generating) in [("generating", true), ("scheduling", false)] {
            let chain = self.task_chain(&k, generating);
            self.put(format!("{at}/task/{what}-chain"), chain);
        }
        let v = match lib.get_task_function(&k) {
            Ok(a) => self.red.id("fn", a.address),
            Err(e) => e.to_string(),
        };
        self.put(format!("{at}/task/function"), v);
        let v = match lib.get_task_frame(&k) {
            Ok((exit, enter)) => format!(
                "exit={} flag={:#x} enter={} flag={:#x}",
                self.red.id("frame", exit.frame_address.address),
                exit.frame_flag,
                self.red.id("frame", enter.frame_address.address),
                enter.frame_flag
            ),
            Err(e) => e.to_string(),
        };
        self.put(format!("{at}/task/frame"), v);
        let c = self
            .tasks
            .of(k, |a: &TaskH, b: &TaskH| lib.task_compare(a, b));
        self.put(format!("{at}/task"), c);
    }

    /// The generating (or scheduling) chain of task `k`, as task classes.
    fn task_chain(&mut self, k: &TaskH<'l>, generating: bool) -> String {
        let lib = self.lib;
        let step = |h: &TaskH<'l>| {
            if generating {
                lib.get_generating_task_handle(h)
            } else {
                lib.get_scheduling_task_handle(h)
            }
        };
        let mut chain = Vec::new();
        let mut at_k = step(k);
        loop {
            match at_k {
                Ok(h) => {
                    let next = step(&h);
                    chain.push(
                        self.tasks
                            .of(h, |a: &TaskH, b: &TaskH| lib.task_compare(a, b)),
                    );
                    at_k = next;
                    if chain.len() > 16 {
                        break;
                    }
                }
                Err(e) => {
                    chain.push(e.to_string());
                    break;
                }
            }
        }
        chain.join(" > ")
    }

    /// Members of every region reached: threads and implicit tasks by team position.
    fn members(&mut self) {
        let lib = self.lib;
        let tcmp = |a: &ThreadH, b: &ThreadH| lib.thread_compare(a, b);
        let kcmp = |a: &TaskH, b: &TaskH| lib.task_compare(a, b);
        let mut i = 0;
        while i < self.parallels.reps.len() {
            let at = format!("parallel[P{i}]");
            for (what, thread_side) in [("thread-in-parallel", true), ("task-in-parallel", false)] {
                let mut got = Vec::new();
                for n in 0..=16 {
                    let ph = &self.parallels.reps[i];
                    let c = if thread_side {
                        lib.get_thread_in_parallel(ph, n)
                            .map(|h| self.threads.of(h, tcmp))
                    } else {
                        lib.get_task_in_parallel(ph, n)
                            .map(|h| self.tasks.of(h, kcmp))
                    };
                    match c {
                        Ok(c) => got.push(c),
                        Err(e) => {
                            got.push(format!("[{n}] {e}"));
                            break;
                        }
                    }
                }
                self.put(format!("{at}/{what}"), got.join(" "));
            }
            i += 1;
        }
    }

    /// Each task's region.
    fn task_regions(&mut self) {
        let lib = self.lib;
        let pcmp = |a: &ParallelH, b: &ParallelH| lib.parallel_compare(a, b);
        for i in 0..self.tasks.reps.len() {
            let c = match lib.get_task_parallel_handle(&self.tasks.reps[i]) {
                Ok(h) => self.parallels.of(h, pcmp),
                Err(e) => e.to_string(),
            };
            self.put(format!("task[K{i}]/parallel"), c);
        }
    }

    /// ICVs: the enumeration, one answer per ICV (its id's rank in the enumeration and its scope).
    fn icv_enumeration(&mut self) -> Vec<(u64, String, Scope)> {
        let mut icvs = Vec::new();
        let mut cur = abi::ICV_UNDEFINED;
        loop {
            match self.lib.enumerate_icvs(self.ah, cur) {
                Ok((id, name, scope, more)) => {
                    icvs.push((id, name, scope));
                    if more == 0 || icvs.len() > 256 {
                        break;
                    }
                    cur = id;
                }
                Err(e) => {
                    self.put("icv/enumerate-error", e.to_string());
                    break;
                }
            }
        }
        for (rank, (_, n, sc)) in icvs.iter().enumerate() {
            self.put(
                format!("icv/enumerate/{n}"),
                format!("#{rank} {}", scope_name(*sc)),
            );
        }
        icvs
    }

    /// Every ICV at its scope on every handle of that scope, as a value and as a string.
    fn icv_values(&mut self, icvs: &[(u64, String, Scope)]) {
        let lib = self.lib;
        let mut answers = Vec::new();
        for (id, name, scope) in icvs {
            for (who, h) in self.subjects(*scope) {
                let v = match lib.get_icv(h, *scope, *id) {
                    Ok((rc, Some(v))) if rc == abi::Rc::OK => v.to_string(),
                    Ok((rc, Some(v))) => format!("{rc} {v}"),
                    Ok((rc, None)) => rc.to_string(),
                    Err(e) => e.to_string(),
                };
                answers.push((format!("icv/{name}@{who}"), v));
                let s = match lib.get_icv_string(h, *scope, *id) {
                    Ok(s) => format!("{s:?}"),
                    Err(e) => e.to_string(),
                };
                answers.push((format!("icv-string/{name}@{who}"), s));
            }
        }
        self.out.extend(answers);
    }

    /// Every handle of `scope` gathered so far, named.
    fn subjects(&self, scope: Scope) -> Vec<(String, AnyHandle<'_, 'l>)> {
        match scope {
            Scope::ADDRESS_SPACE => vec![("aspace".into(), AnyHandle::Aspace(self.ah))],
            Scope::THREAD => self
                .by_gtid
                .iter()
                .map(|(g, h)| (format!("thread[{g}]"), AnyHandle::Thread(h)))
                .collect(),
            Scope::PARALLEL => (self.parallels.reps.iter().enumerate())
                .map(|(i, h)| (format!("P{i}"), AnyHandle::Parallel(h)))
                .collect(),
            Scope::TASK | Scope::IMPLICIT_TASK => (self.tasks.reps.iter().enumerate())
                .map(|(i, h)| (format!("K{i}"), AnyHandle::Task(h)))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Handle relations: the sign of each compare between classes.
    fn relations(&mut self) {
        let lib = self.lib;
        let out = &mut self.out;
        (self.threads).relations(out, "thread", |a, b| lib.thread_compare(a, b));
        (self.parallels).relations(out, "parallel", |a, b| lib.parallel_compare(a, b));
        (self.tasks).relations(out, "task", |a, b| lib.task_compare(a, b));
    }

    fn display_control_vars(&mut self) {
        let v = match self.lib.get_display_control_vars(self.ah) {
            Ok(v) => v
                .entries
                .iter()
                .map(|e| format!("{:?}", e.text))
                .collect::<Vec<_>>()
                .join(" "),
            Err(e) => e.to_string(),
        };
        self.put("display-control-vars", v);
    }

    /// Ownership: tool-owned strings fresh per call, nothing live after every release. Releases
    /// every handle and returns the answers.
    fn ownership(mut self, mark: ompd_serve::ledger::Mark) -> Vec<(String, String)> {
        let a = self.lib.get_omp_version_string_kept(self.ah);
        let b = self.lib.get_omp_version_string_kept(self.ah);
        let v = match (&a, &b) {
            (Ok(a), Ok(b)) if a.addr() != b.addr() => "fresh block per call".into(),
            (Ok(_), Ok(_)) => "same block twice".into(),
            _ => format!("{} / {}", rc_text(&a), rc_text(&b)),
        };
        self.put("ownership/omp-version-string", v);
        drop((a, b));
        let Probe {
            mut out,
            by_gtid,
            threads,
            parallels,
            tasks,
            ..
        } = self;
        drop(by_gtid);
        drop(threads);
        drop(parallels);
        drop(tasks);
        let ledger = ompd_serve::callbacks::ledger();
        let live = ledger
            .since(mark)
            .new_live
            .iter()
            .filter(|b| b.site != "tool")
            .count();
        drop(ledger);
        out.push((
            "ownership/blocks-live-after-release".into(),
            live.to_string(),
        ));
        out
    }
}

/// The snapshot file text: a header, then one `path = value` line per answer.
pub fn render(library: &str, answers: &Answers) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# ompd-conform answer snapshot of {library}: observable answers on the default scenarios"
    );
    let _ = writeln!(
        s,
        "# ({LAYOUT} layout; arch {}). Handles are classes under the library's compare (T thread,",
        ARCHS.map(|a| a.name()).join(", ")
    );
    let _ = writeln!(
        s,
        "# P parallel, K task); addresses are <kind#n> ids. Update: cargo xtask conform {library} --golden --bless"
    );
    for (k, v) in answers {
        let _ = writeln!(s, "{k} = {v}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answers(pairs: &[(&str, &str)]) -> Answers {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn render_and_parse_round_trip() {
        let a = answers(&[
            ("s/lp64-le/icv/x@thread[0]", "4"),
            ("s/lp64-le/setup", "ok"),
        ]);
        assert_eq!(parse(&render("lib", &a)).unwrap(), a);
    }

    #[test]
    fn redaction_numbers_values_by_first_appearance() {
        let mut r = Redact::default();
        assert_eq!(r.id("fn", 0x1234), "<fn#0>");
        assert_eq!(r.id("fn", 0x9), "<fn#1>");
        assert_eq!(r.id("fn", 0x1234), "<fn#0>");
        assert_eq!(r.id("wait", 0x1234), "<wait#0>");
        assert_eq!(r.id("wait", 0), "NULL");
    }
}
