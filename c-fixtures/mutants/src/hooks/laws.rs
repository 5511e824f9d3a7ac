//! Deviations that break one law of the handle comparisons, or answer one wrong code where the
//! inner library answered right.

use super::Deviation as D;
use ompd_abi::{thread_id_kind, EntryPoint, Rc};
use std::ffi::c_int;
use std::sync::Mutex;

/// The pairs of handles compared so far (for [`D::CompareAgainNegated`]).
static COMPARED: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());
/// The entities the comparisons met, in order (for [`D::CompareCyclic`]).
static MET: Mutex<Vec<u64>> = Mutex::new(Vec::new());
/// At most this many pairs (and entities) are remembered.
const COMPARED_CAP: usize = 4096;

/// Reserves the tables' room before any call, so that a comparison allocates nothing.
pub(super) fn prepare() {
    COMPARED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .reserve(COMPARED_CAP);
    MET.lock()
        .unwrap_or_else(|p| p.into_inner())
        .reserve(COMPARED_CAP);
}

/// True for the three handle comparisons.
fn compares(ep: EntryPoint) -> bool {
    matches!(
        ep,
        EntryPoint::ThreadHandleCompare
            | EntryPoint::ParallelHandleCompare
            | EntryPoint::TaskHandleCompare
    )
}

/// True for the deviations of the comparison laws.
fn law(d: D) -> bool {
    matches!(
        d,
        D::CompareByHandle
            | D::CompareSelfUnequal
            | D::CompareAgainNegated
            | D::CompareCyclic
            | D::CompareAcrossSpacesEqual
    )
}

/// What the deviation answers in place of the inner routine's `rc`; `None`: not one of these.
pub(super) fn after(d: D, ep: EntryPoint, w: &[u64], rc: Rc) -> Option<Rc> {
    if law(d) {
        return Some(match rc {
            _ if !compares(ep) => rc,
            _ if d == D::CompareAcrossSpacesEqual => across_spaces(ep, w, rc),
            Rc::OK => compare(d, ep, w),
            _ => rc,
        });
    }
    match (d, rc) {
        (D::ForeignThreadError, Rc::UNAVAILABLE) => Some(Rc::ERROR),
        (D::LwpIdError, _) if w[1] == thread_id_kind::LWP => Some(Rc::ERROR),
        (D::OutermostEnclosingBadInput, Rc::UNAVAILABLE) => Some(Rc::BAD_INPUT),
        (D::InitialGeneratingError, Rc::UNAVAILABLE) => Some(Rc::ERROR),
        (D::FinalizeNotOk, Rc::OK) => Some(Rc::ERROR),
        (D::IcvStringUnknownIdUnsupported, Rc::BAD_INPUT) if w[3] != 0 => Some(Rc::UNSUPPORTED),
        (D::IcvStringScopeBadInput | D::IcvValueScopeBadInput, Rc::INCOMPATIBLE) => {
            Some(Rc::BAD_INPUT)
        }
        _ => None,
    }
}

/// `*cmp_value` as the comparison deviations compute it (the inner routine answered ok).
fn compare(d: D, ep: EntryPoint, w: &[u64]) -> Rc {
    super::values::set_int(w, 2, |c| match d {
        D::CompareByHandle => *c = sign(w[0].cmp(&w[1])),
        D::CompareSelfUnequal if w[0] == w[1] => *c = 1,
        D::CompareAgainNegated if compared_before(w[0], w[1]) => *c = -*c,
        D::CompareCyclic => *c = cyclic(ep, w).unwrap_or(*c),
        _ => {}
    })
}

/// -1, 0 or 1.
fn sign(o: std::cmp::Ordering) -> c_int {
    o as c_int
}

/// True when the pair was compared before; remembers it.
fn compared_before(a: u64, b: u64) -> bool {
    let mut seen = COMPARED.lock().unwrap_or_else(|p| p.into_inner());
    if seen.contains(&(a, b)) {
        return true;
    }
    if seen.len() >= COMPARED_CAP {
        seen.remove(0);
    }
    seen.push((a, b));
    false
}

/// The cyclic order of entities in three classes (the order in which the comparisons first met
/// them, modulo 3): `None` for two entities of one class, which keep the inner answer.
fn cyclic(ep: EntryPoint, w: &[u64]) -> Option<c_int> {
    let class = |h: u64| first_met(super::values::entity_key(ep, h)) % 3;
    match (class(w[0]) + 3 - class(w[1])) % 3 {
        0 => None,
        1 => Some(1),
        _ => Some(-1),
    }
}

/// The index of `key` among the entities met so far (remembered at its first meeting).
fn first_met(key: u64) -> u64 {
    let mut met = MET.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(i) = met.iter().position(|k| *k == key) {
        return i as u64;
    }
    if met.len() >= COMPARED_CAP {
        met.clear();
    }
    met.push(key);
    (met.len() - 1) as u64
}

/// Ok with 0 for two handles to one entity, though the inner library told them apart (they come
/// from two address spaces); the inner answer for any other pair.
fn across_spaces(ep: EntryPoint, w: &[u64], rc: Rc) -> Rc {
    let key = |h: u64| super::values::entity_key(ep, h);
    if w[0] == 0 || w[1] == 0 || key(w[0]) != key(w[1]) {
        return rc;
    }
    super::values::set_int(w, 2, |c| *c = 0)
}
