//! The TR 2.001 callback table behind the 5.0-shaped one the library works with: at the TR's
//! `ompd_initialize` the tool's TR table is copied here, and a 5.0 table of adapters that call it
//! is installed ([`crate::cb::install`]). `read_string`, which the TR lacks, reads in bounded
//! chunks until a NUL.

use ompd_abi::tr::{Callbacks as TrCallbacks, TypeSizes};
use ompd_abi::{Address, AddressSpaceContext, Callbacks, DeviceTypeSizes, Rc, ThreadContext};
use std::ffi::{c_char, c_int, c_void};
use std::sync::Mutex;

/// The tool's TR table, copied at `ompd_initialize`.
static TABLE: Mutex<Option<TrCallbacks>> = Mutex::new(None);

fn table() -> Option<TrCallbacks> {
    *TABLE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Copies the tool's TR table (`bad_input` when a callback the library needs is missing) and
/// returns the 5.0 table of adapters to install.
pub fn adopt(t: TrCallbacks) -> Result<Callbacks, Rc> {
    let complete = t.d_alloc_memory.is_some()
        && t.d_free_memory.is_some()
        && t.t_sizeof_prim_type.is_some()
        && t.t_symbol_addr_lookup.is_some()
        && t.t_read_memory.is_some()
        && t.target_to_host.is_some()
        && t.get_thread_context_for_osthread.is_some();
    if !complete {
        return Err(Rc::BAD_INPUT);
    }
    *TABLE.lock().unwrap_or_else(|e| e.into_inner()) = Some(t);
    Ok(Callbacks {
        alloc_memory: Some(alloc),
        free_memory: Some(free),
        print_string: None,
        sizeof_type: Some(sizeof_type),
        symbol_addr_lookup: Some(symbol),
        read_memory: Some(read),
        write_memory: None,
        read_string: Some(read_string),
        device_to_host: Some(to_host),
        host_to_device: None,
        get_thread_context_for_thread_id: Some(thread_context),
    })
}

/// A TR callback, or `callback_error` when the table lacks it.
macro_rules! tr {
    ($slot:ident) => {
        match table().and_then(|t| t.$slot) {
            Some(f) => f,
            None => return Rc::CALLBACK_ERROR,
        }
    };
}

unsafe extern "C" fn alloc(n: u64, p: *mut *mut c_void) -> Rc {
    let f = tr!(d_alloc_memory);
    // SAFETY: forwarded unchanged to the tool.
    unsafe { f(n, p) }
}

unsafe extern "C" fn free(p: *mut c_void) -> Rc {
    let f = tr!(d_free_memory);
    // SAFETY: forwarded unchanged to the tool.
    unsafe { f(p) }
}

unsafe extern "C" fn sizeof_type(ctx: *mut AddressSpaceContext, out: *mut DeviceTypeSizes) -> Rc {
    let f = tr!(t_sizeof_prim_type);
    let mut t = TypeSizes::default();
    // SAFETY: the tool's callback with a valid out-parameter.
    let rc = unsafe { f(ctx, &mut t) };
    if !rc.is_ok() {
        return rc;
    }
    let n = |v: c_int| u8::try_from(v).ok();
    let d = (|| {
        Some(DeviceTypeSizes {
            sizeof_char: n(t.sizeof_char)?,
            sizeof_short: n(t.sizeof_short)?,
            sizeof_int: n(t.sizeof_int)?,
            sizeof_long: n(t.sizeof_long)?,
            sizeof_long_long: n(t.sizeof_long_long)?,
            sizeof_pointer: n(t.sizeof_pointer)?,
        })
    })();
    match d {
        // SAFETY: the library's own out-parameter.
        Some(d) => unsafe {
            out.write(d);
            Rc::OK
        },
        None => Rc::INCOMPATIBLE,
    }
}

unsafe extern "C" fn symbol(
    ctx: *mut AddressSpaceContext,
    tctx: *mut ThreadContext,
    name: *const c_char,
    addr: *mut Address,
    _file: *const c_char,
) -> Rc {
    let f = tr!(t_symbol_addr_lookup);
    // SAFETY: forwarded unchanged to the tool.
    unsafe { f(ctx, tctx, name, addr) }
}

unsafe extern "C" fn read(
    ctx: *mut AddressSpaceContext,
    tctx: *mut ThreadContext,
    addr: *const Address,
    n: u64,
    buf: *mut c_void,
) -> Rc {
    let f = tr!(t_read_memory);
    let Ok(n) = i64::try_from(n) else {
        return Rc::BAD_INPUT;
    };
    // SAFETY: forwarded unchanged to the tool.
    unsafe { f(ctx, tctx, addr, n, buf) }
}

/// The chunk `read_string` reads at a time.
const CHUNK: u64 = 64;

unsafe extern "C" fn read_string(
    ctx: *mut AddressSpaceContext,
    tctx: *mut ThreadContext,
    addr: *const Address,
    n: u64,
    buf: *mut c_void,
) -> Rc {
    if addr.is_null() || buf.is_null() {
        return Rc::BAD_INPUT;
    }
    // SAFETY: the library's own address and buffer of `n` bytes.
    let start = unsafe { addr.read() };
    let mut done = 0u64;
    while done < n {
        let len = CHUNK
            .min(n - done)
            .min(CHUNK - (start.address + done) % CHUNK);
        let at = Address {
            segment: start.segment,
            address: start.address.wrapping_add(done),
        };
        // SAFETY: `buf + done` has `len` bytes left.
        let dst = unsafe { buf.cast::<u8>().add(done as usize) };
        // SAFETY: the adapter above with a valid address and buffer.
        let rc = unsafe { read(ctx, tctx, &at, len, dst.cast()) };
        if !rc.is_ok() {
            // The chunk may reach past the string into memory the target does not have: read
            // it byte by byte, up to the NUL.
            // SAFETY: `dst` has `len` bytes left.
            return unsafe { bytewise(ctx, tctx, at, len, dst) };
        }
        // SAFETY: the chunk just read.
        let chunk = unsafe { std::slice::from_raw_parts(dst, len as usize) };
        if chunk.contains(&0) {
            return Rc::OK;
        }
        done += len;
    }
    Rc::OK
}

/// Reads up to `len` bytes at `at` into `dst` one at a time: `ok` at the first NUL, the read's
/// code at the first byte that cannot be read, `ok` when all `len` were read.
///
/// # Safety
/// `dst` must be writable for `len` bytes.
unsafe fn bytewise(
    ctx: *mut AddressSpaceContext,
    tctx: *mut ThreadContext,
    at: Address,
    len: u64,
    dst: *mut u8,
) -> Rc {
    for k in 0..len {
        let a = Address {
            segment: at.segment,
            address: at.address.wrapping_add(k),
        };
        // SAFETY: `dst + k` is within the `len` writable bytes.
        let d = unsafe { dst.add(k as usize) };
        // SAFETY: the adapter above with a valid address and a one-byte buffer.
        let rc = unsafe { read(ctx, tctx, &a, 1, d.cast()) };
        if !rc.is_ok() {
            return rc;
        }
        // SAFETY: the byte just read.
        if unsafe { d.read() } == 0 {
            return Rc::OK;
        }
    }
    Rc::OK
}

unsafe extern "C" fn to_host(
    ctx: *mut AddressSpaceContext,
    input: *const c_void,
    unit: u64,
    count: u64,
    output: *mut c_void,
) -> Rc {
    let f = tr!(target_to_host);
    let (Ok(u), Ok(c)) = (c_int::try_from(unit), c_int::try_from(count)) else {
        return Rc::BAD_INPUT;
    };
    // SAFETY: forwarded to the tool; the buffers are the library's own.
    unsafe { f(ctx, input, u, c, output) }
}

unsafe extern "C" fn thread_context(
    ctx: *mut AddressSpaceContext,
    kind: u64,
    size: u64,
    id: *const c_void,
    out: *mut *mut ThreadContext,
) -> Rc {
    let f = tr!(get_thread_context_for_osthread);
    let Ok(k) = c_int::try_from(kind) else {
        return Rc::UNSUPPORTED;
    };
    // SAFETY: forwarded unchanged to the tool.
    unsafe { f(ctx, k, size, id, out) }
}
