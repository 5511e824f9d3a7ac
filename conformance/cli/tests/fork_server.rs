//! The fork server keeps isolation as strong as executed workers: a run forked from zygotes
//! judges exactly as one with a process executed per worker, and killing the supervisor ends
//! its zygotes and their workers. A crashing worker never dumps core.

use ompd_report::Report;
use ompd_vendors as vendors;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn fetched(name: &str) {
    vendors::fetch(&vendors::default_cache_dir(), &[name], false, &mut |_| {})
        .expect("vendor library fetches");
}

/// A `--cases 0` run of llvm-19 with workers started `spawn`'s way.
fn run(spawn: &str) -> Report {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let status = Command::new(env!("CARGO_BIN_EXE_ompd-conform"))
        .args([
            "run", "llvm-19", "--cases", "0", "--quiet", "--spawn", spawn,
        ])
        .args(["--format", "json", "--output"])
        .arg(&out)
        .stdout(Stdio::null())
        .status()
        .expect("ompd-conform runs");
    assert!(matches!(status.code(), Some(0 | 100)), "{status}");
    serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap()
}

#[test]
fn forked_and_executed_workers_judge_alike() {
    fetched("llvm-19");
    let key = |r: &Report| -> Vec<(String, String, String)> {
        let mut v: Vec<_> = r
            .results
            .iter()
            .map(|x| (x.check.clone(), x.place(), x.outcome.as_str().to_string()))
            .collect();
        v.sort();
        v
    };
    let (forked, executed) = (run("fork"), run("exec"));
    assert!(forked.results.len() > 1000);
    assert_eq!(key(&forked), key(&executed));
}

/// The processes whose parent is `pid`, with their command lines.
fn children(pid: u32) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
        let ppid = stat
            .rsplit(") ")
            .next()
            .and_then(|rest| rest.split_whitespace().nth(1))
            .and_then(|s| s.parse::<u32>().ok());
        if ppid == Some(pid) {
            let cmd = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            found.push((p, String::from_utf8_lossy(&cmd).replace('\0', " ")));
        }
    }
    found
}

/// Whether `pid` still runs (a zombie has ended).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.rsplit(") ").next().unwrap_or("").starts_with('Z'))
        .unwrap_or(false)
}

#[test]
fn killing_the_supervisor_ends_its_zygotes_and_their_workers() {
    fetched("llvm-19");
    let mut sup = Command::new(env!("CARGO_BIN_EXE_ompd-conform"))
        .args([
            "run",
            "llvm-19",
            "--quiet",
            "--format",
            "json",
            "--output",
            "/dev/null",
        ])
        .stdout(Stdio::null())
        .spawn()
        .expect("ompd-conform starts");
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut family = Vec::new();
    while family.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        for (z, cmd) in children(sup.id()) {
            if cmd.contains(ompd_engine::host::Entry::Zygote.arg()) {
                family.push(z);
                family.extend(children(z).into_iter().map(|(w, _)| w));
            }
        }
    }
    assert!(!family.is_empty(), "the run started a zygote");
    sup.kill().unwrap();
    sup.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while family.iter().any(|p| alive(*p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<_> = family.iter().filter(|p| alive(**p)).collect();
    assert!(
        left.is_empty(),
        "still running after the supervisor died: {left:?}"
    );
}

/// The kernel's core file name when it is a plain file in the crashing process's directory
/// (`core`, `core.%p`); `None` when cores go elsewhere (a path or a pipe to a service).
fn core_file_prefix() -> Option<String> {
    let pattern = std::fs::read_to_string("/proc/sys/kernel/core_pattern").ok()?;
    let pattern = pattern.trim();
    let plain = !pattern.is_empty() && !pattern.starts_with('|') && !pattern.contains('/');
    plain.then(|| pattern.split('%').next().unwrap_or_default().to_string())
}

#[test]
fn crashing_workers_leave_no_core_files_whatever_the_users_limit() {
    let Some(prefix) = core_file_prefix() else {
        eprintln!("skipped: core files do not go to the crashing process's directory here");
        return;
    };
    fetched("intel-2020.0");
    for spawn in ["fork", "exec"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r.json");
        // The largest limit the user may set, as `ulimit -c unlimited` would where allowed.
        let script = r#"ulimit -c "$(ulimit -H -c)" && exec "$@""#;
        let status = Command::new("bash")
            .args(["-c", script, "bash", env!("CARGO_BIN_EXE_ompd-conform")])
            .args([
                "run",
                "intel-2020.0",
                "--cases",
                "0",
                "--scenario",
                "serial",
            ])
            .args(["--check", "null.*", "--quiet", "--spawn", spawn])
            .args(["--format", "json", "--output"])
            .arg(&out)
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .status()
            .expect("ompd-conform runs");
        assert!(matches!(status.code(), Some(0 | 100)), "{status}");
        let report: Report = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        let crashes = report
            .results
            .iter()
            .filter(|r| r.outcome == ompd_report::Outcome::Crash)
            .count();
        assert!(
            crashes > 0,
            "{spawn}: no worker crashed, so nothing was shown"
        );
        let cores: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.starts_with(&prefix))
            .collect();
        assert!(cores.is_empty(), "{spawn}: core files {cores:?}");
    }
}
