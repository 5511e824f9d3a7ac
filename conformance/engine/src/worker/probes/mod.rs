//! What the library may not change in the process that loads it, probed around every check:
//! every signal's action and the calling thread's signal mask (OMPD-THR-002, [`signals`]), the
//! descriptors the tool holds (OMPD-THR-003, [`descriptors`]: the ones open at the worker's
//! first probe, before the library is loaded), and the number of threads (OMPD-THR-004, read
//! from `/proc`). Each is read again only after a call of the C library's functions that may
//! change it, which the heap-watch shim counts (the signal functions; the functions that close
//! or replace a descriptor or start a thread), and in full before the checks that judge them, so
//! a raw system call is seen too. With them, the heap watch's growth since the last probe
//! (`ompd_loader::library::heap_growth`): the heap-manager calls the library's code made inside
//! entry points (OMPD-MEM-001), each new one recorded as a violation of the check it ran in.

pub(crate) mod descriptors;
mod signals;

use ompd_serve::callbacks;
use ompd_serve::ledger::Violation;
use std::sync::{Arc, Mutex};

/// The tool's descriptors: those open at the worker's first probe, before the library loads,
/// less those already reported changed (a change is recorded once, like the signals').
static TOOL_FDS: Mutex<Option<descriptors::Descriptors>> = Mutex::new(None);

/// One reading of the process.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Probe {
    /// Every signal's action and the calling thread's mask (shared with the kept reading).
    signals: Arc<signals::Signals>,
    /// `Threads` of the process.
    threads: usize,
}

/// The number of threads in a `/proc/<pid>/stat` line: its 20th field, the 18th after the
/// command, which is the text up to the last `)` (a command may hold spaces and parentheses).
fn threads_of(stat: &str) -> usize {
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_ascii_whitespace().nth(17))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// A `/proc` entry of this process kept open (reopened in a fork, which inherits the parent's),
/// with its inode number when opened.
struct Kept {
    pid: u32,
    ino: u64,
    file: std::fs::File,
}

impl Kept {
    /// The kept entry `path` of this process, opened again when it is another process's.
    fn get<'k>(slot: &'k mut Option<Kept>, path: &str) -> Option<&'k Kept> {
        use std::os::unix::fs::MetadataExt;
        let pid = std::process::id();
        if slot.as_ref().is_none_or(|k| k.pid != pid) {
            *slot = std::fs::File::open(path).ok().and_then(|file| {
                let ino = file.metadata().ok()?.ino();
                Some(Kept { pid, ino, file })
            });
        }
        slot.as_ref()
    }
}

/// This process's number of threads. Linux gives `/proc/<pid>/task` one link per thread besides
/// its own two, so a `fstat` of it kept open answers at a tenth of the cost of rendering the
/// stat line (read around every check). Where the descriptor no longer holds that directory (a
/// library closed or replaced it) or the count looks wrong, the stat line answers, and the
/// directory is opened again next time.
fn thread_count() -> usize {
    use std::os::unix::fs::MetadataExt;
    static TASKS: Mutex<Option<Kept>> = Mutex::new(None);
    let mut slot = TASKS.lock().unwrap_or_else(|e| e.into_inner());
    let links = Kept::get(&mut slot, "/proc/self/task")
        .and_then(|k| k.file.metadata().ok().filter(|m| m.ino() == k.ino));
    match links.map(|m| m.nlink()) {
        Some(n) if n >= 3 => usize::try_from(n - 2).unwrap_or(usize::MAX),
        _ => {
            *slot = None;
            threads_of(&own_stat())
        }
    }
}

/// This process's `/proc/<pid>/stat` line, read again through a descriptor kept open. A kept
/// descriptor that fails, or that reads another process's line (a library replaced it), is
/// opened again.
fn own_stat() -> String {
    use std::os::unix::fs::FileExt;
    static KEPT: Mutex<Option<Kept>> = Mutex::new(None);
    let mine = format!("{} (", std::process::id());
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    let mut buf = [0u8; 1024];
    for _ in 0..2 {
        if let Some(k) = Kept::get(&mut kept, "/proc/self/stat") {
            if let Ok(n) = k.file.read_at(&mut buf, 0) {
                let line = String::from_utf8_lossy(&buf[..n]);
                if line.starts_with(&mine) {
                    return line.into_owned();
                }
            }
        }
        *kept = None;
    }
    String::new()
}

/// The last reading of something the shim counts the changing calls of, kept with the count it
/// was taken at ([`ompd_loader::library::signal_changes`],
/// [`ompd_loader::library::process_changes`]).
struct Cached<T>(Option<(u64, T)>);

impl<T: Clone> Cached<T> {
    /// The kept reading while `count` has not moved since it was taken (the system calls of a
    /// reading saved around every check), else, when `full` or without a count, `read` anew.
    fn get(&mut self, count: Option<u64>, full: bool, read: impl FnOnce() -> T) -> T {
        match (count, &self.0) {
            (Some(n), Some((at, kept))) if *at == n && !full => return kept.clone(),
            _ => {}
        }
        let now = read();
        self.0 = count.map(|n| (n, now.clone()));
        now
    }
}

/// The signals (64 actions and the mask), kept while no signal function was called.
static SIGNALS: Mutex<Cached<Arc<signals::Signals>>> = Mutex::new(Cached(None));

/// The number of threads, kept with the descriptors' reading while no function that may close or
/// replace a descriptor or start a thread was called.
static PROCESS: Mutex<Cached<usize>> = Mutex::new(Cached(None));

/// Set when a probe saw the process changed (a signal, a descriptor, a thread).
static CHANGED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// True when a probe saw the library change the process (a signal's action or the mask, a
/// descriptor of the tool's, a thread started) since the last call: a worker then ends its
/// batch, so that the next unit starts in a process as fresh as a lone unit's.
pub(super) fn process_changed() -> bool {
    CHANGED.swap(false, std::sync::atomic::Ordering::Relaxed)
}

/// Records a change of the process as a violation attributed to the check in flight.
fn changed(v: Violation) {
    CHANGED.store(true, std::sync::atomic::Ordering::Relaxed);
    callbacks::ledger().violate(v);
}

/// Which parts of the process a reading takes anew whatever the shim counted.
#[derive(Clone, Copy, Default)]
struct Full {
    /// The signals.
    signals: bool,
    /// The descriptors and the threads.
    process: bool,
}

/// Reads the process now (a field that cannot be read is 0 both times, so it never differs),
/// with the changes of the tool's descriptors since the last reading; each part anew only when
/// `full` says so or after a call the shim counts that may change it.
fn read(full: Full) -> (Probe, Vec<String>) {
    let mut changes = Vec::new();
    let count = ompd_loader::library::process_changes();
    let threads = lock(&PROCESS).get(count, full.process, || {
        let mut fds = lock(&TOOL_FDS);
        changes = match fds.as_mut() {
            Some(d) => d.take_changes(),
            None => {
                *fds = Some(descriptors::Descriptors::take());
                Vec::new()
            }
        };
        thread_count()
    });
    let count = ompd_loader::library::signal_changes();
    let signals = lock(&SIGNALS).get(count, full.signals, || Arc::new(signals::Signals::take()));
    (Probe { signals, threads }, changes)
}

/// The value of `m`, poisoned or not.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The check the last comparison ran after, for a change found outside the probes.
static LAST_DURING: Mutex<String> = Mutex::new(String::new());

/// After writing to the worker's event stream failed: records each change of the tool's
/// descriptors (a library may have closed the stream with a raw system call, which the shim does
/// not count), as made during the check the last probe ran after, and restores the vital
/// descriptors ([`descriptors::Descriptors::take_changes`]); the next probe reads in full.
pub(super) fn stream_failed() {
    let during = format!(
        "{} (found when the worker's event stream failed after it)",
        lock(&LAST_DURING)
    );
    let changes = lock(&TOOL_FDS)
        .as_mut()
        .map(descriptors::Descriptors::take_changes)
        .unwrap_or_default();
    descriptors_changed(changes, &during);
    *lock(&PROCESS) = Cached(None);
}

/// Reads the process now ([`read`]).
pub(super) fn take() -> Probe {
    read(Full::default()).0
}

/// What check `id` judges of what the probes read: a full reading of it comes before the check
/// ([`before_judged`]).
fn judged_by(id: &str) -> Full {
    use ompd_serve::ledger::{DESCRIPTORS_CHECK, SIGNALS_CHECK, THREADS_CHECK};
    Full {
        signals: id == SIGNALS_CHECK,
        process: id == DESCRIPTORS_CHECK || id == THREADS_CHECK,
    }
}

/// Whether `id` is a check that judges what the probes read (the signals, the descriptors, the
/// threads).
pub(super) fn judges_process(id: &str) -> bool {
    let full = judged_by(id);
    full.signals || full.process
}

/// [`compare`] with what check `id` judges read anew, before it runs: a change the shim could
/// not count (a raw system call) since the last full reading is recorded here.
pub(super) fn before_judged(last: &Probe, id: &str) -> Probe {
    let during = format!(
        "a check before {id}, through a call the heap-watch shim does not count (a raw system call)"
    );
    compare_with(last, &during, judged_by(id))
}

/// Compares a new reading with the last; records each change as a violation attributed to
/// `during`, and returns the new reading (so a change is recorded once).
pub(super) fn compare(last: &Probe, during: &str) -> Probe {
    compare_with(last, during, Full::default())
}

/// [`compare`], with the parts `full` names read anew.
fn compare_with(last: &Probe, during: &str, full: Full) -> Probe {
    during.clone_into(&mut lock(&LAST_DURING));
    let (now, changes) = read(full);
    descriptors_changed(changes, during);
    for what in now.signals.changes_since(&last.signals) {
        changed(Violation::SignalsChanged {
            what,
            during: during.to_string(),
        });
    }
    if now.threads > last.threads {
        changed(Violation::ThreadsStarted {
            before: last.threads,
            after: now.threads,
            during: during.to_string(),
        });
    }
    heap_calls(during);
    now
}

/// Records each change of the tool's descriptors as a violation attributed to `during`.
fn descriptors_changed(changes: Vec<String>, during: &str) {
    for what in changes {
        changed(Violation::DescriptorsChanged {
            what,
            during: during.to_string(),
        });
    }
}

/// Records each (entry point, allocator) the heap watch counted calls of since the last probe as
/// a violation.
fn heap_calls(during: &str) {
    for ((site, allocator), calls) in ompd_loader::library::heap_growth() {
        callbacks::ledger().violate(Violation::DirectHeap {
            site,
            allocator,
            calls,
            during: during.to_string(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reading_counts_threads() {
        // The signals' reading is tested in `signals`, where no other test changes them.
        assert!(take().threads >= 1);
        let line = "42 (a) b (c)) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 7 0 55";
        assert_eq!(threads_of(line), 7);
        assert_eq!(threads_of("garbage"), 0);
        assert!(own_stat().starts_with(&format!("{} (", std::process::id())));
        assert!(
            threads_of(&own_stat()) >= 1,
            "read again through the kept one"
        );
    }

    #[test]
    fn a_reading_is_taken_again_only_when_the_count_moves_or_a_full_reading_is_asked() {
        let reads = std::cell::Cell::new(0);
        let read = || {
            reads.set(reads.get() + 1);
            signals::Signals::default()
        };
        let mut cache = Cached(None);
        cache.get(Some(7), false, read);
        cache.get(Some(7), false, read);
        assert_eq!(reads.get(), 1, "kept while the count stays");
        cache.get(Some(8), false, read);
        assert_eq!(reads.get(), 2, "read after a counted call");
        cache.get(Some(8), true, read);
        assert_eq!(reads.get(), 3, "read when a full reading is asked");
        cache.get(None, false, read);
        cache.get(None, false, read);
        assert_eq!(reads.get(), 5, "always read without the shim's count");
        assert!(judges_process("callbacks.contract.signals_untouched"));
        assert!(judges_process("callbacks.contract.descriptors_untouched"));
        assert!(judges_process("callbacks.contract.no_threads"));
        assert!(!judges_process("callbacks.contract.no_violations"));
    }

    #[test]
    fn the_task_links_count_threads_as_the_stat_line_does() {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || rx.recv());
        // Other tests start and end threads meanwhile: two readings in a row agree soon.
        let agree = (0..1000).any(|_| {
            let links = thread_count();
            links >= 2 && links == threads_of(&own_stat())
        });
        assert!(agree, "{} links, stat line {}", thread_count(), own_stat());
        drop(tx);
        let _ = t.join();
    }
}
