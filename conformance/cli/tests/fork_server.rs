//! The fork server keeps isolation as strong as executed workers: a run forked from zygotes
//! judges exactly as one with a process executed per worker, and killing the supervisor ends
//! its zygotes and their workers. A crashing worker never dumps core. The library copies a
//! zygote stocks are shared by its workers, and every instance loaded from one starts never
//! initialized.

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

/// The bench's empty OMPD library, linked `-z nodelete` (so every unit of a worker after its
/// first loads a fresh copy), recording each load in `marker`: its process, the file it was
/// loaded from (device and inode) and whether its data was as the file has it.
fn load_recording_library(dir: &std::path::Path, marker: &std::path::Path) -> std::path::PathBuf {
    let source = format!(
        "#define _GNU_SOURCE\n\
         #include <dlfcn.h>\n#include <stdio.h>\n#include <sys/stat.h>\n#include <unistd.h>\n\
         static int initialized;\n\
         #define ON_INITIALIZE initialized = 1;\n\
         {}\n\
         __attribute__((constructor)) static void at_load(void) {{\n\
           Dl_info info; struct stat st; FILE *f;\n\
           if (!dladdr((void *)at_load, &info) || stat(info.dli_fname, &st) != 0) return;\n\
           if (!(f = fopen(\"{}\", \"a\"))) return;\n\
           fprintf(f, \"%d %lu:%lu %s\\n\", (int)getpid(), (unsigned long)st.st_dev,\n\
                   (unsigned long)st.st_ino, initialized ? \"initialized\" : \"fresh\");\n\
           fclose(f);\n\
         }}\n",
        include_str!("../../engine/c/empty_ompd.c"),
        marker.display()
    );
    let c = dir.join("recording.c");
    std::fs::write(&c, source).unwrap();
    let lib = dir.join("librecording.so");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = Command::new(cc)
        .args(["-shared", "-fPIC", "-O1", "-Wl,-z,nodelete", "-o"])
        .arg(&lib)
        .arg(&c)
        .status()
        .expect("a C compiler runs");
    assert!(built.success(), "the recording library builds");
    lib
}

/// Workers forked by one zygote load their fresh instances from the copies it stocked, shared
/// between workers (the same file in several processes), each copy once a worker, and every
/// instance starts from the library as its file has it, never initialized.
#[test]
fn forked_workers_share_the_zygote_s_copies_and_each_instance_starts_never_initialized() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("loads");
    let lib = load_recording_library(dir.path(), &marker);
    let out = dir.path().join("r.json");
    let status = Command::new(env!("CARGO_BIN_EXE_ompd-conform"))
        .arg("run")
        .arg(&lib)
        .args([
            "--scenario",
            "serial",
            "--cases",
            "0",
            "--jobs",
            "1",
            "--quiet",
        ])
        // Checks the empty library passes: a crash would end a worker's batch of units.
        .args(["--check", "aspace.process_initialize.compatible_target"])
        .args(["--check", "aspace.release.ok"])
        .args(["--format", "json", "--output"])
        .arg(&out)
        .stdout(Stdio::null())
        .status()
        .expect("ompd-conform runs");
    assert_eq!(status.code(), Some(0), "every check passes");
    let loads = std::fs::read_to_string(&marker).unwrap();
    let loads: Vec<(&str, &str, &str)> = loads
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f[0], f[1], f[2])
        })
        .collect();
    assert!(
        loads.iter().all(|(_, _, state)| *state == "fresh"),
        "{loads:?}"
    );
    use std::collections::{BTreeMap, BTreeSet};
    let mut processes_of: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut per_process: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (pid, file, _) in &loads {
        processes_of.entry(file).or_default().insert(pid);
        per_process.entry(pid).or_default().push(file);
    }
    for files in per_process.values() {
        let distinct: BTreeSet<_> = files.iter().collect();
        assert_eq!(
            distinct.len(),
            files.len(),
            "each copy once a process: {loads:?}"
        );
    }
    // The first unit of each worker loads the file itself; later ones a copy.
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(&lib).unwrap();
    let original = format!("{}:{}", meta.dev(), meta.ino());
    let shared = processes_of
        .iter()
        .filter(|(file, pids)| **file != original && pids.len() >= 2)
        .count();
    assert!(shared > 0, "a copy shared by workers: {loads:?}");
}
