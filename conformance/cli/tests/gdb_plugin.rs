//! A real debugger drives the reference: LLVM's gdb OMPD plugin (`libomp-19-dev`'s
//! `share/gdb/python/ompd`) loads the reference's 5.0 and 5.2 builds as `libompd.so` beside LLVM
//! 21's unstripped runtime, stops `c-fixtures/selftest/c/gdb_client.c` inside a task of a nested team, and
//! runs `ompdtestapi` for every routine it tests. The plugin asks `ompd_initialize` for API
//! 201811 and names threads by lwp id. Every routine's tests run and none fails, but for the
//! sub-tests whose expectation the specification contradicts ([`CONTRADICTIONS`]), each recorded
//! with the text that decides.

mod common;

use ompd_abi::{EntryPoint, Generation};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The plugin's entry script, from `libomp-19-dev` (which `cargo xtask deps` installs).
const PLUGIN: &str = "/usr/lib/llvm-19/share/gdb/python/ompd/__init__.py";

/// Every routine `ompdtestapi` tests (OpenMP 5.0's 35), in the order run: `ompd_initialize`
/// (which initializes the library again, and offers it an all-NULL table) and `ompd_finalize`
/// (which ends the library's session) come last, as LLVM's own tests run each in a fresh session.
fn apis() -> Vec<&'static str> {
    let last = [EntryPoint::Initialize, EntryPoint::Finalize];
    let all = Generation::V5_0.entry_points();
    let first = all.into_iter().filter(|e| !last.contains(e));
    first.chain(last).map(EntryPoint::name).collect()
}

/// Why the ICV sub-tests fail: the plugin names ICVs by LLVM's own ids.
const ICV_IDS: &str = "the plugin names ICVs by the ids LLVM's library happens to give them. \
    ICV ids are the library's own: a tool learns them from ompd_enumerate_icvs, starting from \
    ompd_icv_undefined and following next_id (OpenMP 5.0 §5.5.9.1, 6.0 §41.11.1; OMPD-ICV-001, \
    OMPD-ICV-010). The reference's id there is another ICV, of another scope, or none in 5.0, so \
    it answers bad_input (OMPD-ICV-012 leaves 5.x the code for a scope mismatch open), and the \
    plugin stops that routine's tests";

/// Sub-tests whose expectation the specification contradicts: the `ompdtestapi` routine, the
/// failure line the plugin prints, and the text that decides.
const CONTRADICTIONS: &[(&str, &str, &str)] = &[
    (
        "ompd_get_icv_from_scope",
        "Failed. with return code = 7",
        "with a thread handle, ICV id 22 at ompd_scope_thread (LLVM's ompd-thread-num-var); the \
         sub-test it stops, nthreads-var (LLVM's id 7) at thread scope answering incomplete, \
         contradicts the text too: nthreads-var is a data environment ICV (task scope), and \
         incomplete means a list longer than one value (OMPD-ICV-014)",
    ),
    (
        "ompd_get_icv_from_scope",
        "Failed. with return code = 7",
        "with a parallel handle, ICV id 15 at ompd_scope_parallel (LLVM's active-levels-var)",
    ),
    (
        "ompd_get_icv_string_from_scope",
        "Failed. with return code = 7",
        "ICV id 12 at ompd_scope_address_space (LLVM's tool-libraries-var)",
    ),
];

/// Lines that mean the session broke: a Python error in the plugin, or gdb itself dying.
const BROKEN: &[&str] = &[
    "Traceback",
    "Error occurred in Python",
    "Python Exception",
    "Fatal signal",
    "Error in Initialization",
];

#[test]
fn llvm_gdb_plugin_drives_the_5_0_and_5_2_reference_builds() {
    let Some(runtime) = llvm21_runtime() else {
        return;
    };
    common::build_references();
    let dir = tempfile::Builder::new()
        .prefix("gdb-plugin-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("temporary directory");
    let program = compile(dir.path());
    for name in ["reference-5.0", "reference-5.2"] {
        let out = drive(dir.path(), &program, &runtime, name);
        judge(name, &out);
    }
}

/// LLVM 21's unstripped runtime from the vendor cache, or `None` (and why) where gdb, the
/// plugin or ptrace is missing; under `CI` each must be there.
fn llvm21_runtime() -> Option<PathBuf> {
    let missing = if !Path::new(PLUGIN).is_file() {
        Some(format!("no gdb OMPD plugin at {PLUGIN} (libomp-19-dev)"))
    } else if Command::new("gdb").arg("--version").output().is_err() {
        Some("no gdb".to_string())
    } else {
        live_target::spawn::ptrace_permitted().err()
    };
    if let Some(why) = missing {
        assert!(std::env::var_os("CI").is_none(), "under CI: {why}");
        eprintln!("gdb plugin test: SKIPPED, {why}");
        return None;
    }
    let cache = ompd_vendors::default_cache_dir();
    ompd_vendors::fetch(&cache, &[], false, &mut |_| {}).expect("vendor libraries fetch");
    let (runtimes, _) = fixture_protocol::find_runtimes(&cache);
    let rt = runtimes.into_iter().find(|r| r.name == "llvm-21");
    Some(
        rt.expect("LLVM 21's unstripped runtime in the vendor cache")
            .library,
    )
}

/// Compiles the client program with clang's OpenMP (it links `libomp.so.5`).
fn compile(dir: &Path) -> PathBuf {
    let src = c_fixtures::c_source("gdb_client.c");
    let exe = dir.join("gdb_client");
    let status = Command::new("clang-19")
        .args(["-g", "-O0", "-fopenmp", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .expect("clang-19 starts");
    assert!(status.success(), "clang-19 {}: {status}", src.display());
    exe
}

/// Runs the plugin's tests on the reference build `name`; returns gdb's output. The library
/// directory holds `libompd.so` (the build) and `libomp.so.5` (the runtime), which the plugin's
/// `dlopen` and the program find through `LD_LIBRARY_PATH`.
fn drive(dir: &Path, program: &Path, runtime: &Path, name: &str) -> String {
    let lib_dir = dir.join(name);
    std::fs::create_dir_all(&lib_dir).expect("library directory");
    let built = Path::new(env!("CARGO_BIN_EXE_ompd-conform"))
        .parent()
        .expect("the runner's directory");
    let file = ompd_vendors::reference(name)
        .expect("a reference build")
        .file;
    std::os::unix::fs::symlink(built.join(file), lib_dir.join("libompd.so")).expect("link");
    std::os::unix::fs::symlink(runtime, lib_dir.join("libomp.so.5")).expect("link");
    let script = dir.join(format!("{name}.gdb"));
    std::fs::write(&script, commands()).expect("gdb script");
    let out = Command::new("timeout")
        .args(["300", "gdb", "-q", "-batch", "-nx", "-x"])
        .arg(&script)
        .arg(program)
        .env("LD_LIBRARY_PATH", &lib_dir)
        .env("OMP_DEBUG", "enabled")
        .output()
        .expect("gdb starts");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{name}: gdb {}:\n{text}", out.status);
    text
}

/// The gdb script: stop in the task, `ompd init`, then each routine's tests after a marker line.
fn commands() -> String {
    let mut s = format!(
        "set pagination off\nset confirm off\nset debuginfod enabled off\nsource {PLUGIN}\n\
         break stop_here\nrun\nompd init\n"
    );
    for api in apis() {
        s += &format!("echo @@ {api}\\n\nompdtestapi {api}\n");
    }
    s + "quit\n"
}

/// Every routine's tests ran, nothing broke, and every failure is a recorded contradiction.
fn judge(name: &str, out: &str) {
    assert!(
        out.contains("Loaded OMPD lib successfully!"),
        "{name}: ompd init:\n{out}"
    );
    let broken: Vec<&str> = out
        .lines()
        .filter(|l| BROKEN.iter().any(|b| l.contains(b)))
        .collect();
    assert!(broken.is_empty(), "{name}: {broken:?}\n{out}");
    let sections: Vec<&str> = out.split("@@ ").skip(1).collect();
    let apis = apis();
    assert_eq!(sections.len(), apis.len(), "{name}: one section a routine");
    for (api, text) in apis.iter().zip(sections) {
        assert!(text.starts_with(api), "{name}: {api} out of order");
        assert!(
            text.contains("Testing"),
            "{name}: {api} ran no test:\n{text}"
        );
        let failed: Vec<&str> = text.lines().filter(|l| l.contains("Failed")).collect();
        let recorded: Vec<_> = CONTRADICTIONS.iter().filter(|(a, ..)| a == api).collect();
        let lines: Vec<&str> = recorded.iter().map(|(_, line, _)| *line).collect();
        let why: Vec<&str> = recorded.iter().map(|(.., why)| *why).collect();
        assert_eq!(
            failed, lines,
            "{name}: {api}: the failures differ from the recorded contradictions \
             ({why:?}; {ICV_IDS}):\n{text}"
        );
    }
}
