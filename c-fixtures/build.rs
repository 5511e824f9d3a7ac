//! Builds the C side of the suite.
//!
//! 1. Finds `omp-tools.h`: `$OMP_TOOLS_H`, then the `libomp-19-dev` install, then the vendor
//!    cache under `<workspace>/target/ompd-vendors`.
//! 2. Compiles `c/abi_check.c` against it into `$OUT_DIR/abi_check` (exported as
//!    `OMPD_ABI_CHECK_EXE`; the header as `OMP_TOOLS_H_USED`).
//! 3. Probes which OpenMP 5.2/6.0 names the header declares (`OMPD_HEADER_PROBES`), and whether
//!    the compile-time signature checks reject an injected drift (`OMPD_ABI_DRIFT_PROBES`).
//!    The tests assert on both; this script only records them.

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

    println!("cargo:rustc-env=OMPD_ABI_CHECK_EXE={}", exe.display());
    println!("cargo:rustc-env=OMP_TOOLS_H_USED={}", header.display());
    println!("cargo:rustc-env=OMPD_HEADER_PROBES={}", probes.join(","));
    println!("cargo:rustc-env=OMPD_ABI_DRIFT_PROBES={}", drifts.join(","));
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

/// A directory from which `#include <omp-tools.h>` resolves to `header`: its own directory when
/// it has that name, otherwise a copy under `$OUT_DIR/include`.
fn include_dir_for(header: &Path, out_dir: &Path) -> PathBuf {
    if header.file_name().is_some_and(|n| n == "omp-tools.h") {
        if let Some(dir) = header.parent() {
            return dir.to_path_buf();
        }
    }
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
