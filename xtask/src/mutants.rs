//! `cargo xtask mutants`: the mutation kit. Builds the runner, the reference library (the
//! default inner library: it passes every check, so every check can show a kill) and the
//! forwarder, then runs the kit's driver (`ompd-mutants`), which stages one forwarder per
//! mutant, runs the suite on each and prints the kill matrix and the score.

use super::{cargo_build, out_dir, run, target_dir};
use std::process::Command;

/// `cargo xtask mutants [--base SO] [--quick] [--only NAME].. [--bless]` (`--base`: the inner
/// library of the 5.2 mutants; the TR mutants wrap the reference's TR build). Around the
/// reference, a full run is judged against the committed `c-fixtures/mutants/kill-matrix.md` and the
/// ledger `c-fixtures/mutants/owed.tsv` (`--bless` rewrites the matrix). The exit code is the
/// driver's: 0 only when every mutant run, and on a full run every check, has a targeted kill
/// or an owed entry, and the matrix is the committed one.
pub fn mutants(args: &[String]) -> i32 {
    // The runner and the reference builds (the inner libraries), then the kit.
    let runner = match super::runner() {
        Ok(r) => r,
        Err(code) => return code,
    };
    let mut kit = cargo_build();
    for p in ["ompd-mutants-52", "ompd-mutants-tr2", "ompd-mutants-kit"] {
        kit.args(["-p", p]);
    }
    let code = run(kit);
    if code != 0 {
        return code;
    }
    let built = out_dir();
    let mut base = None;
    let mut rest = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match (a.as_str(), it.clone().next()) {
            ("--base", Some(path)) => {
                base = Some(std::path::PathBuf::from(path));
                it.next();
            }
            _ => rest.push(a.clone()),
        }
    }
    // Around the reference, the run is judged against the committed matrix and ledger.
    if base.is_none() {
        let kit = super::root().join("c-fixtures/mutants");
        rest.extend([
            "--matrix".into(),
            kit.join("kill-matrix.md").display().to_string(),
        ]);
        rest.extend(["--owed".into(), kit.join("owed.tsv").display().to_string()]);
    }
    let base = base.unwrap_or_else(|| built.join("libompd_reference_52.so"));
    let mut driver = Command::new(built.join("ompd-mutants"));
    driver
        .arg("--runner")
        .arg(runner)
        .arg("--forwarder")
        .arg(built.join("libompd_mutants_52.so"))
        .arg("--inner")
        .arg(base)
        .arg("--inner-60")
        .arg(built.join("libompd_reference_60.so"))
        .arg("--forwarder-tr")
        .arg(built.join("libompd_mutants_tr2.so"))
        .arg("--inner-tr")
        .arg(built.join("libompd_reference_tr2.so"))
        .arg("--out")
        .arg(target_dir().join("ompd-mutants"))
        .args(rest);
    run(driver)
}
