//! Builds the C side of the suite.
//!
//! 1. Finds `omp-tools.h`: `$OMP_TOOLS_H`, then the `libomp-19-dev` install, then the vendor
//!    cache under `<workspace>/target/ompd-vendors`.
//! 2. Compiles `c/abi_check.c` against it into `$OUT_DIR/abi_check` (exported as
//!    `OMPD_ABI_CHECK_EXE`; the header as `OMP_TOOLS_H_USED`).
//! 3. Probes which OpenMP 5.2/6.0 names the header declares (`OMPD_HEADER_PROBES`), and whether
//!    the compile-time signature checks reject an injected drift (`OMPD_ABI_DRIFT_PROBES`).
//!    The tests assert on both; this script only records them.
//! 4. Compiles `c/broken_ompd.c` into one shared object per entry of [`BROKEN`] (the clean
//!    forwarding baseline and one build per violation, `-DVIOLATION_<NAME>`), and
//!    `c/fixture_dep.c` into `libompd_fixture_dep.so`; writes `$OUT_DIR/broken_libraries.rs`,
//!    the table `src/lib.rs` exposes.
//! 5. Compiles the OpenMP fixture program `c/omp_fixture.c` once per compiler of [`PROGRAMS`]
//!    (`-fopenmp -O1 -g`); a compiler that is not installed is not an error: the variant is
//!    recorded as missing with the reason (`$OUT_DIR/omp_programs.rs`, `omp_missing.rs`). And
//!    compiles the OMPT truth tool `c/ompt_truth.c` into `libompt_truth.so` with the default C
//!    compiler.
//!
//! Every compilation that includes `omp-tools.h` finds it in a private copy
//! (`$OUT_DIR/include`), never in the header's own directory, where clang's builtin headers
//! would shadow gcc's.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `libomp-19-dev` location of the header, relative to a filesystem root.
const LLVM19_HEADER: &str = "usr/lib/llvm-19/lib/clang/19/include/omp-tools.h";

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
];

/// The file name of the undeclared dependency of the `undeclared_dep` build.
const DEPENDENCY: &str = "libompd_fixture_dep.so";

/// The builds of `c/omp_fixture.c`: (compiler executable, `Compiler` variant in `src/lib.rs`,
/// the OpenMP runtime SONAME the compiler's `-fopenmp` links).
const PROGRAMS: &[(&str, &str, &str)] = &[
    ("gcc", "Gcc", "libgomp.so.1"),
    ("clang-19", "Clang19", "libomp.so.5"),
];

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

    let header = find_header(&manifest_dir);
    println!("cargo:rerun-if-changed={}", header.display());
    let include_dir = include_dir_for(&header, &out_dir);

    let compiler = cc::Build::new().cargo_metadata(false).get_compiler();
    let c_command = |extra: &[&str]| -> Command {
        let mut cmd = compiler.to_command();
        cmd.arg("-std=c11")
            .arg("-Wall")
            .arg("-Wextra")
            .arg("-Werror");
        cmd.arg("-isystem").arg(&include_dir);
        cmd.args(extra);
        cmd
    };

    // The cross-check executable itself.
    let exe = out_dir.join(format!("abi_check{}", env::consts::EXE_SUFFIX));
    let mut cmd = c_command(&[]);
    cmd.arg(&source).arg("-o").arg(&exe);
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

    // Which 5.2/6.0 names the header declares.
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
        let mut cmd = c_command(&["-c"]);
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

    // The signature checks must reject every injected drift.
    let mut drifts = Vec::new();
    for (value, label) in DRIFTS {
        let object = out_dir.join(format!("abi_check_drift_{label}.o"));
        let define = format!("-DABI_CHECK_INJECT_DRIFT={value}");
        let mut cmd = c_command(&["-c", &define]);
        cmd.arg(&source).arg("-o").arg(&object);
        let output = run(&mut cmd);
        drifts.push(format!("{label}={}", u8::from(!output.status.success())));
    }

    // The deliberately broken OMPD libraries and the dependency one of them does not declare.
    let shared = |source: &Path, output: &Path, extra: &[&str]| {
        let mut cmd = c_command(&["-shared", "-fPIC"]);
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
    };
    let dependency = out_dir.join(DEPENDENCY);
    shared(
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
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        shared(&broken_source, &library, &extra);
        table.push_str(&format!(
            "    Fixture {{ name: {name:?}, entry_point: {entry_point:?}, violation: {violation:?}, \
             path: {:?} }},\n",
            library.display().to_string()
        ));
    }
    table.push_str("]\n");
    fs::write(out_dir.join("broken_libraries.rs"), table).expect("write broken_libraries.rs");

    build_openmp_fixtures(&manifest_dir, &out_dir, &include_dir, &compiler);

    println!(
        "cargo:rustc-env=OMPD_FIXTURE_DEPENDENCY={}",
        dependency.display()
    );
    println!("cargo:rustc-env=OMPD_ABI_CHECK_EXE={}", exe.display());
    println!("cargo:rustc-env=OMP_TOOLS_H_USED={}", header.display());
    println!("cargo:rustc-env=OMPD_HEADER_PROBES={}", probes.join(","));
    println!("cargo:rustc-env=OMPD_ABI_DRIFT_PROBES={}", drifts.join(","));
}

/// Step 5: the OpenMP fixture program per compiler, and the OMPT truth tool.
fn build_openmp_fixtures(
    manifest_dir: &Path,
    out_dir: &Path,
    include_dir: &Path,
    compiler: &cc::Tool,
) {
    println!("cargo:rerun-if-env-changed=PATH");
    let c_dir = manifest_dir.join("c");
    let fixture_source = c_dir.join("omp_fixture.c");
    let common = [
        "-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-g", "-fopenmp",
    ];

    let mut programs = String::from("&[\n");
    let mut missing = String::from("&[\n");
    for (executable, variant, soname) in PROGRAMS {
        let output = out_dir.join(format!("omp_fixture_{variant}").to_lowercase());
        let mut cmd = Command::new(executable);
        cmd.args(common)
            .arg("-I")
            .arg(&c_dir)
            .arg(&fixture_source)
            .arg("-o")
            .arg(&output)
            .args(["-lpthread", "-ldl"])
            .arg("-Wl,--export-dynamic-symbol=ompd_fixture_truth");
        match cmd.output() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                missing.push_str(&format!(
                    "    (Compiler::{variant}, {:?}),\n",
                    format!("{executable} not found")
                ));
                continue;
            }
            Err(e) => panic!("c-fixtures: cannot run {executable}: {e}"),
            Ok(result) if !result.status.success() => panic!(
                "c-fixtures: compiling {} with {executable} failed:\n{}",
                fixture_source.display(),
                describe(&cmd, &result)
            ),
            Ok(_) => {}
        }
        programs.push_str(&format!(
            "    Program {{ compiler: Compiler::{variant}, path: {:?}, needed_runtime_soname: \
             {soname:?} }},\n",
            output.display().to_string()
        ));
    }
    programs.push_str("]\n");
    missing.push_str("]\n");
    fs::write(out_dir.join("omp_programs.rs"), programs).expect("write omp_programs.rs");
    fs::write(out_dir.join("omp_missing.rs"), missing).expect("write omp_missing.rs");

    let tool = out_dir.join("libompt_truth.so");
    let tool_source = c_dir.join("ompt_truth.c");
    let mut cmd = compiler.to_command();
    cmd.args(&common[..6])
        .args(["-shared", "-fPIC", "-isystem"])
        .arg(include_dir)
        .arg("-I")
        .arg(&c_dir)
        .arg(&tool_source)
        .arg("-o")
        .arg(&tool)
        .arg("-ldl");
    let result = run(&mut cmd);
    if !result.status.success() {
        panic!(
            "c-fixtures: compiling {} failed:\n{}",
            tool_source.display(),
            describe(&cmd, &result)
        );
    }
    println!("cargo:rustc-env=OMPD_OMPT_TRUTH_TOOL={}", tool.display());
}

/// The header to use, in the documented order of preference.
fn find_header(manifest_dir: &Path) -> PathBuf {
    if let Some(explicit) = env::var_os("OMP_TOOLS_H").filter(|v| !v.is_empty()) {
        let explicit = PathBuf::from(explicit);
        if !explicit.is_file() {
            panic!(
                "c-fixtures: OMP_TOOLS_H={} is not a file",
                explicit.display()
            );
        }
        return explicit;
    }
    let system = Path::new("/").join(LLVM19_HEADER);
    if system.is_file() {
        return system;
    }
    let workspace = manifest_dir.parent().unwrap_or(manifest_dir);
    let vendored = workspace
        .join("target")
        .join("ompd-vendors")
        .join("llvm-19")
        .join(LLVM19_HEADER);
    if vendored.is_file() {
        return vendored;
    }
    panic!(
        "c-fixtures: omp-tools.h not found; install libomp-19-dev (apt-get install libomp-19-dev) \
         or set OMP_TOOLS_H"
    );
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
