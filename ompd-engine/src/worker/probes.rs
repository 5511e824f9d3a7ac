//! What the library may not change in the process that loads it, probed around every check:
//! the signal dispositions (ignored and caught signals), the calling thread's signal mask
//! (OMPD-THR-002), and the number of threads (OMPD-THR-004). Read from `/proc`, so probing
//! needs no call that could itself change them. With them, the heap watch's tally
//! (`ompd_loader::library::heap_watch`): the heap-manager calls the library's code made inside
//! entry points (OMPD-MEM-001), each new one recorded as a violation of the check it ran in.

use ompd_serve::callbacks;
use ompd_serve::ledger::Violation;
use std::collections::BTreeMap;

/// The heap watch's tally: (entry point, allocator) → (calls, entry-point calls).
type HeapTally = BTreeMap<(&'static str, &'static str), (u64, u64)>;

/// One reading of the process.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Probe {
    /// `SigBlk` of the calling thread, `SigIgn` and `SigCgt` of the process.
    signals: [(&'static str, u64); 3],
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
    let thread = std::fs::read_to_string("/proc/thread-self/status").unwrap_or_default();
    let process = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    Probe {
        signals: [
            ("blocked", field(&thread, "SigBlk:", 16)),
            ("ignored", field(&process, "SigIgn:", 16)),
            ("caught", field(&process, "SigCgt:", 16)),
        ],
        threads: field(&process, "Threads:", 10) as usize,
        heap: ompd_loader::library::heap_watch()
            .map(|w| w.tally)
            .unwrap_or_default(),
    }
}

/// The signal numbers whose bit differs between two masks (bit n-1 is signal n).
fn signals_in(mask: u64) -> String {
    let list: Vec<String> = (0..64)
        .filter(|b| mask & (1u64 << b) != 0)
        .map(|b| (b + 1).to_string())
        .collect();
    list.join(",")
}

/// Compares a new reading with the last; records each change as a violation attributed to
/// `during`, and returns the new reading (so a change is recorded once).
pub(super) fn compare(last: &Probe, during: &str) -> Probe {
    let now = take();
    for ((what, before), (_, after)) in last.signals.iter().zip(now.signals.iter()) {
        if before != after {
            callbacks::ledger().violate(Violation::SignalsChanged {
                what: format!(
                    "{what} signals changed: now {:#x}, was {:#x} (signals {})",
                    after,
                    before,
                    signals_in(before ^ after)
                ),
                during: during.to_string(),
            });
        }
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
    fn a_reading_is_stable_and_names_changed_signals() {
        let a = take();
        assert!(a.threads >= 1);
        assert_eq!(a.signals, take().signals);
        assert_eq!(signals_in(0b101), "1,3");
    }
}
