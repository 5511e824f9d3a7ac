//! The entry points, one module per family of the specification's chapter. Each takes the
//! [`crate::Build`] first, then the C arguments, and returns the code; the work is done by a
//! function returning `Result`, so every early exit is a precise code.

pub mod aspace;
pub mod dcv;
pub mod icv;
pub(crate) mod icv_table;
pub mod library;
pub mod parallel;
pub mod states;
pub mod task;
pub mod thread;
pub mod tool_data;

use crate::cb::{self, Tool};
use crate::handles::{self, Aspace, Kind, Parallel, Task, Thread};
use crate::kmp;
use crate::layout::Size;
use crate::target::Target;
use crate::Build;
use ompd_abi::{ParallelHandle, Rc, TaskHandle, ThreadHandle};
use std::ffi::c_int;

/// The code of a routine's result.
pub(crate) fn rc(r: Result<(), Rc>) -> Rc {
    match r {
        Ok(()) => Rc::OK,
        Err(e) => e,
    }
}

/// The handle `p` of kind `T` (`stale_handle` when NULL or released, the build's wrong-kind code
/// for another live handle).
pub(crate) fn handle<'a, T: Kind>(b: &Build, p: *mut T) -> Result<&'a mut T, Rc> {
    handles::get(p, b.wrong_handle())
}

/// The tool and the target of the address space `ah` a handle belongs to.
pub(crate) fn target<'a>(b: &Build, ah: *mut Aspace) -> Result<Target<'a>, Rc> {
    let tool = cb::tool()?;
    let a = handle(b, ah)?;
    Ok(Target::new(tool, a))
}

/// The tool, or `callback_error` before `ompd_initialize`.
fn tool() -> Result<Tool, Rc> {
    cb::tool()
}

/// -1, 0 or 1 for the order of two keys.
fn order<T: Ord>(a: T, b: T) -> std::ffi::c_int {
    match a.cmp(&b) {
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Greater => 1,
    }
}

/// The `ompd_state` word: non-zero when the runtime tracks state for tools (debug-var).
fn ompd_state(t: &mut Target) -> Result<u64, Rc> {
    Ok(t.global_sized(b"ompd_state\0", Size::OmpdState, false)? as u64)
}

/// `needs_state_tracking` unless the runtime tracks state (OMPD-RC-008). A runtime without the
/// `ompd_state` switch (an older self-description) has nothing to turn off: it always keeps the
/// state words it describes.
fn tracking(t: &mut Target) -> Result<(), Rc> {
    if !t.traits.state_switch {
        return Ok(());
    }
    if ompd_state(t)? == 0 {
        Err(Rc::NEEDS_STATE_TRACKING)
    } else {
        Ok(())
    }
}

/// A thread handle and the target of its address space.
pub(crate) fn thread_target<'a>(
    b: &Build,
    th: *mut ThreadHandle,
) -> Result<(Thread, Target<'a>), Rc> {
    let h = *handle(b, th.cast::<Thread>())?;
    Ok((h, target(b, h.ah)?))
}

/// A parallel handle and the target of its address space.
pub(crate) fn parallel_target<'a>(
    b: &Build,
    ph: *mut ParallelHandle,
) -> Result<(Parallel, Target<'a>), Rc> {
    let p = *handle(b, ph.cast::<Parallel>())?;
    Ok((p, target(b, p.ah)?))
}

/// A task handle and the target of its address space.
pub(crate) fn task_target<'a>(b: &Build, task: *mut TaskHandle) -> Result<(Task, Target<'a>), Rc> {
    let k = *handle(b, task.cast::<Task>())?;
    Ok((k, target(b, k.ah)?))
}

/// The region `ph` names, its target and member `i` of its team (`bad_input` outside it).
pub(crate) fn member<'a>(
    b: &Build,
    ph: *mut ParallelHandle,
    i: c_int,
) -> Result<(Parallel, Target<'a>, u64), Rc> {
    let (p, mut t) = parallel_target(b, ph)?;
    let n = kmp::team_size(&mut t, p.t, p.lwt)?;
    let i = u64::try_from(i).map_err(|_| Rc::BAD_INPUT)?;
    if i as i64 >= n {
        return Err(Rc::BAD_INPUT);
    }
    Ok((p, t, i))
}
