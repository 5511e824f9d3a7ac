//! Deviations on the regions of a host `teams` construct, which a library tells apart only by
//! their nesting: a region at level 0 with an enclosing region is an initial team's (its
//! enclosing one the league), and a level-0 region whose enclosing region encloses nothing is
//! the league. Elsewhere a level-0 region is the initial one, which nothing encloses, so these
//! deviations change no answer outside a teams region.

use super::edges::call;
use super::Deviation as D;
use crate::inner::routine;
use ompd_abi::{entry, EntryPoint as E, ParallelHandle, Rc, Scope};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicU64, Ordering};

/// The address-space handle of the last `ompd_process_initialize`, for enumerating ICVs.
static ASPACE: AtomicU64 = AtomicU64::new(0);
/// The inner library's id of `levels-var` (0 until found).
static LEVELS: AtomicU64 = AtomicU64::new(0);
/// The id of `team-num-var` the tool's enumeration met (0 until then).
static TEAM_NUM: AtomicU64 = AtomicU64::new(0);

/// What the deviation answers in place of the inner routine's `rc`; `None`: not one of these.
pub(super) fn after(d: D, ep: E, w: &[u64], rc: Rc) -> Option<Rc> {
    if ep == E::ProcessInitialize && rc == Rc::OK {
        // SAFETY: the tool's out-parameter, written by the inner routine on ok.
        if let Some(h) = unsafe { (w[1] as usize as *const u64).as_ref() } {
            ASPACE.store(*h, Ordering::Release);
        }
    }
    match (d, ep, rc) {
        (D::TeamsInitialRegionIsLeague, E::GetCurrParallelHandle, Rc::OK) => {
            Some(league_instead(w[1]))
        }
        (D::TeamsLevelCountsLeague, E::GetIcvFromScope, Rc::OK) if asks_levels(w) => {
            let h = w[0] as usize as *mut ParallelHandle;
            Some(add_level(w[3], |v| {
                v == 0 && kind(h) == Some(Kind::InitialTeam)
            }))
        }
        (D::TeamsLeagueLevelRises, E::GetIcvFromScope, Rc::OK) if asks_levels(w) => {
            let h = w[0] as usize as *mut ParallelHandle;
            Some(add_level(w[3], |v| v == 0 && kind(h) == Some(Kind::League)))
        }
        (D::TeamsTeamNumOff, E::EnumerateIcvs, Rc::OK) => {
            super::values::note_icv_id(w, c"team-num-var", &TEAM_NUM);
            Some(rc)
        }
        (D::TeamsTeamNumOff, E::GetIcvFromScope, Rc::OK)
            if w[2] != 0 && w[2] == TEAM_NUM.load(Ordering::Relaxed) =>
        {
            Some(add_level(w[3], |_| true))
        }
        (
            D::TeamsInitialRegionIsLeague
            | D::TeamsLevelCountsLeague
            | D::TeamsLeagueLevelRises
            | D::TeamsTeamNumOff,
            ..,
        ) => Some(rc),
        _ => None,
    }
}

/// The part a level-0 region plays in a teams construct.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    League,
    InitialTeam,
}

/// The part region `h` plays, by the nesting the inner library answers.
fn kind(h: *mut ParallelHandle) -> Option<Kind> {
    if levels(h)? != 0 {
        return None;
    }
    let up = enclosing(h)?;
    let above = enclosing(up);
    release(up);
    match above {
        Some(a) => {
            release(a);
            Some(Kind::InitialTeam)
        }
        None => Some(Kind::League),
    }
}

/// [`D::TeamsInitialRegionIsLeague`]: the handle at `out` is replaced by its enclosing region's
/// when it is an initial team's region.
fn league_instead(out: u64) -> Rc {
    // SAFETY: the tool's out-parameter, written by the inner routine on ok.
    let Some(slot) = (unsafe { (out as usize as *mut *mut ParallelHandle).as_mut() }) else {
        return Rc::OK;
    };
    if kind(*slot) == Some(Kind::InitialTeam) {
        if let Some(league) = enclosing(*slot) {
            release(*slot);
            *slot = league;
        }
    }
    Rc::OK
}

/// Adds one to the ICV value at `out` where `when` holds for it; answers ok.
fn add_level(out: u64, when: impl FnOnce(i64) -> bool) -> Rc {
    // SAFETY: the tool's out-parameter for the value, written by the inner routine on ok.
    if let Some(v) = unsafe { (out as usize as *mut i64).as_mut() } {
        if when(*v) {
            *v += 1;
        }
    }
    Rc::OK
}

/// True when the `ompd_get_icv_from_scope` call `w` asks levels-var at the parallel scope.
fn asks_levels(w: &[u64]) -> bool {
    w[1] == Scope::PARALLEL.0 as u64 && levels_id().is_some_and(|id| id == w[2])
}

/// levels-var of region `h`, asked of the inner library.
fn levels(h: *mut ParallelHandle) -> Option<i64> {
    let id = levels_id()?;
    let mut v = 0i64;
    let rc = call!(GetIcvFromScope(
        h.cast::<c_void>(),
        Scope::PARALLEL,
        id,
        &mut v
    ));
    (rc == Rc::OK).then_some(v)
}

/// The inner library's id of levels-var, found once by enumerating its ICVs.
fn levels_id() -> Option<u64> {
    let known = LEVELS.load(Ordering::Acquire);
    if known != 0 {
        return Some(known);
    }
    let ah = ASPACE.load(Ordering::Acquire) as usize as *mut ompd_abi::AddressSpaceHandle;
    let mut current = 0u64;
    for _ in 0..1024 {
        let (mut id, mut name, mut scope, mut more) =
            (0u64, std::ptr::null::<c_char>(), Scope(0), 0 as c_int);
        if call!(EnumerateIcvs(
            ah, current, &mut id, &mut name, &mut scope, &mut more
        )) != Rc::OK
        {
            return None;
        }
        // SAFETY: the inner library's NUL-terminated static ICV name, on ok.
        if !name.is_null() && unsafe { CStr::from_ptr(name) } == c"levels-var" {
            LEVELS.store(id, Ordering::Release);
            return Some(id);
        }
        if more == 0 {
            return None;
        }
        current = id;
    }
    None
}

/// The region enclosing `h`, from the inner library (a handle to release).
fn enclosing(h: *mut ParallelHandle) -> Option<*mut ParallelHandle> {
    let mut up = std::ptr::null_mut();
    (call!(GetEnclosingParallelHandle(h, &mut up)) == Rc::OK && !up.is_null()).then_some(up)
}

/// Releases a region handle the inner library made.
fn release(h: *mut ParallelHandle) {
    let _ = call!(RelParallelHandle(h));
}
