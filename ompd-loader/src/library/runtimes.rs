//! Keeping system runtime libraries loaded before any vendor library is (what a zygote does
//! before it forks workers).

use super::dlopen;
use libloading::os::unix::RTLD_LOCAL;
use std::path::Path;

/// Loads the system libraries `names` (sonames) with `RTLD_LOCAL` and keeps them loaded for the
/// life of the process: a zygote does this before it forks workers, so that a worker's load of
/// a library that needs them finds them in place. Local loading leaves symbol resolution as it
/// was: a library that uses one without declaring it still fails to load. Returns what could
/// not be loaded.
pub fn keep_loaded(names: &[&str]) -> Vec<String> {
    let mut failed = Vec::new();
    for n in names {
        match dlopen(Path::new(n), RTLD_LOCAL) {
            Ok(lib) => std::mem::forget(lib),
            Err(e) => failed.push(format!("{n}: {e}")),
        }
    }
    failed
}
