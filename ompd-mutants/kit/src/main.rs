//! `ompd-mutants`: the mutation kit's driver (`cargo xtask mutants` builds and calls it).
//!
//! It stages the forwarder once per mutant of `ompd_mutants::table::MUTANTS` (plus the clean
//! baseline) around one correct inner library, runs `ompd-conform` on each, and judges the kill:
//! a check kills a mutant when one of its results turns warn, fail, crash or timeout where the
//! clean baseline's did not. It prints the kill matrix and the score and writes them to
//! `OUT/kill-matrix.md`; the exit code is 0 only when every mutant run was killed, each by at
//! least one of the checks it targets.

mod judge;
mod runtime;
mod stage;

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: ompd-mutants --runner EXE --forwarder SO --inner SO --inner-60 SO --forwarder-tr SO --inner-tr SO --out DIR [--vendor-cache DIR] [--quick] [--only NAME]..";

/// The command line.
struct Args {
    runner: PathBuf,
    /// The 5.2 forwarder and its inner library.
    forwarder: PathBuf,
    inner: PathBuf,
    /// The 6.0 library the 5.2 forwarder wraps for the 6.0 mutants.
    inner_60: PathBuf,
    /// The TR 2.001 forwarder and its inner library (for the TR mutants).
    forwarder_tr: PathBuf,
    inner_tr: PathBuf,
    out: PathBuf,
    /// The vendor cache, where the runtime mutants find the runtime they copy (default: the
    /// runner's).
    vendor_cache: Option<PathBuf>,
    quick: bool,
    only: Vec<String>,
}

fn parse() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let (mut runner, mut forwarder, mut inner, mut out) = (None, None, None, None);
    let (mut forwarder_tr, mut inner_tr, mut inner_60) = (None, None, None);
    let (mut quick, mut only, mut vendor_cache) = (false, Vec::new(), None);
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--runner" => runner = Some(PathBuf::from(value()?)),
            "--forwarder" => forwarder = Some(PathBuf::from(value()?)),
            "--inner" => inner = Some(PathBuf::from(value()?)),
            "--forwarder-tr" => forwarder_tr = Some(PathBuf::from(value()?)),
            "--inner-tr" => inner_tr = Some(PathBuf::from(value()?)),
            "--inner-60" => inner_60 = Some(PathBuf::from(value()?)),
            "--out" => out = Some(PathBuf::from(value()?)),
            "--vendor-cache" => vendor_cache = Some(PathBuf::from(value()?)),
            "--only" => only.push(value()?),
            "--quick" => quick = true,
            _ => return Err(format!("unknown argument {a}")),
        }
    }
    let need = |v: Option<PathBuf>, n: &str| v.ok_or(format!("{n} is required"));
    Ok(Args {
        runner: need(runner, "--runner")?,
        forwarder: need(forwarder, "--forwarder")?,
        inner: need(inner, "--inner")?,
        inner_60: need(inner_60, "--inner-60")?,
        forwarder_tr: need(forwarder_tr, "--forwarder-tr")?,
        inner_tr: need(inner_tr, "--inner-tr")?,
        out: need(out, "--out")?,
        vendor_cache,
        quick,
        only,
    })
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("ompd-mutants: error: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let chosen = stage::chosen(args.quick, &args.only);
    if let Some(bad) = args
        .only
        .iter()
        .find(|n| ompd_mutants::table::find(n).is_none())
    {
        eprintln!("ompd-mutants: error: no mutant is called {bad}");
        return ExitCode::from(2);
    }
    match judge::run(&args, &chosen) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("ompd-mutants: error: {e}");
            ExitCode::from(2)
        }
    }
}
