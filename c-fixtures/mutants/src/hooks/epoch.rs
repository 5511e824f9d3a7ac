//! Thread handles that die before they are released, which OMPD-HANDLE-THREAD-008 forbids: a
//! handle remembers an epoch when it was made, and the thread's queries refuse it as
//! `stale_handle` once the epoch changed.
//! - `ThreadHandleExpires`: the epoch is the runtime's thread count (`__kmp_all_nth`), so a
//!   handle dies when the process continues and another thread starts. Within one stop nothing
//!   changes, so only a handle kept across a continue shows it.
//! - `ThreadHandleDiesWithASpace`: the epoch is the number of address spaces released, so a
//!   handle dies when the tool releases any other address space.

use super::{keep, tool, written, ORIGINS_CAP, RELEASES};
use crate::table::Deviation;
use ompd_abi::{Address, EntryPoint, Rc};
use std::sync::atomic::Ordering;
use std::sync::Mutex;

/// Thread handles with their address space's context and the epoch when each was made.
static EPOCHS: Mutex<Vec<(u64, u64, u32)>> = Mutex::new(Vec::new());
/// Address-space handles with the tool's context each was initialized with.
static ASPACES: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());

/// Reserves the tables (the forwarder's constructor calls it: no heap inside an entry point).
pub(super) fn prepare() {
    EPOCHS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .reserve(ORIGINS_CAP);
    ASPACES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .reserve(ORIGINS_CAP);
}

/// Notes the context of the address-space handle `ompd_process_initialize` just made (`w`).
pub(super) fn initialized(w: &[u64]) {
    if let Some(h) = written(w[1]) {
        keep(&ASPACES, |(x, _)| *x, (h, w[0]));
    }
}

/// The runtime's thread count now in the address space of context `ctx`, read through the
/// tool's callbacks.
fn thread_count(ctx: u64) -> Option<u32> {
    let t = tool()?;
    let (lookup, read) = (t.symbol_addr_lookup?, t.read_memory?);
    let ctx = ctx as usize as *mut ompd_abi::AddressSpaceContext;
    let mut at = Address::default();
    let null = std::ptr::null_mut();
    // SAFETY: the tool's callbacks with its own context, a NUL-terminated name and valid
    // out-parameters; the buffer holds the 4 bytes asked for.
    unsafe {
        if lookup(
            ctx,
            null,
            c"__kmp_all_nth".as_ptr(),
            &mut at,
            std::ptr::null(),
        ) != Rc::OK
        {
            return None;
        }
        let mut n = [0u8; 4];
        (read(ctx, null, &at, 4, n.as_mut_ptr().cast()) == Rc::OK).then(|| u32::from_ne_bytes(n))
    }
}

/// The epoch of deviation `d` now in the address space of context `ctx`.
fn epoch(d: Deviation, ctx: u64) -> Option<u32> {
    match d {
        Deviation::ThreadHandleDiesWithASpace => Some(RELEASES.load(Ordering::Acquire) as u32),
        _ => thread_count(ctx),
    }
}

/// Notes the epoch for the thread handle `ompd_get_thread_handle` just made (`w`).
pub(super) fn made(d: Deviation, w: &[u64]) {
    let Some(h) = written(w[4]) else {
        return;
    };
    let ctx = {
        let a = ASPACES.lock().unwrap_or_else(|p| p.into_inner());
        a.iter().find(|(x, _)| *x == w[0]).map(|(_, c)| *c)
    };
    let Some((ctx, n)) = ctx.and_then(|c| Some((c, epoch(d, c)?))) else {
        return;
    };
    keep(&EPOCHS, |(x, _, _)| *x, (h, ctx, n));
}

/// `stale_handle` in place of a query of thread handle `w[0]` made in another epoch.
pub(super) fn refused(d: Deviation, ep: EntryPoint, w: &[u64]) -> Option<Rc> {
    let queries = [
        EntryPoint::GetThreadId,
        EntryPoint::ThreadHandleCompare,
        EntryPoint::GetCurrParallelHandle,
    ];
    if !queries.contains(&ep) {
        return None;
    }
    let (ctx, then) = {
        let e = EPOCHS.lock().unwrap_or_else(|p| p.into_inner());
        e.iter()
            .find(|(x, _, _)| *x == w[0])
            .map(|(_, c, n)| (*c, *n))?
    };
    (epoch(d, ctx)? != then).then_some(Rc::STALE_HANDLE)
}
