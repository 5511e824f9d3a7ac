//! Task handles: a thread's current task, the generating and scheduling tasks, a region's
//! implicit tasks, their order, entry point and frames (OMPD-HANDLE-TASK-*, OMPD-FRAME-*).

use super::thread::{compare_keys, space_key};
use super::{handle, rc, tracking};
use crate::handles::{self, Task};
use crate::kmp;
use crate::layout::{Field, Mask, Size};
use crate::target::{at, Target};
use crate::Build;
use ompd_abi::{frame_flag, Address, FrameInfo, ParallelHandle, Rc, TaskHandle, ThreadHandle};
use std::ffi::c_int;

/// Places a task handle for `(td, lwt)` in the tool's out-parameter.
fn hand_out(t: &Target, k: Task, out: *mut *mut TaskHandle) -> Result<(), Rc> {
    let made = handles::make(&t.tool, k)?;
    handles::put(out, made.cast())
}

/// `ompd_get_curr_task_handle`: the task the thread executes.
pub fn get_curr_task_handle(b: &Build, th: *mut ThreadHandle, out: *mut *mut TaskHandle) -> Rc {
    rc((|| {
        let (thread, mut t) = super::thread_target(b, th)?;
        handles::need(out)?;
        let td = t.field_ptr(thread.th, Field::ThCurrentTask)?;
        if td == 0 {
            return Err(Rc::UNAVAILABLE);
        }
        hand_out(&t, Task::new(thread.ah, td, 0), out)
    })())
}

/// `ompd_get_generating_task_handle`: the task that encountered the construct. For the implicit
/// task of a serialized level that is the next outer level's implicit task.
pub fn get_generating_task_handle(
    b: &Build,
    task: *mut TaskHandle,
    out: *mut *mut TaskHandle,
) -> Rc {
    rc((|| {
        let (k, mut t) = super::task_target(b, task)?;
        handles::need(out)?;
        let next = if k.lwt != 0 {
            kmp::lwt_parent(&mut t, k.lwt)?
        } else if kmp::flag(&mut t, k.td, Mask::TaskType)? {
            0
        } else {
            let team = kmp::task_team(&mut t, k.td)?;
            kmp::first_lwt(&mut t, team)?
        };
        if next != 0 {
            return hand_out(&t, Task::new(k.ah, k.td, next), out);
        }
        let parent = t.field_ptr(k.td, Field::TdParent)?;
        if parent == 0 {
            return Err(Rc::UNAVAILABLE);
        }
        hand_out(&t, Task::new(k.ah, parent, 0), out)
    })())
}

/// `ompd_get_scheduling_task_handle`: the task whose scheduling point started this one.
pub fn get_scheduling_task_handle(
    b: &Build,
    task: *mut TaskHandle,
    out: *mut *mut TaskHandle,
) -> Rc {
    rc((|| {
        let (k, mut t) = super::task_target(b, task)?;
        handles::need(out)?;
        let info = kmp::task_info(&mut t, k.td, k.lwt)?;
        let s = t.field_ptr(info, Field::TaskInfoScheduling)?;
        if s == 0 {
            return Err(Rc::UNAVAILABLE);
        }
        hand_out(&t, Task::new(k.ah, s, 0), out)
    })())
}

/// `ompd_get_task_in_parallel`: implicit task `i` of the region.
pub fn get_task_in_parallel(
    b: &Build,
    ph: *mut ParallelHandle,
    i: c_int,
    out: *mut *mut TaskHandle,
) -> Rc {
    rc((|| {
        handles::need(out)?;
        let (p, mut t, i) = super::member(b, ph, i)?;
        let base = t.field_ptr(p.t, Field::TImplicitTasks)?;
        if base == 0 {
            return Err(Rc::UNAVAILABLE);
        }
        let stride = t.size(Size::Taskdata)?;
        let td = t.add(base, i.checked_mul(stride).ok_or(Rc::ERROR)?)?;
        hand_out(&t, Task::new(p.ah, td, p.lwt), out)
    })())
}

/// `ompd_rel_task_handle`.
pub fn rel_task_handle(b: &Build, task: *mut TaskHandle) -> Rc {
    rc(super::tool().and_then(|t| handles::release(&t, task.cast::<Task>(), b.wrong_handle())))
}

/// `ompd_task_handle_compare`.
pub fn task_handle_compare(
    b: &Build,
    x: *mut TaskHandle,
    y: *mut TaskHandle,
    out: *mut c_int,
) -> Rc {
    rc((|| {
        let x = *handle(b, x.cast::<Task>())?;
        let y = *handle(b, y.cast::<Task>())?;
        handles::need(out)?;
        let kx = (space_key(b, x.ah)?, x.td, x.lwt);
        let ky = (space_key(b, y.ah)?, y.td, y.lwt);
        handles::put(out, compare_keys(b, kx, ky)?)
    })())
}

/// The all-ones value of a target pointer: the runtime's marker of "no outlined code".
fn all_ones(t: &Target) -> u64 {
    u64::MAX >> (64 - 8 * t.pointer().clamp(1, 8))
}

/// `ompd_get_task_function`: an explicit task's routine, an implicit task's region function;
/// `unavailable` for a task without outlined code (the initial task).
pub fn get_task_function(b: &Build, task: *mut TaskHandle, out: *mut Address) -> Rc {
    rc((|| {
        let (k, mut t) = super::task_target(b, task)?;
        handles::need(out)?;
        let f = if kmp::flag(&mut t, k.td, Mask::TaskType)? {
            let task = kmp::task_of(&mut t, k.td)?;
            t.field(task, Field::TaskRoutine, false)? as u64
        } else {
            let team = kmp::task_team(&mut t, k.td)?;
            t.field(team, Field::TPkfn, false)? as u64
        };
        if f == 0 || f & all_ones(&t) == all_ones(&t) {
            return Err(Rc::UNAVAILABLE);
        }
        handles::put(out, at(f))
    })())
}

/// `ompd_get_task_frame`: the task's exit and enter frames (needs state tracking). The flags
/// are the kmp runtime's conventions, which its memory does not describe: the exit frame is
/// the runtime's, the enter frame the application's, both frame pointers.
pub fn get_task_frame(
    b: &Build,
    task: *mut TaskHandle,
    exit: *mut FrameInfo,
    enter: *mut FrameInfo,
) -> Rc {
    rc((|| {
        let (k, mut t) = super::task_target(b, task)?;
        handles::need(exit)?;
        handles::need(enter)?;
        tracking(&mut t)?;
        let info = kmp::task_info(&mut t, k.td, k.lwt)?;
        let frame = t.at(info, Field::TaskInfoFrame)?;
        // Each frame is an `ompt_data_t` whose `ptr` member holds the address.
        let x = t.field_ptr(frame, Field::FrameExit)?;
        let e = t.field_ptr(frame, Field::FrameEnter)?;
        let info = |a: u64, who: i64| FrameInfo {
            frame_address: at(a),
            frame_flag: who | frame_flag::FRAMEPOINTER,
        };
        handles::put(exit, info(x, frame_flag::RUNTIME))?;
        handles::put(enter, info(e, frame_flag::APPLICATION))
    })())
}
