//! What each deviation does to a call: [`before`] may answer in the routine's place or change
//! its arguments; [`after`] may change what the inner routine answered. Only the mutant this
//! build was staged as acts, and only on its entry point (or on every one, for the generic
//! deviations).

mod answers;
mod edges;
mod epoch;
mod extra;
mod generic;
mod laws;
mod route;
mod strings;
mod teams;
mod values;

use crate::inner;
use crate::table::Deviation;
use ompd_abi::{Callbacks, EntryPoint, Rc};
use std::ffi::c_char;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// The callback table the tool gave `ompd_initialize` (null before).
static TOOL: AtomicPtr<Callbacks> = AtomicPtr::new(std::ptr::null_mut());
/// True between a successful `ompd_initialize` and `ompd_finalize`.
static INITIALIZED: AtomicBool = AtomicBool::new(false);
/// The address-space context of the last `ompd_process_initialize`.
static CONTEXT: AtomicU64 = AtomicU64::new(0);
/// The address-space context of the first `ompd_process_initialize` of the process.
static FIRST_CONTEXT: AtomicU64 = AtomicU64::new(0);
/// Calls of `ompd_rel_address_space_handle` so far.
static RELEASES: AtomicU64 = AtomicU64::new(0);
/// The last thread id the tool asked a handle for: kind, size, the id's first 8 bytes.
static THREAD_ID: Mutex<Option<(u64, u64, u64)>> = Mutex::new(None);
/// Thread handles with where they came from: the tool's id pointer and size for
/// `ompd_get_thread_handle`, (0, 0) for `ompd_get_thread_in_parallel`.
static ORIGINS: Mutex<Vec<(u64, u64, u64)>> = Mutex::new(Vec::new());
/// Calls of `ompd_enumerate_icvs` that started an enumeration.
static ENUMERATIONS: AtomicU64 = AtomicU64::new(0);
/// The last string `ompd_get_icv_string_from_scope` handed out.
static ICV_STRING: AtomicU64 = AtomicU64::new(0);

/// The tool's callback table, once `ompd_initialize` received one.
fn tool() -> Option<&'static Callbacks> {
    // SAFETY: the tool's table outlives the library's use of it (OMPD-CB-001: it stays valid
    // until ompd_finalize); the pointer was non-null when stored.
    unsafe { TOOL.load(Ordering::Acquire).as_ref() }
}

/// The deviation of this build when it applies to a call of `ep`.
fn active(ep: EntryPoint) -> Option<Deviation> {
    let m = inner::mutant()?;
    match m.entry_point {
        Some(e) if e != ep => None,
        _ => Some(m.deviation),
    }
}

/// Runs before the inner routine: `Some(rc)` answers in its place.
pub fn before(ep: EntryPoint, w: &mut [u64]) -> Option<Rc> {
    record(ep, w);
    let d = active(ep)?;
    if d.expires_handles() {
        return epoch::refused(d, ep, w);
    }
    generic::before(d, ep, w)
        .or_else(|| extra::before(d, ep, w))
        .or_else(|| answers::before(d, ep, w))
}

/// Keeps what the deviations need of earlier calls: the tool's table, the address-space
/// context, the last thread id asked for.
fn record(ep: EntryPoint, w: &[u64]) {
    match ep {
        EntryPoint::Initialize if w.len() == 2 && w[1] != 0 => {
            TOOL.store(w[1] as usize as *mut Callbacks, Ordering::Release)
        }
        EntryPoint::ProcessInitialize => {
            CONTEXT.store(w[0], Ordering::Release);
            let _ = FIRST_CONTEXT.compare_exchange(0, w[0], Ordering::AcqRel, Ordering::Acquire);
        }
        EntryPoint::RelAddressSpaceHandle => {
            RELEASES.fetch_add(1, Ordering::AcqRel);
        }
        EntryPoint::GetThreadHandle if (1..=8).contains(&w[2]) && w[3] != 0 => {
            let mut id = [0u8; 8];
            // SAFETY: the tool's id buffer of `w[2]` bytes (at most 8 are read).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    w[3] as usize as *const u8,
                    id.as_mut_ptr(),
                    w[2] as usize,
                )
            };
            *THREAD_ID.lock().unwrap_or_else(|p| p.into_inner()) =
                Some((w[1], w[2], u64::from_ne_bytes(id)));
        }
        _ => {}
    }
}

/// Runs after the inner routine answered `rc`; returns the answer the tool sees.
pub fn after(ep: EntryPoint, w: &[u64], rc: Rc) -> Rc {
    match ep {
        EntryPoint::Initialize if rc == Rc::OK => INITIALIZED.store(true, Ordering::Release),
        EntryPoint::Finalize if rc == Rc::OK => INITIALIZED.store(false, Ordering::Release),
        _ => {}
    }
    if ep == EntryPoint::GetVersionString && rc == Rc::OK {
        own_version_string(w[0]);
    }
    if rc == Rc::OK {
        note_origin(ep, w);
        if let Some(d) = active(ep) {
            route::produced(d, ep, w);
            route::skewed(d, ep, w);
        }
        if let Some(d) = active(ep).filter(|d| d.expires_handles()) {
            match ep {
                EntryPoint::ProcessInitialize => epoch::initialized(w),
                EntryPoint::GetThreadHandle => epoch::made(d, w),
                _ => {}
            }
        }
    }
    if ep == EntryPoint::GetIcvStringFromScope && rc == Rc::OK {
        // SAFETY: the tool's out-parameter, written by the inner routine on ok.
        if let Some(s) = unsafe { (w[3] as usize as *const u64).as_ref() } {
            ICV_STRING.store(*s, Ordering::Release);
        }
    }
    match active(ep) {
        Some(d @ (Deviation::IcvStringCapped | Deviation::DcvDropsUnterminatedLast))
            if rc == Rc::OK =>
        {
            strings::after(d, w, rc)
        }
        Some(d) => teams::after(d, ep, w, rc)
            .or_else(|| laws::after(d, ep, w, rc))
            .or_else(|| edges::after(d, ep, w, rc))
            .unwrap_or_else(|| values::after(d, ep, w, rc)),
        None => rc,
    }
}

/// At most this many thread handles' origins (and cached handles) are kept, the oldest
/// forgotten first: the tables never grow past the capacity reserved when the forwarder was
/// loaded.
const ORIGINS_CAP: usize = 4096;

/// Reserves the hooks' tables (the forwarder's constructor calls it).
pub(crate) fn prepare() {
    let mut o = ORIGINS.lock().unwrap_or_else(|p| p.into_inner());
    o.reserve(ORIGINS_CAP);
    let mut h = answers::HANDED_OUT
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    h.reserve(ORIGINS_CAP);
    epoch::prepare();
    route::prepare();
    laws::prepare();
}

/// Notes where a new thread handle came from ([`ORIGINS`]), and counts ICV enumerations.
fn note_origin(ep: EntryPoint, w: &[u64]) {
    let (out, origin) = match ep {
        EntryPoint::GetThreadHandle => (w[4], (w[3], w[2])),
        EntryPoint::GetThreadInParallel => (w[2], (0, 0)),
        EntryPoint::EnumerateIcvs if w[1] == 0 => {
            ENUMERATIONS.fetch_add(1, Ordering::Relaxed);
            return;
        }
        _ => return,
    };
    if let Some(h) = written(out) {
        keep(&ORIGINS, |(x, _, _)| *x, (h, origin.0, origin.1));
    }
}

/// The handle the inner routine wrote, on ok, into the tool's out-parameter at address `out`
/// (none for a NULL one).
fn written(out: u64) -> Option<u64> {
    // SAFETY: the tool's out-parameter for a handle, written by the inner routine on ok.
    unsafe { (out as usize as *const u64).as_ref() }.copied()
}

/// Records `row` in `table`, replacing the row of the same key (a handle); when the table holds
/// [`ORIGINS_CAP`] rows the oldest goes, so it never grows past what [`prepare`] reserved.
fn keep<T>(table: &Mutex<Vec<T>>, key: impl Fn(&T) -> u64, row: T) {
    let mut t = table.lock().unwrap_or_else(|p| p.into_inner());
    let k = key(&row);
    t.retain(|x| key(x) != k);
    if t.len() >= ORIGINS_CAP {
        t.remove(0);
    }
    t.push(row);
}

/// Where thread handle `h` came from (see [`ORIGINS`]).
fn origin(h: u64) -> Option<(u64, u64)> {
    let o = ORIGINS.lock().unwrap_or_else(|p| p.into_inner());
    o.iter().find(|(x, _, _)| *x == h).map(|(_, p, n)| (*p, *n))
}

/// Copies the inner library's version string into this library's static data, where a tool
/// expects a library's version string (the inner one lives in the inner library's file).
fn own_version_string(out: u64) {
    static TEXT: OnceLock<[u8; 512]> = OnceLock::new();
    // SAFETY: the tool's out-parameter, written by the inner routine on ok.
    let Some(s) = (unsafe { (out as usize as *mut *const c_char).as_mut() }) else {
        return;
    };
    if s.is_null() {
        return;
    }
    let text = TEXT.get_or_init(|| {
        let mut buf = [0u8; 512];
        // SAFETY: the inner library's NUL-terminated static version string.
        let src = unsafe { std::ffi::CStr::from_ptr(*s) }.to_bytes();
        let n = src.len().min(buf.len() - 1);
        buf[..n].copy_from_slice(&src[..n]);
        buf
    });
    *s = text.as_ptr().cast();
}

/// Allocates `n` bytes through the tool's `alloc_memory` (null when it cannot).
fn alloc(n: u64) -> *mut std::ffi::c_void {
    let mut p = std::ptr::null_mut();
    if let Some(f) = tool().and_then(|t| t.alloc_memory) {
        // SAFETY: the tool's callback, called as OMPD specifies.
        if unsafe { f(n, &mut p) } != Rc::OK {
            return std::ptr::null_mut();
        }
    }
    p
}

/// Frees `p` through the tool's `free_memory`.
fn free(p: *mut std::ffi::c_void) {
    if let Some(f) = tool().and_then(|t| t.free_memory) {
        // SAFETY: the tool's callback; a wrong pointer is the deviation being injected.
        unsafe { f(p) };
    }
}
