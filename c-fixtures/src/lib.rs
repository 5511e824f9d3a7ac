//! The C side of the OMPD conformance suite.
//!
//! Everything in the suite that has to be written in C, compiled with the system C compiler
//! against the system `omp-tools.h`, lives here:
//!
//! - now: the ABI cross-check. `build.rs` compiles `c/abi_check.c`, which prints the size,
//!   alignment and field offsets of every OMPD struct, the value of every enumerator and the size
//!   of every scalar typedef as the header defines them, and which fails to compile if any of the
//!   35 OMPD 5.0 entry points or the 11 callback slots drifts from the signatures the suite
//!   expects. `tests/abi.rs` compares that output with `sim_target::abi`.
//! - later: deliberately broken OMPD libraries (for the suite to catch) and OpenMP target
//!   programs (for live runs).
//!
//! The header is located by `build.rs`, in this order: the `OMP_TOOLS_H` environment variable
//! (the path of the header file), `/usr/lib/llvm-19/lib/clang/19/include/omp-tools.h` (Debian
//! package `libomp-19-dev`), then the vendor cache
//! `<workspace>/target/ompd-vendors/llvm-19/usr/lib/llvm-19/lib/clang/19/include/omp-tools.h`.
//! Without one, the build fails and says how to install it.

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
