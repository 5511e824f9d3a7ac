//! The callback table a fault-ignoring mutant hands the inner library: the tool's table with
//! one member replaced by a wrapper that turns the tool's failure into a success.

use crate::table::Deviation;
use ompd_abi::{Address, AddressSpaceContext as Ctx, Callbacks, OmpdSize, Rc, ThreadContext as Tc};
use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::OnceLock;

/// The tool's table the wrappers call through.
static TOOL: AtomicPtr<Callbacks> = AtomicPtr::new(std::ptr::null_mut());

/// Whether the wrappers turn a failure into a success now: always, but for a deviation confined
/// to some calls, which [`arm`] before each call.
static ARMED: AtomicBool = AtomicBool::new(true);

/// Makes the wrappers act (`true`) or pass the tool's answers on (`false`) from now on.
pub(crate) fn arm(on: bool) {
    ARMED.store(on, Ordering::Release);
}

/// The tool's table (set before the wrapped table is handed out).
fn tool() -> &'static Callbacks {
    // SAFETY: `table` stores a non-null tool table before any wrapper can run, and the tool
    // keeps it valid until ompd_finalize.
    unsafe { &*TOOL.load(Ordering::Acquire) }
}

/// The wrapped table for deviation `d` around the tool's table `t` (non-null).
pub(crate) fn table(d: Deviation, t: *mut Callbacks) -> *const Callbacks {
    TOOL.store(t, Ordering::Release);
    static WRAPPED: OnceLock<Callbacks> = OnceLock::new();
    WRAPPED.get_or_init(|| {
        let mut c = *tool();
        match d {
            Deviation::ReadFaultIgnored | Deviation::AspaceIcvReadFaultIgnored => {
                c.read_memory = Some(read_memory);
                c.read_string = Some(read_string);
            }
            Deviation::SymbolFaultIgnored => c.symbol_addr_lookup = Some(symbol_addr_lookup),
            Deviation::ConversionFaultIgnored => c.device_to_host = Some(device_to_host),
            Deviation::AllocFaultIgnored => c.alloc_memory = Some(alloc_memory),
            Deviation::ConversionSkipped => c.device_to_host = Some(plain_copy),
            _ => {}
        }
        c
    })
}

/// Zero-fills the buffer when the tool's read fails, and answers ok (while armed).
fn zero_on_failure(rc: Rc, buffer: *mut c_void, n: OmpdSize) -> Rc {
    if !ARMED.load(Ordering::Acquire) {
        return rc;
    }
    if rc != Rc::OK && !buffer.is_null() {
        // SAFETY: the library's buffer of `n` bytes, as it passed it to the read.
        unsafe { std::ptr::write_bytes(buffer.cast::<u8>(), 0, n as usize) };
    }
    Rc::OK
}

/// A tool read (`read_memory` or `read_string`) whose failure is turned into a zero-filled
/// success.
fn read_ignoring_failure(
    f: Option<ompd_abi::ReadMemoryFn>,
    (c, t, a, n, b): (*mut Ctx, *mut Tc, *const Address, OmpdSize, *mut c_void),
) -> Rc {
    let Some(f) = f else {
        return Rc::ERROR;
    };
    // SAFETY: the tool's callback with the library's arguments.
    zero_on_failure(unsafe { f(c, t, a, n, b) }, b, n)
}

extern "C" fn read_memory(
    c: *mut Ctx,
    t: *mut Tc,
    a: *const Address,
    n: OmpdSize,
    b: *mut c_void,
) -> Rc {
    read_ignoring_failure(tool().read_memory, (c, t, a, n, b))
}

extern "C" fn read_string(
    c: *mut Ctx,
    t: *mut Tc,
    a: *const Address,
    n: OmpdSize,
    b: *mut c_void,
) -> Rc {
    read_ignoring_failure(tool().read_string, (c, t, a, n, b))
}

extern "C" fn symbol_addr_lookup(
    c: *mut Ctx,
    t: *mut Tc,
    name: *const c_char,
    out: *mut Address,
    file: *const c_char,
) -> Rc {
    let Some(f) = tool().symbol_addr_lookup else {
        return Rc::ERROR;
    };
    // SAFETY: the tool's callback with the library's arguments.
    if unsafe { f(c, t, name, out, file) } != Rc::OK && !out.is_null() {
        // SAFETY: the library's out-parameter.
        unsafe { *out = Address::default() };
    }
    Rc::OK
}

extern "C" fn device_to_host(
    c: *mut Ctx,
    i: *const c_void,
    u: OmpdSize,
    n: OmpdSize,
    o: *mut c_void,
) -> Rc {
    let Some(f) = tool().device_to_host else {
        return Rc::ERROR;
    };
    // SAFETY: the tool's callback with the library's arguments.
    if unsafe { f(c, i, u, n, o) } != Rc::OK && !i.is_null() && !o.is_null() {
        // SAFETY: both buffers hold `u * n` bytes, as the library passed them.
        unsafe { std::ptr::copy(i.cast::<u8>(), o.cast::<u8>(), (u * n) as usize) };
    }
    Rc::OK
}

extern "C" fn plain_copy(
    _: *mut Ctx,
    i: *const c_void,
    u: OmpdSize,
    n: OmpdSize,
    o: *mut c_void,
) -> Rc {
    if i.is_null() || o.is_null() {
        return Rc::ERROR;
    }
    // SAFETY: both buffers hold `u * n` bytes, as the library passed them; copying without the
    // byte swap the target needs is the deviation being injected.
    unsafe { std::ptr::copy(i.cast::<u8>(), o.cast::<u8>(), (u * n) as usize) };
    Rc::OK
}

extern "C" fn alloc_memory(n: OmpdSize, p: *mut *mut c_void) -> Rc {
    let Some(f) = tool().alloc_memory else {
        return Rc::ERROR;
    };
    // SAFETY: the tool's callback with the library's arguments.
    if unsafe { f(n, p) } != Rc::OK && !p.is_null() {
        // SAFETY: the library's out-parameter; a C-heap block where the tool's was refused is
        // the deviation being injected.
        unsafe { *p = nix::libc::malloc(n.max(1) as usize) };
    }
    Rc::OK
}
