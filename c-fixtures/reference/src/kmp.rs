//! The kmp runtime's object graph (`llvm-kmp-model.md` §4), read through a [`Target`]: threads
//! by gtid, teams and their serialized runs, tasks and their flags.
//!
//! A run of nested serialized regions on one thread is one serial team that holds the innermost
//! region, plus a chain of `ompt_lw_taskteam_t` records for the outer ones, innermost-but-one
//! first. A parallel or task handle names a level of such a run by the record (`lwt`), 0 being
//! the team's own region.

use crate::layout::{Field, Mask, Size};
use crate::target::Target;
use ompd_abi::Rc;

/// The longest serialized run or thread table the library walks.
pub const MAX_WALK: u64 = 1 << 16;

/// `__kmp_threads[g]`: the `kmp_info_t` of gtid `g` (0 when the slot is empty).
pub fn info_of_gtid(t: &mut Target, g: u64) -> Result<u64, Rc> {
    let base = t.global_ptr(b"__kmp_threads\0")?;
    if base == 0 {
        return Err(Rc::UNAVAILABLE);
    }
    let off = g.checked_mul(t.pointer()).ok_or(Rc::ERROR)?;
    t.ptr(t.add(base, off)?)
}

/// The thread handle address (`kmp_base_info_t`) of a `kmp_info_t`.
pub fn thread_of_info(t: &mut Target, info: u64) -> Result<u64, Rc> {
    if info == 0 {
        return Err(Rc::UNAVAILABLE);
    }
    t.at(info, Field::InfoTh)
}

/// The address of a thread's native id (`th_info.ds.ds_thread`).
pub fn ds_thread(t: &mut Target, th: u64) -> Result<u64, Rc> {
    let info = t.at(th, Field::ThInfo)?;
    let ds = t.at(info, Field::DescDs)?;
    t.at(ds, Field::DsThread)
}

/// A thread's team id within its team (`ds_tid`).
pub fn ds_tid(t: &mut Target, th: u64) -> Result<i64, Rc> {
    let info = t.at(th, Field::ThInfo)?;
    let ds = t.at(info, Field::DescDs)?;
    t.field(ds, Field::DsTid, true)
}

/// The team (`kmp_base_team_t`) a `kmp_team_p` pointer names.
pub fn team(t: &mut Target, team_p: u64) -> Result<u64, Rc> {
    if team_p == 0 {
        return Err(Rc::UNAVAILABLE);
    }
    t.at(team_p, Field::TeamT)
}

/// The innermost-but-one level of a team's serialized run (0: none).
pub fn first_lwt(t: &mut Target, team: u64) -> Result<u64, Rc> {
    Ok(t.field(team, Field::TSerializedInfo, false)? as u64)
}

/// The next outer level after record `lwt` (0: none).
pub fn lwt_parent(t: &mut Target, lwt: u64) -> Result<u64, Rc> {
    t.field_ptr(lwt, Field::LwtParent)
}

/// How many levels `lwt` lies outside the team's own region (0 for `lwt == 0`); `error` when
/// the record is not in the team's chain.
pub fn depth(t: &mut Target, team: u64, lwt: u64) -> Result<u64, Rc> {
    if lwt == 0 {
        return Ok(0);
    }
    let mut cur = first_lwt(t, team)?;
    let mut k = 1;
    while cur != lwt {
        if cur == 0 || k >= MAX_WALK {
            return Err(Rc::ERROR);
        }
        cur = lwt_parent(t, cur)?;
        k += 1;
    }
    Ok(k)
}

/// The nesting level of the region `(team, lwt)` names (levels-var).
pub fn level(t: &mut Target, team: u64, lwt: u64) -> Result<i64, Rc> {
    let own = t.field(team, Field::TLevel, false)?;
    let d = depth(t, team, lwt)?;
    own.checked_sub(d as i64).ok_or(Rc::ERROR)
}

/// The number of threads of the region `(team, lwt)` names.
pub fn team_size(t: &mut Target, team: u64, lwt: u64) -> Result<i64, Rc> {
    if lwt != 0 {
        return Ok(1);
    }
    t.field(team, Field::TNproc, false)
}

/// The league above `team` and the team under it the walk came through, or none outside a
/// teams region. A kmp runtime keeps a host teams construct as a league team at the nesting
/// level of its parent, the initial region's team (`__kmp_teams_master`); every other team is
/// one level deeper than its parent.
pub fn league_of(t: &mut Target, team: u64) -> Result<Option<(u64, u64)>, Rc> {
    let mut under = team;
    for _ in 0..MAX_WALK {
        let Some(up) = parent_team(t, under)? else {
            return Ok(None);
        };
        if is_league(t, up)? {
            return Ok(Some((up, under)));
        }
        under = up;
    }
    Err(Rc::ERROR)
}

/// The team enclosing `team` (none for the initial region's).
fn parent_team(t: &mut Target, team: u64) -> Result<Option<u64>, Rc> {
    match t.field_ptr(team, Field::TParent)? {
        0 => Ok(None),
        p => self::team(t, p).map(Some),
    }
}

/// True for a league: a team at the nesting level of its parent, which has no parent.
fn is_league(t: &mut Target, team: u64) -> Result<bool, Rc> {
    let Some(up) = parent_team(t, team)? else {
        return Ok(false);
    };
    if parent_team(t, up)?.is_some() {
        return Ok(false);
    }
    Ok(t.field(team, Field::TLevel, false)? == t.field(up, Field::TLevel, false)?)
}

/// The number of team `under` in `league`: the place of its primary thread among the league's.
pub fn team_num(t: &mut Target, league: u64, under: u64) -> Result<i64, Rc> {
    let members = t.field_ptr(under, Field::TThreads)?;
    let primary = t.ptr(members)?;
    let threads = t.field_ptr(league, Field::TThreads)?;
    let n = u64::try_from(t.field(league, Field::TNproc, false)?).map_err(|_| Rc::ERROR)?;
    for k in 0..n.min(MAX_WALK) {
        let slot = t.add(threads, k.checked_mul(t.pointer()).ok_or(Rc::ERROR)?)?;
        if t.ptr(slot)? == primary {
            return i64::try_from(k).map_err(|_| Rc::ERROR);
        }
    }
    Err(Rc::ERROR)
}

/// The team of a task.
pub fn task_team(t: &mut Target, td: u64) -> Result<u64, Rc> {
    let p = t.field_ptr(td, Field::TdTeam)?;
    team(t, p)
}

/// True when the task's flag `m` is set.
pub fn flag(t: &mut Target, td: u64, m: Mask) -> Result<bool, Rc> {
    let mask = t.mask(m)?;
    let a = t.at(td, Field::TdFlags)?;
    let int = u64::from(t.sizes.sizeof_int);
    let flags = t.word(a, int, false)? as u64;
    Ok(flags & mask != 0)
}

/// The OMPT task info (`ompt_task_info_t`) of the task level `(td, lwt)`.
pub fn task_info(t: &mut Target, td: u64, lwt: u64) -> Result<u64, Rc> {
    if lwt != 0 {
        t.at(lwt, Field::LwtTaskInfo)
    } else {
        t.at(td, Field::TdOmpt)
    }
}

/// The `kmp_task_t` that follows an explicit task's `kmp_taskdata_t`.
pub fn task_of(t: &mut Target, td: u64) -> Result<u64, Rc> {
    let size = t.size(Size::Taskdata)?;
    t.add(td, size)
}
