//! The OpenMP fixture programs of the OMPD conformance suite, as the runner needs them: pure
//! Rust, no build script, so building the runner compiles no C.
//!
//! - The fixture protocol: which [`Scenario`]s the program `c/omp_fixture.c` stops its
//!   threads in, with what environment ([`ENV`], [`icv`]), how to run a [`Program`]
//!   ([`Program::command`]), and the first-party truth records it writes ([`truth`]).
//! - The runtimes a fixture runs on ([`find_runtimes`]) and the [`runtime_shim`] that lets
//!   either build run on any LLVM-family runtime.
//! - [`compile`]: the C sources (`c/omp_fixture.c`, the OMPT truth tool `c/ompt_truth.c`,
//!   `c/fixture_truth.h`) are embedded in this crate and compiled at run time, when a run with
//!   real fixtures (`--live`, `--cores`, `--run`) or a test first needs them, into a cache
//!   directory keyed by the sources, the header and the compilers. Only that step needs a C
//!   compiler, `omp-tools.h`, gcc and clang-19, and it says in one line which one is missing.
//!
//! # The fixture protocol
//!
//! Run a [`Program`] with a [`Scenario`] ([`Program::command`] sets the arguments and the
//! scenario's environment; add `OMP_DEBUG=enabled` for OMPD state tracking and
//! `OMP_TOOL_LIBRARIES=`[`compile::Built::ompt_tool`] for the OMPT record). Every recording
//! thread fills its slot, then one prints `TRUTH <hex>` (the bytes of `ompd_fixture_truth`),
//! `OMPT <hex>` (the bytes of `ompd_fixture_ompt`, only when the tool is active) and
//! `READY <pid>`. The threads stay where the scenario puts them (spinning in user code, or
//! blocked in a barrier, taskwait, lock or critical section, blocked for at least 200 ms before
//! `READY`) until the process gets SIGUSR1; it then prints `DONE` and exits 0. Without SIGUSR1
//! it exits 3 after `FIXTURE_TIMEOUT` seconds (default 300); a bad argument exits 2.

pub mod compile;
pub mod truth;

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use truth::Role;

/// A compiler the OpenMP fixture program is built with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compiler {
    /// GNU gcc: GOMP ABI (`GOMP_*` entry points), links `libgomp.so.1`.
    Gcc,
    /// LLVM clang-19: `__kmpc_*` ABI, links `libomp.so.5`.
    Clang19,
}

impl Compiler {
    /// Every compiler the program is built with, in build order.
    pub const ALL: [Compiler; 2] = [Compiler::Gcc, Compiler::Clang19];

    /// The compiler's executable name.
    pub fn executable(self) -> &'static str {
        match self {
            Compiler::Gcc => "gcc",
            Compiler::Clang19 => "clang-19",
        }
    }

    /// The OpenMP runtime its `-fopenmp` build lists in DT_NEEDED.
    pub fn needed_runtime_soname(self) -> &'static str {
        match self {
            Compiler::Gcc => "libgomp.so.1",
            Compiler::Clang19 => "libomp.so.5",
        }
    }

    /// The Debian packages that provide the compiler and its OpenMP support (`omp.h`).
    pub fn packages(self) -> &'static str {
        match self {
            Compiler::Gcc => "gcc",
            Compiler::Clang19 => "clang-19 libomp-19-dev",
        }
    }

    /// Whether the runtime the build finds without a shim supports OMPT: GNU libgomp (gcc)
    /// does not and ignores `OMP_TOOL_LIBRARIES`; the system LLVM `libomp.so.5` (clang) does.
    pub fn default_runtime_has_ompt(self) -> bool {
        matches!(self, Compiler::Clang19)
    }
}

/// One build of `c/omp_fixture.c`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// The compiler that built it.
    pub compiler: Compiler,
    /// Path of the executable (in the [`compile`] cache directory).
    pub path: PathBuf,
    /// The OpenMP runtime it lists in DT_NEEDED (`libgomp.so.1` or `libomp.so.5`): the name a
    /// [`runtime_shim`] directory must provide, which it does for every runtime.
    pub needed_runtime_soname: &'static str,
}

impl Program {
    /// A command that runs this program in `scenario`: the scenario's arguments and
    /// environment, stdin from `/dev/null`, and every inherited `OMP_*`, `KMP_*` and `GOMP_*`
    /// variable removed so that the records do not depend on the caller's environment. With
    /// `shim` (a [`runtime_shim`] directory) `LD_LIBRARY_PATH` is set to it; without,
    /// `LD_LIBRARY_PATH` is removed and the dynamic linker finds the compiler's own runtime.
    /// The caller adds `OMP_DEBUG`, `OMP_TOOL_LIBRARIES` and the stdout/stderr handling.
    pub fn command(&self, scenario: &Scenario, shim: Option<&Path>) -> Command {
        let mut cmd = Command::new(&self.path);
        cmd.args(scenario.args).stdin(Stdio::null());
        for (key, _) in std::env::vars_os() {
            let inherited_openmp = key
                .to_str()
                .is_some_and(|k| ["OMP_", "KMP_", "GOMP_"].iter().any(|p| k.starts_with(p)));
            if inherited_openmp {
                cmd.env_remove(&key);
            }
        }
        match shim {
            Some(dir) => cmd.env("LD_LIBRARY_PATH", dir),
            None => cmd.env_remove("LD_LIBRARY_PATH"),
        };
        cmd.envs(scenario.env.iter().copied());
        cmd
    }
}

/// The ICV values every scenario establishes: main sets max-active-levels and the schedule
/// through the API before the first parallel region (overriding `OMP_MAX_ACTIVE_LEVELS` and
/// `OMP_SCHEDULE`, which [`ENV`] sets to other values); [`ENV`] sets the rest.
pub mod icv {
    /// `omp_set_max_active_levels(3)` in main (`OMP_MAX_ACTIVE_LEVELS=1` is overridden).
    pub const MAX_ACTIVE_LEVELS: i64 = 3;
    /// `omp_set_schedule(omp_sched_dynamic, 7)` in main: the kind (`omp_sched_dynamic`).
    pub const SCHED_KIND: i64 = 2;
    /// The chunk of that call (`OMP_SCHEDULE=guided,3` is overridden).
    pub const SCHED_CHUNK: i64 = 7;
    /// `OMP_NUM_THREADS=5,4,3`: the nthreads-var list; a task at nesting level `l` has the
    /// list from element `l` on (the last element repeats), so `omp_get_max_threads()` is
    /// [`max_threads_at`]`(l)`. The regions themselves use `num_threads` clauses.
    pub const NTHREADS: [i64; 3] = [5, 4, 3];
    /// `OMP_THREAD_LIMIT=12`.
    pub const THREAD_LIMIT: i64 = 12;
    /// `OMP_PROC_BIND=spread,close`: the bind-var list (`omp_proc_bind_spread` = 4, then
    /// `omp_proc_bind_close` = 3 at every deeper level), see [`proc_bind_at`].
    pub const PROC_BIND: [i64; 2] = [4, 3];
    /// `OMP_DYNAMIC=false` (true would let runtimes shrink teams with the load, and the
    /// scenarios must be deterministic); the `nested` scenario flips one implicit task's
    /// dyn-var with `omp_set_dynamic` after its team formed.
    pub const DYNAMIC: bool = false;
    /// `OMP_MAX_TASK_PRIORITY=5`.
    pub const MAX_TASK_PRIORITY: i64 = 5;
    /// `OMP_CANCELLATION=true`.
    pub const CANCELLATION: bool = true;
    /// `OMP_DEFAULT_DEVICE=1`. What `omp_get_default_device()` reports depends on the runtime
    /// (Intel's `libiomp5` 2026.2 reports 0 without an offload device; LLVM and GNU report 1),
    /// so the recorded value is the truth, not this one.
    pub const DEFAULT_DEVICE: i64 = 1;

    /// `omp_get_max_threads()` in a task at nesting level `level`.
    pub fn max_threads_at(level: usize) -> i64 {
        NTHREADS[level.min(NTHREADS.len() - 1)]
    }

    /// `omp_get_proc_bind()` in a task at nesting level `level`.
    pub fn proc_bind_at(level: usize) -> i64 {
        PROC_BIND[level.min(PROC_BIND.len() - 1)]
    }
}

/// The environment of every scenario (see [`icv`] for what each value does).
/// `OMP_WAIT_POLICY=passive` makes waiting threads sleep in the kernel instead of spinning,
/// which keeps runs cheap on small machines and changes no recorded value.
pub const ENV: &[(&str, &str)] = &[
    ("OMP_NUM_THREADS", "5,4,3"),
    ("OMP_THREAD_LIMIT", "12"),
    ("OMP_PROC_BIND", "spread,close"),
    ("OMP_DYNAMIC", "false"),
    ("OMP_MAX_TASK_PRIORITY", "5"),
    ("OMP_CANCELLATION", "true"),
    ("OMP_DEFAULT_DEVICE", "1"),
    ("OMP_SCHEDULE", "guided,3"),
    ("OMP_MAX_ACTIVE_LEVELS", "1"),
    ("OMP_WAIT_POLICY", "passive"),
];

/// One stop scenario of the fixture program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scenario {
    /// Its name, the program's argument.
    pub name: &'static str,
    /// Its number, recorded as `Truth::scenario`.
    pub number: i64,
    /// The program's arguments.
    pub args: &'static [&'static str],
    /// The environment to run it with ([`ENV`] for every scenario).
    pub env: &'static [(&'static str, &'static str)],
    /// How many threads record (the decoded `Truth::threads` count).
    pub expected_records: usize,
    /// How many parallel regions the program runs, serialized ones included (a breakpoint tour
    /// expects one `ompd_bp_parallel_begin` and one `_end` per region).
    pub parallel_regions: usize,
    /// How many explicit tasks the program creates (a breakpoint tour expects at least as many
    /// `ompd_bp_task_begin`s).
    pub explicit_tasks: usize,
    /// The role of each slot, slot 0 first (the slots are assigned by logical position, so
    /// every run has the same roles in the same slots).
    pub roles: &'static [Role],
    /// What the threads do, in words.
    pub description: &'static str,
}

/// Every scenario, in the order of their numbers.
pub fn scenarios() -> &'static [Scenario] {
    SCENARIOS
}

/// The scenario table ([`scenarios`]).
static SCENARIOS: &[Scenario] = {
    use Role::*;
    &[
        Scenario {
            name: "nested",
            number: 1,
            args: &["nested"],
            env: ENV,
            expected_records: 4,
            parallel_regions: 3,
            explicit_tasks: 0,
            roles: &[Spin, Spin, Spin, Spin],
            description: "outer parallel of 2 threads, each running an inner parallel of 2; \
                          slot = 2 * outer + inner; all 4 spin (level 2, active level 2). \
                          Slot 3 (outer 1, inner 1) flips its implicit task's dyn-var with \
                          omp_set_dynamic before recording",
        },
        Scenario {
            name: "barrier",
            number: 2,
            args: &["barrier"],
            env: ENV,
            expected_records: 4,
            parallel_regions: 3,
            explicit_tasks: 0,
            roles: &[Spin, Barrier, Spin, Barrier],
            description: "the shape of nested; thread 0 of each inner team spins, thread 1 \
                          waits in an explicit #pragma omp barrier",
        },
        Scenario {
            name: "serialized",
            number: 3,
            args: &["serialized"],
            env: ENV,
            expected_records: 3,
            parallel_regions: 4,
            explicit_tasks: 0,
            roles: &[Spin, Spin, Spin],
            description: "outer parallel of 3 threads, each inside its own #pragma omp parallel \
                          if(0) (level 2, active level 1, team sizes 1, 3, 1); slot = outer \
                          thread number; all spin",
        },
        Scenario {
            name: "tasks",
            number: 4,
            args: &["tasks"],
            env: ENV,
            expected_records: 3,
            parallel_regions: 1,
            explicit_tasks: 3,
            roles: &[Taskwait, TaskSpin, TaskSpin],
            description: "parallel of 3 threads; thread 0 (slot 0) creates explicit task 1 \
                          (untied; runs on thread 1, slot 1, and spins) and task 2 (final; \
                          runs on thread 2 and creates task 3, included because task 2 is \
                          final, which spins: slot 2), then waits in #pragma omp taskwait",
        },
        Scenario {
            name: "locks",
            number: 5,
            args: &["locks"],
            env: ENV,
            expected_records: 3,
            parallel_regions: 1,
            explicit_tasks: 0,
            roles: &[Spin, Lock, Critical],
            description: "parallel of 3 threads; thread 0 holds an omp_lock_t and the critical \
                          section fx_region and spins; thread 1 waits in omp_set_lock \
                          (wait_addr = the lock); thread 2 waits to enter the critical section",
        },
        Scenario {
            name: "serial",
            number: 6,
            args: &["serial"],
            env: ENV,
            expected_records: 2,
            parallel_regions: 1,
            explicit_tasks: 0,
            roles: &[Serial, Foreign],
            description: "the initial thread (slot 0) outside any parallel region after a \
                          parallel region of 2 threads ended (its worker stays in the pool, \
                          unrecorded), and a plain pthread (slot 1) that never calls OpenMP",
        },
    ]
};

/// The scenario called `name`.
pub fn scenario(name: &str) -> Option<&'static Scenario> {
    scenarios().iter().find(|s| s.name == name)
}

/// The file names a [`runtime_shim`] directory provides, every one a symlink to the runtime:
/// the SONAMEs the fixture builds need (`libgomp.so.1`, `libomp.so.5`) and the names LLVM
/// family tools and runtimes may look for (`libiomp5.so`, `libomp.so`).
pub const SHIM_NAMES: &[&str] = &["libomp.so.5", "libgomp.so.1", "libiomp5.so", "libomp.so"];

/// Makes `dir` (created if needed) a directory of symlinks, one per [`SHIM_NAMES`] entry, to
/// `runtime_so` (made absolute); existing entries of those names are replaced. With
/// `LD_LIBRARY_PATH=<dir>` either fixture build runs on that runtime (the builds carry no
/// RPATH/RUNPATH, so the path wins). This works for LLVM-family runtimes, which export both the
/// `__kmpc_*` and the `GOMP_*` entry points; GNU libgomp has no `__kmpc_*` and cannot run the
/// clang build. Returns the directory's absolute path.
pub fn runtime_shim(runtime_so: &Path, dir: &Path) -> io::Result<PathBuf> {
    let target = std::fs::canonicalize(runtime_so)?;
    if !target.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a file", target.display()),
        ));
    }
    std::fs::create_dir_all(dir)?;
    let dir = std::fs::canonicalize(dir)?;
    for name in SHIM_NAMES {
        let link = dir.join(name);
        match std::fs::remove_file(&link) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        std::os::unix::fs::symlink(&target, &link)?;
    }
    Ok(dir)
}

/// The Debian `libomp-19-dev` runtime (stripped: an OMPD library cannot find its symbols, so
/// it serves as a negative case), which the clang-19 build loads when no shim is used.
pub const SYSTEM_LLVM_RUNTIME: &str = "/usr/lib/llvm-19/lib/libomp.so.5";

/// An OpenMP runtime a fixture can run on through a [`runtime_shim`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Runtime {
    /// Short name: the vendor cache directory (`intel-2026.2`, `llvm-21`) or `system-llvm-19`.
    pub name: String,
    /// The runtime shared object.
    pub library: PathBuf,
    /// It keeps its `.symtab` (the `ompd_*` layout symbols an OMPD library needs).
    pub unstripped: bool,
}

/// Intel releases whose runtime runs the fixtures, but whose OMPT cannot record their truth, so
/// no library is judged against them (found by `c-fixtures`' self-test
/// `every_program_runtime_and_scenario`).
pub const NO_TRUTH: &[(&str, &str)] = &[
    (
        "intel-2020.0",
        "its OMPT leaves the parallel data of the fixtures' regions 0, not distinct, so the \
         fixtures cannot record which region is which",
    ),
    (
        "intel-2021.4",
        "in the tasks fixture its OMPT records the implicit tasks of the two nested levels in \
         the other order, so the fixture's truth of the task tree is wrong",
    ),
];

/// The runtimes available: Intel's `libiomp5.so` of every release but those of [`NO_TRUTH`]
/// (each `intel-*` directory of the vendor cache, searched recursively, oldest first), LLVM
/// 21's unstripped `libomp.so` from the PyPI wheel `cmeel-libomp`
/// (`llvm-21/cmeel.prefix/lib/libomp.so`), and [`SYSTEM_LLVM_RUNTIME`]. The second list names
/// each one that is absent, with the reason.
pub fn find_runtimes(vendor_cache: &Path) -> (Vec<Runtime>, Vec<(String, String)>) {
    let mut found = Vec::new();
    let mut missing = Vec::new();

    let mut intel_dirs: Vec<PathBuf> = std::fs::read_dir(vendor_cache)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("intel-"))
        })
        .collect();
    intel_dirs.sort();
    for dir in &intel_dirs {
        if let Some((_, why)) = NO_TRUTH.iter().find(|(n, _)| *n == dir_name(dir)) {
            missing.push((dir_name(dir), (*why).to_string()));
            continue;
        }
        match find_file(dir, "libiomp5.so", 8) {
            Some(library) => found.push(Runtime {
                name: dir_name(dir),
                library,
                unstripped: true,
            }),
            None => missing.push((
                dir_name(dir),
                format!("no libiomp5.so under {}", dir.display()),
            )),
        }
    }
    if intel_dirs.is_empty() {
        missing.push((
            "intel".to_string(),
            format!("no intel-* directory in {}", vendor_cache.display()),
        ));
    }

    let llvm21 = vendor_cache.join("llvm-21/cmeel.prefix/lib/libomp.so");
    if llvm21.is_file() {
        found.push(Runtime {
            name: "llvm-21".into(),
            library: llvm21,
            unstripped: true,
        });
    } else {
        missing.push(("llvm-21".into(), format!("{} not found", llvm21.display())));
    }

    let system = PathBuf::from(SYSTEM_LLVM_RUNTIME);
    if system.is_file() {
        found.push(Runtime {
            name: "system-llvm-19".into(),
            library: system,
            unstripped: false,
        });
    } else {
        missing.push((
            "system-llvm-19".into(),
            format!("{SYSTEM_LLVM_RUNTIME} not found (apt-get install libomp5-19)"),
        ));
    }
    (found, missing)
}

fn dir_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The first regular file called `name` under `dir` (depth-first, sorted, at most `depth`
/// directories deep).
fn find_file(dir: &Path, name: &str, depth: usize) -> Option<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    if let Some(file) = entries
        .iter()
        .find(|p| p.is_file() && p.file_name().is_some_and(|n| n == name))
    {
        return Some(file.clone());
    }
    if depth == 0 {
        return None;
    }
    entries
        .iter()
        .filter(|p| p.is_dir())
        .find_map(|p| find_file(p, name, depth - 1))
}
