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
//!   violation as an attributed result and finish the run (`conformance/cli/tests/broken_fixtures.rs`).
//! - the OpenMP fixture programs with first-party truth, for the tests: they live in the
//!   Rust-only crate `fixture_protocol` (which the runner depends on; it compiles them at run
//!   time), re-exported here, and [`fixture_programs`] / [`ompt_tool`] build them on first use
//!   into `<workspace>/target/ompd-fixtures`.
//!
//! This crate is a dev-dependency only: its build script compiles C and needs `omp-tools.h`,
//! which building the runner must not. The header is located by `build.rs` with
//! `fixture_protocol::compile::find_header`: the `OMP_TOOLS_H` environment variable (the path
//! of the header file), `/usr/lib/llvm-19/lib/clang/19/include/omp-tools.h` (Debian package
//! `libomp-19-dev`), then the vendor cache
//! `<workspace>/target/ompd-vendors/llvm-19/usr/lib/llvm-19/lib/clang/19/include/omp-tools.h`.
//! Without one, the build fails and says how to install it.

pub use fixture_protocol::{
    find_runtimes, icv, runtime_shim, scenario, scenarios, truth, Compiler, Program, Runtime,
    Scenario, ENV, SHIM_NAMES, SYSTEM_LLVM_RUNTIME,
};

use fixture_protocol::compile::Built;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
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

/// Path of `libompd_draft2014.so`: the 34 routines of the March 2014 OMPD draft under their
/// draft forms, answering the version queries and `ompd_rc_unsupported` to every inquiry.
pub fn draft_2014_library() -> &'static str {
    env!("OMPD_DRAFT_2014_LIBRARY")
}

/// The OpenMP fixture builds, compiled on first use into `<workspace>/target/ompd-fixtures`
/// (`fixture_protocol::compile::build`, the header also looked for in the vendor cache).
///
/// # Panics
///
/// When they cannot be built (no C compiler, no `omp-tools.h`), with the one-line reason: the
/// tests that call this need them.
pub fn openmp_fixtures() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| {
        let target = ompd_vendors::workspace_root().join("target");
        let cache = ompd_vendors::default_cache_dir();
        fixture_protocol::compile::build(&target.join("ompd-fixtures"), &cache)
            .unwrap_or_else(|e| panic!("c-fixtures: cannot build the OpenMP fixtures: {e}"))
    })
}

/// The path of one of this crate's C sources (`c/NAME`), for tests that compile it themselves.
pub fn c_source(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("c").join(name)
}

/// Every build of the fixture program that exists: gcc's, then clang-19's.
pub fn fixture_programs() -> &'static [Program] {
    &openmp_fixtures().programs
}

/// The builds that do not exist, each with the reason (`"clang-19 not found ..."`).
pub fn missing_programs() -> &'static [(Compiler, String)] {
    &openmp_fixtures().missing
}

/// Path of the OMPT truth tool `libompt_truth.so` (for `OMP_TOOL_LIBRARIES`).
pub fn ompt_tool() -> &'static Path {
    &openmp_fixtures().ompt_tool
}
