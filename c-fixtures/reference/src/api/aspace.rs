//! Address spaces: process and device initialization, release, the OpenMP version, and the
//! 5.2 device routines (OMPD-PROC-*, OMPD-ASP-*).

use super::{handle, rc, target, tool};
use crate::handles::{self, Aspace, Thread, Traits};
use crate::target::Target;
use crate::text::Buf;
use crate::{layout::Size, Build};
use ompd_abi::{thread_id_kind, AddressSpaceContext, AddressSpaceHandle, Rc, ThreadHandle};
use std::ffi::{c_char, c_int, c_void};
use std::fmt::Write as _;

/// Symbols every kmp runtime this library serves defines; a process without one runs another
/// runtime, or none (OMPD-PROC-002). Intel's runtimes up to 2023.2 publish an older
/// self-description (no `ompd_state`, fewer size words and fields); the library serves what it
/// describes: sizes it leaves out follow from their C types, ICVs whose fields it leaves out are
/// `unavailable`, and without `ompd_state` the runtime's state words are always kept. A runtime
/// whose layout words are still zero has published no description: it is declined too.
const RUNTIME_SYMBOLS: [&[u8]; 3] = [
    b"__kmp_threads\0",
    b"ompd_sizeof__kmp_taskdata_t\0",
    b"__kmp_openmp_version\0",
];

/// The layout word of the thread's OMPT tool data: a runtime that describes it supports OMPT
/// (a kmp runtime built without OMPT has no `ompt_data_t` members to describe).
const OMPT_PROBE: &[u8] = b"ompd_access__ompt_thread_info_t__thread_data\0";

/// `ompd_process_initialize`.
pub fn process_initialize(
    _: &Build,
    ctx: *mut AddressSpaceContext,
    out: *mut *mut AddressSpaceHandle,
) -> Rc {
    rc((|| {
        if ctx.is_null() {
            return Err(Rc::BAD_INPUT);
        }
        handles::need(out)?;
        let tool = tool()?;
        let sizes = tool.sizes(ctx)?;
        let pointer_ok = matches!(sizes.sizeof_pointer, 4 | 8);
        let int_ok = matches!(sizes.sizeof_int, 1 | 2 | 4 | 8);
        if !pointer_ok || !int_ok || sizes.sizeof_long_long != 8 {
            return Err(Rc::INCOMPATIBLE);
        }
        for s in RUNTIME_SYMBOLS {
            // A symbol the process lacks means another runtime, or none.
            if !tool.defines(ctx, s)? {
                return Err(Rc::INCOMPATIBLE);
            }
        }
        let traits = Traits {
            // A runtime without OMPT support describes no tool data (OMPD-TDATA-002).
            ompt: tool.defines(ctx, OMPT_PROBE)?,
            state_switch: tool.defines(ctx, b"ompd_state\0")?,
            env_size: tool.defines(ctx, b"ompd_env_block_size\0")?,
        };
        let mut a = Aspace::new(ctx, sizes, traits);
        // The runtime fills its layout words when it starts OMPD support; Intel's up to 2023.2
        // leave them zero without OMP_DEBUG=enabled, and no type has size 0.
        if Target::new(tool, &mut a).size(Size::Taskdata)? == 0 {
            return Err(Rc::INCOMPATIBLE);
        }
        let ah = handles::make(&tool, a)?;
        handles::put(out, ah.cast())
    })())
}

/// `ompd_device_initialize`: this library serves host processes only (OMPD-PROC-010).
pub fn device_initialize(
    b: &Build,
    host: *mut AddressSpaceHandle,
    ctx: *mut AddressSpaceContext,
    _kind: u64,
    _sizeof_id: u64,
    id: *mut c_void,
    out: *mut *mut AddressSpaceHandle,
) -> Rc {
    rc((|| {
        handle(b, host.cast::<Aspace>())?;
        if ctx.is_null() || id.is_null() {
            return Err(Rc::BAD_INPUT);
        }
        handles::need(out)?;
        Err(Rc::UNSUPPORTED)
    })())
}

/// `ompd_rel_address_space_handle`.
pub fn rel_address_space_handle(b: &Build, h: *mut AddressSpaceHandle) -> Rc {
    rc(tool().and_then(|t| handles::release(&t, h.cast::<Aspace>(), b.wrong_handle())))
}

/// The runtime's `_OPENMP` value.
fn omp_version(t: &Target) -> Result<i64, Rc> {
    t.global_int(b"__kmp_openmp_version\0")
}

/// `ompd_get_omp_version`.
pub fn get_omp_version(b: &Build, h: *mut AddressSpaceHandle, out: *mut i64) -> Rc {
    rc((|| {
        let t = target(b, h.cast())?;
        handles::need(out)?;
        handles::put(out, omp_version(&t)?)
    })())
}

/// `ompd_get_omp_version_string`: "OpenMP <yyyymm>", tool-owned.
pub fn get_omp_version_string(
    b: &Build,
    h: *mut AddressSpaceHandle,
    out: *mut *const c_char,
) -> Rc {
    rc((|| {
        let t = target(b, h.cast())?;
        handles::need(out)?;
        let v = omp_version(&t)?;
        let mut s = Buf::<32>::new();
        write!(s, "OpenMP {v}").map_err(|_| Rc::ERROR)?;
        let text = handles::c_string(&t.tool, s.bytes().ok_or(Rc::ERROR)?)?;
        handles::put(out, text)
    })())
}

/// `ompd_get_device_thread_id_kinds`: the host's one kind, pthread, at the runtime's
/// `kmp_thread_t` size (OMPD-PROC-020/021).
pub fn get_device_thread_id_kinds(
    b: &Build,
    h: *mut AddressSpaceHandle,
    kinds: *mut *mut u64,
    sizes: *mut *mut u64,
    count: *mut c_int,
) -> Rc {
    rc((|| {
        let mut t = target(b, h.cast())?;
        handles::need(kinds)?;
        handles::need(sizes)?;
        handles::need(count)?;
        let size = t.size(Size::ThreadId)?;
        let k = handles::words(&t.tool, &[thread_id_kind::PTHREAD])?;
        let s = match handles::words(&t.tool, &[size]) {
            Ok(s) => s,
            Err(e) => {
                t.tool.free(k.cast());
                return Err(e);
            }
        };
        handles::put(kinds, k)?;
        handles::put(sizes, s)?;
        handles::put(count, 1)
    })())
}

/// `ompd_get_device_from_thread`: the address-space handle the thread handle belongs to (the
/// one routine that promises pointer identity, OMPD-CMP-012).
pub fn get_device_from_thread(
    b: &Build,
    th: *mut ThreadHandle,
    out: *mut *mut AddressSpaceHandle,
) -> Rc {
    rc((|| {
        let thread = *handle(b, th.cast::<Thread>())?;
        handle(b, thread.ah)?;
        handles::need(out)?;
        handles::put(out, thread.ah.cast())
    })())
}
