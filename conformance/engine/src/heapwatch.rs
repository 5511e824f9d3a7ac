//! The heap watch's shim (`c/heapwatch.c`), built on first need with the system C compiler and
//! preloaded (`LD_PRELOAD`) into every worker and zygote, never into the supervisor: it counts
//! the calls of the process heap manager (the C allocator, the strdup family, every global
//! C++ `operator new`/`delete`) made from the library's own text (OMPD-MEM-001; the worker
//! arms it through `ompd_loader::library::heap`).
//!
//! Like the fixtures for `--live`, the shim is compiled at run time, not by a build script: the
//! runner's build compiles no C ([`crate::cshared`]). It goes to `ompd-heapwatch/<key>/` beside
//! the runner's executable (else under the temporary directory). Without a C compiler (or where the build fails) there is no shim:
//! workers then get [`ABSENT_ENV`] saying why, and the check that needs it skips with that
//! reason, never passes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The shim's source.
const SOURCE: &str = include_str!("../c/heapwatch.c");

/// The shim's file name.
const FILE: &str = "libompd_heapwatch.so";

/// The variable a worker reads to know why it runs without the shim (the loader reads it).
pub const ABSENT_ENV: &str = ompd_loader::library::HEAP_WATCH_ABSENT_ENV;

/// The shim, built once per process: its path, or why there is none.
pub fn shim() -> &'static Result<PathBuf, String> {
    static SHIM: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    SHIM.get_or_init(|| {
        let root = std::env::current_exe()
            .ok()
            .and_then(|e| e.parent().map(|d| d.join("ompd-heapwatch")))
            .filter(|d| std::fs::create_dir_all(d).is_ok())
            .unwrap_or_else(|| std::env::temp_dir().join("ompd-heapwatch"));
        build(&root)
    })
}

/// Sets what a worker (or zygote) command needs for the watch: `LD_PRELOAD` naming the shim
/// (before `kept`, a value the user asked workers to keep), or [`ABSENT_ENV`] saying why there
/// is none.
pub fn arrange(cmd: &mut Command, kept: Option<std::ffi::OsString>) {
    match shim() {
        Ok(path) => {
            let mut value = path.clone().into_os_string();
            if let Some(k) = kept.filter(|k| !k.is_empty()) {
                value.push(" ");
                value.push(k);
            }
            cmd.env("LD_PRELOAD", value)
        }
        Err(why) => cmd.env(ABSENT_ENV, why),
    };
}

/// Builds (or finds built) the shim under `root`.
fn build(root: &Path) -> Result<PathBuf, String> {
    crate::cshared::build(root, FILE, SOURCE, &["-ldl"], "the heap-watch shim").and_then(usable)
}

/// `LD_PRELOAD` splits its value at spaces and colons: a path holding either cannot be named.
fn usable(lib: PathBuf) -> Result<PathBuf, String> {
    let text = lib.to_string_lossy();
    if text.contains([' ', ':']) {
        return Err(format!(
            "the heap-watch shim's path {text} holds a space or colon, which LD_PRELOAD cannot name"
        ));
    }
    Ok(lib)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shim_builds_and_exports_the_allocator() {
        let dir = tempfile::tempdir().unwrap();
        let lib = build(dir.path()).expect("a C compiler builds the shim");
        use object::{Object, ObjectSymbol};
        let data = std::fs::read(&lib).unwrap();
        let file = object::File::parse(&*data).expect("the shim is an object file");
        let defined: Vec<&str> = file
            .dynamic_symbols()
            .filter(|s| s.is_definition())
            .filter_map(|s| s.name().ok())
            .collect();
        for name in [
            "malloc",
            "_Znwm",
            "ompd_heapwatch_arm",
            "ompd_heapwatch_read",
            "ompd_heapwatch_signal_changes",
            "sigaction",
            "__sigaction",
            "signal",
            "sigprocmask",
            "pthread_sigmask",
            "ompd_heapwatch_process_changes",
            "close",
            "dup2",
            "fclose",
            "pthread_create",
        ] {
            assert!(defined.contains(&name), "{name} is not defined");
        }
        assert_eq!(
            build(dir.path()).unwrap(),
            lib,
            "a second build reuses the first"
        );
        assert!(usable(PathBuf::from("/a b/x.so")).is_err());
    }
}
