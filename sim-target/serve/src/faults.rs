//! Fault injection: a [`FaultPlan`] makes the callback table fail in one controlled way, and a
//! [`Census`] says what the callbacks did while the plan was set (how many reads, allocations,
//! conversions, thread-context lookups and target accesses, which symbols were looked up, and
//! which failures were injected with which code).
//!
//! Pure bookkeeping, like the ledger that holds it: the callbacks in [`crate::callbacks`] report
//! each call through [`FaultState::consult`] once its arguments are validated, and do what the
//! returned [`Action`] says instead of their normal work. Positions count from 1 and only the
//! callbacks made while the plan's entry point is in flight (every entry point when it names
//! none), so a plan aimed at one routine leaves the calls around it alone.
//!
//! What each fault does (the codes are the ones a debugger's callbacks return for these cases).
//! A broken callback fills its outputs with the poison byte (`0xA5`, [`crate::ledger::POISON`])
//! before it returns: a library that uses the output of a failed callback anyway then sees the
//! same bytes on every run, where its own uninitialized memory would make the outcome depend on
//! what ran before.
//! - [`Fault::ReadError`]: the k-th read (`read_memory` and `read_string` counted together)
//!   returns `ompd_rc_error` and delivers nothing, as for unmapped memory (OMPD-CB-023).
//! - [`Fault::ShortRead`]: the k-th read delivers only the first half (rounded down) of the bytes
//!   a full answer would have delivered, the rest of the buffer poisoned. `read_memory` then
//!   returns `ompd_rc_error`, as a read that runs into unmapped memory; `read_string` returns
//!   `ompd_rc_incomplete` with a truncated, unterminated string (half of the string with its
//!   terminator never includes the terminator, and the poison byte is not NUL).
//! - [`Fault::MissingSymbol`]: every `symbol_addr_lookup` of that name returns `ompd_rc_error`
//!   (not found, OMPD-CB-022).
//! - [`Fault::AllocFailure`]: the k-th `alloc_memory` returns `ompd_rc_nomem`.
//! - [`Fault::ConversionFailure`]: the k-th `device_to_host` returns `ompd_rc_error`.
//! - [`Fault::ThreadContextFailure`]: the k-th `get_thread_context_for_thread_id` returns
//!   `ompd_rc_error` (no such thread).
//! - [`Fault::StaleHandle`]: the k-th target-access callback (`sizeof_type`,
//!   `symbol_addr_lookup`, `read_memory`, `read_string`, `write_memory`, `device_to_host`,
//!   `host_to_device`, `get_thread_context_for_thread_id`) returns `ompd_rc_stale_handle`: the
//!   tool says the context is no longer valid (OMPD-CB-020, CB-032).

use ompd_abi::Rc;
use serde::Serialize;

/// One controlled failure.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "fault", content = "at", rename_all = "snake_case")]
pub enum Fault {
    /// The k-th read fails with `ompd_rc_error`.
    ReadError(u64),
    /// The k-th read delivers half of its bytes, then fails (`incomplete` for `read_string`).
    ShortRead(u64),
    /// Every lookup of this symbol fails with `ompd_rc_error`.
    MissingSymbol(String),
    /// The k-th `alloc_memory` fails with `ompd_rc_nomem`.
    AllocFailure(u64),
    /// The k-th `device_to_host` fails with `ompd_rc_error`.
    ConversionFailure(u64),
    /// The k-th `get_thread_context_for_thread_id` fails with `ompd_rc_error`.
    ThreadContextFailure(u64),
    /// The k-th target-access callback returns `ompd_rc_stale_handle`.
    StaleHandle(u64),
}

/// What to break, and in which entry point.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultPlan {
    /// The OMPD entry point whose callbacks are counted and broken (as marked by
    /// [`crate::callbacks::enter`]); `None` counts every callback.
    pub site: Option<&'static str>,
    /// The failure to inject; `None` only counts (a census of a fault-free call).
    pub fault: Option<Fault>,
}

/// A callback as the plan sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op<'a> {
    /// `read_memory`.
    ReadMemory,
    /// `read_string`.
    ReadString,
    /// `symbol_addr_lookup` of a name.
    Lookup(&'a str),
    /// `alloc_memory`.
    Alloc,
    /// `device_to_host`.
    DeviceToHost,
    /// `get_thread_context_for_thread_id`.
    ThreadContext,
    /// Any other target-access callback: `sizeof_type`, `write_memory`, `host_to_device`.
    OtherAccess,
}

impl Op<'_> {
    /// The callback's name.
    pub fn callback(self) -> &'static str {
        match self {
            Op::ReadMemory => "read_memory",
            Op::ReadString => "read_string",
            Op::Lookup(_) => "symbol_addr_lookup",
            Op::Alloc => "alloc_memory",
            Op::DeviceToHost => "device_to_host",
            Op::ThreadContext => "get_thread_context_for_thread_id",
            Op::OtherAccess => "target access",
        }
    }

    fn is_read(self) -> bool {
        matches!(self, Op::ReadMemory | Op::ReadString)
    }
}

/// What a callback does instead of its normal work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Return this code without doing anything.
    Fail(Rc),
    /// Deliver the first half of the answer's bytes, then return this code.
    Short(Rc),
}

/// One failure the plan injected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Injection {
    /// The callback that failed.
    pub callback: &'static str,
    /// The fault.
    pub fault: Fault,
    /// The code it returned.
    pub rc: Rc,
}

/// What the callbacks of the planned entry point did while a plan was set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Census {
    /// `read_memory` and `read_string` calls.
    pub reads: u64,
    /// `alloc_memory` calls.
    pub allocs: u64,
    /// `device_to_host` calls.
    pub conversions: u64,
    /// `get_thread_context_for_thread_id` calls.
    pub thread_contexts: u64,
    /// Target-access calls of any kind (the positions [`Fault::StaleHandle`] counts).
    pub target_accesses: u64,
    /// The symbol names looked up, each once, in the order of their first lookup.
    pub symbols: Vec<String>,
    /// The failures injected, in order.
    pub injected: Vec<Injection>,
}

/// The plan in force and the census since it was set; kept in the ledger.
#[derive(Debug, Default)]
pub struct FaultState {
    plan: Option<FaultPlan>,
    census: Census,
}

impl FaultState {
    /// Sets `plan` and starts a new census.
    pub fn set(&mut self, plan: FaultPlan) {
        self.plan = Some(plan);
        self.census = Census::default();
    }

    /// Clears the plan and returns the census since it was set.
    pub fn clear(&mut self) -> Census {
        self.plan = None;
        std::mem::take(&mut self.census)
    }

    /// Counts a callback made while `site` is in flight and says whether it must fail (and
    /// records the injection). Callbacks outside the plan's entry point, or with no plan set, are
    /// neither counted nor broken.
    pub fn consult(&mut self, site: Option<&'static str>, op: Op) -> Option<(Action, Injection)> {
        let plan = self.plan.as_ref()?;
        if plan.site.is_some() && plan.site != site {
            return None;
        }
        let c = &mut self.census;
        if op != Op::Alloc {
            c.target_accesses += 1;
        }
        match op {
            Op::ReadMemory | Op::ReadString => c.reads += 1,
            Op::Alloc => c.allocs += 1,
            Op::DeviceToHost => c.conversions += 1,
            Op::ThreadContext => c.thread_contexts += 1,
            Op::Lookup(name) => {
                if !c.symbols.iter().any(|s| s == name) {
                    c.symbols.push(name.to_string());
                }
            }
            Op::OtherAccess => {}
        }
        let fault = plan.fault.as_ref()?;
        let read_code = if op == Op::ReadString {
            Rc::INCOMPLETE
        } else {
            Rc::ERROR
        };
        let action = match fault {
            Fault::ReadError(k) if op.is_read() && c.reads == *k => Action::Fail(Rc::ERROR),
            Fault::ShortRead(k) if op.is_read() && c.reads == *k => Action::Short(read_code),
            Fault::MissingSymbol(n) if op == Op::Lookup(n) => Action::Fail(Rc::ERROR),
            Fault::AllocFailure(k) if op == Op::Alloc && c.allocs == *k => Action::Fail(Rc::NOMEM),
            Fault::ConversionFailure(k) if op == Op::DeviceToHost && c.conversions == *k => {
                Action::Fail(Rc::ERROR)
            }
            Fault::ThreadContextFailure(k)
                if op == Op::ThreadContext && c.thread_contexts == *k =>
            {
                Action::Fail(Rc::ERROR)
            }
            Fault::StaleHandle(k) if op != Op::Alloc && c.target_accesses == *k => {
                Action::Fail(Rc::STALE_HANDLE)
            }
            _ => return None,
        };
        let rc = match action {
            Action::Fail(rc) | Action::Short(rc) => rc,
        };
        let injection = Injection {
            callback: op.callback(),
            fault: fault.clone(),
            rc,
        };
        c.injected.push(injection.clone());
        Some((action, injection))
    }
}

/// How many bytes a short read delivers when a full answer would have delivered `full`: half,
/// rounded down (so a string's terminator is never among them).
pub fn short_len(full: u64) -> u64 {
    full / 2
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planned(site: Option<&'static str>, fault: Option<Fault>) -> FaultState {
        let mut s = FaultState::default();
        s.set(FaultPlan { site, fault });
        s
    }

    #[test]
    fn the_kth_read_fails_and_only_that_one() {
        let mut s = planned(Some("ompd_x"), Some(Fault::ReadError(3)));
        let site = Some("ompd_x");
        let got: Vec<bool> = [
            Op::ReadMemory,
            Op::ReadString,
            Op::ReadMemory,
            Op::ReadMemory,
        ]
        .into_iter()
        .map(|op| s.consult(site, op).is_some())
        .collect();
        assert_eq!(got, [false, false, true, false]);
        let c = s.clear();
        assert_eq!(c.reads, 4);
        assert_eq!(c.target_accesses, 4);
        assert_eq!(c.injected.len(), 1);
        assert_eq!(c.injected[0].rc, Rc::ERROR);
    }

    #[test]
    fn short_reads_give_error_or_incomplete_by_callback() {
        let mut s = planned(None, Some(Fault::ShortRead(1)));
        assert_eq!(
            s.consult(None, Op::ReadString).map(|(a, _)| a),
            Some(Action::Short(Rc::INCOMPLETE))
        );
        let mut s = planned(None, Some(Fault::ShortRead(1)));
        assert_eq!(
            s.consult(None, Op::ReadMemory).map(|(a, _)| a),
            Some(Action::Short(Rc::ERROR))
        );
        assert_eq!(short_len(9), 4);
        assert_eq!(short_len(1), 0);
    }

    #[test]
    fn other_sites_are_neither_counted_nor_broken() {
        let mut s = planned(Some("ompd_x"), Some(Fault::ReadError(1)));
        assert!(s.consult(Some("ompd_y"), Op::ReadMemory).is_none());
        assert!(s.consult(None, Op::ReadMemory).is_none());
        assert!(s.consult(Some("ompd_x"), Op::ReadMemory).is_some());
        assert_eq!(s.clear().reads, 1);
    }

    #[test]
    fn a_missing_symbol_fails_every_lookup_of_that_name_only() {
        let mut s = planned(None, Some(Fault::MissingSymbol("b".into())));
        let got: Vec<bool> = ["a", "b", "a", "b"]
            .into_iter()
            .map(|n| s.consult(None, Op::Lookup(n)).is_some())
            .collect();
        assert_eq!(got, [false, true, false, true]);
        let c = s.clear();
        assert_eq!(c.symbols, ["a", "b"]);
        assert_eq!(c.injected.len(), 2);
    }

    #[test]
    fn each_counter_counts_its_own_callback() {
        let ops = [
            Op::Alloc,
            Op::DeviceToHost,
            Op::Alloc,
            Op::ThreadContext,
            Op::DeviceToHost,
            Op::OtherAccess,
        ];
        for (fault, fires_at) in [
            (Fault::AllocFailure(2), 2),
            (Fault::ConversionFailure(2), 4),
            (Fault::ThreadContextFailure(1), 3),
            (Fault::StaleHandle(2), 3),
            (Fault::StaleHandle(4), 5),
        ] {
            let mut s = planned(None, Some(fault.clone()));
            let fired: Vec<usize> = ops
                .iter()
                .enumerate()
                .filter(|(_, op)| s.consult(None, **op).is_some())
                .map(|(i, _)| i)
                .collect();
            assert_eq!(fired, [fires_at], "{fault:?}");
        }
        let mut s = planned(None, None);
        for op in ops {
            assert!(s.consult(None, op).is_none());
        }
        let c = s.clear();
        assert_eq!(
            (
                c.allocs,
                c.conversions,
                c.thread_contexts,
                c.target_accesses
            ),
            (2, 2, 1, 4)
        );
        assert!(c.injected.is_empty());
    }

    #[test]
    fn clearing_stops_counting_and_injecting() {
        let mut s = planned(None, Some(Fault::AllocFailure(1)));
        s.clear();
        assert!(s.consult(None, Op::Alloc).is_none());
        assert_eq!(s.clear(), Census::default());
    }
}
