//! Deviations at the boundaries of the runtime's strings: a string ICV cut at a fixed buffer's
//! length, a display-control block whose last line is dropped when the runtime's block does
//! not end in a newline (the first line-splitting that comes to mind does both), and an empty
//! vector released without the copy of its empty block.

use super::{tool, CONTEXT};
use crate::table::Deviation as D;
use ompd_abi::{Address, AddressSpaceContext, Rc};
use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::Ordering;

/// The longest string a capped ICV string keeps (a 512-byte buffer with its NUL).
const CAP: usize = 511;

/// The boundary deviations after an ok call; `rc` unchanged.
pub(super) fn after(d: D, w: &[u64], rc: Rc) -> Rc {
    match d {
        D::IcvStringCapped => cap(w[3]),
        D::DcvDropsUnterminatedLast => drop_unterminated(w[1]),
        _ => {}
    }
    rc
}

/// Cuts the string the tool's out-parameter at `out` points to after [`CAP`] bytes.
fn cap(out: u64) {
    // SAFETY: the tool's out-parameter, written by the inner routine on ok.
    let Some(&s) = (unsafe { (out as usize as *const *mut c_char).as_ref() }) else {
        return;
    };
    if s.is_null() {
        return;
    }
    // SAFETY: the inner library's NUL-terminated string, in a tool block the tool now owns.
    if unsafe { CStr::from_ptr(s) }.to_bytes().len() > CAP {
        // SAFETY: byte CAP lies inside the string (before its NUL).
        unsafe { s.add(CAP).write(0) };
    }
}

/// Drops the last entry of the vector at the tool's out-parameter `out` when the runtime's block
/// does not end in a newline. The inner (reference) vector holds the entries, a NULL, then its
/// copy of the block, in which every newline became a NUL: the block ended in a newline exactly
/// when the copy's last byte is NUL.
fn drop_unterminated(out: u64) {
    // SAFETY: the tool's out-parameter, written by the inner routine on ok.
    let Some(&v) = (unsafe { (out as usize as *const *mut *const c_char).as_ref() }) else {
        return;
    };
    let Some(size) = env_block_size().filter(|s| *s > 0) else {
        return;
    };
    // SAFETY: the inner library's NULL-terminated vector, followed by its block's address (the
    // reference's layout); the block holds `size` bytes and a NUL.
    unsafe {
        let n = (0..).take_while(|&i| !v.add(i).read().is_null()).count();
        let text = v.add(n + 1).read().cast::<u8>();
        if n == 0 || text.is_null() || text.add(size as usize - 1).read() == 0 {
            return;
        }
        v.add(n - 1).write(std::ptr::null());
        v.add(n).write(text.cast());
    }
}

/// The runtime's `ompd_env_block_size` (8 bytes), read and converted through the tool's
/// callbacks in the last address space initialized.
fn env_block_size() -> Option<u64> {
    let t = tool()?;
    let (lookup, read, convert) = (t.symbol_addr_lookup?, t.read_memory?, t.device_to_host?);
    let ctx = CONTEXT.load(Ordering::Acquire) as usize as *mut AddressSpaceContext;
    let (mut at, mut raw, mut host) = (Address::default(), [0u8; 8], [0u8; 8]);
    let null = std::ptr::null_mut();
    // SAFETY: the tool's callbacks with its own context, a NUL-terminated name, valid
    // out-parameters and 8-byte buffers.
    unsafe {
        let name = c"ompd_env_block_size".as_ptr();
        (lookup(ctx, null, name, &mut at, std::ptr::null()) == Rc::OK).then_some(())?;
        (read(ctx, null, &at, 8, raw.as_mut_ptr().cast()) == Rc::OK).then_some(())?;
        let (i, o) = (raw.as_ptr().cast::<c_void>(), host.as_mut_ptr().cast());
        (convert(ctx, i, 8, 1, o) == Rc::OK).then_some(())?;
    }
    Some(u64::from_ne_bytes(host))
}

/// Releases the vector at `vars` (the tool's `const char *const **`) without its text block when
/// it has no entries: the vector goes back through `free_memory`, the copy of the runtime's
/// empty block stays allocated. `None` (the inner release runs) for a vector with entries or
/// an argument the inner routine must judge.
pub(super) fn release_empty_without_text(vars: u64) -> Option<Rc> {
    // SAFETY: the tool's argument; a NULL or a NULL vector is left to the inner routine.
    let &v = unsafe { (vars as usize as *const *const *const c_char).as_ref() }?;
    // SAFETY: a vector the inner library gave the tool: NULL-terminated.
    if v.is_null() || !unsafe { v.read() }.is_null() {
        return None;
    }
    let free = tool()?.free_memory?;
    // SAFETY: the vector is one alloc_memory block of the inner library.
    Some(unsafe { free(v.cast_mut().cast()) })
}
