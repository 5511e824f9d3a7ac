//! Builds the test fixture `c/probe.c` (plain pthreads, no OpenMP) into `$OUT_DIR/live_probe`,
//! linked (with an rpath) against `c/probe_lib.c` built as `$OUT_DIR/libprobe_lib.so`, with the
//! system C compiler the `cc` crate finds, and exports the program's path as `LIVE_PROBE_EXE`
//! for the tests. Built with `-g` and unstripped: the tests look up LOCAL and thread-local
//! symbols in `.symtab`.

use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=c/probe.c");
    println!("cargo:rerun-if-changed=c/probe_lib.c");
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let exe = out_dir.join("live_probe");
    let compiler = cc::Build::new()
        .cargo_metadata(false)
        .opt_level(1)
        .debug(true)
        .get_compiler();
    let compile = |args: &[&std::ffi::OsStr]| {
        let mut cmd = compiler.to_command();
        cmd.args(["-std=gnu11", "-Wall", "-Wextra", "-Werror", "-pthread"])
            .args(args);
        let out = cmd
            .output()
            .unwrap_or_else(|e| panic!("cannot run the C compiler ({cmd:?}): {e}"));
        if !out.status.success() {
            panic!(
                "compiling failed ({cmd:?}):\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    };
    let lib = out_dir.join("libprobe_lib.so");
    compile(&[
        "-shared".as_ref(),
        "-fPIC".as_ref(),
        "c/probe_lib.c".as_ref(),
        "-o".as_ref(),
        lib.as_os_str(),
    ]);
    let rpath = format!("-Wl,-rpath,{}", out_dir.display());
    let libdir = format!("-L{}", out_dir.display());
    compile(&[
        "c/probe.c".as_ref(),
        libdir.as_ref(),
        "-lprobe_lib".as_ref(),
        rpath.as_ref(),
        "-o".as_ref(),
        exe.as_os_str(),
    ]);
    println!("cargo:rustc-env=LIVE_PROBE_EXE={}", exe.display());
}
