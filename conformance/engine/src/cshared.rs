//! Small shared objects the runner compiles from C at run time, on first need, with the system C
//! compiler (its build compiles no C): the heap watch's shim ([`crate::heapwatch`]) and the
//! bench's empty OMPD library ([`crate::bench::floor`]). Each goes to `root/<key>/`, `key`
//! hashing the source and the compiler's version; the file is written under a temporary name
//! and renamed, so concurrent runs never load a half-written one.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The host C compiler: `$CC`, else `cc`.
fn compiler() -> String {
    std::env::var("CC")
        .ok()
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "cc".into())
}

/// Builds (or finds built) `file` from `source` under `root`, linked with `libs`; `what` names
/// it in errors ("the heap-watch shim").
pub(crate) fn build(
    root: &Path,
    file: &str,
    source: &str,
    libs: &[&str],
    what: &str,
) -> Result<PathBuf, String> {
    let cc = compiler();
    let version = Command::new(&cc)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .ok_or_else(|| format!("no C compiler to build {what} ({cc}: install gcc, or set CC)"))?;
    let key = ompd_vendors::sha256_bytes(format!("{source}\0{cc}\0{version}").as_bytes());
    let dir = root.join(&key[..16]);
    let lib = dir.join(file);
    if lib.is_file() {
        return Ok(lib);
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let src = dir.join(format!("{file}.{}.c", std::process::id()));
    let tmp = dir.join(format!("{file}.{}", std::process::id()));
    std::fs::write(&src, source).map_err(|e| format!("cannot write {}: {e}", src.display()))?;
    let out = Command::new(&cc)
        .args([
            "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror", "-o",
        ])
        .arg(&tmp)
        .arg(&src)
        .args(libs)
        .output()
        .map_err(|e| format!("cannot run {cc}: {e}"))?;
    let _ = std::fs::remove_file(&src);
    if !out.status.success() {
        let text = String::from_utf8_lossy(&out.stderr);
        let first = text.lines().find(|l| l.contains("error")).unwrap_or("");
        return Err(format!("{cc} could not build {what}: {first}"));
    }
    std::fs::rename(&tmp, &lib).map_err(|e| format!("cannot rename {}: {e}", tmp.display()))?;
    Ok(lib)
}
