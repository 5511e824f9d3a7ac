//! The miscoded-failure deviations: before an inquiry, one callback of a kind the inner library
//! may not make, whose failure is answered with `ompd_rc_bad_input` (a code the specification
//! never gives for a callback's failure), so the fault family sees the callback and judges the
//! code.

use super::{tool, Deviation as D, CONTEXT, THREAD_ID};
use ompd_abi::{Address, EntryPoint as E, Rc};
use std::ffi::c_void;
use std::sync::atomic::Ordering;

/// The inquiries the fault family calls.
const INQUIRIES: &[E] = &[
    E::ProcessInitialize,
    E::GetOmpVersion,
    E::GetOmpVersionString,
    E::GetThreadHandle,
    E::GetThreadInParallel,
    E::GetThreadId,
    E::GetCurrParallelHandle,
    E::GetEnclosingParallelHandle,
    E::GetTaskParallelHandle,
    E::GetCurrTaskHandle,
    E::GetGeneratingTaskHandle,
    E::GetSchedulingTaskHandle,
    E::GetTaskInParallel,
    E::GetTaskFunction,
    E::GetTaskFrame,
    E::EnumerateStates,
    E::GetState,
    E::GetDisplayControlVars,
    E::EnumerateIcvs,
    E::GetIcvFromScope,
    E::GetIcvStringFromScope,
    E::GetToolData,
];

/// The miscoded deviations' extra callback; `Some(bad_input)` when it failed. Also the lookup of
/// a global symbol with a thread context.
pub(super) fn before(d: D, ep: E, w: &[u64]) -> Option<Rc> {
    if d == D::ThreadContextForGlobal {
        global_with_thread_context();
        return None;
    }
    if !INQUIRIES.contains(&ep) {
        return None;
    }
    let t = tool()?;
    let ctx = if ep == E::ProcessInitialize {
        w[0]
    } else {
        CONTEXT.load(Ordering::Acquire)
    } as usize as *mut ompd_abi::AddressSpaceContext;
    let mut addr = Address::default();
    let mut lookup = || match t.symbol_addr_lookup {
        // SAFETY: the tool's callback with its own context and valid out-parameters.
        Some(f) => unsafe {
            f(
                ctx,
                std::ptr::null_mut(),
                c"ompd_state".as_ptr(),
                &mut addr,
                std::ptr::null(),
            )
        },
        None => Rc::ERROR,
    };
    let rc = match d {
        D::SymbolFailureMiscoded => lookup(),
        D::ReadFailureMiscoded => match (lookup(), t.read_memory) {
            (Rc::OK, Some(read)) => {
                let mut buf = [0u8; 4];
                // SAFETY: the tool's callback; a 4-byte buffer for a 4-byte read.
                unsafe { read(ctx, std::ptr::null_mut(), &addr, 4, buf.as_mut_ptr().cast()) }
            }
            (rc, _) => rc,
        },
        D::ConversionFailureMiscoded => match t.device_to_host {
            Some(f) => {
                let (i, mut o) = (1u32, 0u32);
                // SAFETY: the tool's callback; 4-byte input and output.
                unsafe {
                    f(
                        ctx,
                        (&i as *const u32).cast(),
                        4,
                        1,
                        (&mut o as *mut u32).cast(),
                    )
                }
            }
            None => Rc::ERROR,
        },
        D::AllocFailureMiscoded => alloc_and_free(t),
        D::ThreadContextFailureMiscoded => thread_context(t, ctx),
        _ => return None,
    };
    (rc != Rc::OK).then_some(Rc::BAD_INPUT)
}

/// Allocates a block and frees it.
fn alloc_and_free(t: &ompd_abi::Callbacks) -> Rc {
    let (Some(alloc), Some(free)) = (t.alloc_memory, t.free_memory) else {
        return Rc::ERROR;
    };
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: the tool's callbacks, called as OMPD specifies.
    let rc = unsafe { alloc(8, &mut p) };
    if rc == Rc::OK {
        // SAFETY: the block just allocated.
        unsafe { free(p) };
    }
    rc
}

/// Looks up the global `ompd_state` with the thread context of the last thread id asked for.
fn global_with_thread_context() {
    let Some(t) = tool() else { return };
    let ctx = CONTEXT.load(Ordering::Acquire) as usize as *mut ompd_abi::AddressSpaceContext;
    let (Some(get), Some(lookup)) = (t.get_thread_context_for_thread_id, t.symbol_addr_lookup)
    else {
        return;
    };
    let Some((kind, size, id)) = *THREAD_ID.lock().unwrap_or_else(|p| p.into_inner()) else {
        return;
    };
    let mut tc = std::ptr::null_mut();
    let mut addr = Address::default();
    // SAFETY: the tool's callbacks with its own context, an id it gave the library, and valid
    // out-parameters; the thread context for a global symbol is the deviation being injected.
    unsafe {
        if get(ctx, kind, size, (&id as *const u64).cast(), &mut tc) == Rc::OK {
            lookup(ctx, tc, c"ompd_state".as_ptr(), &mut addr, std::ptr::null());
        }
    }
}

/// Looks up the thread context of the last thread id the tool asked a handle for.
fn thread_context(t: &ompd_abi::Callbacks, ctx: *mut ompd_abi::AddressSpaceContext) -> Rc {
    let Some(f) = t.get_thread_context_for_thread_id else {
        return Rc::ERROR;
    };
    let Some((kind, size, id)) = *THREAD_ID.lock().unwrap_or_else(|p| p.into_inner()) else {
        return Rc::OK;
    };
    let mut tc = std::ptr::null_mut();
    // SAFETY: the tool's callback with an id it gave the library itself.
    unsafe { f(ctx, kind, size, (&id as *const u64).cast(), &mut tc) }
}
