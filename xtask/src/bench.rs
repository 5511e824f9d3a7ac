//! `cargo xtask bench`: per fetched vendor library, the library instances, checks and wall time of a
//! default run, its run with the property phase, and the instance and check rates of the hidden
//! `__bench` process; then the whole default run, the speed targets judged on them ([`targets`]),
//! and the phase, traffic and scaling tables. It prints the library and target tables and writes
//! them, with the others, to `target/bench/` (Markdown, which `cargo xtask docs` writes into
//! `docs/figures.md`).

mod targets;

use super::{run, runner, target_dir};
use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// `cargo xtask bench`: per fetched vendor library, the library instances, checks and wall time of a
/// default run, and the instance and check rates of the hidden `__bench` process.
pub fn bench() -> i32 {
    let exe = match runner() {
        Ok(e) => e,
        Err(code) => return code,
    };
    let names = match fetched_vendors(&exe) {
        Ok(n) => n,
        Err(code) => return code,
    };
    let dir = target_dir().join("bench");
    let _ = std::fs::create_dir_all(&dir);
    let mut table = Table::new();
    for name in &names {
        match bench_library(&exe, name, &dir) {
            Ok((row, figures)) => table.row(row, figures),
            Err(e) => {
                eprintln!("xtask bench: {e}");
                return 1;
            }
        }
    }
    // The whole default run: every vendor and reference build, the gate included.
    let whole = with_phases(&dir.join("default.phases.json"));
    let printed = dir.join("default.out.txt");
    match timed_to(&exe, "", &whole, &dir.join("default.json"), Some(&printed)) {
        Some(secs) => table.whole(secs),
        None => {
            eprintln!("xtask bench: the whole default run failed");
            return 1;
        }
    }
    if let Err(e) = table.write(&dir.join("libraries.md")) {
        eprintln!("xtask bench: {e}");
        return 1;
    }
    if let Err(e) = table.write_targets(&dir.join("targets.md")) {
        eprintln!("xtask bench: {e}");
        return 1;
    }
    // The traffic and scaling tables and the scaling plot, from the saved figures.
    let mut report = Command::new(&exe);
    report.arg("__bench-report").arg(&dir).args(&names);
    let code = run(report);
    if code == 0 {
        println!(
            "\nphases: {}\ntraffic per entry point: {}\nscaling plot: {}",
            dir.join("phases.md").display(),
            dir.join("traffic.md").display(),
            dir.join("scaling.svg").display()
        );
    }
    code
}

/// The columns of the library table: name, then the figures of [`bench_library`].
const COLUMNS: [&str; 12] = [
    "library",
    "instances",
    "results",
    "scenarios: wall s",
    "exec inst/s",
    "fork inst/s",
    "floor inst/s",
    "results/s",
    "with the property phase: wall s",
    "property phase: wall s",
    "isolated checks/s",
    "in-process checks/s",
];

/// The library table: printed a line at a time, written as Markdown at the end, with the targets
/// its figures are judged by.
struct Table {
    rows: Vec<[String; 12]>,
    figures: Vec<targets::Figures>,
    whole: Option<f64>,
}

impl Table {
    /// The table with its header printed.
    fn new() -> Table {
        println!("{}", COLUMNS.join(" | "));
        Table {
            rows: Vec::new(),
            figures: Vec::new(),
            whole: None,
        }
    }

    /// Adds and prints a library's row, and keeps the figures the targets judge.
    fn row(&mut self, row: [String; 12], figures: targets::Figures) {
        println!("{}", row.join(" | "));
        self.rows.push(row);
        self.figures.push(figures);
    }

    /// Prints the targets table and writes it to `path` (after the whole run).
    fn write_targets(&self, path: &Path) -> Result<(), String> {
        let md = targets::table(&self.figures, self.whole.unwrap_or(f64::NAN));
        println!("\ntargets:\n{md}");
        std::fs::write(path, md).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// Records and prints the whole default run's wall time.
    fn whole(&mut self, secs: f64) {
        println!("\nwhole default run (every library, gate included): {secs:.1} s");
        self.whole = Some(secs);
    }

    /// Writes the table as Markdown, the whole run's line after it.
    fn write(&self, path: &Path) -> Result<(), String> {
        let mut md = format!(
            "| {} |\n|{}\n",
            COLUMNS.join(" | "),
            "---|".repeat(COLUMNS.len())
        );
        for r in &self.rows {
            md.push_str(&format!("| {} |\n", r.join(" | ")));
        }
        if let Some(secs) = self.whole {
            md.push_str(&format!(
                "\nThe whole default run (every library, gate included): **{secs:.1} s** wall.\n"
            ));
        }
        std::fs::write(path, md).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

/// One library's row of the bench table: its full default run (scenarios, then the property
/// phase over generated cases, with where its time went), its scenario units alone (per-instance
/// and per-check rates) and the `__bench` figures.
fn bench_library(
    exe: &Path,
    name: &str,
    dir: &Path,
) -> Result<([String; 12], targets::Figures), String> {
    let phases = with_phases(&dir.join(format!("{name}.phases.json")));
    let full = timed(exe, name, &phases, &dir.join(format!("{name}-full.json")))
        .ok_or_else(|| format!("the run on {name} failed"))?;
    let out = dir.join(format!("{name}.json"));
    let secs = timed(exe, name, &["--cases", "0"], &out)
        .ok_or_else(|| format!("the run on {name} failed"))?;
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    let results = text.matches("\"check\":").count();
    let instances = instances_of(&text);
    let f = bench_figures(exe, name, dir).ok_or_else(|| format!("measuring {name} failed"))?;
    let rate = |k: &str| format!("{:.0}", figure(&f, k));
    let figures = targets::Figures {
        name: name.to_string(),
        fork: figure(&f, "fork_instances_per_s"),
        floor: figure(&f, "floor_instances_per_s"),
        property: full - secs,
    };
    let row = [
        name.to_string(),
        instances.to_string(),
        results.to_string(),
        format!("{secs:.2}"),
        rate("exec_instances_per_s"),
        rate("fork_instances_per_s"),
        rate("floor_instances_per_s"),
        format!("{:.0}", results as f64 / secs),
        format!("{full:.1}"),
        format!("{:.1}", figures.property),
        rate("isolated_checks_per_s"),
        rate("in_process_checks_per_s"),
    ];
    Ok((row, figures))
}

/// The run arguments that write its phase breakdown to `path`.
fn with_phases(path: &Path) -> [String; 2] {
    ["--phases".into(), path.display().to_string()]
}

/// The names of the fetched vendor libraries (none is an error).
fn fetched_vendors(exe: &Path) -> Result<Vec<String>, i32> {
    let list = match Command::new(exe).args(["vendors", "list"]).output() {
        Ok(o) => String::from_utf8_lossy(&o.stdout).into_owned(),
        Err(e) => {
            eprintln!("xtask: error: {e}");
            return Err(1);
        }
    };
    let names: Vec<String> = list
        .lines()
        .filter(|l| !l.contains("(not fetched)") && !l.contains("(missing)"))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    if names.is_empty() {
        eprintln!("xtask bench: no vendor library fetched; run `cargo xtask vendors fetch`");
        return Err(1);
    }
    Ok(names)
}

/// Times `ompd-conform run NAME EXTRA..` (every library when `name` is empty); None when the
/// run failed.
fn timed(exe: &Path, name: &str, extra: &[impl AsRef<OsStr>], out: &Path) -> Option<f64> {
    timed_to(exe, name, extra, out, None)
}

/// [`timed`], keeping what the run prints in `printed` (its summary, which `cargo xtask docs`
/// writes into `docs/output.md`).
fn timed_to(
    exe: &Path,
    name: &str,
    extra: &[impl AsRef<OsStr>],
    out: &Path,
    printed: Option<&Path>,
) -> Option<f64> {
    let stdout = match printed.map(std::fs::File::create) {
        Some(Ok(f)) => std::process::Stdio::from(f),
        Some(Err(_)) => return None,
        None => std::process::Stdio::null(),
    };
    let start = Instant::now();
    let status = Command::new(exe)
        .arg("run")
        .args(Some(name).filter(|n| !n.is_empty()))
        .args(["--quiet", "--format", "json", "--output"])
        .arg(out)
        .args(extra)
        .stdout(stdout)
        .status();
    let secs = start.elapsed().as_secs_f64();
    matches!(status.map(|s| s.code()), Ok(Some(0 | 100))).then_some(secs)
}

/// The worker processes a JSON report's run started.
fn instances_of(text: &str) -> usize {
    // One fresh library instance per unit (scenario x arch x layout, plus the lifecycle unit),
    // in a worker of its batch.
    let mut units = std::collections::BTreeSet::new();
    for chunk in text.split("\"scenario\": \"").skip(1) {
        let s: String = chunk.chars().take_while(|c| *c != '"').collect();
        let a = chunk
            .split("\"arch\": \"")
            .nth(1)
            .map(|x| x.chars().take_while(|c| *c != '"').collect::<String>());
        let l = chunk
            .split("\"layout\": \"")
            .nth(1)
            .map(|x| x.chars().take_while(|c| *c != '"').collect::<String>());
        units.insert((s, a, l));
    }
    // A crash or timeout ends a worker; the unit's remaining checks run in a new instance, and
    // a crashed check is re-run alone in one more.
    units.len()
        + 2 * text.matches("\"outcome\": \"crash\"").count()
        + text.matches("\"outcome\": \"timeout\"").count()
}

/// The figures line of `ompd-conform __bench NAME`: one unit's checks with a worker per run and
/// in one process, and bare fresh instances (load + initialize + process initialize) per second.
fn bench_figures(exe: &Path, name: &str, dir: &Path) -> Option<String> {
    Command::new(exe)
        .args(["__bench", name, "--save"])
        .arg(dir.join(format!("{name}.bench.json")))
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| {
            let text = String::from_utf8_lossy(&o.stdout).into_owned();
            text.lines().last().map(str::to_string)
        })
}

/// One figure of the figures line, flat JSON of numbers (`"key":value`); NaN when absent.
fn figure(f: &str, k: &str) -> f64 {
    f.split(&format!("\"{k}\":"))
        .nth(1)
        .and_then(|v| v.split([',', '}']).next())
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(f64::NAN)
}
