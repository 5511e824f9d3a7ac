//! The TR 2.001 callback table (`ompd_abi::tr::Callbacks`), served by adapting each TR callback
//! to the 5.0 callback that does the same work, so a TR-era library is served, checked, metered
//! and faulted exactly as a 5.x one. Only the TR's address-space-context lookup has no 5.0
//! counterpart: it finds the target whose thread context it is given.

use super::access::{
    device_to_host, get_thread_context_for_thread_id, host_to_device, print_string, read_memory,
    sizeof_type, symbol_addr_lookup, write_memory,
};
use super::blocks::{alloc_memory, free_memory};
use super::{guarded, null_arg, registry, Target};
use ompd_abi::tr::{Callbacks, TrWord, TypeSizes};
use ompd_abi::{Address, AddressSpaceContext, DeviceTypeSizes, Rc, ThreadContext};
use std::ffi::{c_char, c_int, c_void};

unsafe extern "C" fn tr_print(string: *const c_char) -> Rc {
    // SAFETY: forwarded unchanged; the 5.0 callback validates it.
    unsafe { print_string(string, 0) }
}

unsafe extern "C" fn tr_sizeof(ctx: *mut AddressSpaceContext, sizes: *mut TypeSizes) -> Rc {
    if sizes.is_null() {
        return null_arg("t_sizeof_prim_type", "sizes");
    }
    let mut d = DeviceTypeSizes::default();
    // SAFETY: a valid out-parameter; the context is validated by the 5.0 callback.
    let rc = unsafe { sizeof_type(ctx, &mut d) };
    if rc.is_ok() {
        let w = |v: u8| c_int::from(v);
        let t = TypeSizes {
            sizeof_char: w(d.sizeof_char),
            sizeof_short: w(d.sizeof_short),
            sizeof_int: w(d.sizeof_int),
            sizeof_long: w(d.sizeof_long),
            sizeof_long_long: w(d.sizeof_long_long),
            sizeof_pointer: w(d.sizeof_pointer),
        };
        // SAFETY: non-NULL out-parameter of the library.
        unsafe { sizes.write_unaligned(t) };
    }
    rc
}

unsafe extern "C" fn tr_symbol(
    ctx: *mut AddressSpaceContext,
    tctx: *mut ThreadContext,
    name: *const c_char,
    addr: *mut Address,
) -> Rc {
    // SAFETY: forwarded; no file name in the TR.
    unsafe { symbol_addr_lookup(ctx, tctx, name, addr, std::ptr::null()) }
}

unsafe extern "C" fn tr_read(
    ctx: *mut AddressSpaceContext,
    tctx: *mut ThreadContext,
    addr: *const Address,
    nbytes: TrWord,
    buffer: *mut c_void,
) -> Rc {
    let Ok(n) = u64::try_from(nbytes) else {
        return Rc::BAD_INPUT;
    };
    // SAFETY: forwarded; the 5.0 callback validates every pointer.
    unsafe { read_memory(ctx, tctx, addr, n, buffer) }
}

unsafe extern "C" fn tr_write(
    ctx: *mut AddressSpaceContext,
    tctx: *mut ThreadContext,
    addr: *const Address,
    nbytes: TrWord,
    buffer: *const c_void,
) -> Rc {
    let Ok(n) = u64::try_from(nbytes) else {
        return Rc::BAD_INPUT;
    };
    // SAFETY: forwarded; the 5.0 callback validates every pointer.
    unsafe { write_memory(ctx, tctx, addr, n, buffer) }
}

/// The 5.0 form of a conversion callback.
type Convert =
    unsafe extern "C" fn(*mut AddressSpaceContext, *const c_void, u64, u64, *mut c_void) -> Rc;

/// A TR conversion through the 5.0 one: the TR's `int` unit and count as sizes (negative ones are
/// bad input).
fn convert_tr(
    f: Convert,
    ctx: *mut AddressSpaceContext,
    input: *const c_void,
    (unit, count): (c_int, c_int),
    output: *mut c_void,
) -> Rc {
    let (Ok(u), Ok(c)) = (u64::try_from(unit), u64::try_from(count)) else {
        return Rc::BAD_INPUT;
    };
    // SAFETY: forwarded; the 5.0 callback validates every pointer.
    unsafe { f(ctx, input, u, c, output) }
}

unsafe extern "C" fn tr_to_host(
    ctx: *mut AddressSpaceContext,
    input: *const c_void,
    unit: c_int,
    count: c_int,
    output: *mut c_void,
) -> Rc {
    convert_tr(device_to_host, ctx, input, (unit, count), output)
}

unsafe extern "C" fn tr_to_target(
    ctx: *mut AddressSpaceContext,
    input: *const c_void,
    unit: c_int,
    count: c_int,
    output: *mut c_void,
) -> Rc {
    convert_tr(host_to_device, ctx, input, (unit, count), output)
}

unsafe extern "C" fn tr_thread_context(
    ctx: *mut AddressSpaceContext,
    kind: c_int,
    size: u64,
    id: *const c_void,
    out: *mut *mut ThreadContext,
) -> Rc {
    let Ok(k) = u64::try_from(kind) else {
        return Rc::UNSUPPORTED;
    };
    // SAFETY: forwarded; the 5.0 callback validates every pointer.
    unsafe { get_thread_context_for_thread_id(ctx, k, size, id, out) }
}

unsafe extern "C" fn tr_space_context(
    tctx: *mut ThreadContext,
    out: *mut *mut AddressSpaceContext,
) -> Rc {
    guarded("get_address_space_context_for_thread", |_| {
        if out.is_null() {
            return null_arg(
                "get_address_space_context_for_thread",
                "address_space_context",
            );
        }
        let targets: Vec<usize> = registry().clone();
        for t in targets {
            // SAFETY: registry addresses come from `Target::leak`, which never frees.
            let target = unsafe { &*(t as *const Target) };
            if target.thread_index(tctx).is_some() {
                // SAFETY: non-NULL out-parameter of the library.
                unsafe { out.write_unaligned(t as *mut AddressSpaceContext) };
                return Rc::OK;
            }
        }
        Rc::BAD_INPUT
    })
}

/// The TR 2.001 callback table. It lives in a `static` because libraries keep what they copy.
pub fn tr_table() -> &'static Callbacks {
    static TABLE: Callbacks = Callbacks {
        d_alloc_memory: Some(alloc_memory),
        d_free_memory: Some(free_memory),
        print_string: Some(tr_print),
        t_sizeof_prim_type: Some(tr_sizeof),
        t_symbol_addr_lookup: Some(tr_symbol),
        t_read_memory: Some(tr_read),
        t_write_memory: Some(tr_write),
        target_to_host: Some(tr_to_host),
        host_to_target: Some(tr_to_target),
        get_thread_context_for_osthread: Some(tr_thread_context),
        get_address_space_context_for_thread: Some(tr_space_context),
    };
    &TABLE
}
