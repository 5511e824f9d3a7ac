//! Parallel handles: the current region of a thread, the enclosing region, a task's region, and
//! their order (OMPD-HANDLE-PAR-*).

use super::thread::{compare_keys, space_key};
use super::{handle, rc};
use crate::handles::{self, Parallel};
use crate::kmp;
use crate::layout::Field;
use crate::Build;
use ompd_abi::{ParallelHandle, Rc, TaskHandle, ThreadHandle};
use std::ffi::c_int;

/// `ompd_get_curr_parallel_handle`: the innermost region the thread is in.
pub fn get_curr_parallel_handle(
    b: &Build,
    th: *mut ThreadHandle,
    out: *mut *mut ParallelHandle,
) -> Rc {
    rc((|| {
        let (thread, mut t) = super::thread_target(b, th)?;
        handles::need(out)?;
        let team_p = t.field_ptr(thread.th, Field::ThTeam)?;
        let team = kmp::team(&mut t, team_p)?;
        let made = handles::make(&t.tool, Parallel::new(thread.ah, team, 0))?;
        handles::put(out, made.cast())
    })())
}

/// `ompd_get_enclosing_parallel_handle`: the next outer serialized level of the run, else the
/// parent team's region; `unavailable` for the outermost region.
pub fn get_enclosing_parallel_handle(
    b: &Build,
    ph: *mut ParallelHandle,
    out: *mut *mut ParallelHandle,
) -> Rc {
    rc((|| {
        let (p, mut t) = super::parallel_target(b, ph)?;
        handles::need(out)?;
        let next = if p.lwt == 0 {
            kmp::first_lwt(&mut t, p.t)?
        } else {
            kmp::lwt_parent(&mut t, p.lwt)?
        };
        let (team, lwt) = if next != 0 {
            (p.t, next)
        } else {
            let parent = t.field_ptr(p.t, Field::TParent)?;
            (kmp::team(&mut t, parent)?, 0)
        };
        let made = handles::make(&t.tool, Parallel::new(p.ah, team, lwt))?;
        handles::put(out, made.cast())
    })())
}

/// `ompd_get_task_parallel_handle`: the region a task binds to.
pub fn get_task_parallel_handle(
    b: &Build,
    task: *mut TaskHandle,
    out: *mut *mut ParallelHandle,
) -> Rc {
    rc((|| {
        let (k, mut t) = super::task_target(b, task)?;
        handles::need(out)?;
        let team = kmp::task_team(&mut t, k.td)?;
        let made = handles::make(&t.tool, Parallel::new(k.ah, team, k.lwt))?;
        handles::put(out, made.cast())
    })())
}

/// `ompd_rel_parallel_handle`.
pub fn rel_parallel_handle(b: &Build, ph: *mut ParallelHandle) -> Rc {
    rc(super::tool().and_then(|t| handles::release(&t, ph.cast::<Parallel>(), b.wrong_handle())))
}

/// `ompd_parallel_handle_compare`.
pub fn parallel_handle_compare(
    b: &Build,
    x: *mut ParallelHandle,
    y: *mut ParallelHandle,
    out: *mut c_int,
) -> Rc {
    rc((|| {
        let x = *handle(b, x.cast::<Parallel>())?;
        let y = *handle(b, y.cast::<Parallel>())?;
        handles::need(out)?;
        let kx = (space_key(b, x.ah)?, x.t, x.lwt);
        let ky = (space_key(b, y.ah)?, y.t, y.lwt);
        handles::put(out, compare_keys(b, kx, ky)?)
    })())
}
