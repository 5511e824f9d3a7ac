//! `ompd_enumerate_states`: every OMPT state the runtime can record (OMPD-STATE-*).

use super::{handle, rc};
use crate::handles::{self, Aspace};
use crate::Build;
use ompd_abi::{AddressSpaceHandle, Rc};
use std::ffi::c_char;

/// `ompt_state_undefined`, the value that starts the enumeration.
const UNDEFINED: i64 = 0x102;

/// The states of the specification's `ompt_state_t` (OpenMP 5.0's, with the additions 5.1 and
/// 6.0 mark), value and name as its enumeration gives them, in its order. The library's own copy: a
/// test holds it equal to the checks' `ompd_abi::state::ALL`, so a slip in either shows.
const STATES: [(i64, &str); 24] = [
    (0x000, "ompt_state_work_serial"),
    (0x001, "ompt_state_work_parallel"),
    (0x002, "ompt_state_work_reduction"),
    (0x003, "ompt_state_work_free_agent"), // 6.0
    (0x004, "ompt_state_work_induction"),  // 6.0
    (0x010, "ompt_state_wait_barrier"),
    (0x011, "ompt_state_wait_barrier_implicit_parallel"),
    (0x012, "ompt_state_wait_barrier_implicit_workshare"),
    (0x013, "ompt_state_wait_barrier_implicit"),
    (0x014, "ompt_state_wait_barrier_explicit"),
    (0x015, "ompt_state_wait_barrier_implementation"), // 5.1
    (0x016, "ompt_state_wait_barrier_teams"),          // 5.1
    (0x020, "ompt_state_wait_taskwait"),
    (0x021, "ompt_state_wait_taskgroup"),
    (0x040, "ompt_state_wait_mutex"),
    (0x041, "ompt_state_wait_lock"),
    (0x042, "ompt_state_wait_critical"),
    (0x043, "ompt_state_wait_atomic"),
    (0x044, "ompt_state_wait_ordered"),
    (0x080, "ompt_state_wait_target"),
    (0x081, "ompt_state_wait_target_map"),
    (0x082, "ompt_state_wait_target_update"),
    (0x100, "ompt_state_idle"),
    (0x101, "ompt_state_overhead"),
];

/// `ompd_enumerate_states`: from `ompt_state_undefined` through every state of [`STATES`];
/// `more` is 0 with the last one, and an unknown or last `current` is `bad_input`.
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
        let at = if current == UNDEFINED {
            0
        } else {
            let i = STATES.iter().position(|(v, _)| *v == current);
            i.ok_or(Rc::BAD_INPUT)? + 1
        };
        let (value, text) = *STATES.get(at).ok_or(Rc::BAD_INPUT)?;
        let s = handles::c_string(&tool, text.as_bytes())?;
        handles::put(next, value)?;
        handles::put(name, s)?;
        handles::put(more, i64::from(at + 1 < STATES.len()))
    })())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_library_s_state_table_is_the_checks_one() {
        assert_eq!(super::STATES.as_slice(), ompd_abi::state::ALL);
        assert_eq!(super::UNDEFINED, ompd_abi::state::UNDEFINED);
    }
}
