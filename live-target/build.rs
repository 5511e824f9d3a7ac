//! Builds the test fixture `c/probe.c` (plain pthreads, no OpenMP) into `$OUT_DIR/live_probe`
//! with the system C compiler the `cc` crate finds, and exports its path as `LIVE_PROBE_EXE` for
//! the tests. Built with `-g` and unstripped: the tests look up its LOCAL and thread-local
//! symbols in `.symtab`.

use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=c/probe.c");
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let exe = out_dir.join("live_probe");
    let compiler = cc::Build::new()
        .cargo_metadata(false)
        .opt_level(1)
        .debug(true)
        .get_compiler();
    let mut cmd = compiler.to_command();
    cmd.args(["-std=gnu11", "-Wall", "-Wextra", "-Werror", "-pthread"])
        .arg("c/probe.c")
        .arg("-o")
        .arg(&exe);
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler ({cmd:?}): {e}"));
    if !out.status.success() {
        panic!(
            "compiling c/probe.c failed ({cmd:?}):\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    println!("cargo:rustc-env=LIVE_PROBE_EXE={}", exe.display());
}
