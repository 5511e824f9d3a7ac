//! Deviations that act on every routine: NULL out-parameters answered with ok, NULL handles
//! dereferenced, and the callback faults a library must not take for success.

use super::{Deviation, TOOL};
use crate::wrap;
use ompd_abi::{EntryPoint, Rc, Role};
use std::sync::atomic::Ordering;

/// The generic deviations' part before the call.
pub(super) fn before(d: Deviation, ep: EntryPoint, w: &mut [u64]) -> Option<Rc> {
    let roles = ep.args().unwrap_or(&[]);
    let null = |pick: &dyn Fn(Role) -> bool| {
        roles
            .iter()
            .zip(w.iter())
            .any(|(a, v)| pick(a.role) && *v == 0)
    };
    match d {
        Deviation::NullOutputOk
            if null(&|r| matches!(r, Role::Out | Role::OutHandle(_) | Role::Buffer)) =>
        {
            Some(Rc::OK)
        }
        Deviation::NullInputOk if null(&|r| matches!(r, Role::In | Role::Context)) => Some(Rc::OK),
        Deviation::NullHandleCrashes if null(&|r| matches!(r, Role::InHandle(_))) => {
            crash();
            Some(Rc::ERROR)
        }
        Deviation::AspaceIcvReadFaultIgnored if ep != EntryPoint::Initialize => {
            let aspace = ompd_abi::Scope::ADDRESS_SPACE.0 as u64;
            wrap::arm(ep == EntryPoint::GetIcvFromScope && w.get(1) == Some(&aspace));
            None
        }
        Deviation::ReadFaultIgnored
        | Deviation::AspaceIcvReadFaultIgnored
        | Deviation::SymbolFaultIgnored
        | Deviation::ConversionFaultIgnored
        | Deviation::AllocFaultIgnored
        | Deviation::ConversionSkipped
            if ep == EntryPoint::Initialize && w.get(1).is_some_and(|p| *p != 0) =>
        {
            let tool = TOOL.load(Ordering::Acquire);
            w[1] = wrap::table(d, tool) as usize as u64;
            None
        }
        _ => None,
    }
}

/// Writes through a NULL pointer (SIGSEGV), as a library that trusts its handles does.
pub(super) fn crash() {
    let p: *mut u64 = std::ptr::null_mut();
    // SAFETY: none: this is the injected crash; the worker process dies with SIGSEGV.
    unsafe { std::ptr::write_volatile(p, 1) };
}
