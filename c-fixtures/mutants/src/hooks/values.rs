//! Deviations that change what the inner routine answered.

use super::{alloc, free, Deviation as D};
use crate::inner::routine;
use ompd_abi::{entry, Address, EntryPoint, FrameInfo, Rc, Scope};
use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};

/// A static string, where the specification wants an `alloc_memory` block.
static STATIC_TEXT: &[u8] = b"mutant\0";
/// A name no specification defines, for a renamed ICV.
static RENAMED: &[u8] = b"mutant-renamed\0";
/// A display-control-variable entry in static memory.
static STATIC_ENTRY: &[u8] = b"OMP_MUTANT=1\0";

/// The first `ompd_get_omp_version_string` block, handed out again on later calls.
static SHARED: AtomicU64 = AtomicU64::new(0);
/// Calls of `ompd_get_api_version` so far.
static CALLS: AtomicU64 = AtomicU64::new(0);
/// The frame flags the caller's buffers held before `ompd_get_task_frame` (exit, enter).
static CALLERS_FLAGS: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];

/// The out-parameter at word `i`, typed.
fn out<T>(w: &[u64], i: usize) -> Option<&'static mut T> {
    // SAFETY: word `i` is an out-parameter of type `*mut T` the tool passed and the inner
    // routine wrote on ok (callers act on ok answers only); null gives None.
    unsafe { (w.get(i).copied().unwrap_or(0) as usize as *mut T).as_mut() }
}

/// Writes address 0 (segment 0) to the `ompd_address_t` out-parameter at word `i`; answers ok.
fn zero_address(w: &[u64], i: usize) -> Rc {
    set(out::<Address>(w, i), |a| {
        *a = Address {
            segment: 0,
            address: 0,
        }
    })
}

/// The item an enumeration answered with more 0 (`u64::MAX`: none yet).
static LAST_ITEM: AtomicU64 = AtomicU64::new(u64::MAX);

/// An enumeration that starts over from its last item, as a library that indexes its table
/// with `current + 1` and wraps: the first item, with more 1.
fn restart_after_last(d: D, w: &[u64], rc: Rc) -> Rc {
    if w[1] == LAST_ITEM.load(Ordering::Relaxed) {
        let ep = if d == D::StatesRestartAfterLast {
            EntryPoint::EnumerateStates
        } else {
            EntryPoint::EnumerateIcvs
        };
        return from_the_start(ep, w).unwrap_or(rc);
    }
    let (next, more) = if d == D::StatesRestartAfterLast {
        (
            out::<i64>(w, 2).map(|n| *n as u64),
            out::<i64>(w, 4).map(|m| *m),
        )
    } else {
        (
            out::<u64>(w, 2).map(|n| *n),
            out::<c_int>(w, 5).map(|m| i64::from(*m)),
        )
    };
    if let (Rc::OK, Some(next), Some(0)) = (rc, next, more) {
        LAST_ITEM.store(next, Ordering::Relaxed);
    }
    rc
}

/// ICVs an enumeration of [`D::IcvsBreakDynVarOff`] answers before it breaks off.
const BREAK_AFTER: u64 = 4;
/// ICVs the current enumeration has answered.
static ENUMERATED: AtomicU64 = AtomicU64::new(0);
/// The id the enumeration gave `dyn-var` (0: not seen yet; `ompd_icv_undefined` is 0).
static DYN_VAR: AtomicU64 = AtomicU64::new(0);

/// [`D::IcvsBreakDynVarOff`] after an ok answer: the enumeration answers `bad_input` from its
/// fifth ICV on, and `dyn-var`'s value is one more.
fn break_dyn_var_off(ep: EntryPoint, w: &[u64]) -> Rc {
    match ep {
        EntryPoint::EnumerateIcvs => {
            if w[1] == 0 {
                ENUMERATED.store(0, Ordering::Relaxed);
            }
            if ENUMERATED.fetch_add(1, Ordering::Relaxed) >= BREAK_AFTER {
                return Rc::BAD_INPUT;
            }
            note_icv_id(w, c"dyn-var", &DYN_VAR);
            Rc::OK
        }
        EntryPoint::GetIcvFromScope if w[2] != 0 && w[2] == DYN_VAR.load(Ordering::Relaxed) => {
            set(out::<i64>(w, 3), |v| *v += 1)
        }
        _ => Rc::OK,
    }
}

/// The ids the enumeration gave `team-size-var` and `ompd-team-size-var` (0: not seen yet).
static TEAM_SIZE_VARS: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];

/// Notes the ids of `team-size-var` (either spelling) an ok `ompd_enumerate_icvs` (arguments
/// `w`) answers.
pub(super) fn note_team_size_ids(w: &[u64]) {
    let [plain, ompd] = &TEAM_SIZE_VARS;
    note_icv_id(w, c"team-size-var", plain);
    note_icv_id(w, c"ompd-team-size-var", ompd);
}

/// Answers one more for an ok `ompd_get_icv_from_scope` (arguments `w`) that asked
/// `team-size-var` (either spelling) at the parallel scope.
pub(super) fn team_size_one_more(w: &[u64]) {
    let id = w[2];
    let ours = id != 0
        && TEAM_SIZE_VARS
            .iter()
            .any(|s| s.load(Ordering::Relaxed) == id);
    if ours && w[1] == Scope::PARALLEL.0 as u64 {
        set(out::<i64>(w, 3), |v| *v += 1);
    }
}

/// [`D::ParallelTeamSizeOff`] after an ok answer: `team-size-var` (either spelling) of a
/// parallel handle is one more.
fn team_size_off(ep: EntryPoint, w: &[u64]) -> Rc {
    match ep {
        EntryPoint::EnumerateIcvs => note_team_size_ids(w),
        EntryPoint::GetIcvFromScope => team_size_one_more(w),
        _ => {}
    }
    Rc::OK
}

/// Keeps in `slot` the id an ok `ompd_enumerate_icvs` answered (arguments `w`) when the ICV is
/// `name`.
pub(super) fn note_icv_id(w: &[u64], name: &std::ffi::CStr, slot: &AtomicU64) {
    let (id, answered) = (out::<u64>(w, 2), out::<*const c_char>(w, 3));
    if let (Some(id), Some(answered)) = (id, answered.filter(|n| !n.is_null())) {
        // SAFETY: the name the inner routine answered: a NUL-terminated static string.
        if unsafe { std::ffi::CStr::from_ptr(*answered) } == name {
            slot.store(*id, Ordering::Relaxed);
        }
    }
}

/// The specific deviations' part after a call the inner routine failed.
fn after_failure(d: D, ep: EntryPoint, w: &[u64], rc: Rc) -> Rc {
    if d == D::TaskFunctionLeaksOnFailure {
        alloc(32);
    }
    match (d, rc) {
        (D::TrForeignThreadUnavailable, Rc::BAD_INPUT) => return Rc::UNAVAILABLE,
        (D::NoTeamUnsupported, Rc::UNAVAILABLE) => return Rc::UNSUPPORTED,
        (D::TaskFunctionMadeUp, _) => return zero_address(w, 1),
        (D::ToolDataWithoutOmpt, Rc::UNSUPPORTED) => {
            zero_address(w, 3);
            return set(out::<i64>(w, 2), |v| *v = 0);
        }
        _ => {}
    }
    retried(d, ep, w).unwrap_or(rc)
}

/// The specific deviations' part after the call.
pub(super) fn after(d: D, ep: EntryPoint, w: &[u64], rc: Rc) -> Rc {
    if matches!(d, D::StatesRestartAfterLast | D::IcvsRestartAfterLast) {
        return restart_after_last(d, w, rc);
    }
    if d == D::IcvsBreakDynVarOff && rc == Rc::OK {
        return break_dyn_var_off(ep, w);
    }
    if d == D::ParallelTeamSizeOff && rc == Rc::OK {
        return team_size_off(ep, w);
    }
    if rc != Rc::OK {
        return after_failure(d, ep, w, rc);
    }
    match d {
        D::ApiVersionUnknown => set(out::<i64>(w, 0), |v| *v = 201800),
        D::ApiVersionOlder => set(out::<i64>(w, 0), |v| *v = 202011),
        D::ApiVersionFlips if CALLS.fetch_add(1, Ordering::Relaxed) % 2 == 1 => {
            set(out::<i64>(w, 0), |v| *v = 201811)
        }
        D::VersionStringHeap => {
            let heap = Box::leak(Box::new(*b"mutant version\0"));
            set(out::<*const c_char>(w, 0), |s| *s = heap.as_ptr().cast())
        }
        D::OmpVersionOff => set(out::<i64>(w, 1), |v| *v += 1),
        D::IcvValueOff => set(out::<i64>(w, 3), |v| *v += 1),
        D::OmpVersionStringStatic | D::IcvStringStatic | D::OmpVersionStringShared => {
            strings(d, ep, w)
        }
        D::RelAddressSpaceNotOk | D::RelThreadNotOk => Rc::ERROR,
        D::UndefinedReturnCode => Rc(42),
        D::SuccessAsIncomplete => Rc::INCOMPLETE,
        D::IgnoresASignal => {
            ignore_sigusr2();
            rc
        }
        D::ThreadHandleCached => {
            remember_handle(w);
            rc
        }
        D::ThreadHandleLeaks => {
            alloc(16);
            rc
        }
        D::ThreadIdOff if w[2] > 0 => set(out::<u8>(w, 3), |b| *b = b.wrapping_add(1)),
        D::ThreadCompareZero | D::ParallelCompareZero | D::TaskCompareZero => {
            set(out::<c_int>(w, 2), |c| *c = 0)
        }
        D::ThreadCompareAsymmetric | D::ParallelCompareAsymmetric | D::TaskCompareAsymmetric => {
            set(out::<c_int>(w, 2), |c| *c = c_int::from(*c != 0))
        }
        D::StateOff => set(out::<i64>(w, 1), |s| *s += 1),
        D::TaskFunctionOff => set(out::<Address>(w, 1), |a| a.address += 1),
        D::TaskFrameSwapped => match (out::<FrameInfo>(w, 1), out::<FrameInfo>(w, 2)) {
            (Some(x), Some(e)) => {
                std::mem::swap(x, e);
                rc
            }
            _ => rc,
        },
        D::TaskFrameFlagsCleared => {
            set(out::<FrameInfo>(w, 1), |f| f.frame_flag = 0);
            set(out::<FrameInfo>(w, 2), |f| f.frame_flag = 0)
        }
        D::TaskFrameFlagsKept => {
            let back = |i: usize| CALLERS_FLAGS[i - 1].load(Ordering::Acquire) as i64;
            set(out::<FrameInfo>(w, 1), |f| f.frame_flag = back(1));
            set(out::<FrameInfo>(w, 2), |f| f.frame_flag = back(2))
        }
        D::StatesSkipOne => skip_a_state(w),
        D::IcvScopeOff => set(out::<Scope>(w, 4), |s| s.0 += 1),
        D::ToolDataValueOff => set(out::<i64>(w, 2), |v| *v += 1),
        D::ToolDataPtrOff => set(out::<Address>(w, 3), |a| a.address += 8),
        D::DeviceKindsEmpty => set(out::<c_int>(w, 3), |n| *n = 0),
        D::ThreadCompareTruncated | D::ParallelCompareTruncated | D::TaskCompareTruncated => {
            truncated_compare(ep, w)
        }
        _ => after_more(d, w, rc),
    }
}

/// Notes the frame flags the caller's buffers hold before `ompd_get_task_frame` writes them.
pub(super) fn note_callers_frame_flags(w: &[u64]) {
    for i in [1, 2] {
        if let Some(f) = out::<FrameInfo>(w, i) {
            CALLERS_FLAGS[i - 1].store(f.frame_flag as u64, Ordering::Release);
        }
    }
}

/// The word at byte `offset` of the inner library's handle block `handle`.
pub(super) fn handle_word(handle: u64, offset: usize) -> u64 {
    // SAFETY: the inner routine answered ok for this handle, so it is one of the inner
    // library's live blocks, whose layout `ompd_reference::KEY_OFFSETS` describes.
    unsafe { ((handle as usize + offset) as *const u64).read_unaligned() }
}

/// The offsets of a comparison's handle kind: the entity's address word, and its lwt word.
fn key_offsets(ep: EntryPoint) -> (usize, Option<usize>) {
    let keys = ompd_reference::KEY_OFFSETS;
    match ep {
        EntryPoint::ThreadHandleCompare => (keys.thread, None),
        EntryPoint::ParallelHandleCompare => (keys.parallel.0, Some(keys.parallel.1)),
        _ => (keys.task.0, Some(keys.task.1)),
    }
}

/// The entity a handle of the comparison `ep` stands for: its address word, plus its lwt word.
pub(super) fn entity_key(ep: EntryPoint, handle: u64) -> u64 {
    let (key, lwt) = key_offsets(ep);
    handle_word(handle, key).wrapping_add(lwt.map_or(0, |l| handle_word(handle, l)))
}

/// Changes the `c_int` out-parameter at word `i` (when the tool passed one); answers ok.
pub(super) fn set_int(w: &[u64], i: usize, f: impl FnOnce(&mut c_int)) -> Rc {
    set(out::<c_int>(w, i), f)
}

/// `*cmp_value` as a library computes it that subtracts the entities' addresses (then their
/// lwt words) into an `int`.
fn truncated_compare(ep: EntryPoint, w: &[u64]) -> Rc {
    let (key, lwt) = key_offsets(ep);
    let diff = |offset: usize| handle_word(w[0], offset).wrapping_sub(handle_word(w[1], offset));
    let d = match (diff(key), lwt) {
        (0, Some(l)) => diff(l),
        (d, _) => d,
    };
    set(out::<c_int>(w, 2), |c| *c = d as c_int)
}

/// The string deviations of `ompd_get_omp_version_string` and the ICV strings: a static
/// string, or the first block handed out again.
fn strings(d: D, ep: EntryPoint, w: &[u64]) -> Rc {
    match d {
        D::OmpVersionStringStatic | D::IcvStringStatic => {
            let i = if ep == EntryPoint::GetOmpVersionString {
                1
            } else {
                3
            };
            set(out::<*const c_char>(w, i), |s| {
                free(*s as *mut c_void);
                *s = STATIC_TEXT.as_ptr().cast();
            })
        }
        D::OmpVersionStringShared => set(out::<*const c_char>(w, 1), |s| {
            match SHARED.compare_exchange(0, *s as u64, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {}
                Err(first) => {
                    free(*s as *mut c_void);
                    *s = first as usize as *const c_char;
                }
            }
        }),
        _ => Rc::OK,
    }
}

/// Remembers the handle `ompd_get_thread_handle` gave for the last id asked (see
/// [`super::answers::HANDED_OUT`]).
fn remember_handle(w: &[u64]) {
    if let (Some(id), Some(h)) = (
        *super::THREAD_ID.lock().unwrap_or_else(|p| p.into_inner()),
        out::<u64>(w, 4),
    ) {
        let mut cache = super::answers::HANDED_OUT
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        cache.retain(|(i, _)| *i != id.2);
        if cache.len() >= super::ORIGINS_CAP {
            cache.remove(0);
        }
        cache.push((id.2, *h));
    }
}

/// The deviations of names, DCV entries, thread ids and TR answers (after an ok call).
fn after_more(d: D, w: &[u64], rc: Rc) -> Rc {
    match d {
        D::DcvValueChanged | D::DcvNameChanged | D::DcvStaticEntry => dcv(d, w),
        D::ThreadIdNotCopied => match super::origin(w[0]) {
            Some((ptr, n)) if ptr != 0 && n > 0 && n <= w[2] => {
                // SAFETY: none for the tool's id pointer, kept past the call that lent it:
                // reading it now is the deviation being injected; the tool's buffer holds `w[2]`
                // bytes.
                unsafe {
                    std::ptr::copy(
                        ptr as usize as *const u8,
                        w[3] as usize as *mut u8,
                        n as usize,
                    )
                };
                Rc::OK
            }
            _ => Rc::OK,
        },
        D::ThreadIdByRoute if super::origin(w[0]) == Some((0, 0)) && w[2] > 0 => {
            set(out::<u8>(w, 3), |b| *b = b.wrapping_add(1))
        }
        D::IcvsUnstable if w[1] == 0 && super::ENUMERATIONS.load(Ordering::Relaxed) >= 2 => {
            set(out::<*const c_char>(w, 3), |s| *s = RENAMED.as_ptr().cast())
        }
        D::TrThreadStringIdUnstable
        | D::TrParallelStringIdShared
        | D::TrTaskStringIdShared
        | D::TrStringIdCharset => string_id(d, w),
        D::TrThreadsMissingOne => set(out::<c_int>(w, 2), |n| *n = (*n - 1).max(0)),
        D::TrIcvOff => set(out::<i64>(w, 1), |v| *v += 1),
        D::TrStateSerial => set(out::<c_int>(w, 1), |v| *v = 0),
        D::IcvNameChanged if w[1] == 0 => {
            set(out::<*const c_char>(w, 3), |s| *s = RENAMED.as_ptr().cast())
        }
        // A state's name is a tool block the library filled: misspelled in place.
        D::StateNameChanged if w[1] == 0x102 => set(out::<*const c_char>(w, 3), |s| {
            if !s.is_null() {
                // SAFETY: the first byte of a non-empty NUL-terminated block (or its NUL).
                unsafe { *(*s as *mut u8) ^= 0x20 };
            }
        }),
        _ => rc,
    }
}

/// Sets SIGUSR2 to be ignored.
fn ignore_sigusr2() {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    let ignore = SigAction::new(SigHandler::SigIgn, SaFlags::empty(), SigSet::empty());
    // SAFETY: installs SIG_IGN, no handler code; changing the tool's signal configuration is
    // the deviation being injected.
    let _ = unsafe { sigaction(Signal::SIGUSR2, &ignore) };
}

/// Applies `f` to the out-parameter when there is one; the answer stays ok.
fn set<T>(p: Option<&mut T>, f: impl FnOnce(&mut T)) -> Rc {
    if let Some(p) = p {
        f(p);
    }
    Rc::OK
}

/// The deviations that turn a refusal into an answer: the first state or ICV for an unknown
/// current one.
fn retried(d: D, ep: EntryPoint, w: &[u64]) -> Option<Rc> {
    match d {
        D::StatesAcceptUnknown if ep == EntryPoint::EnumerateStates => from_the_start(ep, w),
        D::IcvsAcceptUnknown if ep == EntryPoint::EnumerateIcvs => from_the_start(ep, w),
        D::IcvStringAsInteger if ep == EntryPoint::GetIcvFromScope => {
            let v = out::<i64>(w, 3)?;
            *v = 0;
            Some(Rc::OK)
        }
        _ => None,
    }
}

/// The inner enumeration `ep` (`ompd_enumerate_states` or `ompd_enumerate_icvs`) called with the
/// tool's arguments but from its start (`ompt_state_undefined`, `ompd_icv_undefined`).
fn from_the_start(ep: EntryPoint, w: &[u64]) -> Option<Rc> {
    if ep == EntryPoint::EnumerateStates {
        let f = routine::<entry::EnumerateStates>(ep)?;
        // SAFETY: the tool's arguments with the first state (ompt_state_undefined).
        Some(unsafe { f(p(w[0]), 0x102, p(w[2]), p(w[3]), p(w[4])) })
    } else {
        let f = routine::<entry::EnumerateIcvs>(ep)?;
        // SAFETY: the tool's arguments with the first ICV (ompd_icv_undefined).
        Some(unsafe { f(p(w[0]), 0, p(w[2]), p(w[3]), p(w[4]), p(w[5])) })
    }
}

/// Changes the first entry of a display-control-variable vector: a value, a name, or the
/// entry itself for a static string.
fn dcv(d: D, w: &[u64]) -> Rc {
    let Some(vector) = out::<*const *const c_char>(w, 1) else {
        return Rc::OK;
    };
    // SAFETY: the vector the inner library allocated (NULL-terminated, entries in tool blocks).
    let first = unsafe { (*vector as *mut *const c_char).as_mut() };
    let Some(first) = first.filter(|e| !e.is_null()) else {
        return Rc::OK;
    };
    if d == D::DcvStaticEntry {
        free(*first as *mut c_void);
        *first = STATIC_ENTRY.as_ptr().cast();
        return Rc::OK;
    }
    // SAFETY: a NUL-terminated entry in a tool block the library owns until it returns.
    let text = unsafe { std::ffi::CStr::from_ptr(*first) }.to_bytes();
    let at = match d {
        D::DcvNameChanged => Some(0),
        _ => text
            .iter()
            .position(|b| *b == b'=')
            .map(|e| e + 1)
            .filter(|i| *i < text.len()),
    };
    if let Some(i) = at {
        // SAFETY: byte `i` lies inside the entry (before its NUL).
        unsafe {
            let b = (*first as *mut u8).add(i);
            *b = if *b == b'Z' { b'Y' } else { b'Z' };
        }
    }
    Rc::OK
}

/// Changes a TR string id in place (a tool block of at least two bytes: one character and NUL).
fn string_id(d: D, w: &[u64]) -> Rc {
    let Some(id) = out::<*mut u8>(w, 1).filter(|p| !p.is_null()) else {
        return Rc::OK;
    };
    let id = *id;
    // SAFETY: a NUL-terminated id the inner library wrote into a tool block; only bytes up to
    // its NUL are written.
    unsafe {
        if *id == 0 {
            return Rc::OK;
        }
        match d {
            D::TrThreadStringIdUnstable if CALLS.fetch_add(1, Ordering::Relaxed) % 2 == 1 => {
                *id = if *id == b'Z' { b'Y' } else { b'Z' };
            }
            D::TrParallelStringIdShared | D::TrTaskStringIdShared => {
                *id = b'S';
                *id.add(1) = 0;
            }
            D::TrStringIdCharset => *id = b'-',
            _ => {}
        }
    }
    Rc::OK
}

/// Enumerates one state further than asked: the state after the next one is reported.
fn skip_a_state(w: &[u64]) -> Rc {
    let Some(f) = routine::<entry::EnumerateStates>(EntryPoint::EnumerateStates) else {
        return Rc::OK;
    };
    let (Some(next), Some(name)) = (out::<i64>(w, 2), out::<*const c_char>(w, 3)) else {
        return Rc::OK;
    };
    if out::<i64>(w, 4).is_some_and(|more| *more == 0) {
        return Rc::OK;
    }
    free(*name as *mut c_void);
    // SAFETY: the tool's arguments, with the next state as the current one.
    unsafe { f(p(w[0]), *next, p(w[2]), p(w[3]), p(w[4])) }
}

/// A word back as a pointer.
fn p<T>(w: u64) -> *mut T {
    w as usize as *mut T
}
