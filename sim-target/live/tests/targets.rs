//! Live processes and core files of the `c/probe.c` fixture (built by [`probe_exe`] on first use)
//! against the
//! truth its threads recorded: thread ids, `fs_base` = `pthread_self()`, the LOCAL global, the
//! per-thread address of a LOCAL thread-local variable. Also: the fixture never outlives a
//! harness that is killed, and a damaged core is an error, never a panic.
//!
//! Live targets and gcore need ptrace. Where it is not permitted, the tests print why and
//! return, except under CI (`CI` set), where they fail.

use live_target::elf::{ThreadDbDesc, THREAD_DB_DTVP};
use live_target::modules::Modules;
use live_target::spawn::{gcore, kernel_core, ptrace_permitted, Running, SpawnError};
use live_target::{CoreTarget, LiveTarget, Thread};
use ompd_abi::thread_id_kind::{LWP, PTHREAD};
use ompd_serve::source::{Source, SymbolError, TargetKind};
use std::io::{BufRead, BufReader};
use std::os::unix::fs::FileExt;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The test fixture `c/probe.c` (plain pthreads, no OpenMP), linked (with an rpath) against
/// `c/probe_lib.c` built as `libprobe_lib.so`, compiled on first use into this test's
/// `CARGO_TARGET_TMPDIR` with the host C compiler (`$CC`, else `cc`). Built here rather than by
/// a build script: live-target is a dependency of the runner, whose build compiles no C. Built
/// with `-g` and unstripped: the tests look up LOCAL and thread-local symbols in `.symtab`.
fn probe_exe() -> &'static str {
    static EXE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    EXE.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("c");
        let out = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("live-probe-{}", std::process::id()));
        std::fs::create_dir_all(&out).expect("create the probe's build directory");
        let cc = std::env::var("CC").ok().filter(|c| !c.is_empty());
        let compile = |args: &[&std::ffi::OsStr]| {
            let mut cmd = Command::new(cc.as_deref().unwrap_or("cc"));
            cmd.args([
                "-std=gnu11",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pthread",
                "-O1",
                "-g",
            ])
            .args(args);
            let o = cmd.output().unwrap_or_else(|e| {
                panic!("cannot run the C compiler ({cmd:?}; Debian: gcc): {e}")
            });
            assert!(
                o.status.success(),
                "compiling failed ({cmd:?}):\n{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
        };
        let lib = out.join("libprobe_lib.so");
        compile(&[
            "-shared".as_ref(),
            "-fPIC".as_ref(),
            src.join("probe_lib.c").as_os_str(),
            "-o".as_ref(),
            lib.as_os_str(),
        ]);
        let exe = out.join("live_probe");
        let rpath = format!("-Wl,-rpath,{}", out.display());
        let libdir = format!("-L{}", out.display());
        compile(&[
            src.join("probe.c").as_os_str(),
            libdir.as_ref(),
            "-lprobe_lib".as_ref(),
            rpath.as_ref(),
            "-o".as_ref(),
            exe.as_os_str(),
        ]);
        exe.display().to_string()
    })
}
/// `PROBE_MARKER` of `c/probe.c`.
const MARKER: u64 = 0x5eed_0f5c_a1ab_1e00;
/// Worker threads the tests start (plus the main thread).
const WORKERS: usize = 3;
/// Set in the child process of [`fixture_dies_with_a_killed_harness`].
const CHILD_ENV: &str = "LIVE_TARGET_HARNESS_CHILD";

/// Whether ptrace may be used; prints why not, and fails under CI.
fn ptrace_or_skip(test: &str) -> bool {
    match ptrace_permitted() {
        Ok(()) => true,
        Err(reason) if std::env::var_os("CI").is_some() => {
            panic!("{test}: ptrace is not permitted under CI: {reason}")
        }
        Err(reason) => {
            eprintln!("{test}: SKIPPED, ptrace is not permitted here: {reason}");
            false
        }
    }
}

fn start_probe(dir: Option<&Path>) -> Running {
    let mut cmd = Command::new(probe_exe());
    cmd.arg(WORKERS.to_string());
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    Running::start(cmd).expect("the probe fixture starts")
}

/// One thread's record in `probe_truth`.
#[derive(Debug)]
struct Record {
    tid: u64,
    pthread: u64,
    tls_addr: u64,
    tls_value: u64,
    lib_tls_addr: u64,
    lib_tls_value: u64,
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// The fixture's recorded truth, read through the target itself.
fn truth(src: &dyn Source) -> Vec<Record> {
    let count_at = src.symbol("probe_count", None).expect("probe_count");
    let count = u32::from_le_bytes(src.read(count_at, 4).unwrap().try_into().unwrap()) as usize;
    assert_eq!(count, WORKERS + 1);
    let at = src.symbol("probe_truth", None).expect("probe_truth");
    let bytes = src
        .read(at, 48 * count as u64)
        .expect("reading probe_truth");
    (0..count)
        .map(|i| Record {
            tid: u64_at(&bytes, 48 * i),
            pthread: u64_at(&bytes, 48 * i + 8),
            tls_addr: u64_at(&bytes, 48 * i + 16),
            tls_value: u64_at(&bytes, 48 * i + 24),
            lib_tls_addr: u64_at(&bytes, 48 * i + 32),
            lib_tls_value: u64_at(&bytes, 48 * i + 40),
        })
        .collect()
}

/// What the target's memory holds of its modules' files: each module's ELF header at its
/// start, and glibc's `_thread_db_*` descriptors (read-only file pages, which gcore omits and
/// a kernel core does not dump) equal to the file's.
fn check_modules(src: &dyn Source, modules: &Modules) {
    // The program, libprobe_lib.so, libc and ld.so at least.
    assert!(modules.list().len() >= 4, "{:?}", modules.list());
    assert!(modules
        .list()
        .iter()
        .any(|m| m.path.ends_with("libprobe_lib.so")));
    for m in modules.list() {
        assert_eq!(src.read(m.start, 4).unwrap(), b"\x7fELF", "{m:?}");
    }
    let db = modules.thread_db().expect("glibc's descriptors");
    let (i, sym) = modules.lookup(THREAD_DB_DTVP).unwrap();
    let bytes = src
        .read(modules.list()[i].bias + sym.value, 12)
        .expect("reading the descriptor from target memory");
    assert_eq!(ThreadDbDesc::parse(&bytes), Some(db.dtvp));
    assert_eq!(db.dtv.bits, 128, "x86-64 glibc's DTV entries");
}

/// Every assertion shared by live and core targets of the fixture with process id `pid`.
fn check_target(src: &dyn Source, threads: &[Thread], pid: i32) {
    let records = truth(src);
    assert_eq!(src.thread_count(), WORKERS + 1);
    assert_eq!(threads.len(), WORKERS + 1);
    // Main thread first, then by tid.
    assert_eq!(threads[0].tid as i32, pid);
    assert!(threads[1..].windows(2).all(|w| w[0].tid < w[1].tid));
    assert_eq!(records[0].tid as i32, pid, "slot 0 is the main thread");

    for (slot, r) in records.iter().enumerate() {
        let lwp = (r.tid as u32).to_le_bytes();
        let i = src
            .find_thread(LWP, &lwp)
            .unwrap_or_else(|| panic!("slot {slot}: no thread with lwp {}", r.tid));
        assert_eq!(threads[i].fs_base, r.pthread, "slot {slot}: fs_base");
        assert_eq!(src.find_thread(PTHREAD, &r.pthread.to_le_bytes()), Some(i));
        assert_eq!(src.thread_id_bytes(i, LWP), Some(lwp.to_vec()));
        assert_eq!(
            src.thread_id_bytes(i, PTHREAD),
            Some(r.pthread.to_le_bytes().to_vec())
        );
        let tls = src
            .symbol("probe_tls", Some(i))
            .unwrap_or_else(|e| panic!("slot {slot}: probe_tls: {e}"));
        assert_eq!(tls, r.tls_addr, "slot {slot}: TLS address");
        assert_eq!(src.read(tls, 8).unwrap(), r.tls_value.to_le_bytes());
        assert_eq!(r.tls_value, 0x7100_0000_0000_0000 + slot as u64 * 0x1111);
        // The same through the shared library, another TLS module.
        let lib_tls = src
            .symbol("probe_lib_tls", Some(i))
            .unwrap_or_else(|e| panic!("slot {slot}: probe_lib_tls: {e}"));
        assert_eq!(lib_tls, r.lib_tls_addr, "slot {slot}: library TLS address");
        assert_eq!(src.read(lib_tls, 8).unwrap(), r.lib_tls_value.to_le_bytes());
        assert_eq!(r.lib_tls_value, 0x1b00_0000_0000_0000 + slot as u64);
    }
    assert_eq!(src.find_thread(LWP, &[0, 0, 0, 0]), None);
    assert_eq!(src.find_thread(PTHREAD, &[1, 2, 3]), None);

    // The LOCAL global, read through its .symtab address.
    let marker = src.symbol("probe_marker", None).expect("probe_marker");
    assert_eq!(src.read(marker, 8).unwrap(), MARKER.to_le_bytes());
    // A thread-local symbol needs a thread.
    assert!(matches!(
        src.symbol("probe_tls", None),
        Err(SymbolError::Unavailable(_))
    ));
    assert!(matches!(
        src.symbol("probe_tls", Some(WORKERS + 7)),
        Err(SymbolError::Unavailable(_))
    ));
    assert_eq!(
        src.symbol("no_such_symbol_in_the_probe", None),
        Err(SymbolError::NotFound)
    );
    // A symbol of a shared library (libc); page zero is unreadable.
    assert!(src.symbol("malloc", None).is_ok());
    assert!(src.read(0, 8).is_err(), "page zero is not readable");
}

#[test]
fn live_process_matches_its_recorded_truth_and_continues_after_detach() {
    if !ptrace_or_skip("live") {
        return;
    }
    let probe = start_probe(None);
    let pid = probe.pid();
    let target = LiveTarget::attach(pid).expect("attach");
    assert_eq!(target.kind(), TargetKind::Live);
    assert_eq!(target.pid(), pid);
    check_target(&target, target.threads(), pid);
    check_modules(&target, target.modules());
    let main = target.modules().main().expect("the main executable");
    assert_eq!(main.path, Path::new(probe_exe()).canonicalize().unwrap());
    assert!(main.link_map.is_some());
    assert!(
        target.modules().list().iter().all(|m| m.link_map.is_some()),
        "every module has its link_map: {:?}",
        target.modules().list()
    );
    // A duplicate serves the same stopped process after the original handle is gone.
    let dup = target.duplicate().expect("a live target duplicates");
    target.detach();
    let marker = dup.symbol("probe_marker", None).unwrap();
    assert_eq!(dup.read(marker, 8).unwrap(), MARKER.to_le_bytes());
    assert_eq!(dup.thread_count(), WORKERS + 1);
    drop(dup);
    // Attaching again works: dropping the last handle really released the threads.
    let again = LiveTarget::attach(pid).expect("attach again");
    assert_eq!(again.thread_count(), WORKERS + 1);
    drop(again);
    let done = probe.release().expect("release");
    assert_eq!(done.status.code(), Some(0), "{done:?}");
    assert_eq!(done.lines, [format!("DONE marker={MARKER:x}")]);
}

#[test]
fn attach_errors_name_the_pid_and_the_step() {
    // A pid that cannot exist (above the kernel's pid_max limit of 2^22).
    let e = LiveTarget::attach(i32::MAX - 3).unwrap_err().to_string();
    assert!(e.contains(&(i32::MAX - 3).to_string()), "{e}");
    let e = LiveTarget::attach(std::process::id() as i32)
        .unwrap_err()
        .to_string();
    assert!(e.contains("itself"), "{e}");
}

/// Opens `core` mutated in many ways; none may panic, and a cut before the end of the data
/// the headers describe must be an error.
fn damage_core(core: &Path) {
    let original = std::fs::read(core).unwrap();
    let phoff = u64_at(&original, 32) as usize;
    let phnum = u16::from_le_bytes([original[56], original[57]]) as usize;
    let mut data_end = 0;
    let mut cuts = vec![0, 1, 4, 20, 63, 64, phoff + 10];
    let mut notes = Vec::new();
    for i in 0..phnum {
        let ph = phoff + 56 * i;
        let p_type = u32::from_le_bytes(original[ph..ph + 4].try_into().unwrap());
        let (off, filesz) = (u64_at(&original, ph + 8), u64_at(&original, ph + 32));
        if filesz > 0 {
            data_end = data_end.max(off + filesz);
            cuts.push((off + filesz / 2) as usize);
            cuts.push((off + filesz - 1) as usize);
        }
        if p_type == 4 {
            notes.push(off as usize..(off + filesz) as usize);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("damaged.core");
    let open = |what: &str| -> Result<CoreTarget, String> {
        let r = std::panic::catch_unwind(AssertUnwindSafe(|| {
            let t = CoreTarget::open(&copy)?;
            // Exercise reads and lookups on whatever opened.
            for name in ["probe_truth", "probe_marker", "malloc"] {
                if let Ok(a) = t.symbol(name, None) {
                    let _ = t.read(a, 64);
                }
            }
            for i in 0..t.thread_count() {
                let _ = t.symbol("probe_tls", Some(i));
            }
            Ok::<_, live_target::CoreError>(t)
        }));
        match r {
            Ok(r) => r.map_err(|e| e.to_string()),
            Err(_) => panic!("opening the core panicked: {what}"),
        }
    };

    cuts.sort_unstable();
    cuts.dedup();
    std::fs::write(&copy, &original).unwrap();
    let cut_file = std::fs::OpenOptions::new().write(true).open(&copy).unwrap();
    // Truncate from the longest cut to the shortest.
    for &cut in cuts.iter().rev().filter(|&&c| c < original.len()) {
        cut_file.set_len(cut as u64).unwrap();
        let r = open(&format!("truncated to {cut} bytes"));
        if (cut as u64) < data_end {
            let e = r.expect_err("a truncated core opens");
            assert!(e.contains("core "), "{e}");
        }
    }

    // Flipped bytes: the ELF header, every program header, and the notes (sampled).
    let mut positions: Vec<usize> = (0..64).collect();
    positions.extend((phoff..phoff + 56 * phnum).step_by(3));
    for n in &notes {
        positions.extend(n.clone().step_by(11));
    }
    // One copy, each flip written in place and undone.
    std::fs::write(&copy, &original).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&copy).unwrap();
    let (mut errors, mut opened) = (0, 0);
    for (k, &p) in positions.iter().enumerate() {
        let flip = [0xff, 0x80, 0x01, 0x7f][k % 4];
        file.write_all_at(&[original[p] ^ flip], p as u64).unwrap();
        match open(&format!("byte {p} xor {flip:#x}")) {
            Ok(_) => opened += 1,
            Err(_) => errors += 1,
        }
        file.write_all_at(&[original[p]], p as u64).unwrap();
    }
    eprintln!(
        "damaged cores: {} cuts, {} flips ({errors} refused, {opened} opened)",
        cuts.len(),
        positions.len()
    );
    assert!(errors > 0 && opened > 0);
}

#[test]
fn gcore_core_matches_the_recorded_truth_and_damage_is_an_error() {
    if !ptrace_or_skip("gcore") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let probe = start_probe(None);
    let pid = probe.pid();
    let path = match gcore(pid, &dir.path().join("probe.core")) {
        Ok(p) => p,
        Err(SpawnError::GdbMissing(why)) if std::env::var_os("CI").is_none() => {
            eprintln!("gcore: SKIPPED, {why}");
            return;
        }
        // gdb is not the fixture's parent: Yama's ptrace_scope 1 lets only a parent trace.
        Err(e)
            if std::env::var_os("CI").is_none()
                && e.to_string().contains("Operation not permitted") =>
        {
            eprintln!("gcore: SKIPPED, gdb may not attach here: {e}");
            return;
        }
        Err(e) => panic!("gcore: {e}"),
    };
    // gdb detached: the fixture still runs to its end.
    let done = probe.release().expect("release");
    assert_eq!(done.status.code(), Some(0), "{done:?}");

    let core = CoreTarget::open(&path).expect("open the gcore core");
    assert_eq!(core.kind(), TargetKind::Core);
    assert_eq!(core.pid(), Some(pid as u32));
    check_target(&core, core.threads(), pid);
    check_modules(&core, core.modules());
    assert!(core.modules().main().is_some());
    let dup = core.duplicate().expect("a core target duplicates");
    check_target(dup.as_ref(), core.threads(), pid);
    damage_core(&path);
}

#[test]
fn kernel_core_matches_the_recorded_truth() {
    let dir = tempfile::tempdir().unwrap();
    let probe = start_probe(Some(dir.path()));
    let pid = probe.pid();
    let path = match kernel_core(probe, dir.path()) {
        Ok(p) => p,
        Err(SpawnError::Unavailable(why)) => {
            eprintln!("kernel core: SKIPPED, {why}");
            return;
        }
        Err(e) => panic!("kernel core: {e}"),
    };
    let core = CoreTarget::open(&path).expect("open the kernel core");
    assert_eq!(core.pid(), Some(pid as u32));
    check_target(&core, core.threads(), pid);
    check_modules(&core, core.modules());
}

#[test]
fn opening_what_is_not_a_core_is_an_error() {
    let e = CoreTarget::open(probe_exe()).unwrap_err().to_string();
    assert!(e.contains("not a core file"), "{e}");
    let e = CoreTarget::open("/nonexistent/core")
        .unwrap_err()
        .to_string();
    assert!(e.contains("/nonexistent/core"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::write(&empty, b"").unwrap();
    assert!(CoreTarget::open(&empty).is_err());
}

#[test]
fn a_fixture_that_never_says_ready_is_an_error_and_is_reaped() {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "echo hello; exit 3"]);
    match Running::start(cmd) {
        Err(SpawnError::NotReady { lines, reason, .. }) => {
            assert_eq!(lines, ["hello"]);
            assert!(reason.contains("ended first"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    let mut cmd = Command::new("sleep");
    cmd.arg("30");
    let t0 = Instant::now();
    let e = Running::start_with_timeout(cmd, Duration::from_millis(300)).unwrap_err();
    assert!(e.to_string().contains("no READY line"), "{e}");
    assert!(t0.elapsed() < Duration::from_secs(10));
}

/// The child half of [`fixture_dies_with_a_killed_harness`]: does nothing unless `CHILD_ENV`
/// is set; then starts the fixture, prints `FIXTURE <pid>` and waits to be killed.
#[test]
fn harness_child_entry() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let probe = start_probe(None);
    println!("FIXTURE {}", probe.pid());
    std::thread::sleep(Duration::from_secs(60));
    drop(probe);
}

/// Whether `pid` is gone (or a zombie nobody reaps, which runs nothing either).
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

#[test]
fn fixture_dies_with_a_killed_harness() {
    let mut harness = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "harness_child_entry", "--nocapture"])
        .env(CHILD_ENV, "1")
        .stdout(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let mut fixture = None;
    for line in BufReader::new(harness.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if let Some(pid) = line.strip_prefix("FIXTURE ") {
            fixture = Some(pid.trim().parse::<i32>().unwrap());
            break;
        }
    }
    let fixture = fixture.expect("the harness child started a fixture");
    assert!(!gone(fixture), "the fixture runs while its harness does");
    harness.kill().unwrap();
    harness.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !gone(fixture) {
        assert!(
            Instant::now() < deadline,
            "fixture {fixture} outlived its killed harness"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
