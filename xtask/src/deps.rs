//! `cargo xtask ci deps`: install what the tests need on a fresh Debian machine with only a Rust
//! toolchain, so that `cargo xtask ci` (the README's test command) needs nothing done by hand.
//!
//! Each need is probed first; only missing ones are installed: Debian packages with `apt-get`
//! (as root, or through `sudo`), toolchain components with `rustup`. A need that cannot be
//! installed fails the step with one line naming it. The runner itself needs none of this (see
//! `bare`): these serve the tests (the ABI cross-check, the broken C libraries, the live and core
//! targets, the HTML check in a browser) and the vendor fetch.

use std::path::Path;
use std::process::{Command, Stdio};

/// How a need is probed.
enum Probe {
    /// A file exists.
    File(&'static str),
    /// A command runs and exits 0.
    Runs(&'static [&'static str]),
}

impl Probe {
    fn holds(&self) -> bool {
        match self {
            Probe::File(path) => Path::new(path).is_file(),
            Probe::Runs(argv) => Command::new(argv[0])
                .args(&argv[1..])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success()),
        }
    }
}

/// What the tests need, how each is probed, and the Debian packages that provide it.
const DEBIAN: &[(&str, Probe, &[&str])] = &[
    (
        "omp-tools.h (ABI cross-check, broken libraries)",
        Probe::File("/usr/lib/llvm-19/lib/clang/19/include/omp-tools.h"),
        &["libomp-19-dev"],
    ),
    (
        "dpkg-deb (vendor fetch)",
        Probe::Runs(&["dpkg-deb", "--version"]),
        &["dpkg"],
    ),
    (
        "a C compiler",
        Probe::Runs(&["cc", "--version"]),
        &["gcc", "libc6-dev"],
    ),
    (
        "clang-19 (the clang build of the OpenMP fixture)",
        Probe::Runs(&["clang-19", "--version"]),
        &["clang-19"],
    ),
    (
        "pip (vendor fetch, actionlint)",
        Probe::Runs(&["python3", "-m", "pip", "--version"]),
        &["python3-pip"],
    ),
    (
        "gdb (gcore core files)",
        Probe::Runs(&["gdb", "--version"]),
        &["gdb"],
    ),
    (
        "chromium (the HTML matrix in a browser)",
        Probe::Runs(&["chromium", "--version"]),
        &["chromium", "fonts-dejavu-core"],
    ),
];

/// Toolchain components the format and lint steps need, each with the command that probes it.
const COMPONENTS: &[(&[&str], &str)] = &[
    (&["cargo", "fmt", "--version"], "rustfmt"),
    (&["cargo", "clippy", "--version"], "clippy"),
];

/// Runs the step.
pub fn install() -> Result<(), String> {
    for (probe, component) in COMPONENTS {
        if !Probe::Runs(probe).holds() {
            eprintln!("xtask ci deps: rustup component add {component}");
            run(Command::new("rustup").args(["component", "add", component]))?;
        }
    }
    let missing: Vec<&(&str, Probe, &[&str])> = DEBIAN
        .iter()
        .filter(|(_, probe, _)| !probe.holds())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let packages: Vec<&str> = missing
        .iter()
        .flat_map(|(_, _, p)| p.iter().copied())
        .collect();
    for (what, _, _) in &missing {
        eprintln!("xtask ci deps: missing {what}");
    }
    eprintln!("xtask ci deps: apt-get install {}", packages.join(" "));
    run(&mut as_root(&["apt-get", "update", "-qq"])?)?;
    let mut install = as_root(&["apt-get", "install", "-y", "-qq", "--no-install-recommends"])?;
    install
        .args(&packages)
        .env("DEBIAN_FRONTEND", "noninteractive");
    run(&mut install)?;
    match missing.iter().find(|(_, probe, _)| !probe.holds()) {
        Some((what, _, _)) => Err(format!(
            "{what} is still missing after installing its package"
        )),
        None => Ok(()),
    }
}

/// `argv` run as root: directly when this process is root, else through `sudo`.
fn as_root(argv: &[&str]) -> Result<Command, String> {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0");
    let mut c = if root {
        Command::new(argv[0])
    } else if Probe::Runs(&["sudo", "-n", "true"]).holds() {
        let mut c = Command::new("sudo");
        c.arg("-n").arg(argv[0]);
        c
    } else {
        return Err(format!(
            "{} needs root (or sudo without a password)",
            argv[0]
        ));
    };
    c.args(&argv[1..]);
    Ok(c)
}

fn run(c: &mut Command) -> Result<(), String> {
    let status = c
        .status()
        .map_err(|e| format!("cannot run {:?}: {e}", c.get_program()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{c:?} failed ({status})"))
    }
}
