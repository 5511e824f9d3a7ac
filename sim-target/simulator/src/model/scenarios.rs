//! The built-in scenarios: the default set every check runs on, and those run when named.

use super::*;
use std::fmt;

/// A named model from the default scenario set.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Stable name used in reports.
    pub name: &'static str,
    /// One line describing the state.
    pub description: &'static str,
    /// The model.
    pub model: Model,
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name)
    }
}

/// What a built-in runtime variant changes, against the runtime the other scenarios model: the
/// checks say which of them judge it (`ompd_checks::variants`); its scenario runs only those.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// How a thread is found: by scanning the thread table, not from thread-local ids.
    ThreadLookup,
    /// The width of native thread ids: not the pointer size.
    ThreadIdWidth,
    /// The runtime's strings at their boundaries (empty, longest, no final newline).
    Strings,
    /// The older self-description of Intel's runtimes up to 2023.2.
    OlderSelfDescription,
    /// A host `teams` construct: regions whose answers the text and the runtime's memory give
    /// differently ([`TeamsPart`]), judged by the checks that accept either.
    Teams,
}

impl Variant {
    /// Every variant.
    pub const ALL: [Variant; 5] = [
        Variant::ThreadLookup,
        Variant::ThreadIdWidth,
        Variant::Strings,
        Variant::OlderSelfDescription,
        Variant::Teams,
    ];
}

/// Whether a built-in scenario is in the default set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Set {
    /// In the default set: every run without `--scenario` runs it.
    Default,
    /// Run only when named (`--scenario NAME`).
    Named,
}

/// A built-in scenario's name, description, the function that builds its model, the runtime
/// variant it is (none: a runtime state every check judges) and whether it is in the default set.
type Entry = (
    &'static str,
    &'static str,
    fn() -> Model,
    Option<Variant>,
    Set,
);

/// The built-in scenarios (one table; each model is built only when asked for).
const BUILT_IN: [Entry; 11] = [
    (
        "serial",
        "initial thread in serial code after a region, one idle pool thread, one foreign native thread",
        serial,
        None,
        Set::Default,
    ),
    (
        "nested-tasks",
        "4-thread region, nested 4-thread region, 3-deep explicit task tree",
        nested_tasks,
        None,
        Set::Default,
    ),
    (
        "serialized",
        "2-thread region, inside it 3 nested serialized regions on thread 1",
        serialized,
        None,
        Set::Default,
    ),
    (
        "untracked",
        "OMP_DEBUG disabled (ompd_state 0): 2-thread region, an explicit task",
        untracked,
        None,
        Set::Default,
    ),
    (
        "no-ompt",
        "a runtime built without OMPT support (its layout describes no tool data): 2-thread region, an explicit task",
        no_ompt,
        // Not a variant: a library may look for the missing tool-data words on any path (and
        // print, or read what it did not find), not only in ompd_get_tool_data.
        None,
        Set::Default,
    ),
    (
        "thread-scan",
        "a runtime without thread-local gtids (__kmp_gtid_mode 1, no __kmp_gtid symbol): a thread is found by scanning __kmp_threads for its id, where slot 1 is vacant (a root thread that left); the nested-tasks state",
        thread_scan,
        Some(Variant::ThreadLookup),
        Set::Default,
    ),
    (
        "thread-id-width",
        "a runtime whose native thread ids (kmp_thread_t) are not pointer-sized: 8 bytes on 32-bit targets, 4 on 64-bit ones; the nested-tasks state",
        thread_id_width,
        Some(Variant::ThreadIdWidth),
        Set::Default,
    ),
    (
        "string-edges",
        "the runtime's strings at their boundaries: an empty affinity format, a tool-verbose-init path of exactly 512 bytes, a tool-libraries list of 2,000 bytes, and a display-control block whose last variable (that list) has no newline after it: 2-thread region",
        string_edges,
        Some(Variant::Strings),
        Set::Default,
    ),
    (
        "empty-env",
        "a display-control block with no variable in it (ompd_env_block an empty string, ompd_env_block_size 0): 2-thread region",
        empty_env,
        Some(Variant::Strings),
        Set::Default,
    ),
    (
        "teams",
        "a host teams construct of 3 initial teams of 2 threads: the initial threads of teams 0 and 2 in the teams body (the second thread of each parked at the fork barrier), team 1's in a 2-thread parallel region nested in it with its parked thread, and an explicit task on team 2's",
        teams,
        Some(Variant::Teams),
        Set::Default,
    ),
    (
        "older-runtime",
        "the older self-description of Intel's runtimes up to 2023.2 (no ompd_state, no thread_limit field or nested-list layout, fewer size words): 2-thread region, an explicit task",
        older_runtime,
        Some(Variant::OlderSelfDescription),
        // Every 5.x vendor library but Intel's own up to 2023.2 declines this runtime.
        Set::Named,
    ),
];

fn build(&(name, description, model, ..): &Entry) -> Scenario {
    Scenario {
        name,
        description,
        model: model(),
    }
}

fn defaults() -> impl Iterator<Item = &'static Entry> {
    BUILT_IN.iter().filter(|d| d.4 == Set::Default)
}

/// The default scenario set every check runs on.
pub fn default_scenarios() -> Vec<Scenario> {
    defaults().map(build).collect()
}

/// The names of the default scenarios, in order (no model is built).
pub fn scenario_names() -> impl Iterator<Item = &'static str> {
    defaults().map(|d| d.0)
}

/// The names of every built-in scenario, in table order (no model is built).
pub fn known_names() -> impl Iterator<Item = &'static str> {
    BUILT_IN.iter().map(|d| d.0)
}

/// The runtime variant the built-in scenario `name` is: none for a runtime state every check
/// judges, and for a name outside the built-in set (a replayed or generated model).
pub fn variant(name: &str) -> Option<Variant> {
    BUILT_IN.iter().find(|d| d.0 == name).and_then(|d| d.3)
}

/// Looks up a built-in scenario by name (building only its model).
pub fn scenario(name: &str) -> Option<Scenario> {
    BUILT_IN.iter().find(|d| d.0 == name).map(build)
}

fn serial() -> Model {
    let mut b = ModelBuilder::new();
    b.idle_thread();
    b.foreign_thread();
    let m = b.model_mut();
    m.globals.avail_proc = 2;
    m.globals.nthreads_list = vec![];
    b.build().expect("serial scenario is valid")
}

fn nested_tasks() -> Model {
    let mut b = ModelBuilder::new();
    {
        let m = b.model_mut();
        m.globals.nthreads_list = vec![4, 2];
        m.globals.bind_list = vec![4, 3];
        m.globals.avail_proc = 6;
        m.globals.max_task_priority = 7;
        m.globals.cancellation = true;
        m.globals.tool_libraries = Some("libtool.so".into());
        m.globals.tool_verbose_init = Some("ompt-init.log".into());
        m.globals.affinity_format = Some("tid=%i host=%H {%A}".into());
        m.globals.display_env = [
            ("OMP_DEBUG", "enabled"),
            ("OMP_DYNAMIC", "true"),
            ("OMP_NUM_THREADS", "4,2"),
            ("OMP_PROC_BIND", "spread,close"),
            ("OMP_SCHEDULE", "nonmonotonic:dynamic,4"),
            ("OMP_CANCELLATION", "true"),
            ("OMP_MAX_TASK_PRIORITY", "7"),
            ("OMP_AFFINITY_FORMAT", "tid=%i host=%H {%A}"),
            ("OMP_TOOL_LIBRARIES", "libtool.so"),
            ("OMP_TOOL_VERBOSE_INIT", "ompt-init.log"),
            ("KMP_BLOCKTIME", "200ms"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let icvs = &mut m.tasks[0].icvs;
        icvs.nthreads = 4;
        icvs.proc_bind = 4;
        icvs.thread_limit = 64;
        icvs.max_active_levels = 3;
        icvs.dynamic = true;
        icvs.default_device = 1;
        icvs.schedule = Schedule {
            kind: SchedKind::Dynamic,
            chunk: 4,
            modifier: Some(SchedModifier::Nonmonotonic),
        };
    }
    b.foreign_thread();
    let outer = b.parallel(b.initial_thread(), 4);
    let t2 = b.member(outer, 2);
    let inner = b.parallel(t2, 4);
    let worker = b.member(inner, 1);
    let x1 = b.explicit_task(worker);
    let x2 = b.explicit_task(worker);
    let x3 = b.explicit_task(worker);
    let (o1, o3) = (b.member(outer, 1), b.member(outer, 3));
    {
        let m = b.model_mut();
        m.tasks[x3.0].is_final = true;
        // A task routine in a shared library mapped above 2 GiB, as on 32-bit Linux.
        m.tasks[x1.0].function = 0xb7f0_2140;
        m.tasks[x2.0].icvs.default_device = 2;
        m.threads[o3.0].state = 0x014; // wait_barrier_explicit
        m.threads[o3.0].wait_id = 0x1234_5678;
        m.threads[o1.0].state = 0x041; // wait_lock
        m.threads[o1.0].wait_id = 0x5555_0000;
    }
    // A task generated on thread 0 of the outer region and executed by thread 1.
    let gen = b.model_mut().threads[0].current_task;
    let y = b.explicit_task_from(gen, b.member(outer, 1));
    let _ = (x1, x2, y);
    // Tool data a tool stored as full 64-bit values: the pointer member of the union differs
    // from the value on 32-bit targets, and task data has the sign bit set.
    let m = b.model_mut();
    for (g, t) in m.threads.iter_mut().enumerate() {
        t.tool_data = 0x0bad_cafe_0000_2000 + g as u64;
    }
    for (i, r) in m.regions.iter_mut().enumerate() {
        r.tool_data = 0x7ea1_0000_0000_4000 + i as u64;
    }
    for (i, t) in m.tasks.iter_mut().enumerate() {
        t.tool_data = 0xdead_beef_0000_6000 + i as u64;
    }
    b.build().expect("nested-tasks scenario is valid")
}

fn serialized() -> Model {
    let mut b = ModelBuilder::new();
    b.model_mut().globals.nthreads_list = vec![2, 1];
    let outer = b.parallel(b.initial_thread(), 2);
    let t1 = b.member(outer, 1);
    b.parallel(t1, 1);
    b.parallel(t1, 1);
    b.parallel(t1, 1);
    b.build().expect("serialized scenario is valid")
}

fn thread_scan() -> Model {
    let mut m = nested_tasks();
    m.gtid_mode = GtidMode::Scan;
    // A root thread registered as gtid 1 and left: the runtime cleared its slot, and the
    // threads after it keep their gtids.
    m.vacant_gtids = vec![1];
    m
}

fn no_ompt() -> Model {
    let mut b = ModelBuilder::new();
    {
        let m = b.model_mut();
        m.ompt_support = false;
        m.globals.nthreads_list = vec![2];
        m.tasks[0].icvs.nthreads = 2;
    }
    let outer = b.parallel(b.initial_thread(), 2);
    b.explicit_task(b.member(outer, 0));
    b.build().expect("no-ompt scenario is valid")
}

fn thread_id_width() -> Model {
    let mut m = nested_tasks();
    m.thread_id_width = ThreadIdWidth::Other;
    m
}

/// A path of exactly `len` bytes under `dir`, named after `seed`.
fn path_of(dir: &str, seed: &str, len: usize) -> String {
    let mut p = format!("{dir}/{seed}-");
    while p.len() < len - 3 {
        p.push_str("x/");
    }
    p.truncate(len - 3);
    p.push_str(".so");
    p
}

fn string_edges() -> Model {
    let mut b = ModelBuilder::new();
    {
        let m = b.model_mut();
        let g = &mut m.globals;
        let tools: Vec<String> = (0..40)
            .map(|i| format!("/opt/vendor/tools/release-{i:02}/lib/libompt-tool.so"))
            .collect();
        let tools = tools.join(":");
        let verbose = path_of("/var/log/openmp", "ompt-init", 512);
        g.nthreads_list = vec![2];
        g.affinity_format = Some(String::new());
        g.tool_libraries = Some(tools.clone());
        g.tool_verbose_init = Some(verbose.clone());
        g.display_env = vec![
            ("OMP_DEBUG".into(), "enabled".into()),
            ("OMP_AFFINITY_FORMAT".into(), String::new()),
            ("OMP_NUM_THREADS".into(), "2".into()),
            ("OMP_TOOL_VERBOSE_INIT".into(), verbose),
            ("OMP_TOOL_LIBRARIES".into(), tools),
        ];
        g.display_env_unterminated = true;
        m.tasks[0].icvs.nthreads = 2;
    }
    b.parallel(b.initial_thread(), 2);
    b.build().expect("string-edges scenario is valid")
}

fn empty_env() -> Model {
    let mut b = ModelBuilder::new();
    {
        let m = b.model_mut();
        m.globals.nthreads_list = vec![2];
        m.globals.display_env = Vec::new();
        m.tasks[0].icvs.nthreads = 2;
    }
    b.parallel(b.initial_thread(), 2);
    b.build().expect("empty-env scenario is valid")
}

fn older_runtime() -> Model {
    let mut b = ModelBuilder::new();
    {
        let m = b.model_mut();
        m.older_description = true;
        m.globals.nthreads_list = vec![2, 3];
        m.tasks[0].icvs.nthreads = 2;
    }
    let outer = b.parallel(b.initial_thread(), 2);
    b.explicit_task(b.member(outer, 1));
    b.build().expect("older-runtime scenario is valid")
}

fn untracked() -> Model {
    let mut b = ModelBuilder::new();
    {
        let m = b.model_mut();
        m.ompd_state = 0;
        m.globals.nthreads_list = vec![2];
        m.globals.display_env = vec![
            ("OMP_DEBUG".into(), "disabled".into()),
            ("OMP_NUM_THREADS".into(), "2".into()),
        ];
        m.tasks[0].icvs.nthreads = 2;
    }
    let outer = b.parallel(b.initial_thread(), 2);
    b.explicit_task(b.member(outer, 1));
    b.build().expect("untracked scenario is valid")
}

fn teams() -> Model {
    let mut b = ModelBuilder::new();
    {
        let m = b.model_mut();
        m.globals.nthreads_list = vec![2];
        m.tasks[0].icvs.nthreads = 2;
        m.tasks[0].icvs.thread_limit = 2;
    }
    let league = b.teams(b.initial_thread(), 3, 2);
    let team1 = b.initial_team(league, 1);
    b.parallel_in_team(team1);
    let team2 = b.initial_team(league, 2);
    b.explicit_task(b.member(team2, 0));
    b.build().expect("teams scenario is valid")
}
