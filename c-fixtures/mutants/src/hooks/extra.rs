//! The extra-callback deviations: before an inquiry, one callback of a kind the inner library
//! may not make, so the fault family sees the callback. Its failure is answered with
//! `ompd_rc_bad_input` (miscoded: a code the specification never gives for a callback's
//! failure), or with `ompd_rc_ok` and nothing written (forgotten: the answer is whatever the
//! caller's out-parameters held).

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
/// a global symbol with a thread context, and a thread context asked for with a wrong-sized id.
pub(super) fn before(d: D, ep: E, w: &[u64]) -> Option<Rc> {
    if d == D::ThreadContextForGlobal {
        global_with_thread_context();
        return None;
    }
    if d == D::PrintsWithoutPrinter && ep == E::Initialize {
        // A call through the NULL pointer, as the crash it is.
        if tool().is_some_and(|t| t.print_string.is_none()) {
            std::process::abort();
        }
        return None;
    }
    if d == D::ThreadIdSizeWrong {
        let t = tool()?;
        context_of_last_id(t, context(), 1);
        return None;
    }
    if !INQUIRIES.contains(&ep) {
        return None;
    }
    let t = tool()?;
    let ctx = if ep == E::ProcessInitialize {
        w[0] as usize as *mut ompd_abi::AddressSpaceContext
    } else {
        context()
    };
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
    let (call, failed) = extra_call(d)?;
    let rc = match call {
        Extra::Symbol => lookup(),
        Extra::Read => match (lookup(), t.read_memory) {
            (Rc::OK, Some(read)) => {
                let mut buf = [0u8; 4];
                // SAFETY: the tool's callback; a 4-byte buffer for a 4-byte read.
                unsafe { read(ctx, std::ptr::null_mut(), &addr, 4, buf.as_mut_ptr().cast()) }
            }
            (rc, _) => rc,
        },
        Extra::Conversion => match t.device_to_host {
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
        Extra::Alloc => alloc_and_free(t),
        Extra::ThreadContext => thread_context(t, ctx),
    };
    (rc != Rc::OK).then_some(failed)
}

/// The callback an extra-call deviation makes before an inquiry.
enum Extra {
    Symbol,
    Read,
    Conversion,
    Alloc,
    ThreadContext,
}

/// The extra call of `d`, and its answer when that call fails.
fn extra_call(d: D) -> Option<(Extra, Rc)> {
    Some(match d {
        D::SymbolFailureMiscoded => (Extra::Symbol, Rc::BAD_INPUT),
        D::ReadFailureMiscoded => (Extra::Read, Rc::BAD_INPUT),
        D::ConversionFailureMiscoded => (Extra::Conversion, Rc::BAD_INPUT),
        D::AllocFailureMiscoded => (Extra::Alloc, Rc::BAD_INPUT),
        D::ThreadContextFailureMiscoded => (Extra::ThreadContext, Rc::BAD_INPUT),
        D::SymbolFailureForgotten => (Extra::Symbol, Rc::OK),
        D::ReadFailureForgotten => (Extra::Read, Rc::OK),
        D::ConversionFailureForgotten => (Extra::Conversion, Rc::OK),
        D::AllocFailureForgotten => (Extra::Alloc, Rc::OK),
        D::ThreadContextFailureForgotten => (Extra::ThreadContext, Rc::OK),
        D::OneAddressSpaceReadForgotten => (Extra::Read, Rc::OK),
        _ => return None,
    })
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

/// The address-space context the tool gave at process initialize.
fn context() -> *mut ompd_abi::AddressSpaceContext {
    CONTEXT.load(Ordering::Acquire) as usize as *mut ompd_abi::AddressSpaceContext
}

/// Asks the tool for the thread context of the last thread id it asked a handle for, with the
/// id's size off by `skew` bytes: its answer and the context, `None` before any such id.
fn context_of_last_id(
    t: &ompd_abi::Callbacks,
    ctx: *mut ompd_abi::AddressSpaceContext,
    skew: u64,
) -> Option<(Rc, *mut ompd_abi::ThreadContext)> {
    let f = t.get_thread_context_for_thread_id?;
    let (kind, size, id) = (*THREAD_ID.lock().unwrap_or_else(|p| p.into_inner()))?;
    // Room for a skewed size: the id, then zeros.
    let bytes = [id, 0];
    let mut tc = std::ptr::null_mut();
    // SAFETY: the tool's callback with its own context, an id it gave the library (16 readable
    // bytes, more than any size asked for) and a valid out-parameter.
    let rc = unsafe { f(ctx, kind, size + skew, bytes.as_ptr().cast(), &mut tc) };
    Some((rc, tc))
}

/// Looks up the global `ompd_state` with the thread context of the last thread id asked for.
fn global_with_thread_context() {
    let Some(t) = tool() else { return };
    let Some(lookup) = t.symbol_addr_lookup else {
        return;
    };
    let ctx = context();
    if let Some((Rc::OK, tc)) = context_of_last_id(t, ctx, 0) {
        let mut addr = Address::default();
        // SAFETY: the tool's callback with its own context, a thread context it gave, and valid
        // out-parameters; the thread context for a global symbol is the deviation injected.
        unsafe { lookup(ctx, tc, c"ompd_state".as_ptr(), &mut addr, std::ptr::null()) };
    }
}

/// Looks up the thread context of the last thread id the tool asked a handle for (ok before any).
fn thread_context(t: &ompd_abi::Callbacks, ctx: *mut ompd_abi::AddressSpaceContext) -> Rc {
    match t.get_thread_context_for_thread_id {
        None => Rc::ERROR,
        Some(_) => context_of_last_id(t, ctx, 0).map_or(Rc::OK, |(rc, _)| rc),
    }
}
