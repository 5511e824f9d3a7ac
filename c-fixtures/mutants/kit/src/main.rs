//! `ompd-mutants`: the mutation kit's driver (`cargo xtask mutants` builds and calls it).
//!
//! It stages the forwarder once per mutant of `ompd_mutants::table::MUTANTS` (plus the clean
//! baselines) around one correct inner library, runs `ompd-conform` on each, and judges the
//! kill ([`judge`]): a check the mutant targets turns fail, crash or timeout where the clean
//! baseline's result at the same place had no finding (a warning kills only through a
//! SHOULD-level target). It prints the score and writes the kill matrix ([`matrix`]) to
//! `OUT/kill-matrix.md`. With `--matrix FILE` (the committed matrix) the run judges every
//! mutant and every check: the exit code is 1 when a mutant or a check has no targeted kill
//! and `--owed FILE` does not list it with a reason, when a listed one has its kill now, or
//! when the matrix differs from FILE (`--bless` rewrites FILE instead).

mod judge;
mod matrix;
mod runtime;
mod stage;

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: ompd-mutants --runner EXE --forwarder SO --inner SO --inner-60 SO --forwarder-tr SO --inner-tr SO --out DIR [--vendor-cache DIR] [--quick] [--only NAME].. [--matrix FILE --owed FILE [--bless]]";

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
    /// The committed kill matrix a full run compares with (or rewrites, with `bless`).
    matrix: Option<PathBuf>,
    /// The ledger of what has no targeted kill yet.
    owed: Option<PathBuf>,
    bless: bool,
}

fn parse() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let (mut runner, mut forwarder, mut inner, mut out) = (None, None, None, None);
    let (mut forwarder_tr, mut inner_tr, mut inner_60) = (None, None, None);
    let (mut quick, mut only, mut vendor_cache) = (false, Vec::new(), None);
    let (mut matrix, mut owed, mut bless) = (None, None, false);
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
            "--matrix" => matrix = Some(PathBuf::from(value()?)),
            "--owed" => owed = Some(PathBuf::from(value()?)),
            "--bless" => bless = true,
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
        matrix,
        owed,
        bless,
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
    if let Some(bad) = args
        .only
        .iter()
        .find(|n| ompd_mutants::table::find(n).is_none())
    {
        eprintln!("ompd-mutants: error: no mutant is called {bad}");
        return ExitCode::from(2);
    }
    match judge_and_write(&args) {
        Ok(problems) if problems.is_empty() => ExitCode::SUCCESS,
        Ok(problems) => {
            for p in &problems {
                eprintln!("ompd-mutants: {p}");
            }
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("ompd-mutants: error: {e}");
            ExitCode::from(2)
        }
    }
}

/// Runs the kit, writes the matrix and returns what is wrong with the kill (empty: nothing).
fn judge_and_write(args: &Args) -> Result<Vec<String>, String> {
    let chosen = stage::chosen(args.quick, &args.only);
    let full = args.matrix.is_some() && !args.quick && args.only.is_empty();
    let owed = match &args.owed {
        Some(p) => matrix::Owed::parse(&read(p)?)?,
        None => matrix::Owed::default(),
    };
    let rows = judge::run(args, &chosen)?;
    let all = ompd_checks::registry()
        .iter()
        .map(|c| c.id.to_string())
        .collect();
    let text = matrix::render(&rows, &all, &owed);
    let out = args.out.join("kill-matrix.md");
    std::fs::write(&out, &text).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    print!("{}", matrix::summary(&rows, &all));
    println!("kill matrix: {}", out.display());
    let mut problems = matrix::unowed(&rows, &all, &owed, full);
    if let (true, Some(committed)) = (full, &args.matrix) {
        if args.bless {
            std::fs::write(committed, &text)
                .map_err(|e| format!("cannot write {}: {e}", committed.display()))?;
        } else if read(committed).ok().as_deref() != Some(text.as_str()) {
            problems.push(format!(
                "the kill matrix differs from {} (compare it with {}; cargo xtask mutants --bless records it)",
                committed.display(),
                out.display()
            ));
        }
    }
    Ok(problems)
}

fn read(p: &std::path::Path) -> Result<String, String> {
    std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
}
