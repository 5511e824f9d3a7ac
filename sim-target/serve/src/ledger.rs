//! The ledger: every allocation, free, symbol lookup, memory read and conversion made through the
//! callback table, attributed to the OMPD entry point in flight, and every contract violation the
//! callbacks detected (double free, foreign free, unknown context, callback outside a call, a call
//! that exceeded the callback budget), and the fault plan in force with what it injected
//! ([`crate::faults`]).
//!
//! The callback budget caps the target-access callbacks (reads, string reads, conversions,
//! lookups) one entry-point call may make: past [`DEFAULT_CALLBACK_BUDGET`] the callbacks refuse
//! and [`Violation::BudgetExceeded`] is recorded once for the call. A library that walks a cycle
//! of a corrupted image is thus stopped (and reported) in a fraction of a second instead of
//! running into the worker timeout.
//!
//! Pure bookkeeping: no `unsafe`, no FFI. [`crate::callbacks`] writes into it.

use crate::faults::{Action, Fault, FaultState, Op};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How `alloc_memory` initialises the blocks it hands out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum AllocMode {
    /// Blocks are filled with zero bytes.
    Zeroed,
    /// Blocks are filled with [`POISON`] so that reliance on zeroed memory shows.
    #[default]
    Poisoned,
}

/// The byte poisoned blocks are filled with.
pub const POISON: u8 = 0xA5;

/// A live block handed out by `alloc_memory`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Allocation {
    /// Address of the block.
    pub ptr: usize,
    /// Requested size.
    pub size: u64,
    /// Entry point in flight when it was allocated (`"tool"` for the harness itself).
    pub site: &'static str,
    /// Sequence number of the allocation.
    pub seq: u64,
}

/// A contract violation observed by a callback, or by the worker around a check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Violation {
    /// `free_memory` on a block already freed.
    DoubleFree {
        /// Pointer.
        ptr: usize,
        /// Entry point in flight.
        site: &'static str,
    },
    /// `free_memory` on a pointer `alloc_memory` never returned.
    ForeignFree {
        /// Pointer.
        ptr: usize,
        /// Entry point in flight.
        site: &'static str,
    },
    /// A callback received an address-space or thread context the tool never handed out.
    UnknownContext {
        /// Callback name.
        callback: &'static str,
        /// Entry point in flight.
        site: &'static str,
    },
    /// A callback ran while no OMPD entry point was in flight.
    OutsideEntryPoint {
        /// Callback name.
        callback: &'static str,
    },
    /// A required pointer argument was NULL.
    NullArgument {
        /// Callback name.
        callback: &'static str,
        /// Argument name.
        argument: &'static str,
        /// Entry point in flight.
        site: &'static str,
    },
    /// The library asked to write target memory (the simulated target is read-only).
    WriteAttempt {
        /// Address.
        addr: u64,
        /// Length.
        len: u64,
        /// Entry point in flight.
        site: &'static str,
    },
    /// A callback ran after `ompd_finalize` returned ok (and before a new `ompd_initialize`).
    AfterFinalize {
        /// Callback name.
        callback: &'static str,
        /// Entry point in flight, or "(none)".
        site: &'static str,
    },
    /// The process's signal dispositions or the thread's signal mask changed while the
    /// library ran (seen by the worker around each check).
    SignalsChanged {
        /// What changed.
        what: String,
        /// The check (or setup step) during which it changed.
        during: String,
    },
    /// A descriptor the tool held was closed or replaced while the library ran (seen by the
    /// worker around each check; OMPD-THR-003).
    DescriptorsChanged {
        /// What changed.
        what: String,
        /// The check (or setup step) during which it changed.
        during: String,
    },
    /// The process gained threads while the library ran.
    ThreadsStarted {
        /// Threads before.
        before: usize,
        /// Threads after.
        after: usize,
        /// The check (or setup step) during which they appeared.
        during: String,
    },
    /// The library's own code called the process heap manager inside an entry point (seen by
    /// the worker's heap watch around each check; OMPD-MEM-001).
    DirectHeap {
        /// The entry point that called it.
        site: &'static str,
        /// The allocator function (`malloc`, `operator new`, ...).
        allocator: &'static str,
        /// How many times.
        calls: u64,
        /// The check (or setup step) during which it called.
        during: String,
    },
    /// `symbol_addr_lookup` was given a thread context for a symbol that is not thread-local.
    ThreadContextForGlobal {
        /// The symbol.
        name: String,
        /// Entry point in flight.
        site: &'static str,
    },
    /// `get_thread_context_for_thread_id` was given a thread id whose size is not the size of
    /// that kind of id on the target (OMPD-CB-011).
    ThreadIdSize {
        /// The thread-id kind.
        id_kind: u64,
        /// The size the library passed.
        size: u64,
        /// The size of that kind of id on the target.
        expected: u64,
        /// Entry point in flight.
        site: &'static str,
    },
    /// The harness panicked inside a callback; the panic was caught.
    HarnessPanic {
        /// Callback name.
        callback: &'static str,
    },
    /// One entry-point call made more target-access callbacks than the budget allows (recorded
    /// once per call; the callbacks past the cap answered `ompd_rc_error`).
    BudgetExceeded {
        /// Entry point in flight.
        site: &'static str,
        /// The callback that went over the cap.
        callback: &'static str,
        /// The cap.
        cap: u64,
    },
}

/// The default cap on target-access callbacks within one entry-point call.
///
/// Chosen from data: with `OMPD_CONFORM_TRACE=1` (which prints the busiest call of each worker)
/// over the four default scenarios × 13 arch/layout pairs, the busiest single call of any of the
/// seven vendor libraries made 32 such callbacks (LLVM's first `ompd_get_curr_task_handle` of a
/// unit, filling its layout cache; Intel's busiest made 28), and a cap of 200 was never reached
/// over 512 generated states of the property phase for LLVM 19 and Intel 2026.2. 10 000 is about
/// 300 times the measured peak, and a looping call reaches it within milliseconds.
pub const DEFAULT_CALLBACK_BUDGET: u64 = 10_000;

/// Per-call metering of target-access callbacks (see [`Ledger::charge`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Budget {
    /// The cap (`None`: unlimited).
    cap: Option<u64>,
    /// Callbacks charged since the entry point in flight was entered.
    in_call: u64,
    /// Whether the call in flight already went over (reported once).
    exceeded: bool,
    /// The most callbacks any one call made so far, and that call's entry point.
    peak: (u64, &'static str),
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            cap: Some(DEFAULT_CALLBACK_BUDGET),
            in_call: 0,
            exceeded: false,
            peak: (0, "(none)"),
        }
    }
}

/// One recorded callback.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "callback", rename_all = "snake_case")]
pub enum Event {
    /// `alloc_memory`.
    AllocMemory {
        /// Size.
        size: u64,
    },
    /// `free_memory`.
    FreeMemory {
        /// Size of the freed block (0 when it was not a live block).
        size: u64,
    },
    /// `sizeof_type`.
    SizeofType,
    /// `symbol_addr_lookup`.
    SymbolAddrLookup {
        /// Symbol name.
        name: String,
        /// Whether a thread context was passed.
        thread: bool,
        /// Whether it resolved.
        found: bool,
    },
    /// `read_memory`.
    ReadMemory {
        /// Address.
        addr: u64,
        /// Byte count.
        len: u64,
        /// Whether it succeeded.
        ok: bool,
    },
    /// `read_string`.
    ReadString {
        /// Address.
        addr: u64,
        /// Maximum byte count.
        max: u64,
        /// Whether it succeeded.
        ok: bool,
    },
    /// `write_memory`.
    WriteMemory {
        /// Address.
        addr: u64,
        /// Byte count.
        len: u64,
    },
    /// `device_to_host` or `host_to_device`.
    Convert {
        /// True for `device_to_host`.
        to_host: bool,
        /// Unit size.
        unit: u64,
        /// Unit count.
        count: u64,
    },
    /// `get_thread_context_for_thread_id`.
    ThreadContext {
        /// Id kind.
        kind: u64,
        /// Id size.
        size: u64,
        /// Whether a thread matched.
        found: bool,
    },
    /// `print_string`.
    PrintString {
        /// The text.
        text: String,
        /// The category.
        category: i32,
    },
    /// A failure injected by the fault plan (recorded next to the event of the callback it broke).
    Injected {
        /// The callback that failed.
        into: &'static str,
        /// The fault.
        fault: Fault,
        /// The raw `ompd_rc_t` the callback returned.
        rc: i32,
    },
}

/// Running totals, kept even when the event log is full.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    /// Allocations.
    pub allocs: u64,
    /// Frees.
    pub frees: u64,
    /// Symbol lookups.
    pub lookups: u64,
    /// Memory and string reads.
    pub reads: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Memory and string reads that failed (unmapped, or no NUL within the limit).
    pub failed_reads: u64,
    /// Byte-order conversions.
    pub conversions: u64,
    /// Thread-context lookups.
    pub thread_contexts: u64,
}

/// At most this many events are kept; counters keep counting beyond it.
pub const EVENT_CAP: usize = 200_000;

/// The record of everything the callbacks saw.
#[derive(Debug, Default)]
pub struct Ledger {
    /// Allocation mode for new blocks.
    pub mode: AllocMode,
    site: Option<&'static str>,
    seq: u64,
    live: BTreeMap<usize, Allocation>,
    freed: BTreeMap<usize, &'static str>,
    violations: Vec<Violation>,
    events: Vec<(&'static str, Event)>,
    counters: Counters,
    budget: Budget,
    /// The fault plan in force and its census.
    pub faults: FaultState,
    /// The counters when each call in flight began (innermost last), and each finished call's
    /// traffic.
    traffic: (Vec<Counters>, Vec<(&'static str, Counters)>),
    /// True after `ompd_finalize` returned ok, until the next successful `ompd_initialize`.
    finalized: bool,
    /// Every return code an entry point answered: the first entry point to answer it, and how
    /// many calls did.
    codes: BTreeMap<i32, (&'static str, u64)>,
    /// The (kind, size) of the thread id the tool passes to the entry point in flight, if it
    /// passes one: a library handing that id on is not to blame for its size.
    given_thread_id: Option<(u64, u64)>,
}

/// At most this many calls' traffic is kept.
pub const CALL_CAP: usize = 100_000;

impl Counters {
    /// What was counted since `start`.
    pub fn since(&self, start: &Counters) -> Counters {
        Counters {
            allocs: self.allocs - start.allocs,
            frees: self.frees - start.frees,
            lookups: self.lookups - start.lookups,
            reads: self.reads - start.reads,
            read_bytes: self.read_bytes - start.read_bytes,
            failed_reads: self.failed_reads - start.failed_reads,
            conversions: self.conversions - start.conversions,
            thread_contexts: self.thread_contexts - start.thread_contexts,
        }
    }
}

/// The check that judges every violation kind without a check of its own.
pub const CONTRACT_CHECK: &str = "callbacks.contract.no_violations";

/// The check that judges [`Violation::SignalsChanged`] (the worker reads every signal anew
/// before it runs).
pub const SIGNALS_CHECK: &str = "callbacks.contract.signals_untouched";

/// The check that judges [`Violation::DescriptorsChanged`] (the worker reads every descriptor
/// anew before it runs).
pub const DESCRIPTORS_CHECK: &str = "callbacks.contract.descriptors_untouched";

/// The check that judges [`Violation::ThreadsStarted`] (the worker counts the threads anew
/// before it runs).
pub const THREADS_CHECK: &str = "callbacks.contract.no_threads";

impl Violation {
    /// The check that judges this violation: the kinds whose requirement is not the callback
    /// contract's have a check of their own; the others are judged by [`CONTRACT_CHECK`].
    pub fn judged_by(&self) -> &'static str {
        match self {
            Violation::SignalsChanged { .. } => SIGNALS_CHECK,
            Violation::DescriptorsChanged { .. } => DESCRIPTORS_CHECK,
            Violation::DirectHeap { .. } => "callbacks.contract.no_direct_heap",
            Violation::ThreadsStarted { .. } => THREADS_CHECK,
            Violation::AfterFinalize { .. } => "lib.finalize.no_callbacks_after",
            _ => CONTRACT_CHECK,
        }
    }

    /// The form a violation travels in from a worker to the next worker of its unit.
    pub fn carried(&self) -> Carried {
        let heap = match self {
            Violation::DirectHeap {
                site,
                allocator,
                calls,
                ..
            } => Some(HeapCalls {
                site: site.to_string(),
                allocator: allocator.to_string(),
                calls: *calls,
            }),
            _ => None,
        };
        Carried {
            judged_by: self.judged_by().to_string(),
            text: format!("{self:?}"),
            heap,
        }
    }
}

/// A violation as it travels between the workers of a unit (one replaced after a crash or a
/// timeout hands its violations on): the check that judges it, its text for the verdict, and
/// the fields a check sums.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Carried {
    /// The check that judges it ([`Violation::judged_by`]).
    pub judged_by: String,
    /// The violation as a verdict quotes it.
    pub text: String,
    /// A `DirectHeap` violation's calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap: Option<HeapCalls>,
}

/// The heap-manager calls of a `DirectHeap` violation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeapCalls {
    /// The entry point that called the heap manager.
    pub site: String,
    /// The allocator function.
    pub allocator: String,
    /// How many times.
    pub calls: u64,
}

impl Ledger {
    /// Starts afresh, as a new ledger, keeping only the room of its event and call lists (a
    /// worker's next unit grows them no page at a time again).
    pub fn reset(&mut self) {
        let mut events = std::mem::take(&mut self.events);
        let mut calls = std::mem::take(&mut self.traffic.1);
        events.clear();
        calls.clear();
        *self = Ledger::default();
        self.events = events;
        self.traffic.1 = calls;
    }

    /// The entry point in flight, if any.
    pub fn site(&self) -> Option<&'static str> {
        self.site
    }

    /// Sets the entry point in flight (`None` when the harness is between calls); the callback
    /// budget starts afresh.
    pub fn set_site(&mut self, site: Option<&'static str>) {
        self.site = site;
        self.budget.in_call = 0;
        self.budget.exceeded = false;
    }

    /// Charges one target-access callback to the call in flight. `false` when the call is over
    /// its budget: the callback must refuse (the first refusal records
    /// [`Violation::BudgetExceeded`]).
    pub fn charge(&mut self, callback: &'static str) -> bool {
        let b = &mut self.budget;
        b.in_call += 1;
        if b.in_call > b.peak.0 {
            b.peak = (b.in_call, self.site.unwrap_or("(none)"));
        }
        match b.cap {
            Some(cap) if b.in_call > cap => {
                if !b.exceeded {
                    b.exceeded = true;
                    let site = self.site.unwrap_or("(none)");
                    self.violations.push(Violation::BudgetExceeded {
                        site,
                        callback,
                        cap,
                    });
                }
                false
            }
            _ => true,
        }
    }

    /// Notes the (kind, size) of the thread id the tool passes to the next entry point
    /// (`None` once it returned).
    pub fn set_given_thread_id(&mut self, id: Option<(u64, u64)>) {
        self.given_thread_id = id;
    }

    /// True when the tool passed a thread id of this kind and size to the entry point in
    /// flight.
    pub fn thread_id_given(&self, kind: u64, size: u64) -> bool {
        self.given_thread_id == Some((kind, size))
    }

    /// Enters `site` (an entry point, or the harness judging a check): it is the site in flight
    /// until [`Ledger::end`].
    pub fn begin(&mut self, site: &'static str) {
        self.traffic.0.push(self.counters.clone());
        self.set_site(Some(site));
    }

    /// Leaves the site in flight for `prev`, keeping the traffic of the call that ends (its own
    /// and that of the calls it made).
    pub fn end(&mut self, prev: Option<&'static str>) {
        if let (Some(start), Some(site)) = (self.traffic.0.pop(), self.site) {
            if self.traffic.1.len() < CALL_CAP {
                let t = self.counters.since(&start);
                self.traffic.1.push((site, t));
            }
        }
        self.set_site(prev);
    }

    /// The callback traffic of each finished call (at most [`CALL_CAP`]), with its site.
    pub fn calls(&self) -> &[(&'static str, Counters)] {
        &self.traffic.1
    }

    /// Sets the callback budget per entry-point call (`None`: unlimited).
    pub fn set_budget(&mut self, cap: Option<u64>) {
        self.budget.cap = cap;
    }

    /// The callback budget per entry-point call.
    pub fn budget(&self) -> Option<u64> {
        self.budget.cap
    }

    /// The most target-access callbacks one call made so far, with its entry point.
    pub fn peak_call(&self) -> (u64, &'static str) {
        self.budget.peak
    }

    /// Notes the code an entry-point call returned.
    pub fn returned(&mut self, site: &'static str, rc: ompd_abi::Rc) {
        self.codes.entry(rc.0).or_insert((site, 0)).1 += 1;
    }

    /// Every return code entry points answered, with the first to answer it and the count.
    pub fn codes(&self) -> &BTreeMap<i32, (&'static str, u64)> {
        &self.codes
    }

    /// True after `ompd_finalize` answered ok, until the next successful `ompd_initialize`.
    pub fn finalized(&self) -> bool {
        self.finalized
    }

    /// Marks the library finalized (`ompd_finalize` returned ok) or initialized again.
    pub fn set_finalized(&mut self, finalized: bool) {
        self.finalized = finalized;
    }

    /// The site to attribute a callback to; records a violation when nothing is in flight, or
    /// when the library was finalized (OMPD-INIT-033).
    pub fn attribute(&mut self, callback: &'static str) -> &'static str {
        if self.finalized {
            let site = self.site.unwrap_or("(none)");
            self.violations
                .push(Violation::AfterFinalize { callback, site });
        }
        match self.site {
            Some(s) => s,
            None => {
                self.violations
                    .push(Violation::OutsideEntryPoint { callback });
                "(none)"
            }
        }
    }

    /// Records an event under the current site.
    pub fn record(&mut self, event: Event) {
        match &event {
            Event::AllocMemory { .. } => self.counters.allocs += 1,
            Event::FreeMemory { .. } => self.counters.frees += 1,
            Event::SymbolAddrLookup { .. } => self.counters.lookups += 1,
            Event::ReadMemory { len, ok, .. } => {
                self.counters.reads += 1;
                self.counters.read_bytes += len;
                self.counters.failed_reads += u64::from(!ok);
            }
            Event::ReadString { ok, .. } => {
                self.counters.reads += 1;
                self.counters.failed_reads += u64::from(!ok);
            }
            Event::Convert { .. } => self.counters.conversions += 1,
            Event::ThreadContext { .. } => self.counters.thread_contexts += 1,
            Event::SizeofType
            | Event::WriteMemory { .. }
            | Event::PrintString { .. }
            | Event::Injected { .. } => {}
        }
        if self.events.len() < EVENT_CAP {
            self.events.push((self.site.unwrap_or("(none)"), event));
        }
    }

    /// Reports callback `op` to the fault plan under the current site; when the plan breaks it,
    /// records the injection as an event and returns what the callback must do instead.
    pub fn inject(&mut self, op: Op) -> Option<Action> {
        let (action, i) = self.faults.consult(self.site, op)?;
        self.record(Event::Injected {
            into: i.callback,
            fault: i.fault,
            rc: i.rc.0,
        });
        Some(action)
    }

    /// Records a violation.
    pub fn violate(&mut self, v: Violation) {
        self.violations.push(v);
    }

    /// Registers a new live block.
    pub fn allocated(&mut self, ptr: usize, size: u64, site: &'static str) {
        self.seq += 1;
        self.freed.remove(&ptr);
        self.live.insert(
            ptr,
            Allocation {
                ptr,
                size,
                site,
                seq: self.seq,
            },
        );
    }

    /// Unregisters a block being freed. Returns the block, or records a double or foreign free
    /// and returns `None` (the caller must then not release the memory).
    pub fn freeing(&mut self, ptr: usize, site: &'static str) -> Option<Allocation> {
        match self.live.remove(&ptr) {
            Some(a) => {
                self.freed.insert(ptr, site);
                Some(a)
            }
            None if self.freed.contains_key(&ptr) => {
                self.violations.push(Violation::DoubleFree { ptr, site });
                None
            }
            None => {
                self.violations.push(Violation::ForeignFree { ptr, site });
                None
            }
        }
    }

    /// The live block starting exactly at `ptr`.
    pub fn live_block(&self, ptr: usize) -> Option<&Allocation> {
        self.live.get(&ptr)
    }

    /// The live block that contains `addr` (its first byte or any byte inside it).
    pub fn containing(&self, addr: usize) -> Option<&Allocation> {
        self.live
            .range(..=addr)
            .next_back()
            .map(|(_, a)| a)
            .filter(|a| addr < a.ptr + a.size.max(1) as usize)
    }

    /// Every live block.
    pub fn live(&self) -> impl Iterator<Item = &Allocation> {
        self.live.values()
    }

    /// Every violation recorded so far.
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }

    /// Forgets the events recorded so far (counters, violations and call traffic stay): a
    /// worker's events are read only within the check that made them, so it keeps one check's
    /// at a time instead of a unit's.
    pub fn forget_events(&mut self) {
        self.events.clear();
    }

    /// Every event recorded so far (up to [`EVENT_CAP`]), with its site.
    pub fn events(&self) -> &[(&'static str, Event)] {
        &self.events
    }

    /// Totals.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// A mark to diff against later with [`Ledger::since`].
    pub fn mark(&self) -> Mark {
        Mark {
            events: self.events.len(),
            violations: self.violations.len(),
            seq: self.seq,
        }
    }

    /// Removes and returns the violations recorded since `mark`. A check that provokes them on
    /// purpose (a NULL argument the library passes on to a callback) reports them itself, so the
    /// unit's contract check keeps judging ordinary calls.
    pub fn take_violations_since(&mut self, mark: Mark) -> Vec<Violation> {
        let from = mark.violations.min(self.violations.len());
        self.violations.split_off(from)
    }

    /// What happened since `mark`.
    pub fn since(&self, mark: Mark) -> Delta<'_> {
        Delta {
            events: &self.events[mark.events.min(self.events.len())..],
            violations: &self.violations[mark.violations.min(self.violations.len())..],
            new_live: self.live.values().filter(|a| a.seq > mark.seq).collect(),
        }
    }
}

/// A position in the ledger.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    events: usize,
    violations: usize,
    seq: u64,
}

/// Everything recorded after a [`Mark`].
#[derive(Debug)]
pub struct Delta<'a> {
    /// Events.
    pub events: &'a [(&'static str, Event)],
    /// Violations.
    pub violations: &'a [Violation],
    /// Blocks allocated since the mark and still live.
    pub new_live: Vec<&'a Allocation>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_call_s_traffic_is_kept() {
        let mut l = Ledger::default();
        l.begin("harness");
        l.begin("ompd_a");
        l.record(Event::SymbolAddrLookup {
            name: "x".into(),
            thread: false,
            found: true,
        });
        l.record(Event::ReadMemory {
            addr: 8,
            len: 4,
            ok: true,
        });
        l.end(Some("harness"));
        l.begin("ompd_b");
        l.end(Some("harness"));
        l.end(None);
        let calls = l.calls();
        assert_eq!(calls.len(), 3);
        assert_eq!(
            (calls[0].0, calls[0].1.lookups, calls[0].1.read_bytes),
            ("ompd_a", 1, 4)
        );
        assert_eq!((calls[1].0, calls[1].1.reads), ("ompd_b", 0));
        assert_eq!((calls[2].0, calls[2].1.reads), ("harness", 1));
    }

    #[test]
    fn a_reset_ledger_is_a_new_one_with_its_lists_room_kept() {
        let mut l = Ledger::default();
        l.begin("ompd_a");
        l.allocated(0x10, 8, "ompd_a");
        l.record(Event::ReadMemory {
            addr: 8,
            len: 4,
            ok: true,
        });
        l.returned("ompd_a", ompd_abi::Rc::OK);
        l.end(None);
        let room = (l.events.capacity(), l.traffic.1.capacity());
        l.reset();
        assert_eq!(format!("{l:?}"), format!("{:?}", Ledger::default()));
        assert_eq!((l.events.capacity(), l.traffic.1.capacity()), room);
    }

    #[test]
    fn double_and_foreign_frees_are_violations() {
        let mut l = Ledger::default();
        l.set_site(Some("ompd_x"));
        l.allocated(0x10, 8, "ompd_x");
        assert!(l.freeing(0x10, "ompd_x").is_some());
        assert!(l.freeing(0x10, "ompd_x").is_none());
        assert!(l.freeing(0x20, "ompd_x").is_none());
        assert_eq!(
            l.violations(),
            [
                Violation::DoubleFree {
                    ptr: 0x10,
                    site: "ompd_x"
                },
                Violation::ForeignFree {
                    ptr: 0x20,
                    site: "ompd_x"
                }
            ]
        );
    }

    #[test]
    fn violations_since_a_mark_can_be_taken() {
        let mut l = Ledger::default();
        l.violate(Violation::HarnessPanic { callback: "a" });
        let mark = l.mark();
        l.violate(Violation::HarnessPanic { callback: "b" });
        assert_eq!(
            l.take_violations_since(mark),
            [Violation::HarnessPanic { callback: "b" }]
        );
        assert_eq!(l.violations(), [Violation::HarnessPanic { callback: "a" }]);
        assert!(l.take_violations_since(mark).is_empty());
    }

    #[test]
    fn the_budget_refuses_past_its_cap_and_reports_once_per_call() {
        let mut l = Ledger::default();
        assert_eq!(l.budget(), Some(DEFAULT_CALLBACK_BUDGET));
        l.set_budget(Some(3));
        l.set_site(Some("ompd_x"));
        let served: Vec<bool> = (0..5).map(|_| l.charge("read_memory")).collect();
        assert_eq!(served, [true, true, true, false, false]);
        assert_eq!(
            l.violations(),
            [Violation::BudgetExceeded {
                site: "ompd_x",
                callback: "read_memory",
                cap: 3
            }]
        );
        assert_eq!(l.peak_call(), (5, "ompd_x"));
        // A new call starts afresh.
        l.set_site(Some("ompd_y"));
        assert!(l.charge("read_string"));
        l.set_budget(None);
        assert!((0..10).all(|_| l.charge("read_memory")));
        assert_eq!(l.violations().len(), 1);
    }

    #[test]
    fn failed_reads_are_counted() {
        let mut l = Ledger::default();
        l.record(Event::ReadMemory {
            addr: 0,
            len: 4,
            ok: false,
        });
        l.record(Event::ReadString {
            addr: 0,
            max: 4,
            ok: true,
        });
        assert_eq!(l.counters().reads, 2);
        assert_eq!(l.counters().failed_reads, 1);
    }

    #[test]
    fn callbacks_outside_a_call_are_violations() {
        let mut l = Ledger::default();
        assert_eq!(l.attribute("read_memory"), "(none)");
        assert_eq!(l.violations().len(), 1);
    }

    #[test]
    fn containing_finds_interior_addresses_only() {
        let mut l = Ledger::default();
        l.allocated(0x100, 0x10, "a");
        assert_eq!(l.containing(0x100).map(|a| a.ptr), Some(0x100));
        assert_eq!(l.containing(0x10f).map(|a| a.ptr), Some(0x100));
        assert!(l.containing(0x110).is_none());
        assert!(l.containing(0xff).is_none());
    }

    #[test]
    fn delta_shows_new_live_blocks() {
        let mut l = Ledger::default();
        l.allocated(1, 1, "a");
        let m = l.mark();
        l.allocated(2, 1, "b");
        assert_eq!(l.since(m).new_live.len(), 1);
    }
}
