//! `cargo xtask ci bare`: the runner needs only a Rust toolchain.
//!
//! A clean clone of the checkout (its committed `HEAD`) runs the commands of the reusable
//! workflow `.github/workflows/ompd-gate.yml`, which runs in a bare `rust:1-bookworm` container
//! without `omp-tools.h` or clang, with both out of reach:
//! - `PATH` is a directory of links to everything on the current `PATH` except `clang*`;
//! - `OMP_TOOLS_H` names no file, so anything that looked for the header would fail (the
//!   runner's build must not look at all, and the default run never needs it).
//!
//! Then `cargo xtask vendors fetch llvm-19` and the workflow's `cargo xtask conform llvm-19
//! --cases 0 --quiet --format json --output .. --junit .. --html ..` must exit 0 with results,
//! and `--live --run nested`, which needs the header, must exit 1 with one line naming it (no
//! panic). The clone shares the vendor cache with this checkout, but not its target directory:
//! cargo names a workspace crate's artifacts independently of where the workspace lives, and
//! the crates bake `CARGO_MANIFEST_DIR` in, so a shared one would leave this checkout running the
//! clone's binaries. The clone (`target/bare/suite`, cloned afresh) builds into
//! `target/bare/target`, kept between runs: after the first run the step rebuilds the workspace
//! crates only. (The tidy test `the_runner_builds_without_c` proves the dependency graph part
//! cheaply on `cargo metadata`.)

use std::path::{Path, PathBuf};
use std::process::Command;

/// The vendor library the step runs on.
const LIBRARY: &str = "llvm-19";

/// Runs the step.
pub fn run_bare() -> Result<(), String> {
    let scratch = crate::target_dir().join("bare");
    for dir in ["suite", "bin", "reports"] {
        let _ = std::fs::remove_dir_all(scratch.join(dir));
    }
    let clone = scratch.join("suite");
    let mut git = Command::new("git");
    git.args(["clone", "--quiet"])
        .arg(crate::root())
        .arg(&clone);
    status(git, 0)?;
    let bin = path_without_clang(&scratch.join("bin"))?;
    let reports = scratch.join("reports");
    std::fs::create_dir_all(&reports).map_err(|e| format!("create {}: {e}", reports.display()))?;
    let cargo = |args: &[&str]| {
        let mut c = Command::new("cargo");
        c.current_dir(&clone)
            .args(args)
            .env("PATH", &bin)
            .env("OMP_TOOLS_H", scratch.join("no-such-dir/omp-tools.h"))
            .env("CARGO_TARGET_DIR", scratch.join("target"))
            .env(
                "OMPD_VENDOR_CACHE",
                crate::target_dir().join("ompd-vendors"),
            )
            .env_remove("CC");
        c
    };
    status(cargo(&["xtask", "vendors", "fetch", LIBRARY]), 0)?;
    let json = reports.join("report.json");
    let out = |name: &str| reports.join(name).display().to_string();
    let gate = [
        "xtask", "conform", LIBRARY, "--cases", "0", "--quiet", "--format", "json", "--output",
    ];
    let mut c = cargo(&gate);
    c.arg(&json).args([
        "--junit",
        &out("report.junit.xml"),
        "--html",
        &out("report.html"),
    ]);
    status(c, 0)?;
    let report = std::fs::read_to_string(&json).map_err(|e| format!("{}: {e}", json.display()))?;
    if !report.contains("\"outcome\"") {
        return Err(format!("{} holds no results", json.display()));
    }
    let live = cargo(&[
        "xtask", "conform", LIBRARY, "--live", "--run", "nested", "--quiet",
    ]);
    let stderr = status(live, 1)?;
    let named = stderr
        .lines()
        .any(|l| l.contains("omp-tools.h") || l.contains("OMP_TOOLS_H"));
    if !named || stderr.contains("panicked") {
        return Err(format!(
            "--live without omp-tools.h must fail in one line naming it, got:\n{stderr}"
        ));
    }
    eprintln!(
        "xtask ci bare: a clean clone builds and runs {LIBRARY} without omp-tools.h or clang"
    );
    Ok(())
}

/// Runs `c` and requires exit code `want`; returns its stderr (also printed).
fn status(mut c: Command, want: i32) -> Result<String, String> {
    eprintln!("$ {}", format!("{c:?}").replace('"', ""));
    let out = c
        .stderr(std::process::Stdio::piped())
        .output()
        .map_err(|e| format!("cannot run {:?}: {e}", c.get_program()))?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    eprint!("{stderr}");
    match out.status.code() {
        Some(code) if code == want => Ok(stderr),
        code => Err(format!(
            "{:?} exited {code:?}, want {want}",
            c.get_program()
        )),
    }
}

/// A directory of links to every program on `PATH` except `clang*` (the first of each name
/// wins, as on `PATH`); returns it.
fn path_without_clang(bin: &Path) -> Result<PathBuf, String> {
    std::fs::create_dir_all(bin).map_err(|e| format!("create {}: {e}", bin.display()))?;
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = entry.file_name();
            let link = bin.join(&name);
            if name.to_string_lossy().starts_with("clang") || link.symlink_metadata().is_ok() {
                continue;
            }
            std::os::unix::fs::symlink(entry.path(), &link)
                .map_err(|e| format!("link {}: {e}", link.display()))?;
        }
    }
    Ok(bin.to_path_buf())
}
