//! Builds the C side of the suite.
//!
//! 1. Finds `omp-tools.h` with `fixture_protocol::compile::find_header`: `$OMP_TOOLS_H`, then
//!    the `libomp-19-dev` install, then the vendor cache under `<workspace>/target/ompd-vendors`.
//! 2. Compiles `c/abi_check.c` against it into `$OUT_DIR/abi_check` (exported as
//!    `OMPD_ABI_CHECK_EXE`; the header as `OMP_TOOLS_H_USED`).
//! 3. Probes which OpenMP 5.2/6.0 names the header declares (`OMPD_HEADER_PROBES`), and whether
//!    the compile-time signature checks reject an injected drift (`OMPD_ABI_DRIFT_PROBES`).
//!    The tests assert on both; this script only records them.
//! 4. Compiles `c/broken_ompd.c` into one shared object per entry of [`BROKEN`] (the clean
//!    forwarding baseline and one build per violation, `-DVIOLATION_<NAME>`), and
//!    `c/fixture_dep.c` into `libompd_fixture_dep.so`; writes `$OUT_DIR/broken_libraries.rs`,
//!    the table `src/lib.rs` exposes.
//! 5. Compiles `c/draft2014_ompd.c`, a library of the 2014 draft's routines and forms, into
//!    `libompd_draft2014.so` (profile detection of TR-era libraries).
//!
//! The OpenMP fixture programs and the OMPT truth tool are not built here: the runner needs
//! them too, and its build compiles no C; `fixture_protocol::compile` builds them at run time.
//!
//! Every compilation that includes `omp-tools.h` finds it in a private copy
//! (`$OUT_DIR/include`), never in the header's own directory, where clang's builtin headers
//! would shadow gcc's.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Names probed for declaration in the header. The first is a control that every `omp-tools.h`
/// declares; the others are the additions of 5.2 and 6.0.
const PROBED_NAMES: &[&str] = &[
    "ompd_rc_ok",
    "ompd_rc_incompatible_handle",
    "ompd_scope_teams",
    "ompd_scope_target",
    "ompt_state_work_free_agent",
    "ompt_state_work_induction",
    "ompd_get_device_thread_id_kinds",
    "ompd_get_device_from_thread",
];

/// The builds of `c/broken_ompd.c`: (name, `VIOLATION_` define or "" for the clean baseline,
/// entry point carrying the violation or "", the violation in words). The comment at the top
/// of `c/broken_ompd.c` describes each define.
const BROKEN: &[(&str, &str, &str, &str)] = &[
    (
        "clean",
        "",
        "",
        "none: every entry point forwards to the inner library",
    ),
    (
        "segfault",
        "SEGFAULT",
        "ompd_get_omp_version",
        "writes through a NULL pointer (SIGSEGV)",
    ),
    (
        "abort",
        "ABORT",
        "ompd_get_thread_id",
        "calls abort() (SIGABRT)",
    ),
    (
        "exit0",
        "EXIT0",
        "ompd_get_task_function",
        "calls exit(0) in the middle of the call",
    ),
    (
        "throw",
        "THROW",
        "ompd_get_task_function",
        "throws a C++ exception out of the call",
    ),
    ("hang", "HANG", "ompd_finalize", "never returns"),
    (
        "stack_smash",
        "STACK_SMASH",
        "ompd_get_task_frame",
        "overflows a local buffer; built with -fstack-protector-all, the canary check aborts",
    ),
    (
        "stdout",
        "STDOUT",
        "ompd_get_omp_version",
        "prints a line on stdout itself",
    ),
    (
        "leak",
        "LEAK",
        "ompd_get_thread_handle",
        "allocates a block with alloc_memory that nothing ever frees",
    ),
    (
        "rel_not_ok",
        "REL_NOT_OK",
        "ompd_rel_thread_handle",
        "releases a live thread handle but answers ompd_rc_error",
    ),
    (
        "double_free",
        "DOUBLE_FREE",
        "ompd_get_omp_version_string",
        "frees a block it allocated twice",
    ),
    (
        "free_tool_memory",
        "FREE_TOOL_MEMORY",
        "ompd_get_thread_id",
        "frees the tool's thread-id buffer with free_memory",
    ),
    (
        "static_string",
        "STATIC_STRING",
        "ompd_get_omp_version_string",
        "returns a static string where an alloc_memory block is required",
    ),
    (
        "compare_asymmetric",
        "COMPARE_ASYMMETRIC",
        "ompd_thread_handle_compare",
        "answers 1 for two different threads in both orders",
    ),
    (
        "null_ok",
        "NULL_OK",
        "ompd_get_omp_version",
        "returns ompd_rc_ok for a NULL omp_version",
    ),
    (
        "wrong_api_version",
        "WRONG_API_VERSION",
        "ompd_get_api_version",
        "answers 201800, no OpenMP API version (ompd_initialize accepts it as its own)",
    ),
    (
        "missing_entry",
        "MISSING_ENTRY",
        "ompd_get_task_function",
        "is not exported",
    ),
    (
        "undeclared_dep",
        "UNDECLARED_DEP",
        "ompd_get_api_version",
        "calls a function of libompd_fixture_dep.so, which is missing from DT_NEEDED",
    ),
    (
        "flaky",
        "FLAKY",
        "ompd_get_omp_version",
        "crashes (SIGSEGV) the first time any process of the run calls it",
    ),
    (
        "hang_task",
        "HANG_TASK",
        "ompd_get_curr_task_handle",
        "never returns",
    ),
    (
        "segfault_task",
        "SEGFAULT_TASK",
        "ompd_get_curr_task_handle",
        "writes through a NULL pointer (SIGSEGV) on every call",
    ),
];

/// The file name of the undeclared dependency of the `undeclared_dep` build.
const DEPENDENCY: &str = "libompd_fixture_dep.so";

/// The file name of the 2014-draft library (`c/draft2014_ompd.c`).
const DRAFT_2014: &str = "libompd_draft2014.so";

/// Drift variants of `abi_check.c` (`ABI_CHECK_INJECT_DRIFT` value, label).
const DRIFTS: &[(u32, &str)] = &[(1, "entry_point"), (2, "callback")];

fn main() {
    let manifest_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let source = manifest_dir.join("c").join("abi_check.c");

    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=c");
    println!("cargo:rerun-if-env-changed=OMP_TOOLS_H");

    let header = find_header();
    println!("cargo:rerun-if-changed={}", header.display());
    let cc = Cc {
        compiler: cc::Build::new().cargo_metadata(false).get_compiler(),
        include_dir: include_dir_for(&header, &out_dir),
    };
    let exe = abi_check(&cc, &source, &header, &out_dir);
    let probes = header_probes(&cc, &header, &out_dir);
    // The signature checks must reject every injected drift.
    let mut drifts = Vec::new();
    for (value, label) in DRIFTS {
        let object = out_dir.join(format!("abi_check_drift_{label}.o"));
        let define = format!("-DABI_CHECK_INJECT_DRIFT={value}");
        let mut cmd = cc.command(&["-c", &define]);
        cmd.arg(&source).arg("-o").arg(&object);
        let output = run(&mut cmd);
        drifts.push(format!("{label}={}", u8::from(!output.status.success())));
    }
    let dependency = broken_libraries(&cc, &manifest_dir, &out_dir);
    let draft = out_dir.join(DRAFT_2014);
    cc.shared(
        &manifest_dir.join("c").join("draft2014_ompd.c"),
        &draft,
        &[],
    );

    println!(
        "cargo:rustc-env=OMPD_FIXTURE_DEPENDENCY={}",
        dependency.display()
    );
    println!(
        "cargo:rustc-env=OMPD_DRAFT_2014_LIBRARY={}",
        draft.display()
    );
    println!("cargo:rustc-env=OMPD_ABI_CHECK_EXE={}", exe.display());
    println!("cargo:rustc-env=OMP_TOOLS_H_USED={}", header.display());
    println!("cargo:rustc-env=OMPD_HEADER_PROBES={}", probes.join(","));
    println!("cargo:rustc-env=OMPD_ABI_DRIFT_PROBES={}", drifts.join(","));
}

/// The C compiler, strict, with the header's directory as a system include directory.
struct Cc {
    compiler: cc::Tool,
    include_dir: PathBuf,
}

impl Cc {
    fn command(&self, extra: &[&str]) -> Command {
        let mut cmd = self.compiler.to_command();
        cmd.arg("-std=c11")
            .arg("-Wall")
            .arg("-Wextra")
            .arg("-Werror");
        cmd.arg("-isystem").arg(&self.include_dir);
        cmd.args(extra);
        cmd
    }

    /// Compiles a shared library (linked with `-ldl`); a failure fails the build.
    fn shared(&self, source: &Path, output: &Path, extra: &[&str]) {
        let mut cmd = self.command(&["-shared", "-fPIC"]);
        cmd.args(extra)
            .arg(source)
            .arg("-o")
            .arg(output)
            .arg("-ldl");
        let result = run(&mut cmd);
        if !result.status.success() {
            panic!(
                "c-fixtures: compiling {} failed:\n{}",
                source.display(),
                describe(&cmd, &result)
            );
        }
    }
}

/// The cross-check executable itself; a failure (a drift of the header) fails the build.
fn abi_check(cc: &Cc, source: &Path, header: &Path, out_dir: &Path) -> PathBuf {
    let exe = out_dir.join(format!("abi_check{}", env::consts::EXE_SUFFIX));
    let mut cmd = cc.command(&[]);
    cmd.arg(source).arg("-o").arg(&exe);
    let output = run(&mut cmd);
    if !output.status.success() {
        panic!(
            "c-fixtures: compiling {} against {} failed (a signature or type drift in the \
             header fails these static assertions):\n{}",
            source.display(),
            header.display(),
            describe(&cmd, &output)
        );
    }
    exe
}

/// Which 5.2/6.0 names the header declares: `name=0|1` each.
fn header_probes(cc: &Cc, header: &Path, out_dir: &Path) -> Vec<String> {
    let mut probes = Vec::new();
    for name in PROBED_NAMES {
        let probe_src = out_dir.join(format!("probe_{name}.c"));
        fs::write(
            &probe_src,
            format!(
                "#include <omp-tools.h>\nint main(void) {{\n  (void)({name});\n  return 0;\n}}\n"
            ),
        )
        .expect("write probe source");
        let object = out_dir.join(format!("probe_{name}.o"));
        let mut cmd = cc.command(&["-c"]);
        cmd.arg(&probe_src).arg("-o").arg(&object);
        let output = run(&mut cmd);
        if *name == PROBED_NAMES[0] && !output.status.success() {
            panic!(
                "c-fixtures: the control probe for `{name}` does not compile against {}:\n{}",
                header.display(),
                describe(&cmd, &output)
            );
        }
        probes.push(format!("{name}={}", u8::from(output.status.success())));
    }
    probes
}

/// The deliberately broken OMPD libraries (and their table, `broken_libraries.rs`) and the
/// dependency one of them does not declare, whose path is returned.
fn broken_libraries(cc: &Cc, manifest_dir: &Path, out_dir: &Path) -> PathBuf {
    let dependency = out_dir.join(DEPENDENCY);
    cc.shared(
        &manifest_dir.join("c").join("fixture_dep.c"),
        &dependency,
        &[],
    );
    let broken_source = manifest_dir.join("c").join("broken_ompd.c");
    let mut table = String::from("&[\n");
    for (name, define, entry_point, violation) in BROKEN {
        let library = out_dir.join(format!("libompd_broken_{name}.so"));
        let mut extra = vec!["-U_FORTIFY_SOURCE".to_string()];
        if !define.is_empty() {
            extra.push(format!("-DVIOLATION_{define}"));
        }
        if *define == "STACK_SMASH" {
            extra.push("-fstack-protector-all".into());
        }
        if *define == "THROW" {
            extra.extend(["-Wl,--no-as-needed".into(), "-lstdc++".into()]);
        }
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        cc.shared(&broken_source, &library, &extra);
        table.push_str(&format!(
            "    Fixture {{ name: {name:?}, entry_point: {entry_point:?}, violation: {violation:?}, \
             path: {:?} }},\n",
            library.display().to_string()
        ));
    }
    table.push_str("]\n");
    fs::write(out_dir.join("broken_libraries.rs"), table).expect("write broken_libraries.rs");
    dependency
}

/// The header to use, in `fixture_protocol::compile::find_header`'s order (the vendor cache:
/// `ompd_vendors::default_cache_dir`).
fn find_header() -> PathBuf {
    println!("cargo:rerun-if-env-changed=OMPD_VENDOR_CACHE");
    let cache = ompd_vendors::default_cache_dir();
    fixture_protocol::compile::find_header(&cache).unwrap_or_else(|e| panic!("c-fixtures: {e}"))
}

/// A directory from which `#include <omp-tools.h>` resolves to `header` and nothing else does:
/// a copy under `$OUT_DIR/include`. Never the header's own directory: the `libomp-19-dev`
/// header lives among clang's builtin headers (`stddef.h`, `omp.h`, ...), which break gcc when
/// put on its include path.
fn include_dir_for(header: &Path, out_dir: &Path) -> PathBuf {
    let dir = out_dir.join("include");
    fs::create_dir_all(&dir).expect("create $OUT_DIR/include");
    fs::copy(header, dir.join("omp-tools.h")).expect("copy the header into $OUT_DIR/include");
    dir
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap_or_else(|e| {
        panic!(
            "c-fixtures: cannot run the C compiler {}: {e}",
            cmd.get_program().display()
        )
    })
}

fn describe(cmd: &Command, output: &Output) -> String {
    let line: Vec<String> = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    format!(
        "command: {}\nstatus: {}\nstdout:\n{}\nstderr:\n{}",
        line.join(" "),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}
