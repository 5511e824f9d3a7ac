//! Deviations at the edges a correct library guards: a parent chain walked to its root with no
//! bound, a NULL pointer of the target answered with ok, the implicit task of a serialized region
//! refused, thread-id sizes of the library's own host, and a process without its runtime
//! accepted.

use super::Deviation as D;
use crate::inner::routine;
use ompd_abi::{entry, EntryPoint as E, Rc, TaskHandle};
use std::ffi::c_int;

/// Calls the inner library's routine `$name` (an `ompd_abi::entry` type and `EntryPoint`
/// variant of that name) with live handles of the inner library and valid out-parameters;
/// `ompd_rc_error` when it cannot be found.
macro_rules! call {
    ($name:ident($($arg:expr),*)) => {
        match routine::<entry::$name>(E::$name) {
            // SAFETY: the inner library's routine of that type, called with handles it made
            // and out-parameters that live across the call.
            Some(f) => unsafe { f($($arg),*) },
            None => Rc::ERROR,
        }
    };
}

pub(super) use call;

/// Steps a chain walk takes at most: far past any chain of an intact image (the tool's callback
/// budget stops a cycle long before).
const MAX_STEPS: usize = 1 << 16;

/// What the deviation answers in place of the inner routine's `rc`; `None`: not one of these.
pub(super) fn after(d: D, ep: E, w: &[u64], rc: Rc) -> Option<Rc> {
    match (d, ep, rc) {
        (D::ChainWalkedToRoot, E::GetCurrParallelHandle | E::GetCurrTaskHandle, Rc::OK) => {
            Some(walked(ep, w[1]))
        }
        (
            D::NullPointerAnsweredOk,
            E::GetCurrParallelHandle | E::GetCurrTaskHandle | E::GetTaskParallelHandle,
            Rc::UNAVAILABLE,
        ) => Some(null_handle(w[1])),
        (D::SerializedTaskFunctionUnavailable, E::GetTaskFunction, Rc::OK)
            if in_serialized_region(w[0]) =>
        {
            Some(Rc::UNAVAILABLE)
        }
        (D::DeviceKindSizeOfHost, E::GetDeviceThreadIdKinds, Rc::OK) => Some(host_sizes(w)),
        (D::ProcessInitializeLazy, E::ProcessInitialize, Rc::INCOMPATIBLE) => Some(own_space(w[1])),
        _ => None,
    }
}

/// Walks the chain above the handle the inner routine wrote at `out` (the enclosing regions of
/// a region, the generating tasks of a task) to its root; answers ok when the walk ended there,
/// else releases that handle and answers the walk's code.
fn walked(ep: E, out: u64) -> Rc {
    // SAFETY: the tool's out-parameter, written by the inner routine on ok.
    let Some(&start) = (unsafe { (out as usize as *const u64).as_ref() }) else {
        return Rc::OK;
    };
    let rc = if ep == E::GetCurrParallelHandle {
        let step = routine::<entry::GetEnclosingParallelHandle>(E::GetEnclosingParallelHandle);
        let rel = routine::<entry::RelParallelHandle>(E::RelParallelHandle);
        step.zip(rel)
            .map(|(s, r)| to_root(start as usize as _, s, r))
    } else {
        let step = routine::<entry::GetGeneratingTaskHandle>(E::GetGeneratingTaskHandle);
        let rel = routine::<entry::RelTaskHandle>(E::RelTaskHandle);
        step.zip(rel)
            .map(|(s, r)| to_root(start as usize as _, s, r))
    };
    match rc.unwrap_or(Rc::UNAVAILABLE) {
        Rc::UNAVAILABLE => Rc::OK,
        failed => {
            release(ep, start);
            failed
        }
    }
}

/// Releases the handle `h` the inner routine `ep` made.
fn release(ep: E, h: u64) {
    if ep == E::GetCurrParallelHandle {
        call!(RelParallelHandle(h as usize as _));
    } else {
        call!(RelTaskHandle(h as usize as _));
    }
}

/// Follows `step` from `start` until it refuses, releasing every handle it made on the way;
/// answers the refusal (`unavailable` at the root), or error after [`MAX_STEPS`].
fn to_root<H>(
    start: *mut H,
    step: unsafe extern "C" fn(*mut H, *mut *mut H) -> Rc,
    rel: unsafe extern "C" fn(*mut H) -> Rc,
) -> Rc {
    let mut cur = start;
    for _ in 0..MAX_STEPS {
        let mut next = std::ptr::null_mut();
        // SAFETY: a live handle of the inner library and an out-parameter on the stack.
        let rc = unsafe { step(cur, &mut next) };
        if cur != start {
            // SAFETY: a handle this walk made, released once.
            unsafe { rel(cur) };
        }
        if rc != Rc::OK {
            return rc;
        }
        cur = next;
    }
    if cur != start {
        // SAFETY: the last handle this walk made.
        unsafe { rel(cur) };
    }
    Rc::ERROR
}

/// Writes a NULL handle to the tool's out-parameter at `out`; answers ok.
fn null_handle(out: u64) -> Rc {
    // SAFETY: the tool's handle out-parameter (NULL gives None).
    if let Some(p) = unsafe { (out as usize as *mut u64).as_mut() } {
        *p = 0;
    }
    Rc::OK
}

/// True when the task handle names the implicit task of a serialized region: of an outer level
/// of a serialized run (its serialized-region record word is set), or the implicit task of a
/// one-thread team that has an enclosing region.
fn in_serialized_region(task: u64) -> bool {
    let task = task as usize as *mut TaskHandle;
    if super::values::handle_word(task as u64, ompd_reference::KEY_OFFSETS.task.1) != 0 {
        return true;
    }
    let Some(ph) = made(|out| call!(GetTaskParallelHandle(task, out))) else {
        return false;
    };
    let one_thread = made(|out| call!(GetThreadInParallel(ph, 1, out)))
        .map(|th| call!(RelThreadHandle(th)))
        .is_none();
    let nested = made(|out| call!(GetEnclosingParallelHandle(ph, out)))
        .map(|outer| call!(RelParallelHandle(outer)))
        .is_some();
    let implicit = made(|out| call!(GetTaskInParallel(ph, 0, out))).is_some_and(|first| {
        let mut cmp: c_int = 1;
        let same = call!(TaskHandleCompare(task, first, &mut cmp)) == Rc::OK && cmp == 0;
        call!(RelTaskHandle(first));
        same
    });
    call!(RelParallelHandle(ph));
    one_thread && nested && implicit
}

/// The handle an inner routine wrote through `f`'s out-parameter, when it answered ok.
fn made<H>(f: impl FnOnce(*mut *mut H) -> Rc) -> Option<*mut H> {
    let mut out = std::ptr::null_mut();
    (f(&mut out) == Rc::OK && !out.is_null()).then_some(out)
}

/// Writes an address-space handle of the forwarder's own (a block no routine of the inner
/// library accepts) to the tool's out-parameter at `out`; answers ok.
fn own_space(out: u64) -> Rc {
    static BLOCK: [u64; 8] = [0; 8];
    // SAFETY: the tool's handle out-parameter (NULL gives None).
    if let Some(p) = unsafe { (out as usize as *mut u64).as_mut() } {
        *p = BLOCK.as_ptr() as u64;
    }
    Rc::OK
}

/// Overwrites every listed size with the library's own host size of a thread id.
fn host_sizes(w: &[u64]) -> Rc {
    // SAFETY: the tool's out-parameters, written by the inner routine on ok: `*sizes` is an
    // array of `*count` words.
    unsafe {
        let (Some(sizes), Some(count)) = (
            (w[2] as usize as *const *mut u64).as_ref(),
            (w[3] as usize as *const c_int).as_ref(),
        ) else {
            return Rc::OK;
        };
        for i in 0..usize::try_from(*count).unwrap_or(0) {
            *sizes.add(i) = std::mem::size_of::<nix::libc::pthread_t>() as u64;
        }
    }
    Rc::OK
}
