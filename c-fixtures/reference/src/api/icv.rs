//! ICVs: enumeration, and each ICV's value as an integer or as text (OMPD-ICV-*). What each ICV
//! is and where it lives is [`super::icv_table::ICVS`].

use super::icv_table::{Icv, ListSource, Source, BIND, ICVS, NTHREADS};
use super::{handle, ompd_state, rc, target};
use crate::handles::{self, Aspace, Parallel, Task, Thread};
use crate::kmp;
use crate::layout::{Field, Mask, Size};
use crate::target::Target;
use crate::text::Buf;
use crate::Build;
use ompd_abi::{AddressSpaceHandle, Generation, Rc, Scope, ICV_UNDEFINED};
use std::ffi::{c_char, c_int, c_void};
use std::fmt::Write as _;

/// The most list elements reported.
const MAX_LIST: usize = 64;

/// The longest string ICV the library copies (a larger one is an error).
const MAX_TEXT: u64 = 1 << 20;

/// The ICVs of the generation the calls follow, with their ids (position in the table + 1). The
/// TR build, which has no ICV enumeration, serves its per-ICV getters from all of them.
fn enumerated(b: &Build) -> impl Iterator<Item = (u64, &'static Icv)> + '_ {
    let g = b.semantics();
    ICVS.iter()
        .enumerate()
        .filter(move |(_, i)| i.since <= g || g == Generation::Tr2)
        .map(|(k, i)| (k as u64 + 1, i))
}

/// Every ICV has a bit in the described set.
const _: () = assert!(ICVS.len() <= 64);

/// The ICVs the runtime of `t` describes (bit `k`: the ICV with id `k + 1`): those whose every
/// needed symbol it defines. Probed once per address space.
fn described(t: &mut Target) -> Result<u64, Rc> {
    if let Some(set) = t.described_icvs() {
        return Ok(set);
    }
    let mut set = 0u64;
    for (k, icv) in ICVS.iter().enumerate() {
        let mut all = true;
        for name in icv.source.needs().into_iter().filter(|n| !n.is_empty()) {
            all &= t.defines(name)?;
        }
        set |= u64::from(all) << k;
    }
    t.set_described_icvs(set);
    Ok(set)
}

/// `ompd_enumerate_icvs`.
pub fn enumerate_icvs(
    b: &Build,
    h: *mut AddressSpaceHandle,
    current: u64,
    next: *mut u64,
    name: *mut *const c_char,
    scope: *mut Scope,
    more: *mut c_int,
) -> Rc {
    rc((|| {
        handle(b, h.cast::<Aspace>())?;
        handles::need(next)?;
        handles::need(name)?;
        handles::need(scope)?;
        handles::need(more)?;
        let tool = super::tool()?;
        let known = current == ICV_UNDEFINED || enumerated(b).any(|(id, _)| id == current);
        if !known {
            return Err(Rc::BAD_INPUT);
        }
        let mut after =
            enumerated(b).skip_while(|(id, _)| current != ICV_UNDEFINED && *id <= current);
        let (id, icv) = after.next().ok_or(Rc::BAD_INPUT)?;
        let last = after.next().is_none();
        let text = icv.name.strip_suffix(b"\0").ok_or(Rc::ERROR)?;
        let s = handles::c_string(&tool, text)?;
        handles::put(next, id)?;
        handles::put(name, s)?;
        handles::put(scope, icv.scope)?;
        handles::put(more, c_int::from(!last))
    })())
}

/// The id this build gives the ICV called `name` (without its NUL).
pub(crate) fn id_of(b: &Build, name: &[u8]) -> Option<u64> {
    enumerated(b)
        .find(|(_, i)| i.name.strip_suffix(b"\0") == Some(name))
        .map(|(id, _)| id)
}

/// A task's run-sched-var: the runtime's `kmp_sched_t` (with its modifier bits) and chunk.
pub(crate) fn schedule_of(t: &mut Target, td: u64) -> Result<(i64, i64), Rc> {
    let icvs = t.at(td, Field::TdIcvs)?;
    let sched = t.at(icvs, Field::IcvSched)?;
    let kind = t.field(sched, Field::SchedType, true)?;
    let chunk = t.field(sched, Field::SchedChunk, true)?;
    Ok((kind, chunk))
}

/// What an ICV's value is.
// The library calls no heap manager (OMPD-MEM-001): a list stays inline, on the stack.
#[allow(clippy::large_enum_variant)]
enum Value {
    /// An integer.
    Int(i64),
    /// A list: its elements, current first (at least one).
    List([i64; MAX_LIST], usize),
    /// A schedule: the runtime's `kmp_sched_t` and chunk.
    Schedule(i64, i64),
}

/// The entity an ICV is read for, from a handle of the ICV's scope.
#[derive(Clone, Copy)]
enum Subject {
    Space,
    Thread(u64),
    Region(u64, u64),
    Task(u64, u64),
}

/// The ICV `id` names, the target of its address space and its subject; `bad_input` for an
/// unknown id, `incompatible` when `scope` is not the ICV's scope, `unavailable` for an ICV
/// whose storage the runtime's self-description does not describe (every ICV is enumerated,
/// OMPD-ICV-005; Intel's runtimes up to 2023.2 describe no `thread_limit` field, no nested
/// lists and no `ompd_state`).
fn resolve<'a>(
    b: &Build,
    h: *mut c_void,
    scope: Scope,
    id: u64,
) -> Result<(Icv, Target<'a>, Subject), Rc> {
    if h.is_null() {
        return Err(Rc::STALE_HANDLE);
    }
    let (_, icv) = enumerated(b).find(|(i, _)| *i == id).ok_or(Rc::BAD_INPUT)?;
    if scope != icv.scope {
        return Err(Rc::INCOMPATIBLE);
    }
    let (ah, subject) = match scope {
        Scope::ADDRESS_SPACE => (h.cast::<Aspace>(), Subject::Space),
        Scope::THREAD => {
            let th = *handle(b, h.cast::<Thread>())?;
            (th.ah, Subject::Thread(th.th))
        }
        // Teams and target scopes take the parallel handle of the region the construct
        // generated (6.0 §39.11, Table 39.1).
        Scope::PARALLEL | Scope::TEAMS | Scope::TARGET => {
            let p = *handle(b, h.cast::<Parallel>())?;
            (p.ah, Subject::Region(p.t, p.lwt))
        }
        _ => {
            let k = *handle(b, h.cast::<Task>())?;
            (k.ah, Subject::Task(k.td, k.lwt))
        }
    };
    let mut t = target(b, ah)?;
    if (described(&mut t)? >> (id - 1)) & 1 == 0 {
        return Err(Rc::UNAVAILABLE);
    }
    Ok((*icv, t, subject))
}

/// `ompd_get_icv_from_scope`: integer ICVs; a list's first element with `incomplete`;
/// `incompatible` for an ICV that is no integer.
pub fn get_icv_from_scope(b: &Build, h: *mut c_void, scope: Scope, id: u64, out: *mut i64) -> Rc {
    rc((|| {
        let (icv, mut t, subject) = resolve(b, h, scope, id)?;
        handles::need(out)?;
        if matches!(icv.source, Source::Schedule | Source::Text(..)) {
            return Err(Rc::INCOMPATIBLE);
        }
        match value(&mut t, icv.source, subject)? {
            Value::Int(v) => handles::put(out, v),
            Value::List(l, n) => {
                handles::put(out, l[0])?;
                if n > 1 {
                    Err(Rc::INCOMPLETE)
                } else {
                    Ok(())
                }
            }
            Value::Schedule(..) => Err(Rc::INCOMPATIBLE),
        }
    })())
}

/// `ompd_get_icv_string_from_scope`: every ICV as text (integers in decimal, lists in
/// `OMP_NUM_THREADS`/`OMP_PROC_BIND` syntax, schedules in `OMP_SCHEDULE` syntax), tool-owned.
pub fn get_icv_string_from_scope(
    b: &Build,
    h: *mut c_void,
    scope: Scope,
    id: u64,
    out: *mut *const c_char,
) -> Rc {
    rc((|| {
        let (icv, mut t, subject) = resolve(b, h, scope, id)?;
        handles::need(out)?;
        if let Source::Text(name, unset) = icv.source {
            return handles::put(out, text(&t, name, unset)?);
        }
        let v = value(&mut t, icv.source, subject)?;
        let mut s = Buf::<1024>::new();
        let is_bind = matches!(icv.source, Source::BindList);
        show(&mut s, &v, is_bind).map_err(|_| Rc::ERROR)?;
        let text = handles::c_string(&t.tool, s.bytes().ok_or(Rc::ERROR)?)?;
        handles::put(out, text)
    })())
}

/// Writes a value as text.
fn show(s: &mut Buf<1024>, v: &Value, bind_names: bool) -> std::fmt::Result {
    match v {
        Value::Int(x) => write!(s, "{x}"),
        Value::List(l, n) => {
            for (k, x) in l.iter().take(*n).enumerate() {
                let sep = if k == 0 { "" } else { "," };
                match (bind_names, bind_name(*x)) {
                    (true, Some(name)) => write!(s, "{sep}{name}")?,
                    _ => write!(s, "{sep}{x}")?,
                }
            }
            Ok(())
        }
        Value::Schedule(kind, chunk) => show_schedule(s, *kind, *chunk),
    }
}

/// `omp_proc_bind_t` spellings.
fn bind_name(v: i64) -> Option<&'static str> {
    ["false", "true", "primary", "close", "spread"]
        .get(usize::try_from(v).ok()?)
        .copied()
}

/// A `kmp_sched_t` with its modifier bits, in `OMP_SCHEDULE` syntax.
fn show_schedule(s: &mut Buf<1024>, sched: i64, chunk: i64) -> std::fmt::Result {
    const MONOTONIC: i64 = 1 << 29;
    const NONMONOTONIC: i64 = 1 << 30;
    if sched & MONOTONIC != 0 {
        write!(s, "monotonic:")?;
    } else if sched & NONMONOTONIC != 0 {
        write!(s, "nonmonotonic:")?;
    }
    let (kind, chunk) = match sched & !(MONOTONIC | NONMONOTONIC) {
        33 => ("static", chunk),
        34 | 40 | 41 => ("static", 0),
        35 => ("dynamic", chunk),
        36 | 42 | 43 => ("guided", chunk),
        38 => ("auto", chunk),
        39 => ("trapezoidal", chunk),
        44 => ("static_steal", chunk),
        _ => return Err(std::fmt::Error),
    };
    write!(s, "{kind},{chunk}")
}

/// The task of a task-scope subject.
fn task_of(subject: Subject) -> Result<(u64, u64), Rc> {
    match subject {
        Subject::Task(td, lwt) => Ok((td, lwt)),
        _ => Err(Rc::INCOMPATIBLE),
    }
}

/// The value of an ICV kept at `source` for `subject`.
fn value(t: &mut Target, source: Source, subject: Subject) -> Result<Value, Rc> {
    Ok(match source {
        Source::TaskField(f) => {
            let (td, _) = task_of(subject)?;
            let icvs = t.at(td, Field::TdIcvs)?;
            Value::Int(t.field(icvs, f, true)?)
        }
        Source::NthreadsList => list(t, subject, NTHREADS)?,
        Source::BindList => list(t, subject, BIND)?,
        Source::Schedule => {
            let (kind, chunk) = schedule_of(t, task_of(subject)?.0)?;
            Value::Schedule(kind, chunk)
        }
        Source::Global(name, size) => {
            Value::Int(t.global_sized(name, size, size != Size::Stksize)?)
        }
        Source::Text(..) => return Err(Rc::INCOMPATIBLE),
        Source::Debug => Value::Int(i64::from(ompd_state(t)? != 0)),
        Source::NotDescribed => return Err(Rc::UNAVAILABLE),
        _ => scoped(t, source, subject)?,
    })
}

/// The ICVs of a thread, region or task's own state.
fn scoped(t: &mut Target, source: Source, subject: Subject) -> Result<Value, Rc> {
    let v = match (source, subject) {
        (Source::ThreadNum, Subject::Thread(th)) => kmp::ds_tid(t, th)?,
        (Source::Level, Subject::Region(team, lwt)) => kmp::level(t, team, lwt)?,
        (Source::ActiveLevel, Subject::Region(team, _)) => {
            t.field(team, Field::TActiveLevel, false)?
        }
        (Source::TeamSize, Subject::Region(team, lwt)) => kmp::team_size(t, team, lwt)?,
        (Source::LeagueSize, Subject::Region(team, _)) => match kmp::league_of(t, team)? {
            Some((league, _)) => t.field(league, Field::TNproc, false)?,
            None => 1,
        },
        (Source::TeamNum, Subject::Region(team, _)) => match kmp::league_of(t, team)? {
            Some((league, under)) => kmp::team_num(t, league, under)?,
            None => 0,
        },
        (Source::Final, Subject::Task(td, _)) => i64::from(kmp::flag(t, td, Mask::Final)?),
        (Source::Implicit(explicit), Subject::Task(td, _)) => {
            i64::from(kmp::flag(t, td, Mask::TaskType)? == explicit)
        }
        _ => return Err(Rc::INCOMPATIBLE),
    };
    Ok(Value::Int(v))
}

/// A list ICV: the task's own value, then the start list's entries past the task's level.
fn list(t: &mut Target, subject: Subject, src: ListSource) -> Result<Value, Rc> {
    let (td, lwt) = task_of(subject)?;
    let icvs = t.at(td, Field::TdIcvs)?;
    let mut l = [0i64; MAX_LIST];
    l[0] = t.field(icvs, src.own, true)?;
    let team = kmp::task_team(t, td)?;
    let level = u64::try_from(kmp::level(t, team, lwt)?).map_err(|_| Rc::ERROR)?;
    let g = t.global(src.global)?.address;
    let n_used = u64::try_from(t.field(g, src.used, true)?).unwrap_or(0);
    let base = t.field_ptr(g, src.items)?;
    let int = t.size(Size::Int)?;
    let mut n = 1;
    for k in level.saturating_add(1)..n_used {
        let slot = l.get_mut(n).ok_or(Rc::INCOMPLETE)?;
        let a = t.add(base, k.checked_mul(int).ok_or(Rc::ERROR)?)?;
        *slot = t.word(a, int, true)?;
        n += 1;
    }
    Ok(Value::List(l, n))
}

/// A string ICV as a tool-owned NUL-terminated block: the runtime's string, of any length up to
/// [`MAX_TEXT`] (read into ever larger blocks while the tool says it did not fit), or the text an
/// unset (NULL) one stands for.
fn text(t: &Target, name: &[u8], unset: Option<&'static [u8]>) -> Result<*const c_char, Rc> {
    let p = t.global_ptr(name)?;
    if p == 0 {
        return handles::c_string(&t.tool, unset.ok_or(Rc::UNAVAILABLE)?);
    }
    let mut size = 512;
    loop {
        let buf = handles::fresh_bytes(&t.tool, size)?;
        let block = buf.as_mut_ptr();
        match t.string(p, buf) {
            Ok(_) => return Ok(block.cast()),
            Err(Rc::INCOMPLETE) if size < MAX_TEXT => size *= 4,
            Err(e) => {
                t.tool.free(block);
                return Err(e);
            }
        }
        t.tool.free(block);
    }
}
