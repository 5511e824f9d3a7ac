//! The TR 2.001 routines whose form differs from 5.x: initialization with the TR table, the
//! version, vectors of handles, string ids, the per-ICV getters, and the TR's forms of the
//! thread id, the task frame and the release of display control variables. Everything else a TR
//! routine does is the 5.x routine of the same meaning (`tr::mod` maps the names).

use crate::api;
use crate::handles::{self, Parallel, Task, Thread};
use crate::kmp;
use crate::layout::Field;
use crate::target::Target;
use crate::text::Buf;
use crate::{cb, Build};
use ompd_abi::thread_id_kind;
use ompd_abi::tr::{Callbacks as TrCallbacks, TrWord};
use ompd_abi::{
    Address, AddressSpaceHandle, FrameInfo, ParallelHandle, Rc, Scope, TaskHandle, ThreadHandle,
};
use std::ffi::{c_char, c_int, c_void};
use std::fmt::Write as _;

/// The TR defines no numeric version; this library reports the TR's date, yyyymm.
pub const TR_VERSION: c_int = 201607;

/// `ompd_initialize` (TR §4.1): the TR table, copied; a 5.0 table of adapters is installed.
pub fn initialize(_: &Build, table: *const TrCallbacks) -> Rc {
    api::rc(
        handles::read_table(table)
            .and_then(super::cb::adopt)
            .and_then(|t| cb::install(t, ompd_abi::Generation::Tr2)),
    )
}

/// `ompd_get_version` (TR §4.1).
pub fn get_version(_: &Build, v: *mut c_int) -> Rc {
    api::rc(handles::put(v, TR_VERSION))
}

/// The number of slots of `__kmp_threads` the library walks.
fn capacity(t: &Target) -> Result<u64, Rc> {
    let cap = t.global_int(b"__kmp_threads_capacity\0")?;
    Ok(u64::try_from(cap)
        .map_err(|_| Rc::ERROR)?
        .min(kmp::MAX_WALK))
}

/// The runtime's hidden helper threads (gtids 1..=n, kept for `target nowait` tasks and never
/// part of the program's OpenMP threads); 0 when the runtime has none.
fn hidden_helpers(t: &Target) -> u64 {
    t.global_int(b"__kmp_hidden_helper_threads_num\0")
        .ok()
        .and_then(|n| u64::try_from(n).ok())
        .unwrap_or(0)
}

/// The `kmp_info_t` of gtid `g` when it is an OpenMP thread of the program (0 otherwise).
fn program_thread(t: &mut Target, g: u64, helpers: u64) -> Result<u64, Rc> {
    if (1..=helpers).contains(&g) {
        return Ok(0);
    }
    kmp::info_of_gtid(t, g)
}

/// `ompd_get_threads` (TR §7.2): a tool-owned vector of a handle per OpenMP thread; with a NULL
/// vector, only the count.
pub fn get_threads(
    b: &Build,
    h: *mut AddressSpaceHandle,
    vector: *mut *mut *mut ThreadHandle,
    count: *mut c_int,
) -> Rc {
    api::rc((|| {
        let ah = h.cast::<handles::Aspace>();
        let mut t = api::target(b, ah)?;
        handles::need(count)?;
        let cap = capacity(&t)?;
        let helpers = hidden_helpers(&t);
        let mut n = 0usize;
        for g in 0..cap {
            if program_thread(&mut t, g, helpers)? != 0 {
                n += 1;
            }
        }
        if !vector.is_null() {
            let mut g = 0u64;
            let tool = t.tool;
            let v = handles::handle_vector(
                &tool,
                n,
                |_, slot: *mut *mut ThreadHandle| {
                    api::rc((|| {
                        let th = loop {
                            let info = program_thread(&mut t, g, helpers)?;
                            g += 1;
                            if info != 0 {
                                break kmp::thread_of_info(&mut t, info)?;
                            }
                        };
                        let made = handles::make(&tool, Thread::new(ah, std::ptr::null_mut(), th))?;
                        handles::put(slot, made.cast())
                    })())
                },
                |th| {
                    api::thread::rel_thread_handle(b, th);
                },
            )?;
            handles::put(vector, v)?;
        }
        handles::put(count, c_int::try_from(n).map_err(|_| Rc::ERROR)?)
    })())
}

/// The tool and the number of threads of a region, for the vector routines (the address
/// space's target is let go before the 5.x routines that fill the vector take it again).
fn team_size(b: &Build, ph: *mut ParallelHandle) -> Result<(crate::cb::Tool, usize), Rc> {
    let p = *api::handle(b, ph.cast::<Parallel>())?;
    let mut t = api::target(b, p.ah)?;
    let n = kmp::team_size(&mut t, p.t, p.lwt)?;
    Ok((t.tool, usize::try_from(n).map_err(|_| Rc::ERROR)?))
}

/// `ompd_get_thread_in_parallel` (TR §7.2): a vector of the region's threads.
pub fn get_thread_in_parallel(
    b: &Build,
    ph: *mut ParallelHandle,
    vector: *mut *mut *mut ThreadHandle,
    count: *mut c_int,
) -> Rc {
    api::rc((|| {
        handles::need(count)?;
        let (tool, n) = team_size(b, ph)?;
        if !vector.is_null() {
            let v = handles::handle_vector(
                &tool,
                n,
                |i, slot| api::thread::get_thread_in_parallel(b, ph, i as c_int, slot),
                |th| {
                    api::thread::rel_thread_handle(b, th);
                },
            )?;
            handles::put(vector, v)?;
        }
        handles::put(count, c_int::try_from(n).map_err(|_| Rc::ERROR)?)
    })())
}

/// `ompd_get_implicit_task_in_parallel` (TR §7.4): a vector of the region's implicit tasks.
pub fn get_implicit_task_in_parallel(
    b: &Build,
    ph: *mut ParallelHandle,
    vector: *mut *mut *mut TaskHandle,
    count: *mut c_int,
) -> Rc {
    api::rc((|| {
        handles::need(count)?;
        handles::need(vector)?;
        let (tool, n) = team_size(b, ph)?;
        let v = handles::handle_vector(
            &tool,
            n,
            |i, slot| api::task::get_task_in_parallel(b, ph, i as c_int, slot),
            |k| {
                api::task::rel_task_handle(b, k);
            },
        )?;
        handles::put(vector, v)?;
        handles::put(count, c_int::try_from(n).map_err(|_| Rc::ERROR)?)
    })())
}

/// `ompd_get_master_thread_in_parallel` (TR §7.2): thread 0 of the region.
pub fn get_master_thread_in_parallel(
    b: &Build,
    ph: *mut ParallelHandle,
    out: *mut *mut ThreadHandle,
) -> Rc {
    api::thread::get_thread_in_parallel(b, ph, 0, out)
}

/// A string id: a kind letter and the handle's keys in hexadecimal, `[A-Za-z0-9_]+`, in a
/// tool-owned block (TR §7.2–7.4: equal for handles that compare equal, distinct otherwise).
fn string_id(t: &Target, kind: char, keys: &[u64], out: *mut *mut c_char) -> Result<(), Rc> {
    handles::need(out)?;
    let mut s = Buf::<64>::new();
    write!(s, "{kind}").map_err(|_| Rc::ERROR)?;
    for k in keys {
        write!(s, "_{k:x}").map_err(|_| Rc::ERROR)?;
    }
    let text = handles::c_string(&t.tool, s.bytes().ok_or(Rc::ERROR)?)?;
    handles::put(out, text.cast_mut())
}

/// `ompd_get_thread_handle_string_id` (TR §7.2).
pub fn thread_string_id(b: &Build, th: *mut ThreadHandle, out: *mut *mut c_char) -> Rc {
    api::rc((|| {
        let h = *api::handle(b, th.cast::<Thread>())?;
        let t = api::target(b, h.ah)?;
        string_id(&t, 't', &[h.th], out)
    })())
}

/// `ompd_get_parallel_handle_string_id` (TR §7.3).
pub fn parallel_string_id(b: &Build, ph: *mut ParallelHandle, out: *mut *mut c_char) -> Rc {
    api::rc((|| {
        let p = *api::handle(b, ph.cast::<Parallel>())?;
        let t = api::target(b, p.ah)?;
        string_id(&t, 'p', &[p.t, p.lwt], out)
    })())
}

/// `ompd_get_task_handle_string_id` (TR §7.4).
pub fn task_string_id(b: &Build, task: *mut TaskHandle, out: *mut *mut c_char) -> Rc {
    api::rc((|| {
        let k = *api::handle(b, task.cast::<Task>())?;
        let t = api::target(b, k.ah)?;
        string_id(&t, 'k', &[k.td, k.lwt], out)
    })())
}

/// An ICV through the 5.x getter, as the TR's word: a list's first element (`incomplete` is
/// the 5.x code for "more elements follow").
fn icv_word(b: &Build, h: *mut c_void, scope: Scope, name: &[u8], out: *mut TrWord) -> Rc {
    let Some(id) = api::icv::id_of(b, name) else {
        return Rc::ERROR;
    };
    match api::icv::get_icv_from_scope(b, h, scope, id, out) {
        Rc::INCOMPLETE => Rc::OK,
        rc => rc,
    }
}

/// `ompd_get_num_procs` (TR §8).
pub fn get_num_procs(b: &Build, h: *mut AddressSpaceHandle, v: *mut TrWord) -> Rc {
    icv_word(b, h.cast(), Scope::ADDRESS_SPACE, b"num-procs-var", v)
}

/// `ompd_get_thread_limit` (TR §8): the runtime keeps thread-limit-var per task (its data
/// environment), so an address space has none to give.
pub fn get_thread_limit(b: &Build, h: *mut AddressSpaceHandle, v: *mut TrWord) -> Rc {
    api::rc((|| {
        api::target(b, h.cast())?;
        handles::need(v)?;
        Err(Rc::UNSUPPORTED)
    })())
}

/// `ompd_get_num_threads` (TR §9.1).
pub fn get_num_threads(b: &Build, ph: *mut ParallelHandle, v: *mut TrWord) -> Rc {
    icv_word(b, ph.cast(), Scope::PARALLEL, b"team-size-var", v)
}

/// The active level of a task's region.
fn active_level(b: &Build, task: *mut TaskHandle) -> Result<i64, Rc> {
    let k = *api::handle(b, task.cast::<Task>())?;
    let mut t = api::target(b, k.ah)?;
    let team = kmp::task_team(&mut t, k.td)?;
    t.field(team, Field::TActiveLevel, false)
}

/// `ompd_get_active_level` (TR §9.1; its declaration takes a task handle).
pub fn get_active_level(b: &Build, task: *mut TaskHandle, v: *mut TrWord) -> Rc {
    api::rc(handles::need(v).and_then(|()| handles::put(v, active_level(b, task)?)))
}

/// `ompd_in_parallel` (TR §11.2): true inside an active region.
pub fn in_parallel(b: &Build, task: *mut TaskHandle, v: *mut TrWord) -> Rc {
    api::rc(handles::need(v).and_then(|()| handles::put(v, i64::from(active_level(b, task)? > 0))))
}

/// The task's own value of a list ICV (`td_icvs.<own>`): the list's first element, which
/// every kmp runtime describes (the rest of the list, which the 5.x getter needs, only newer
/// ones do).
fn own_list_head(b: &Build, task: *mut TaskHandle, own: Field) -> Result<i64, Rc> {
    let k = *api::handle(b, task.cast::<Task>())?;
    let mut t = api::target(b, k.ah)?;
    let icvs = t.at(k.td, Field::TdIcvs)?;
    t.field(icvs, own, true)
}

/// `ompd_get_max_threads` (TR §11.2): nthreads-var's first element.
pub fn get_max_threads(b: &Build, task: *mut TaskHandle, v: *mut TrWord) -> Rc {
    api::rc(
        handles::need(v).and_then(|()| handles::put(v, own_list_head(b, task, Field::IcvNproc)?)),
    )
}

/// `ompd_get_thread_num` (TR §11.2).
pub fn get_thread_num(b: &Build, th: *mut ThreadHandle, v: *mut TrWord) -> Rc {
    icv_word(b, th.cast(), Scope::THREAD, b"thread-num-var", v)
}

/// `ompd_in_final` (TR §11.2).
pub fn in_final(b: &Build, task: *mut TaskHandle, v: *mut TrWord) -> Rc {
    icv_word(b, task.cast(), Scope::TASK, b"final-task-var", v)
}

/// `ompd_get_dynamic` (TR §11.2).
pub fn get_dynamic(b: &Build, task: *mut TaskHandle, v: *mut TrWord) -> Rc {
    icv_word(b, task.cast(), Scope::TASK, b"dyn-var", v)
}

/// `ompd_is_implicit` (TR §11.2).
pub fn is_implicit(b: &Build, task: *mut TaskHandle, v: *mut TrWord) -> Rc {
    icv_word(b, task.cast(), Scope::TASK, b"implicit-task-var", v)
}

/// `ompd_get_nested` (TR §11.2): whether nested regions may be active (max-active-levels-var
/// above 1).
pub fn get_nested(b: &Build, task: *mut TaskHandle, v: *mut TrWord) -> Rc {
    let mut m = 0;
    match icv_word(
        b,
        task.cast(),
        Scope::TASK,
        b"max-active-levels-var",
        &mut m,
    ) {
        Rc::OK => api::rc(handles::put(v, i64::from(m > 1))),
        rc => rc,
    }
}

/// `ompd_get_max_active_levels` (TR §11.2; takes a thread handle): of the thread's current task.
pub fn get_max_active_levels(b: &Build, th: *mut ThreadHandle, v: *mut TrWord) -> Rc {
    let mut task: *mut TaskHandle = std::ptr::null_mut();
    let rc = api::task::get_curr_task_handle(b, th, &mut task);
    if !rc.is_ok() {
        return rc;
    }
    let rc = icv_word(b, task.cast(), Scope::TASK, b"max-active-levels-var", v);
    api::task::rel_task_handle(b, task);
    rc
}

/// `ompd_get_proc_bind` (TR §11.2): bind-var's first element, an `omp_proc_bind_t`.
pub fn get_proc_bind(b: &Build, task: *mut TaskHandle, bind: *mut c_int) -> Rc {
    api::rc((|| {
        handles::need(bind)?;
        let w = own_list_head(b, task, Field::IcvProcBind)?;
        handles::put(bind, c_int::try_from(w).map_err(|_| Rc::ERROR)?)
    })())
}

/// `ompd_get_schedule` (TR §11.2): run-sched-var as an `omp_sched_t` (static 1, dynamic 2,
/// guided 3, auto 4; the monotonic modifier bit 0x80000000) and its chunk.
pub fn get_schedule(b: &Build, task: *mut TaskHandle, kind: *mut c_int, chunk: *mut TrWord) -> Rc {
    api::rc((|| {
        let k = *api::handle(b, task.cast::<Task>())?;
        let mut t = api::target(b, k.ah)?;
        handles::need(kind)?;
        handles::need(chunk)?;
        let (sched, c) = api::icv::schedule_of(&mut t, k.td)?;
        let base = match sched & !((1 << 29) | (1 << 30)) {
            33 | 34 | 40 | 41 => 1,
            35 => 2,
            36 | 42 | 43 => 3,
            38 => 4,
            _ => return Err(Rc::UNSUPPORTED),
        };
        let monotonic = if sched & (1 << 29) != 0 { i32::MIN } else { 0 };
        handles::put(kind, base | monotonic)?;
        handles::put(
            chunk,
            if matches!(sched & 0xff, 34 | 40 | 41) {
                0
            } else {
                c
            },
        )
    })())
}

/// `ompd_get_parallel_function` (TR §9.2): the region's outlined function.
pub fn get_parallel_function(b: &Build, ph: *mut ParallelHandle, out: *mut Address) -> Rc {
    let mut task: *mut TaskHandle = std::ptr::null_mut();
    let rc = api::task::get_task_in_parallel(b, ph, 0, &mut task);
    if !rc.is_ok() {
        return rc;
    }
    let rc = api::task::get_task_function(b, task, out);
    api::task::rel_task_handle(b, task);
    rc
}

/// `ompd_get_task_frame` (TR §11.3): the frame addresses only.
pub fn get_task_frame(
    b: &Build,
    task: *mut TaskHandle,
    exit: *mut Address,
    reenter: *mut Address,
) -> Rc {
    api::rc((|| {
        handles::need(exit)?;
        handles::need(reenter)?;
        let (mut x, mut e) = (FrameInfo::default(), FrameInfo::default());
        let rc = api::task::get_task_frame(b, task, &mut x, &mut e);
        if !rc.is_ok() {
            return Err(rc);
        }
        handles::put(exit, x.frame_address)?;
        handles::put(reenter, e.frame_address)
    })())
}

/// `ompd_get_thread_handle` (TR §10.1): the kind is a C enum, and an id that is no OpenMP
/// thread's gives `bad_input` with `*thread_handle` set to NULL (OMPD-LEG-006), where 5.x
/// answers `unavailable`.
pub fn get_thread_handle(
    b: &Build,
    h: *mut AddressSpaceHandle,
    kind: c_int,
    size: u64,
    id: *const c_void,
    out: *mut *mut ThreadHandle,
) -> Rc {
    let kind = u64::try_from(kind).unwrap_or(u64::MAX);
    match api::thread::get_thread_handle(b, h, kind, size, id, out) {
        Rc::UNAVAILABLE => {
            // `out` was checked non-NULL before the thread was looked for.
            let _ = handles::put(out, std::ptr::null_mut());
            Rc::BAD_INPUT
        }
        rc => rc,
    }
}

/// `ompd_get_osthread` (TR §10.1): the native id of the thread.
pub fn get_osthread(
    b: &Build,
    th: *mut ThreadHandle,
    kind: c_int,
    size: u64,
    out: *mut c_void,
) -> Rc {
    let kind = u64::try_from(kind).unwrap_or(thread_id_kind::CUDALOGICAL + 1);
    api::thread::get_thread_id(b, th, kind, size, out)
}

/// `ompd_get_state` (TR §10.2): the runtime's OMPT state as the TR's `ompd_state_t` (§15.9),
/// the most specific TR state that mirrors it.
pub fn get_state(b: &Build, th: *mut ThreadHandle, state: *mut c_int, wait_id: *mut u64) -> Rc {
    let mut ompt = 0i64;
    let out = if state.is_null() {
        std::ptr::null_mut()
    } else {
        &mut ompt as *mut i64
    };
    let rc = api::thread::get_state(b, th, out, wait_id);
    if rc != Rc::OK {
        return rc;
    }
    let tr = crate::abi::tr::state::for_ompt(ompt as u64);
    match crate::handles::put(state, tr) {
        Ok(()) => Rc::OK,
        Err(rc) => rc,
    }
}

/// `ompd_release_display_control_vars` (TR §13): the vector itself.
pub fn release_display_control_vars(b: &Build, vars: *const *const c_char) -> Rc {
    let mut v = vars;
    api::dcv::rel_display_control_vars(b, &mut v)
}
