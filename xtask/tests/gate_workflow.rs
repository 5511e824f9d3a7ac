//! The reusable gate workflow's own steps, run here for four shards: each shard job's "Run this
//! shard" script, then the merge job's "Merge and judge the whole run" script, as GitHub Actions
//! would run them (bash, the step's environment, the suite checked out under `.ompd-suite`). The
//! merged report is the unsharded run's: the same results in the same order, the same summary.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workflow under test.
const WORKFLOW: &str = include_str!("../../.github/workflows/ompd-gate.yml");

/// Shards, as a user who outgrows one machine would ask for.
const SHARDS: usize = 4;

/// Generated cases per shard run (the property phase is split too; a few keep the test short).
const CASES: &str = "16";

/// The `run:` script of the step named `name`, dedented.
fn step_script(name: &str) -> String {
    let lines: Vec<&str> = WORKFLOW.lines().collect();
    let step = lines
        .iter()
        .position(|l| l.trim() == format!("- name: {name}"))
        .unwrap_or_else(|| panic!("no step named {name:?}"));
    let run = (step..lines.len())
        .find(|&i| lines[i].trim() == "run: |")
        .expect("the step has a run block");
    let indent = |l: &str| l.len() - l.trim_start().len();
    let outer = indent(lines[run]);
    let body: Vec<&str> = lines[run + 1..]
        .iter()
        .take_while(|l| l.trim().is_empty() || indent(l) > outer)
        .copied()
        .collect();
    let inner = body
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent(l))
        .min();
    let inner = inner.expect("a non-empty run block");
    body.iter()
        .map(|l| l.get(inner..).unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs `script` with bash in `workspace` with `env`, as the step would.
fn run_step(script: &str, workspace: &Path, env: &[(&str, String)]) {
    let out = Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(workspace)
        .env("GITHUB_WORKSPACE", workspace)
        .env("GITHUB_STEP_SUMMARY", workspace.join("summary.md"))
        .env("GITHUB_OUTPUT", workspace.join("output.txt"))
        .envs(env.iter().map(|(k, v)| (*k, v)))
        .output()
        .expect("bash runs");
    assert!(out.status.success(), "the step failed: {out:?}");
}

fn suite_root() -> PathBuf {
    ompd_vendors::workspace_root()
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn four_shards_of_the_workflow_merge_into_the_unsharded_run() {
    let ws = tempfile::tempdir().unwrap();
    let w = ws.path();
    std::os::unix::fs::symlink(suite_root(), w.join(".ompd-suite")).unwrap();
    let shard = step_script("Run this shard");
    for k in 1..=SHARDS {
        let env = [
            ("LIBRARY", "llvm-19".to_string()),
            ("EXPECTATIONS", String::new()),
            ("CASES", CASES.to_string()),
            ("SHARD", format!("{k}/{SHARDS}")),
            ("K", k.to_string()),
        ];
        run_step(&shard, w, &env);
    }
    run_step(
        &step_script("Merge and judge the whole run"),
        w,
        &[("EXPECTATIONS", String::new())],
    );
    let output = std::fs::read_to_string(w.join("output.txt")).unwrap();
    assert!(output.contains("json=ompd-reports/report.json"), "{output}");
    let whole = w.join("whole.json");
    let status = Command::new("cargo")
        .args(["xtask", "conform", "llvm-19", "--cases", CASES, "--quiet"])
        .args(["--format", "json", "--output"])
        .arg(&whole)
        .current_dir(suite_root())
        .output()
        .unwrap()
        .status;
    assert!(matches!(status.code(), Some(0 | 100)), "{status:?}");
    let (a, b) = (json(&whole), json(&w.join("ompd-reports/report.json")));
    assert!(a["results"].as_array().unwrap().len() > 1000);
    assert_eq!(
        a["results"], b["results"],
        "results, their order and gate marks"
    );
    assert_eq!(a["summary"], b["summary"]);
    let merged_code = output.lines().find_map(|l| l.strip_prefix("exit-code="));
    assert_eq!(merged_code, status.code().map(|c| c.to_string()).as_deref());
}

#[test]
fn a_step_script_is_read_whole_and_dedented() {
    let s = step_script("Run this shard");
    assert!(s.starts_with("set -u\n"), "{s}");
    assert!(s.contains("cargo xtask \"${args[@]}\""), "{s}");
    assert!(
        !s.contains("- name: Upload"),
        "stops at the step's end: {s}"
    );
}
