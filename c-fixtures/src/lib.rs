//! The C side of the OMPD conformance suite.
//!
//! Everything in the suite that has to be written in C, compiled with the system C compiler
//! against the system `omp-tools.h`, lives here:
//!
//! - now: the ABI cross-check. `build.rs` compiles `c/abi_check.c`, which prints the size,
//!   alignment and field offsets of every OMPD struct, the value of every enumerator and the size
//!   of every scalar typedef as the header defines them, and which fails to compile if any of the
//!   35 OMPD 5.0 entry points or the 11 callback slots drifts from the signatures the suite
//!   expects. `tests/abi.rs` compares that output with `ompd_abi`.
//! - deliberately broken OMPD libraries, the suite's self-tests ([`broken_libraries`]): one C
//!   source, `c/broken_ompd.c`, forwards every OMPD 5.0 entry point to a real vendor library
//!   (the *inner* library, `libompd_inner.so` in the fixture's own directory, see
//!   [`INNER_LIBRARY`]), and is built once per violation with exactly that one violation, plus
//!   a clean build that only forwards ([`clean_library`]). The suite must classify each
//!   violation as an attributed result and finish the run (`ompd-conform/tests/broken_fixtures.rs`).
//! - OpenMP fixture programs with first-party truth, for live and core-file runs
//!   ([`fixture_programs`], [`scenarios`]): `c/omp_fixture.c`, built once with gcc (GOMP ABI,
//!   `libgomp.so.1`) and once with clang-19 (`__kmpc` ABI, `libomp.so.5`), stops its threads in
//!   a chosen scenario and records what the OpenMP API reports in `ompd_fixture_truth`
//!   ([`truth`]). The OMPT tool `c/ompt_truth.c` ([`ompt_tool`]) adds what the runtime reports
//!   through OMPT in `ompd_fixture_ompt`. [`runtime_shim`] runs either build on any LLVM-family
//!   runtime (Intel `libiomp5.so`, LLVM `libomp.so`), [`find_runtimes`] locates those.
//!
//! The header is located by `build.rs`, in this order: the `OMP_TOOLS_H` environment variable
//! (the path of the header file), `/usr/lib/llvm-19/lib/clang/19/include/omp-tools.h` (Debian
//! package `libomp-19-dev`), then the vendor cache
//! `<workspace>/target/ompd-vendors/llvm-19/usr/lib/llvm-19/lib/clang/19/include/omp-tools.h`.
//! Without one, the build fails and says how to install it.
//!
//! # The fixture protocol
//!
//! Run a [`Program`] with a [`Scenario`] ([`Program::command`] sets the arguments and the
//! scenario's environment; add `OMP_DEBUG=enabled` for OMPD state tracking and
//! `OMP_TOOL_LIBRARIES=`[`ompt_tool`] for the OMPT record). Every recording thread fills its
//! slot, then one prints `TRUTH <hex>` (the bytes of `ompd_fixture_truth`), `OMPT <hex>` (the
//! bytes of `ompd_fixture_ompt`, only when the tool is active) and `READY <pid>`. The threads
//! stay where the scenario puts them (spinning in user code, or blocked in a barrier, taskwait,
//! lock or critical section, blocked for at least 200 ms before `READY`) until the process
//! gets SIGUSR1; it then prints `DONE` and exits 0. Without SIGUSR1 it exits 3 after
//! `FIXTURE_TIMEOUT` seconds (default 300); a bad argument exits 2.

pub mod truth;

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use truth::Role;

/// Path of the compiled ABI cross-check program (`c/abi_check.c`).
///
/// Run without arguments, it prints one `NAME VALUE` line per fact, for example
/// `offsetof.ompd_callbacks_t.read_string 56` or `enum.ompd_rc_nomem 10`, and finishes with
/// `end.lines N`, the number of lines printed before it.
pub fn abi_check_exe() -> &'static str {
    env!("OMPD_ABI_CHECK_EXE")
}

/// Path of the `omp-tools.h` the C side was compiled against.
pub fn omp_tools_header() -> &'static str {
    env!("OMP_TOOLS_H_USED")
}

/// Whether the header declares `name`, for the names `build.rs` probes: the OpenMP 5.2 and 6.0
/// additions (`ompd_rc_incompatible_handle`, `ompd_scope_teams`, `ompd_scope_target`,
/// `ompt_state_work_free_agent`, `ompt_state_work_induction`,
/// `ompd_get_device_thread_id_kinds`, `ompd_get_device_from_thread`) and the control
/// `ompd_rc_ok`. `None` for a name that was not probed.
pub fn header_declares(name: &str) -> Option<bool> {
    lookup(env!("OMPD_HEADER_PROBES"), name)
}

/// Every name probed by `build.rs`, with whether the header declares it.
pub fn header_probes() -> Vec<(&'static str, bool)> {
    entries(env!("OMPD_HEADER_PROBES")).collect()
}

/// Whether the compile-time signature checks of `c/abi_check.c` rejected an injected drift:
/// `"entry_point"` (a wrong `ompd_get_state` prototype) or `"callback"` (a wrong
/// `read_memory`/`read_string` callback type). `None` for an unknown label.
pub fn drift_rejected(label: &str) -> Option<bool> {
    lookup(env!("OMPD_ABI_DRIFT_PROBES"), label)
}

fn entries(list: &'static str) -> impl Iterator<Item = (&'static str, bool)> {
    list.split(',')
        .filter_map(|entry| entry.split_once('='))
        .map(|(key, value)| (key, value == "1"))
}

fn lookup(list: &'static str, key: &str) -> Option<bool> {
    entries(list).find(|(k, _)| *k == key).map(|(_, v)| v)
}

/// The file name under which a fixture finds its inner library: in the directory the fixture
/// itself was loaded from (found with `dladdr`, no environment variable).
pub const INNER_LIBRARY: &str = "libompd_inner.so";

/// One build of `c/broken_ompd.c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fixture {
    /// Short name: `clean` for the baseline, else the violation (`segfault`, `hang`, ...).
    pub name: &'static str,
    /// The entry point that carries the violation (empty for the clean build).
    pub entry_point: &'static str,
    /// The violation in words (what the entry point does wrong).
    pub violation: &'static str,
    /// Path of the built shared object (`libompd_broken_<name>.so` in the build directory).
    pub path: &'static str,
}

/// Every build of `c/broken_ompd.c`, the clean baseline first.
pub fn all_libraries() -> &'static [Fixture] {
    static ALL: &[Fixture] = include!(concat!(env!("OUT_DIR"), "/broken_libraries.rs"));
    ALL
}

/// The clean build: every entry point forwards to the inner library.
pub fn clean_library() -> &'static Fixture {
    &all_libraries()[0]
}

/// The broken builds, one per violation.
pub fn broken_libraries() -> &'static [Fixture] {
    &all_libraries()[1..]
}

/// A build by name.
pub fn library(name: &str) -> Option<&'static Fixture> {
    all_libraries().iter().find(|f| f.name == name)
}

/// Path of `libompd_fixture_dep.so`, the library the `undeclared_dep` build calls without
/// declaring it in DT_NEEDED (preloading it lets that build load).
pub fn undeclared_dependency() -> &'static str {
    env!("OMPD_FIXTURE_DEPENDENCY")
}

/// A compiler the OpenMP fixture program is built with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compiler {
    /// GNU gcc: GOMP ABI (`GOMP_*` entry points), links `libgomp.so.1`.
    Gcc,
    /// LLVM clang-19: `__kmpc_*` ABI, links `libomp.so.5`.
    Clang19,
}

impl Compiler {
    /// The compiler's executable name.
    pub fn executable(self) -> &'static str {
        match self {
            Compiler::Gcc => "gcc",
            Compiler::Clang19 => "clang-19",
        }
    }

    /// Whether the runtime the build finds without a shim supports OMPT: GNU libgomp (gcc)
    /// does not and ignores `OMP_TOOL_LIBRARIES`; the system LLVM `libomp.so.5` (clang) does.
    pub fn default_runtime_has_ompt(self) -> bool {
        matches!(self, Compiler::Clang19)
    }
}

/// One build of `c/omp_fixture.c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Program {
    /// The compiler that built it.
    pub compiler: Compiler,
    /// Path of the executable (in the build directory).
    pub path: &'static str,
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
        let mut cmd = Command::new(self.path);
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

/// Every build of the fixture program that exists: gcc's, then clang-19's.
pub fn fixture_programs() -> &'static [Program] {
    static ALL: &[Program] = include!(concat!(env!("OUT_DIR"), "/omp_programs.rs"));
    ALL
}

/// The builds that do not exist, each with the reason (`"clang-19 not found"`: the compiler
/// is not installed where the crate was built).
pub fn missing_programs() -> &'static [(Compiler, &'static str)] {
    static MISSING: &[(Compiler, &str)] = include!(concat!(env!("OUT_DIR"), "/omp_missing.rs"));
    MISSING
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
    /// The role of each slot, slot 0 first (the slots are assigned by logical position, so
    /// every run has the same roles in the same slots).
    pub roles: &'static [Role],
    /// What the threads do, in words.
    pub description: &'static str,
}

/// Every scenario, in the order of their numbers.
pub fn scenarios() -> &'static [Scenario] {
    use Role::*;
    static ALL: &[Scenario] = &[
        Scenario {
            name: "nested",
            number: 1,
            args: &["nested"],
            env: ENV,
            expected_records: 4,
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
            roles: &[Serial, Foreign],
            description: "the initial thread (slot 0) outside any parallel region after a \
                          parallel region of 2 threads ended (its worker stays in the pool, \
                          unrecorded), and a plain pthread (slot 1) that never calls OpenMP",
        },
    ];
    ALL
}

/// The scenario called `name`.
pub fn scenario(name: &str) -> Option<&'static Scenario> {
    scenarios().iter().find(|s| s.name == name)
}

/// Path of the OMPT truth tool `libompt_truth.so` (for `OMP_TOOL_LIBRARIES`).
pub fn ompt_tool() -> &'static Path {
    Path::new(env!("OMPD_OMPT_TRUTH_TOOL"))
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

/// The runtimes available: Intel's `libiomp5.so` (the newest `intel-*` directory of the vendor
/// cache, searched recursively), LLVM 21's unstripped `libomp.so` from the PyPI wheel
/// `cmeel-libomp` (`llvm-21/cmeel.prefix/lib/libomp.so`), and [`SYSTEM_LLVM_RUNTIME`]. The
/// second list names each one that is absent, with the reason.
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
    match intel_dirs
        .iter()
        .rev()
        .find_map(|d| find_file(d, "libiomp5.so", 8).map(|f| (d, f)))
    {
        Some((dir, library)) => found.push(Runtime {
            name: dir_name(dir),
            library,
            unstripped: true,
        }),
        None => missing.push((
            "intel".to_string(),
            format!("no intel-*/**/libiomp5.so in {}", vendor_cache.display()),
        )),
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
