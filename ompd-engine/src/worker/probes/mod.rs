//! What the library may not change in the process that loads it, probed around every check:
//! every signal's action and the calling thread's signal mask (OMPD-THR-002, [`signals`]), and
//! the descriptors the tool holds (OMPD-THR-003, [`descriptors`]: the ones open at the
//! worker's first probe, before the library is loaded), and the number of threads
//! (OMPD-THR-004, read from `/proc`). With them, the heap watch's tally
//! (`ompd_loader::library::heap_watch`): the heap-manager calls the library's code made inside
//! entry points (OMPD-MEM-001), each new one recorded as a violation of the check it ran in.

pub(crate) mod descriptors;
mod signals;

use ompd_serve::callbacks;
use ompd_serve::ledger::Violation;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// The tool's descriptors: those open at the worker's first probe, before the library loads,
/// less those already reported changed (a change is recorded once, like the signals').
static TOOL_FDS: Mutex<Option<descriptors::Descriptors>> = Mutex::new(None);

/// The heap watch's tally: (entry point, allocator) → (calls, entry-point calls).
type HeapTally = BTreeMap<(&'static str, &'static str), (u64, u64)>;

/// One reading of the process.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Probe {
    /// Every signal's action and the calling thread's mask.
    signals: signals::Signals,
    /// `Threads` of the process.
    threads: usize,
    /// The heap watch's tally (empty when it is not armed).
    heap: HeapTally,
}

/// The field `name` of a `/proc` status file, as hexadecimal or decimal.
fn field(status: &str, name: &str, radix: u32) -> u64 {
    status
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|v| u64::from_str_radix(v.trim(), radix).ok())
        .unwrap_or(0)
}

/// Reads the process now (a field that cannot be read is 0 both times, so it never differs).
pub(super) fn take() -> Probe {
    TOOL_FDS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(descriptors::Descriptors::take);
    let process = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    Probe {
        signals: signals::Signals::take(),
        threads: field(&process, "Threads:", 10) as usize,
        heap: ompd_loader::library::heap_watch()
            .map(|w| w.tally)
            .unwrap_or_default(),
    }
}

/// Compares a new reading with the last; records each change as a violation attributed to
/// `during`, and returns the new reading (so a change is recorded once).
pub(super) fn compare(last: &Probe, during: &str) -> Probe {
    let changes = TOOL_FDS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_mut()
        .map(descriptors::Descriptors::take_changes)
        .unwrap_or_default();
    for what in changes {
        callbacks::ledger().violate(Violation::DescriptorsChanged {
            what,
            during: during.to_string(),
        });
    }
    let now = take();
    for what in now.signals.changes_since(&last.signals) {
        callbacks::ledger().violate(Violation::SignalsChanged {
            what,
            during: during.to_string(),
        });
    }
    if now.threads > last.threads {
        callbacks::ledger().violate(Violation::ThreadsStarted {
            before: last.threads,
            after: now.threads,
            during: during.to_string(),
        });
    }
    heap_calls(&last.heap, &now.heap, during);
    now
}

/// Records each (entry point, allocator) whose count grew since `last` as a violation.
fn heap_calls(last: &HeapTally, now: &HeapTally, during: &str) {
    for (&(site, allocator), &(calls, _)) in now {
        let before = last.get(&(site, allocator)).map_or(0, |c| c.0);
        if calls > before {
            callbacks::ledger().violate(Violation::DirectHeap {
                site,
                allocator,
                calls: calls - before,
                during: during.to_string(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reading_counts_threads() {
        // The signals' reading is tested in `signals`, where no other test changes them.
        assert!(take().threads >= 1);
    }
}
