//! The call in flight and the quarantine gate, kept process-wide so that a watchdog thread and a
//! crash signal handler can name the call a library hung or crashed in.
//!
//! Every raw call marks itself here before entering the library and clears the mark when the
//! library returns: the entry point, its arguments as words and the start time, published under
//! a sequence number that is odd while a call is in flight (a reader that sees it change retries).
//! The marks are plain atomics, so [`current_entry`] may be read from a signal handler.
//!
//! A worker may also quarantine entry points before its checks run ([`quarantine`]): a raw call
//! of a quarantined one is not made; it fails with [`Fail::Quarantined`] and is remembered
//! ([`take_blocked`]), so the worker reports the check as not run instead of judging it.

use super::Fail;
use nix::libc;
use ompd_abi::{EntryPoint, Scope};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Arguments recorded per call (the widest entry point takes six).
const MAX_ARGS: usize = 6;

/// Odd while a call is in flight; bumped at each start and end.
static SEQ: AtomicU64 = AtomicU64::new(0);
/// Index in [`EntryPoint::ALL`] of the call in flight.
static ENTRY: AtomicUsize = AtomicUsize::new(0);
/// Start of the call in flight, in nanoseconds since [`epoch`].
static STARTED_NS: AtomicU64 = AtomicU64::new(0);
/// Number of recorded arguments of the call in flight.
static NARGS: AtomicUsize = AtomicUsize::new(0);
/// The arguments of the call in flight, as words.
static ARGS: [AtomicU64; MAX_ARGS] = [const { AtomicU64::new(0) }; MAX_ARGS];

/// The entry points this process must not call.
static QUARANTINED: OnceLock<Vec<EntryPoint>> = OnceLock::new();
/// The first quarantined entry point a call was refused since the last [`take_blocked`].
static BLOCKED: Mutex<Option<EntryPoint>> = Mutex::new(None);

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn now_ns() -> u64 {
    u64::try_from(epoch().elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// A call argument as the word a report shows: a pointer's address, an integer's value.
pub(super) trait AsWord {
    /// The argument as a word.
    fn word(&self) -> u64;
}

impl<T> AsWord for *mut T {
    fn word(&self) -> u64 {
        *self as usize as u64
    }
}

impl<T> AsWord for *const T {
    fn word(&self) -> u64 {
        *self as usize as u64
    }
}

macro_rules! int_word {
    ($($t:ty),*) => {$(
        impl AsWord for $t {
            fn word(&self) -> u64 {
                *self as i64 as u64
            }
        }
    )*};
}
int_word!(i32, i64, u64);

impl AsWord for Scope {
    fn word(&self) -> u64 {
        self.0 as i64 as u64
    }
}

/// Marks `ep` as in flight with `args` until the returned mark is dropped.
pub(super) fn begin(ep: EntryPoint, args: &[u64]) -> InFlightMark {
    let index = EntryPoint::ALL.iter().position(|e| *e == ep).unwrap_or(0);
    ENTRY.store(index, Ordering::Relaxed);
    let n = args.len().min(MAX_ARGS);
    for (slot, a) in ARGS.iter().zip(args) {
        slot.store(*a, Ordering::Relaxed);
    }
    NARGS.store(n, Ordering::Relaxed);
    STARTED_NS.store(now_ns(), Ordering::Relaxed);
    SEQ.fetch_add(1, Ordering::Release);
    InFlightMark(())
}

/// Clears the in-flight mark when dropped (the library returned).
#[derive(Debug)]
pub(super) struct InFlightMark(());

impl Drop for InFlightMark {
    fn drop(&mut self) {
        SEQ.fetch_add(1, Ordering::Release);
    }
}

/// A call the library has not returned from yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InFlight {
    /// The call's sequence number ([`still_in_flight`] asks whether it is still this call).
    pub seq: u64,
    /// The entry point.
    pub entry_point: EntryPoint,
    /// How long it has been running.
    pub elapsed: Duration,
    /// Its arguments as words, in declaration order.
    pub args: Vec<u64>,
}

impl InFlight {
    /// The call as a vendor engineer reads it: `ompd_x(name=0x1234, kind=3)`, pointers in hex.
    pub fn describe(&self) -> String {
        let decl = self.entry_point.args().unwrap_or(&[]);
        let args: Vec<String> = self
            .args
            .iter()
            .enumerate()
            .map(|(i, w)| match decl.get(i) {
                Some(a) if a.is_pointer() => format!("{}={w:#x}", a.name),
                Some(a) => format!("{}={}", a.name, *w as i64),
                None => format!("{w:#x}"),
            })
            .collect();
        format!("{}({})", self.entry_point.name(), args.join(", "))
    }
}

/// The call in flight, if there is one (a consistent snapshot, or `None` while one starts or
/// ends).
pub fn in_flight() -> Option<InFlight> {
    let seq = SEQ.load(Ordering::Acquire);
    if seq.is_multiple_of(2) {
        return None;
    }
    let entry_point = *EntryPoint::ALL.get(ENTRY.load(Ordering::Relaxed))?;
    let started = STARTED_NS.load(Ordering::Relaxed);
    let n = NARGS.load(Ordering::Relaxed).min(MAX_ARGS);
    let args = ARGS[..n]
        .iter()
        .map(|a| a.load(Ordering::Relaxed))
        .collect();
    if SEQ.load(Ordering::Acquire) != seq {
        return None;
    }
    Some(InFlight {
        seq,
        entry_point,
        elapsed: Duration::from_nanos(now_ns().saturating_sub(started)),
        args,
    })
}

/// True while the call numbered `seq` has not returned.
pub fn still_in_flight(seq: u64) -> bool {
    SEQ.load(Ordering::Acquire) == seq
}

/// The entry point in flight, read with atomics only (safe in a signal handler).
pub fn current_entry() -> Option<EntryPoint> {
    if SEQ.load(Ordering::Acquire).is_multiple_of(2) {
        return None;
    }
    EntryPoint::ALL.get(ENTRY.load(Ordering::Relaxed)).copied()
}

/// `__cxa_get_globals` of the C++ runtime in the process (0: none, or not resolved yet).
static CXA_GLOBALS: AtomicUsize = AtomicUsize::new(0);

/// Resolves the C++ runtime's exception globals from a loaded library's scope (its own
/// dependencies, then the process's global ones): a library that can throw has loaded a C++
/// runtime by then (libstdc++ and LLVM's libc++abi both export them).
pub(super) fn resolve_exceptions(lib: &libloading::os::unix::Library) {
    const NAME: &[u8] = b"__cxa_get_globals\0";
    // SAFETY: only the symbol's address is taken; it is called with its own type.
    let own = unsafe { lib.get::<*mut libc::c_void>(NAME) }.map(|s| *s);
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name.
    let global = || unsafe { libc::dlsym(libc::RTLD_DEFAULT, NAME.as_ptr().cast()) };
    let f = own.unwrap_or_else(|_| global());
    CXA_GLOBALS.store(f as usize, Ordering::Relaxed);
}

/// The C++ exceptions thrown on this thread and not caught (0 without a C++ runtime): more than
/// 0 when a process aborts means an exception escaped to a frame that cannot catch it. Reads a
/// thread-local of the C++ runtime only, so a signal handler may call it.
pub fn uncaught_exceptions() -> u32 {
    /// The head of the Itanium C++ ABI's `__cxa_eh_globals`.
    #[repr(C)]
    struct Globals {
        caught: *mut libc::c_void,
        uncaught: libc::c_uint,
    }
    let f = CXA_GLOBALS.load(Ordering::Relaxed);
    if f == 0 {
        return 0;
    }
    // SAFETY: the address dlsym gave for `__cxa_get_globals`, whose type this is.
    let f: extern "C" fn() -> *mut Globals = unsafe { std::mem::transmute(f) };
    let g = f();
    if g.is_null() {
        return 0;
    }
    // SAFETY: the runtime's per-thread globals, valid for the thread's life.
    unsafe { (*g).uncaught }
}

/// Quarantines `eps` for the rest of the process: calls of them are refused, not made. Only the
/// first call takes effect (a worker sets its unit's list once); false when a list was set.
pub fn quarantine(eps: Vec<EntryPoint>) -> bool {
    QUARANTINED.set(eps).is_ok()
}

/// The first quarantined entry point a call was refused since the last call, if any.
pub fn take_blocked() -> Option<EntryPoint> {
    BLOCKED.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// The first quarantined entry point a call was refused since the last [`take_blocked`],
/// left in place.
pub fn blocked() -> Option<EntryPoint> {
    *BLOCKED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records a refusal of quarantined `ep` again, for a check that judges calls another check
/// made (and was refused in) before it: it is then reported not run, as that one was.
pub fn block_again(ep: EntryPoint) {
    BLOCKED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert(ep);
}

/// Refuses a call of a quarantined `ep`.
pub(super) fn gate(ep: EntryPoint) -> Result<(), Fail> {
    if !QUARANTINED.get().is_some_and(|q| q.contains(&ep)) {
        return Ok(());
    }
    block_again(ep);
    Err(Fail::Quarantined(ep))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_in_flight_until_its_mark_drops() {
        assert!(in_flight().is_none());
        let mark = begin(EntryPoint::GetThreadInParallel, &[0x1000, 3, 0x2000]);
        let f = in_flight().expect("in flight");
        assert_eq!(f.entry_point, EntryPoint::GetThreadInParallel);
        assert_eq!(current_entry(), Some(EntryPoint::GetThreadInParallel));
        assert!(still_in_flight(f.seq));
        let text = f.describe();
        assert!(text.starts_with("ompd_get_thread_in_parallel("), "{text}");
        assert!(text.contains("=0x1000") && text.contains("=3"), "{text}");
        drop(mark);
        assert!(!still_in_flight(f.seq));
        assert!(in_flight().is_none() && current_entry().is_none());
    }
}
