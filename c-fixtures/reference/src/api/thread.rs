//! Thread handles: from a native id, by index in a team, their native id, state and order
//! (OMPD-HANDLE-THREAD-*, OMPD-STATE-*).

use super::{handle, order, rc, target, tracking};
use crate::handles::{self, Aspace, Thread};
use crate::kmp;
use crate::layout::{Field, Size};
use crate::target::Target;
use crate::Build;
use ompd_abi::{
    thread_id_kind, AddressSpaceHandle, ParallelHandle, Rc, ThreadContext, ThreadHandle,
};
use std::ffi::{c_int, c_void};

/// The longest native thread id the library accepts.
const MAX_ID: usize = 64;

/// `ompd_get_thread_handle`: the OpenMP thread of a native pthread id, or of an lwp id (the
/// kernel's; its size is the tool's to judge) where the runtime keeps its gtid thread-local.
pub fn get_thread_handle(
    b: &Build,
    h: *mut AddressSpaceHandle,
    kind: u64,
    size: u64,
    id: *const c_void,
    out: *mut *mut ThreadHandle,
) -> Rc {
    rc((|| {
        let ah = h.cast::<Aspace>();
        let mut t = target(b, ah)?;
        handles::need(out)?;
        let scan = lookup_by_scan(&mut t, kind, size)?;
        let mut buf = [0u8; MAX_ID];
        let id = handles::copy_in(id, size, &mut buf)?;
        let tctx = t.tool.thread_context(t.ctx(), kind, id)?;
        let th = if scan {
            by_scan(&mut t, id)?
        } else {
            by_gtid(&mut t, tctx)?
        };
        let made = handles::make(&t.tool, Thread::new(ah, tctx, th))?;
        handles::put(out, made.cast())
    })())
}

/// Whether the thread an id of `kind` and `size` names is found by scanning `__kmp_threads`
/// ([`scan_mode`]), once the id is one that can name a thread: a pthread id of the runtime's
/// `kmp_thread_t` width, or a non-empty lwp id where the runtime keeps its gtid thread-local
/// (only the thread's own TLS leads from an lwp id to its gtid; a scanned runtime keeps none).
/// An unknown kind or a wrong-sized pthread id is refused before any callback.
fn lookup_by_scan(t: &mut Target, kind: u64, size: u64) -> Result<bool, Rc> {
    match kind {
        thread_id_kind::PTHREAD if size != t.size(Size::ThreadId)? => Err(Rc::BAD_INPUT),
        thread_id_kind::PTHREAD => scan_mode(t),
        thread_id_kind::LWP if scan_mode(t)? => Err(Rc::UNSUPPORTED),
        thread_id_kind::LWP if size == 0 => Err(Rc::BAD_INPUT),
        thread_id_kind::LWP => Ok(false),
        _ => Err(Rc::UNSUPPORTED),
    }
}

/// True when the runtime keeps no thread-local gtid (`__kmp_gtid_mode` other than 3, native
/// TLS), so threads are found by their native id. A runtime without the variable (the lookup's
/// `error`) keeps them thread-local; any other failure to look it up or read it is the answer.
fn scan_mode(t: &Target) -> Result<bool, Rc> {
    match t.global(b"__kmp_gtid_mode\0") {
        Err(Rc::ERROR) => Ok(false),
        Err(e) => Err(e),
        Ok(_) => Ok(t.global_int(b"__kmp_gtid_mode\0")? != 3),
    }
}

/// The thread whose thread-local `__kmp_gtid` the thread context shows.
fn by_gtid(t: &mut Target, tctx: *mut ThreadContext) -> Result<u64, Rc> {
    let width = t.size(Size::Gtid)?;
    let a = t.tool.lookup(t.ctx(), tctx, b"__kmp_gtid\0")?;
    let gtid = t.scalar(a, tctx, width, true)?;
    let g = u64::try_from(gtid).map_err(|_| Rc::UNAVAILABLE)?;
    let info = kmp::info_of_gtid(t, g)?;
    kmp::thread_of_info(t, info)
}

/// The thread of `__kmp_threads` whose `ds_thread` holds `id`.
fn by_scan(t: &mut Target, id: &[u8]) -> Result<u64, Rc> {
    let cap = t.global_int(b"__kmp_threads_capacity\0")?;
    let cap = u64::try_from(cap)
        .map_err(|_| Rc::UNAVAILABLE)?
        .min(kmp::MAX_WALK);
    let mut buf = [0u8; MAX_ID];
    let have = buf.get_mut(..id.len()).ok_or(Rc::BAD_INPUT)?;
    for g in 0..cap {
        let info = kmp::info_of_gtid(t, g)?;
        if info == 0 {
            continue;
        }
        let th = kmp::thread_of_info(t, info)?;
        let a = kmp::ds_thread(t, th)?;
        t.raw(crate::target::at(a), std::ptr::null_mut(), have)?;
        if have == id {
            return Ok(th);
        }
    }
    Err(Rc::UNAVAILABLE)
}

/// `ompd_get_thread_id`: the thread's native pthread id, in the target's byte order.
pub fn get_thread_id(
    b: &Build,
    th: *mut ThreadHandle,
    kind: u64,
    size: u64,
    out: *mut c_void,
) -> Rc {
    rc((|| {
        let (thread, mut t) = super::thread_target(b, th)?;
        if out.is_null() {
            return Err(Rc::BAD_INPUT);
        }
        if kind != thread_id_kind::PTHREAD {
            return Err(Rc::UNSUPPORTED);
        }
        if size != t.size(Size::ThreadId)? {
            return Err(Rc::BAD_INPUT);
        }
        let mut buf = [0u8; MAX_ID];
        let n = usize::try_from(size).map_err(|_| Rc::BAD_INPUT)?;
        let id = buf.get_mut(..n).ok_or(Rc::BAD_INPUT)?;
        let a = kmp::ds_thread(&mut t, thread.th)?;
        t.raw(crate::target::at(a), std::ptr::null_mut(), id)?;
        handles::copy_out(out, size, id)
    })())
}

/// `ompd_rel_thread_handle`.
pub fn rel_thread_handle(b: &Build, th: *mut ThreadHandle) -> Rc {
    rc(super::tool().and_then(|t| handles::release(&t, th.cast::<Thread>(), b.wrong_handle())))
}

/// The order key of an address space: its tool context (handles of one context name one
/// address space).
pub(super) fn space_key(b: &Build, ah: *mut Aspace) -> Result<usize, Rc> {
    Ok(handle(b, ah)?.ctx as usize)
}

/// Compares two handles' keys: handles of different address spaces are different entities
/// (ordered by space before 6.0; `incompatible_handle` from 6.0, OMPD-RC-005).
pub(super) fn compare_keys(
    b: &Build,
    a: (usize, u64, u64),
    z: (usize, u64, u64),
) -> Result<c_int, Rc> {
    if a.0 != z.0 && b.is_6_0() {
        return Err(Rc::INCOMPATIBLE_HANDLE);
    }
    Ok(order(a, z))
}

/// `ompd_thread_handle_compare`.
pub fn thread_handle_compare(
    b: &Build,
    x: *mut ThreadHandle,
    y: *mut ThreadHandle,
    out: *mut c_int,
) -> Rc {
    rc((|| {
        let x = *handle(b, x.cast::<Thread>())?;
        let y = *handle(b, y.cast::<Thread>())?;
        handles::need(out)?;
        let kx = (space_key(b, x.ah)?, x.th, 0);
        let ky = (space_key(b, y.ah)?, y.th, 0);
        handles::put(out, compare_keys(b, kx, ky)?)
    })())
}

/// `ompd_get_thread_in_parallel`: thread `i` of the region's team.
pub fn get_thread_in_parallel(
    b: &Build,
    ph: *mut ParallelHandle,
    i: c_int,
    out: *mut *mut ThreadHandle,
) -> Rc {
    rc((|| {
        handles::need(out)?;
        let (p, mut t, i) = super::member(b, ph, i)?;
        let threads = t.field_ptr(p.t, Field::TThreads)?;
        if threads == 0 {
            return Err(Rc::UNAVAILABLE);
        }
        let slot = t.add(threads, i * t.pointer())?;
        let info = t.ptr(slot)?;
        let th = kmp::thread_of_info(&mut t, info)?;
        let made = handles::make(&t.tool, Thread::new(p.ah, std::ptr::null_mut(), th))?;
        handles::put(out, made.cast())
    })())
}

/// `ompd_get_state`: the thread's OMPT state and wait id (needs state tracking).
pub fn get_state(b: &Build, th: *mut ThreadHandle, state: *mut i64, wait_id: *mut u64) -> Rc {
    rc((|| {
        let (thread, mut t) = super::thread_target(b, th)?;
        handles::need(state)?;
        tracking(&mut t)?;
        let info = t.at(thread.th, Field::ThOmpt)?;
        let s = t.field(info, Field::OmptState, true)?;
        let w = t.field(info, Field::OmptWaitId, false)? as u64;
        handles::put(state, s)?;
        if !wait_id.is_null() {
            handles::put(wait_id, w)?;
        }
        Ok(())
    })())
}
