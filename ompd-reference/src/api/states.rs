//! `ompd_enumerate_states`: every OMPT state the runtime can record (OMPD-STATE-*).

use super::{handle, rc};
use crate::handles::{self, Aspace};
use crate::Build;
use ompd_abi::{state, AddressSpaceHandle, Rc};
use std::ffi::c_char;

/// `ompd_enumerate_states`: from `ompt_state_undefined` through every state of
/// `ompd_abi::state::ALL`; `more` is 0 with the last one, and an unknown or last `current` is
/// `bad_input`.
pub fn enumerate_states(
    b: &Build,
    h: *mut AddressSpaceHandle,
    current: i64,
    next: *mut i64,
    name: *mut *const c_char,
    more: *mut i64,
) -> Rc {
    rc((|| {
        handle(b, h.cast::<Aspace>())?;
        handles::need(next)?;
        handles::need(name)?;
        handles::need(more)?;
        let tool = super::tool()?;
        let at = if current == state::UNDEFINED {
            0
        } else {
            let i = state::ALL.iter().position(|(v, _)| *v == current);
            i.ok_or(Rc::BAD_INPUT)? + 1
        };
        let (value, text) = *state::ALL.get(at).ok_or(Rc::BAD_INPUT)?;
        let s = handles::c_string(&tool, text.as_bytes())?;
        handles::put(next, value)?;
        handles::put(name, s)?;
        handles::put(more, i64::from(at + 1 < state::ALL.len()))
    })())
}
