//! `ompd_get_tool_data`: the OMPT tool data of a thread, region or task (OMPD-TDATA-*).

use super::{handle, rc, target};
use crate::handles::{self, Aspace, Parallel, Task, Thread};
use crate::kmp;
use crate::layout::Field;
use crate::target::{at, Target};
use crate::Build;
use ompd_abi::{Address, Rc, Scope};
use std::ffi::c_void;

/// Finds an entity's `ompt_data_t` in the target.
type Find<'f> = &'f dyn Fn(&mut Target) -> Result<u64, Rc>;

/// The `ompt_data_t` of the entity `h` names at `scope`, with its address space.
fn data_of(b: &Build, h: *mut c_void, scope: Scope) -> Result<(*mut Aspace, u64), Rc> {
    let (ah, find): (*mut Aspace, Find) = match scope {
        Scope::THREAD => {
            let th = *handle(b, h.cast::<Thread>())?;
            (th.ah, &move |t: &mut Target| {
                let info = t.at(th.th, Field::ThOmpt)?;
                t.at(info, Field::OmptThreadData)
            })
        }
        Scope::PARALLEL => {
            let p = *handle(b, h.cast::<Parallel>())?;
            (p.ah, &move |t: &mut Target| {
                let info = if p.lwt != 0 {
                    t.at(p.lwt, Field::LwtTeamInfo)?
                } else {
                    t.at(p.t, Field::TOmptTeamInfo)?
                };
                t.at(info, Field::TeamInfoData)
            })
        }
        Scope::TASK | Scope::IMPLICIT_TASK => {
            let k = *handle(b, h.cast::<Task>())?;
            (k.ah, &move |t: &mut Target| {
                let info = kmp::task_info(t, k.td, k.lwt)?;
                t.at(info, Field::TaskInfoData)
            })
        }
        _ => {
            if h.is_null() {
                return Err(Rc::STALE_HANDLE);
            }
            return Err(Rc::BAD_INPUT);
        }
    };
    if !handle(b, ah)?.traits.ompt {
        // No OMPT support, so no tool data (OMPD-TDATA-002).
        return Err(Rc::UNSUPPORTED);
    }
    let mut t = target(b, ah)?;
    Ok((ah, find(&mut t)?))
}

/// `ompd_get_tool_data`: the data's value, and the same word as a pointer.
pub fn get_tool_data(
    b: &Build,
    h: *mut c_void,
    scope: Scope,
    value: *mut i64,
    ptr: *mut Address,
) -> Rc {
    rc((|| {
        handles::need(value)?;
        handles::need(ptr)?;
        let (ah, data) = data_of(b, h, scope)?;
        let mut t = target(b, ah)?;
        let v = t.field(data, Field::DataValue, true)?;
        let p = t.field_ptr(data, Field::DataPtr)?;
        handles::put(value, v)?;
        handles::put(ptr, at(p))
    })())
}
