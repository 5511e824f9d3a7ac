//! `cargo xtask bench --fresh`: the first run of the README's main command on a fresh machine,
//! build and fetch included. A clean clone of the checkout (its committed `HEAD`) runs with an
//! empty cargo home (every crate downloaded again), target directory, vendor cache and pip
//! cache (every wheel downloaded again), the main command's work timed in its three parts, one
//! after the other as the command does them: the build (`cargo xtask conform --help` builds
//! what `cargo xtask conform` builds, then only prints the run's help), the vendor fetch
//! (`cargo xtask vendors fetch`), and the run itself (`cargo xtask conform`, which then finds
//! everything built and fetched). It prints the figure and writes it to `target/bench/fresh.md`,
//! which `cargo xtask docs` writes into the README.

use super::target_dir;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// The parts of the main command's first run: a name, and the command doing that part.
const PARTS: [(&str, &[&str]); 3] = [
    ("build", &["xtask", "conform", "--help"]),
    ("vendor fetch", &["xtask", "vendors", "fetch"]),
    ("run", &["xtask", "conform"]),
];

/// Runs the measurement; exit code 0 when every part exited 0.
pub fn fresh() -> i32 {
    match measure() {
        Ok(text) => {
            println!("{text}");
            0
        }
        Err(e) => {
            eprintln!("xtask bench --fresh: {e}");
            1
        }
    }
}

/// The figure's text, written to `target/bench/fresh.md`.
fn measure() -> Result<String, String> {
    let scratch = target_dir().join("bench-fresh");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let clone = scratch.join("suite");
    let mut git = Command::new("git");
    git.args(["clone", "--quiet"])
        .arg(super::root())
        .arg(&clone);
    timed(git, &scratch.join("clone.log"))?;
    let mut spent = Vec::new();
    for (name, args) in PARTS {
        let mut c = Command::new("cargo");
        c.current_dir(&clone)
            .args(args)
            .env("CARGO_HOME", scratch.join("cargo-home"))
            .env("CARGO_TARGET_DIR", scratch.join("target"))
            .env("OMPD_VENDOR_CACHE", scratch.join("vendors"))
            .env("PIP_CACHE_DIR", scratch.join("pip-cache"))
            .env_remove("CARGO");
        let log = scratch.join(format!("{}.log", name.replace(' ', "-")));
        eprintln!("xtask bench --fresh: {name} ({})", log.display());
        spent.push((name, timed(c, &log)?));
    }
    let text = figure(&spent);
    let out = target_dir().join("bench");
    let _ = std::fs::create_dir_all(&out);
    let path = out.join("fresh.md");
    std::fs::write(&path, format!("{text}\n"))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(text)
}

/// Runs `c` with its output in `log`; its wall time in seconds, or why it failed.
fn timed(mut c: Command, log: &Path) -> Result<f64, String> {
    let file = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = file
        .try_clone()
        .map_err(|e| format!("{}: {e}", log.display()))?;
    c.stdin(Stdio::null()).stdout(file).stderr(err);
    let start = Instant::now();
    let status = c
        .status()
        .map_err(|e| format!("cannot run {:?}: {e}", c.get_program()))?;
    let secs = start.elapsed().as_secs_f64();
    match status.code() {
        Some(0) => Ok(secs),
        code => Err(format!(
            "{:?} exited {code:?} (its output: {})",
            c.get_args().collect::<Vec<_>>(),
            log.display()
        )),
    }
}

/// The figure: the whole first run, and each part.
fn figure(spent: &[(&str, f64)]) -> String {
    let total: f64 = spent.iter().map(|(_, s)| s).sum();
    let parts: Vec<String> = spent
        .iter()
        .map(|(name, s)| format!("{name} {s:.0} s"))
        .collect();
    let secs = total.round() as u64;
    format!(
        "The first `cargo xtask conform` on a fresh machine (a clean clone, every crate \
         downloaded and built, every vendor library fetched): **{} min {:02} s** ({}).",
        secs / 60,
        secs % 60,
        parts.join(", ")
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_figure_sums_its_parts_in_minutes_and_seconds() {
        let text = super::figure(&[("build", 170.4), ("vendor fetch", 61.0), ("run", 125.2)]);
        assert!(text.contains("**5 min 57 s**"), "{text}");
        assert!(
            text.contains("(build 170 s, vendor fetch 61 s, run 125 s)"),
            "{text}"
        );
    }
}
