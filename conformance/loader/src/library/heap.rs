//! The heap watch (OMPD-MEM-001): which calls of the process heap manager the library's own code
//! made inside each entry point.
//!
//! The counting is done by a shim the engine preloads into workers (`ompd_engine::heapwatch`,
//! `c/heapwatch.c`): it defines the allocator's entry points and counts a call when its return
//! address lies in the armed range. [`Library::watch_heap`] finds the shim in this process
//! (`dlsym(RTLD_DEFAULT)`) and arms it on the executable segments of the library's file; every
//! raw call ([`super::raw`], [`super::tr`]) then reads the shim's counters before and after the
//! library runs ([`begin`], [`end`]) and adds what changed to a tally by entry point and
//! allocator. Calls made outside an entry point (the library's constructors, destructors) are not
//! counted: the requirement is about servicing OMPD calls.
//!
//! What it cannot see: a call the library makes as a tail call (a jump to `malloc`, which puts
//! the library's caller in the return address), and an allocation another object makes on the
//! library's behalf (out-of-line code of libstdc++, such as `std::string`'s, or a helper library
//! shipped with it). Both are missed, never invented: a call the tally counts was made from the
//! library's own text.

use super::{objects, Library};
use nix::libc;
use std::collections::BTreeMap;
use std::ffi::CStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// The variable a worker started without the shim reads to know why (set by the engine).
pub const ABSENT_ENV: &str = "OMPD_HEAPWATCH_ABSENT";

/// At most this many counters are read (the shim has 17).
const MAX_KINDS: usize = 32;

/// `ompd_heapwatch_arm`.
type ArmFn = unsafe extern "C" fn(usize, usize);
/// `ompd_heapwatch_read`.
type ReadFn = unsafe extern "C" fn(*mut u64, usize) -> usize;
/// `ompd_heapwatch_signal_changes` and `ompd_heapwatch_process_changes`.
type CounterFn = unsafe extern "C" fn() -> u64;

/// The shim's functions and its counter names.
struct Shim {
    arm: ArmFn,
    read: ReadFn,
    signals: Option<CounterFn>,
    process: Option<CounterFn>,
    kinds: Vec<&'static str>,
}

/// The shim of this process, or why there is none.
fn shim() -> &'static Result<Shim, String> {
    static SHIM: OnceLock<Result<Shim, String>> = OnceLock::new();
    SHIM.get_or_init(find_shim)
}

/// Finds the shim's functions among the loaded objects.
fn find_shim() -> Result<Shim, String> {
    let absent = || match std::env::var(ABSENT_ENV) {
        Ok(why) => why,
        Err(_) => {
            "the heap-watch shim is not preloaded in this process (only workers get it)".into()
        }
    };
    let sym = |name: &CStr| {
        // SAFETY: dlsym only reads the loader's tables; the name is NUL-terminated.
        let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
        (!p.is_null()).then_some(p)
    };
    let (Some(arm), Some(read), Some(kinds)) = (
        sym(c"ompd_heapwatch_arm"),
        sym(c"ompd_heapwatch_read"),
        sym(c"ompd_heapwatch_kinds"),
    ) else {
        return Err(absent());
    };
    // SAFETY: the shim defines these three symbols with these types (c/heapwatch.c).
    let (arm, read, kinds) = unsafe {
        (
            std::mem::transmute::<*mut libc::c_void, ArmFn>(arm),
            std::mem::transmute::<*mut libc::c_void, ReadFn>(read),
            std::mem::transmute::<*mut libc::c_void, unsafe extern "C" fn() -> *const libc::c_char>(
                kinds,
            ),
        )
    };
    // SAFETY: the shim's names are one static NUL-terminated string.
    let names = unsafe { CStr::from_ptr(kinds()) }.to_str().unwrap_or("");
    let kinds: Vec<&'static str> = names.lines().take(MAX_KINDS).collect();
    let counter = |name: &CStr| {
        // SAFETY: the shim defines both counters with this type (c/heapwatch.c).
        sym(name).map(|f| unsafe { std::mem::transmute::<*mut libc::c_void, CounterFn>(f) })
    };
    Ok(Shim {
        arm,
        read,
        signals: counter(c"ompd_heapwatch_signal_changes"),
        process: counter(c"ompd_heapwatch_process_changes"),
        kinds,
    })
}

/// How many calls of the C library's functions that may change a signal's action or a thread's
/// signal mask this process has made (the shim counts them, whoever the caller); `None` without
/// the shim. A change made another way (a raw system call) is not counted.
pub fn signal_changes() -> Option<u64> {
    count(|s| s.signals)
}

/// How many calls of the C library's functions that may close or replace a descriptor
/// (`close`, `dup2`, `fclose`, `freopen` and their kin) or start a thread (`pthread_create`,
/// `thrd_create`) this process has made (the shim counts them, whoever the caller); `None`
/// without the shim. A change made another way (a raw system call) is not counted.
pub fn process_changes() -> Option<u64> {
    count(|s| s.process)
}

/// The value of the shim's counter `which` picks; `None` without the shim or that counter.
fn count(which: fn(&Shim) -> Option<CounterFn>) -> Option<u64> {
    let f = which(shim().as_ref().ok()?)?;
    // SAFETY: the shim's counter function takes nothing and reads one word.
    Some(unsafe { f() })
}

/// The watch in this process.
#[derive(Default)]
struct State {
    /// The armed range (`None`: not armed, and why).
    armed: Option<Result<(usize, usize), String>>,
    /// (entry point, allocator) → (calls of the allocator, entry-point calls that made them).
    tally: BTreeMap<(&'static str, &'static str), (u64, u64)>,
    /// The allocator calls added to the tally since the last [`heap_growth`].
    grown: BTreeMap<(&'static str, &'static str), u64>,
}

/// Calls into the library made while armed (apart from [`State`]: a call whose counters did not
/// move takes no lock).
static JUDGED: AtomicU64 = AtomicU64::new(0);

/// Whether the watch is armed (what [`State::armed`] says, read by every call without a lock).
static ARMED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

static STATE: Mutex<State> = Mutex::new(State {
    armed: None,
    tally: BTreeMap::new(),
    grown: BTreeMap::new(),
});

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

impl Library {
    /// Arms the heap watch on this library's executable segments, its counts from nothing; the
    /// error says why it cannot be (no shim in the process, no entry point to find the
    /// library's file by).
    pub fn watch_heap(&self) -> Result<(), String> {
        let armed = self.arm().map_err(|why| format!("no heap watch: {why}"));
        ARMED.store(armed.is_ok(), Ordering::Relaxed);
        // The counts start here: an earlier instance's (a worker's earlier unit) are not this
        // one's.
        *state() = State {
            armed: Some(armed.clone()),
            ..State::default()
        };
        JUDGED.store(0, Ordering::Relaxed);
        armed.map(|_| ())
    }

    fn arm(&self) -> Result<(usize, usize), String> {
        let shim = shim().as_ref().map_err(String::clone)?;
        let a = &self.api;
        let any = a
            .initialize
            .map(|f| f as usize)
            .or(a.get_api_version.map(|f| f as usize))
            .or(a.finalize.map(|f| f as usize))
            .ok_or(
                "the library exports none of ompd_initialize, ompd_get_api_version, ompd_finalize",
            )?;
        let (lo, hi) = objects::text_of(any)
            .ok_or("the library's entry points lie in no executable segment")?;
        // SAFETY: the shim's arm function takes two words and only stores them.
        unsafe { (shim.arm)(lo, hi) };
        Ok((lo, hi))
    }
}

/// The shim's counters when a call began.
pub(super) struct Reading([u64; MAX_KINDS]);

/// The counters now, when the watch is armed.
fn read() -> Option<Reading> {
    let shim = shim().as_ref().ok()?;
    let mut r = Reading([0; MAX_KINDS]);
    // SAFETY: the shim writes at most `MAX_KINDS` words into the array.
    unsafe { (shim.read)(r.0.as_mut_ptr(), MAX_KINDS) };
    Some(r)
}

/// Reads the counters before a call into the library (`None` when the watch is not armed).
pub(super) fn begin() -> Option<Reading> {
    ARMED.load(Ordering::Relaxed).then(read).flatten()
}

/// Adds what the library's code called during the call of `site` that began at `before`.
pub(super) fn end(before: Option<Reading>, site: &'static str) {
    let (Some(before), Some(after), Ok(shim)) = (before, read(), shim()) else {
        return;
    };
    JUDGED.fetch_add(1, Ordering::Relaxed);
    if after.0 == before.0 {
        return;
    }
    let mut s = state();
    for (i, kind) in shim.kinds.iter().enumerate() {
        let n = after.0[i].saturating_sub(before.0[i]);
        if n > 0 {
            let e = s.tally.entry((site, *kind)).or_default();
            e.0 += n;
            e.1 += 1;
            *s.grown.entry((site, *kind)).or_default() += n;
        }
    }
}

/// What the heap watch saw in this process.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeapWatch {
    /// Calls into the library made while the watch was armed.
    pub judged: u64,
    /// Per (entry point, allocator): the allocator's calls from the library's code, and how
    /// many calls of the entry point made them.
    pub tally: BTreeMap<(&'static str, &'static str), (u64, u64)>,
}

/// The allocator calls the library's code made since the last call of this function, per
/// (entry point, allocator): what a probe around each check reports, without copying the tally.
pub fn heap_growth() -> BTreeMap<(&'static str, &'static str), u64> {
    std::mem::take(&mut state().grown)
}

/// The watch of this process: what it saw, or why it was never armed.
pub fn heap_watch() -> Result<HeapWatch, String> {
    let s = state();
    match &s.armed {
        Some(Ok(_)) => Ok(HeapWatch {
            judged: JUDGED.load(Ordering::Relaxed),
            tally: s.tally.clone(),
        }),
        Some(Err(why)) => Err(why.clone()),
        None => Err("no heap watch: the worker never armed it".into()),
    }
}
