//! A run split with `--shard K/N` and joined with `merge` is the unsharded run: the same results
//! in the same order, the same gate, JUnit and HTML. A set of shard reports that is not one whole
//! run is refused in one line.

use ompd_vendors as vendors;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn conform(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ompd-conform"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("ompd-conform runs")
}

/// The run under test: llvm-19, simulated units and a short property phase.
const RUN: [&str; 5] = ["run", "llvm-19", "--cases", "16", "--quiet"];

fn outputs(prefix: &str) -> [String; 8] {
    [
        "--format".into(),
        "json".into(),
        "--output".into(),
        format!("{prefix}.json"),
        "--junit".into(),
        format!("{prefix}.xml"),
        "--html".into(),
        format!("{prefix}.html"),
    ]
}

fn as_str(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// A scratch directory for a test's reports, with llvm-19 fetched.
fn scratch() -> tempfile::TempDir {
    vendors::fetch(
        &vendors::default_cache_dir(),
        &["llvm-19"],
        false,
        &mut |_| {},
    )
    .unwrap();
    tempfile::tempdir().unwrap()
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

#[test]
fn merged_shards_are_the_unsharded_run() {
    let dir = scratch();
    let d = dir.path();
    let args = |extra: &[String]| -> Vec<String> {
        RUN.iter()
            .map(|s| s.to_string())
            .chain(extra.iter().cloned())
            .collect()
    };
    let full = conform(&as_str(&args(&outputs("full"))), d);
    let mut shard_files = Vec::new();
    for k in 1..=3 {
        let mut a = args(&[format!("--shard={k}/3"), "--format=json".into()]);
        a.extend(["--output".into(), format!("s{k}.json")]);
        let out = conform(&as_str(&a), d);
        assert!(matches!(out.status.code(), Some(0 | 100)), "{out:?}");
        shard_files.push(format!("s{k}.json"));
    }
    let mut m = vec!["merge".to_string(), "--quiet".into()];
    m.extend(shard_files.iter().rev().cloned());
    m.extend(outputs("merged"));
    let merged = conform(&as_str(&m), d);
    assert_eq!(merged.status.code(), full.status.code(), "{merged:?}");
    let json = |n: &str| -> serde_json::Value { serde_json::from_str(&read(d, n)).unwrap() };
    let (a, b) = (json("full.json"), json("merged.json"));
    assert!(a["results"].as_array().unwrap().len() > 1000);
    assert_eq!(
        a["results"], b["results"],
        "results, their order and gate marks"
    );
    assert_eq!(a["libraries"], b["libraries"]);
    assert_eq!(a["summary"], b["summary"]);
    assert!(b.get("shard").is_none());
    assert_eq!(read(d, "full.xml"), read(d, "merged.xml"), "JUnit");
    assert_eq!(read(d, "full.html"), read(d, "merged.html"), "HTML");
    let shard: serde_json::Value = json("s2.json");
    assert_eq!(shard["shard"]["index"], 1);
    assert_eq!(shard["shard"]["count"], 3);
}

#[test]
fn a_set_that_is_not_one_whole_run_is_refused_in_one_line() {
    let dir = scratch();
    let d = dir.path();
    let run = |extra: &[&str], out: &str| {
        let mut a = vec![
            "run", "llvm-19", "--cases", "0", "--quiet", "--check", "lib.*",
        ];
        a.extend(extra);
        a.extend(["--format", "json", "--output", out]);
        conform(&a, d)
    };
    run(&["--shard", "1/2"], "s1.json");
    run(&[], "whole.json");
    std::fs::write(d.join("junk.json"), "{").unwrap();
    for (inputs, code, says) in [
        (vec!["s1.json"], 2, "shard 2/2 is missing"),
        (vec!["s1.json", "s1.json"], 2, "given twice"),
        (vec!["whole.json"], 2, "no shard report"),
        (vec!["junk.json"], 2, "junk.json"),
        (vec!["gone.json"], 1, "gone.json"),
    ] {
        let mut a = vec!["merge"];
        a.extend(inputs);
        let out = conform(&a, d);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(says), "{err}");
    }
    for bad in [&["--shard", "0/2"][..], &["--shard", "1/2", "--bless"]] {
        let out = run(bad, "x.json");
        assert_eq!(out.status.code(), Some(2), "{out:?}");
    }
}
