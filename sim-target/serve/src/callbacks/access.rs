//! The callbacks that reach the target: printing, type sizes, symbol lookup, reads, writes,
//! byte-order conversion and thread contexts.

use super::*;

/// Breaks read `op` (`read_memory` or `read_string`) of `nbytes` at `addr` when the fault plan
/// says so: returns the code to answer, after poisoning the buffer and delivering a short read's
/// partial answer (half of what a full answer delivers: all `nbytes`, or for a string the string
/// with its terminator, or all `nbytes` when it has none within them), and records the failed
/// read. `None` when the read is not broken.
///
/// # Safety
/// `buffer` must be valid for `nbytes` bytes of writes.
unsafe fn injected_read(
    op: Op,
    t: &Target,
    addr: u64,
    nbytes: u64,
    buffer: *mut c_void,
) -> Option<Rc> {
    let action = inject(op)?;
    // SAFETY: the caller guarantees `nbytes` writable bytes at `buffer`.
    unsafe { poison(buffer, nbytes as usize) };
    let rc = match action {
        Action::Fail(rc) => rc,
        Action::Short(rc) => {
            let full = match op {
                Op::ReadString => t.read_cstr(addr, nbytes).map_or(0, |s| s.len() as u64),
                _ => nbytes,
            };
            let len = short_len(full);
            if len > 0 {
                if let Ok(data) = t.read(addr, len) {
                    // SAFETY: the caller guarantees `nbytes` writable bytes, and half of `full`
                    // is at most `nbytes`.
                    unsafe { copy_out(&data, buffer) };
                }
            }
            rc
        }
    };
    ledger().record(read_event(op, addr, nbytes, false));
    Some(rc)
}

pub(super) unsafe extern "C" fn print_string(string: *const c_char, category: c_int) -> Rc {
    guarded("print_string", |_| {
        if string.is_null() {
            return null_arg("print_string", "string");
        }
        // SAFETY: the library passes a NUL-terminated string (the callback's contract).
        let text = unsafe { CStr::from_ptr(string) }
            .to_string_lossy()
            .into_owned();
        ledger().record(Event::PrintString { text, category });
        Rc::OK
    })
}

pub(super) unsafe extern "C" fn sizeof_type(
    ctx: *mut AddressSpaceContext,
    sizes: *mut DeviceTypeSizes,
) -> Rc {
    guarded("sizeof_type", |_| {
        ledger().record(Event::SizeofType);
        let Some(t) = target_of(ctx) else {
            return unknown_context("sizeof_type");
        };
        if sizes.is_null() {
            return null_arg("sizeof_type", "sizes");
        }
        if let Some(rc) = broken(Op::OtherAccess) {
            // SAFETY: `sizes` is non-NULL and points to the library's struct.
            unsafe { poison(sizes.cast(), std::mem::size_of::<DeviceTypeSizes>()) };
            return rc;
        }
        // SAFETY: `sizes` is non-NULL and points to the library's struct.
        unsafe { sizes.write_unaligned(t.source.arch().type_sizes()) };
        Rc::OK
    })
}

pub(super) unsafe extern "C" fn symbol_addr_lookup(
    ctx: *mut AddressSpaceContext,
    tctx: *mut ThreadContext,
    name: *const c_char,
    out: *mut abi::Address,
    _file_name: *const c_char,
) -> Rc {
    guarded("symbol_addr_lookup", |_| {
        let Some(t) = target_of(ctx) else {
            return unknown_context("symbol_addr_lookup");
        };
        if name.is_null() {
            return null_arg("symbol_addr_lookup", "symbol_name");
        }
        if out.is_null() {
            return null_arg("symbol_addr_lookup", "symbol_addr");
        }
        // SAFETY: `name` is non-NULL and NUL-terminated per the callback contract.
        let name = unsafe { CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned();
        if let Some(rc) = broken(Op::Lookup(&name)) {
            // SAFETY: `out` is non-NULL and points to the library's address struct.
            unsafe { poison(out.cast(), std::mem::size_of::<abi::Address>()) };
            ledger().record(Event::SymbolAddrLookup {
                name,
                thread: !tctx.is_null(),
                found: false,
            });
            return rc;
        }
        let thread = if tctx.is_null() {
            None
        } else {
            match t.thread_index(tctx) {
                Some(i) => Some(i),
                None => {
                    ledger().record(Event::SymbolAddrLookup {
                        name,
                        thread: true,
                        found: false,
                    });
                    return unknown_context("symbol_addr_lookup");
                }
            }
        };
        if thread.is_some() && t.source.is_thread_local(&name) == Some(false) {
            let site = ledger().site().unwrap_or("(none)");
            ledger().violate(Violation::ThreadContextForGlobal {
                name: name.clone(),
                site,
            });
        }
        let found = t.source.symbol(&name, thread);
        ledger().record(Event::SymbolAddrLookup {
            name,
            thread: thread.is_some(),
            found: found.is_ok(),
        });
        match found {
            Ok(addr) => {
                // SAFETY: `out` is non-NULL and points to the library's address struct.
                unsafe {
                    out.write_unaligned(abi::Address {
                        segment: abi::SEGMENT_NONE,
                        address: addr,
                    })
                };
                Rc::OK
            }
            // A thread-local symbol whose block this thread has not allocated yet.
            Err(SymbolError::Unavailable(_)) if thread.is_some() => Rc::UNAVAILABLE,
            Err(_) => Rc::ERROR,
        }
    })
}

fn check_thread(t: &Target, tctx: *mut ThreadContext, callback: &'static str) -> Result<(), Rc> {
    if !tctx.is_null() && t.thread_index(tctx).is_none() {
        return Err(unknown_context(callback));
    }
    Ok(())
}

/// The ledger event of read `op` (`read_memory` or `read_string`).
fn read_event(op: Op, addr: u64, nbytes: u64, ok: bool) -> Event {
    match op {
        Op::ReadString => Event::ReadString {
            addr,
            max: nbytes,
            ok,
        },
        _ => Event::ReadMemory {
            addr,
            len: nbytes,
            ok,
        },
    }
}

/// What both read callbacks do before reading: check for a known context, a thread context of it
/// (or none), a non-NULL address and a buffer for a non-empty read; refuse oversized reads;
/// consult the fault plan; answer zero-byte reads. `Continue` gives the target and the address to
/// read, `Break` the code to answer without reading.
///
/// # Safety
/// A non-NULL `buffer` must be valid for `nbytes` bytes of writes.
unsafe fn read_prologue(
    op: Op,
    ctx: *mut AddressSpaceContext,
    tctx: *mut ThreadContext,
    addr: *const abi::Address,
    nbytes: u64,
    buffer: *mut c_void,
) -> ControlFlow<Rc, (&'static Target, u64)> {
    let name = op.callback();
    let Some(t) = target_of(ctx) else {
        return ControlFlow::Break(unknown_context(name));
    };
    if let Err(rc) = check_thread(t, tctx, name) {
        return ControlFlow::Break(rc);
    }
    if addr.is_null() {
        return ControlFlow::Break(null_arg(name, "addr"));
    }
    // SAFETY: `addr` is non-NULL and points to the library's address struct.
    let a = unsafe { addr.read_unaligned() }.address;
    if nbytes > 0 && buffer.is_null() {
        return ControlFlow::Break(null_arg(name, "buffer"));
    }
    if nbytes > MAX_TRANSFER {
        ledger().record(read_event(op, a, nbytes, false));
        return ControlFlow::Break(Rc::BAD_INPUT);
    }
    // SAFETY: the caller guarantees `nbytes` writable bytes at `buffer`.
    if let Some(rc) = unsafe { injected_read(op, t, a, nbytes, buffer) } {
        return ControlFlow::Break(rc);
    }
    if nbytes == 0 {
        ledger().record(read_event(op, a, 0, true));
        return ControlFlow::Break(Rc::OK);
    }
    ControlFlow::Continue((t, a))
}

pub(super) unsafe extern "C" fn read_memory(
    ctx: *mut AddressSpaceContext,
    tctx: *mut ThreadContext,
    addr: *const abi::Address,
    nbytes: u64,
    buffer: *mut c_void,
) -> Rc {
    guarded("read_memory", |_| {
        // SAFETY: the library provides a buffer of at least `nbytes` bytes (or NULL).
        let (t, a) = match unsafe { read_prologue(Op::ReadMemory, ctx, tctx, addr, nbytes, buffer) }
        {
            ControlFlow::Continue(x) => x,
            ControlFlow::Break(rc) => return rc,
        };
        // SAFETY: the library provides a buffer of at least `nbytes` bytes, and a read gives
        // exactly the bytes asked for.
        let res = t.read_with(a, nbytes, &mut |data| unsafe { copy_out(data, buffer) });
        ledger().record(Event::ReadMemory {
            addr: a,
            len: nbytes,
            ok: res.is_ok(),
        });
        match res {
            Ok(()) => Rc::OK,
            Err(_) => Rc::ERROR,
        }
    })
}

pub(super) unsafe extern "C" fn read_string(
    ctx: *mut AddressSpaceContext,
    tctx: *mut ThreadContext,
    addr: *const abi::Address,
    nbytes: u64,
    buffer: *mut c_void,
) -> Rc {
    guarded("read_string", |_| {
        // SAFETY: the library provides a buffer of at least `nbytes` bytes (or NULL).
        let (t, a) = match unsafe { read_prologue(Op::ReadString, ctx, tctx, addr, nbytes, buffer) }
        {
            ControlFlow::Continue(x) => x,
            ControlFlow::Break(rc) => return rc,
        };
        let res = t.read_cstr(a, nbytes);
        let terminated = matches!(&res, Ok(v) if v.last() == Some(&0));
        ledger().record(Event::ReadString {
            addr: a,
            max: nbytes,
            ok: terminated,
        });
        match res {
            Ok(v) => {
                // SAFETY: `v.len() <= nbytes`, the buffer size the library provides.
                unsafe { copy_out(&v, buffer) };
                if terminated {
                    Rc::OK
                } else {
                    Rc::INCOMPLETE
                }
            }
            Err(_) => Rc::ERROR,
        }
    })
}

pub(super) unsafe extern "C" fn write_memory(
    ctx: *mut AddressSpaceContext,
    _tctx: *mut ThreadContext,
    addr: *const abi::Address,
    nbytes: u64,
    _buffer: *const c_void,
) -> Rc {
    guarded("write_memory", |site| {
        if target_of(ctx).is_none() {
            return unknown_context("write_memory");
        }
        if addr.is_null() {
            return null_arg("write_memory", "addr");
        }
        // SAFETY: `addr` is non-NULL and points to the library's address struct.
        let a = unsafe { addr.read_unaligned() }.address;
        let injected = broken(Op::OtherAccess);
        let mut l = ledger();
        l.record(Event::WriteMemory {
            addr: a,
            len: nbytes,
        });
        l.violate(Violation::WriteAttempt {
            addr: a,
            len: nbytes,
            site,
        });
        injected.unwrap_or(Rc::ERROR)
    })
}

fn convert(
    callback: &'static str,
    ctx: *mut AddressSpaceContext,
    input: *const c_void,
    unit: u64,
    count: u64,
    output: *mut c_void,
    to_host: bool,
) -> Rc {
    guarded(callback, |_| {
        ledger().record(Event::Convert {
            to_host,
            unit,
            count,
        });
        let Some(t) = target_of(ctx) else {
            return unknown_context(callback);
        };
        let Some(total) = unit.checked_mul(count).filter(|n| *n <= MAX_TRANSFER) else {
            return Rc::BAD_INPUT;
        };
        if total > 0 && input.is_null() {
            return null_arg(callback, "input");
        }
        if total > 0 && output.is_null() {
            return null_arg(callback, "output");
        }
        let op = if to_host {
            Op::DeviceToHost
        } else {
            Op::OtherAccess
        };
        if let Some(rc) = broken(op) {
            // SAFETY: the library provides `total` writable bytes at `output` (none when 0).
            unsafe { poison(output, total as usize) };
            return rc;
        }
        if total == 0 {
            return Rc::OK;
        }
        // Most conversions are of a word or a few: those go through the stack.
        let (mut small, mut large) = ([0u8; 64], Vec::new());
        let tmp: &mut [u8] = match usize::try_from(total) {
            Ok(n) if n <= small.len() => &mut small[..n],
            _ => {
                large.resize(total as usize, 0);
                &mut large
            }
        };
        // SAFETY: the library provides `total` readable bytes at `input`; `tmp` is ours, so a
        // library that converts in place (input == output) is handled by copying through it.
        unsafe { std::ptr::copy(input as *const u8, tmp.as_mut_ptr(), tmp.len()) };
        t.source.arch().convert_units(tmp, unit as usize);
        // SAFETY: the library provides `total` writable bytes at `output`.
        unsafe { copy_out(tmp, output) };
        Rc::OK
    })
}

pub(super) unsafe extern "C" fn device_to_host(
    ctx: *mut AddressSpaceContext,
    input: *const c_void,
    unit: u64,
    count: u64,
    output: *mut c_void,
) -> Rc {
    convert("device_to_host", ctx, input, unit, count, output, true)
}

pub(super) unsafe extern "C" fn host_to_device(
    ctx: *mut AddressSpaceContext,
    input: *const c_void,
    unit: u64,
    count: u64,
    output: *mut c_void,
) -> Rc {
    convert("host_to_device", ctx, input, unit, count, output, false)
}

pub(super) unsafe extern "C" fn get_thread_context_for_thread_id(
    ctx: *mut AddressSpaceContext,
    kind: u64,
    size: u64,
    id: *const c_void,
    out: *mut *mut ThreadContext,
) -> Rc {
    guarded("get_thread_context_for_thread_id", |_| {
        let Some(t) = target_of(ctx) else {
            return unknown_context("get_thread_context_for_thread_id");
        };
        if id.is_null() {
            return null_arg("get_thread_context_for_thread_id", "thread_id");
        }
        if out.is_null() {
            return null_arg("get_thread_context_for_thread_id", "thread_context");
        }
        if let Some(rc) = broken(Op::ThreadContext) {
            // SAFETY: `out` is non-NULL and points to the library's out-parameter.
            unsafe { poison(out.cast(), std::mem::size_of::<*mut ThreadContext>()) };
            ledger().record(Event::ThreadContext {
                kind,
                size,
                found: false,
            });
            return rc;
        }
        let expected = match kind {
            abi::thread_id_kind::PTHREAD => t.source.pthread_size(),
            abi::thread_id_kind::LWP => 4,
            _ => {
                ledger().record(Event::ThreadContext {
                    kind,
                    size,
                    found: false,
                });
                return Rc::UNSUPPORTED;
            }
        };
        if size != expected {
            let mut l = ledger();
            l.record(Event::ThreadContext {
                kind,
                size,
                found: false,
            });
            // An id the tool gave the entry point, handed on, is judged by that entry point's
            // answer (OMPD-HANDLE-THREAD-003), not as the library's choice of size.
            if !l.thread_id_given(kind, size) {
                let site = l.site().unwrap_or("(none)");
                l.violate(Violation::ThreadIdSize {
                    id_kind: kind,
                    size,
                    expected,
                    site,
                });
            }
            return Rc::BAD_INPUT;
        }
        // SAFETY: `id` is non-NULL and the library passes `size` bytes of id.
        let bytes = unsafe { std::slice::from_raw_parts(id as *const u8, size as usize) };
        let found = t.source.find_thread(kind, bytes);
        ledger().record(Event::ThreadContext {
            kind,
            size,
            found: found.is_some(),
        });
        match found.and_then(|i| t.thread_context(i)) {
            Some(c) => {
                // SAFETY: `out` is non-NULL and points to the library's out-parameter.
                unsafe { out.write_unaligned(c) };
                Rc::OK
            }
            None => Rc::ERROR,
        }
    })
}
