//! Blocks the library allocates and frees through the callbacks, and the tool's reads of them.

use super::*;

fn allocate(nbytes: u64, site: &'static str) -> Option<*mut c_void> {
    let size = usize::try_from(nbytes.max(1)).ok()?;
    let layout = AllocLayout::from_size_align(size, BLOCK_ALIGN).ok()?;
    let mode = ledger().mode;
    // SAFETY: `layout` has a non-zero size.
    let p = unsafe {
        match mode {
            AllocMode::Zeroed => std::alloc::alloc_zeroed(layout),
            AllocMode::Poisoned => {
                let p = std::alloc::alloc(layout);
                if !p.is_null() {
                    std::ptr::write_bytes(p, POISON, size);
                }
                p
            }
        }
    };
    if p.is_null() {
        return None;
    }
    ledger().allocated(p as usize, nbytes, site);
    Some(p as *mut c_void)
}

fn release(ptr: *mut c_void, site: &'static str) -> Result<u64, Rc> {
    let block = ledger().freeing(ptr as usize, site).ok_or(Rc::BAD_INPUT)?;
    let layout = AllocLayout::from_size_align(block.size.max(1) as usize, BLOCK_ALIGN)
        .expect("layout was valid at allocation");
    // SAFETY: the ledger confirmed `ptr` is a live block from `allocate` with this layout, and
    // removed it, so it is freed exactly once. It is poisoned first: a library that goes on
    // using a block it freed (a handle released through a twin) reads garbage, not its old
    // contents.
    unsafe {
        std::ptr::write_bytes(ptr as *mut u8, crate::ledger::POISON, block.size as usize);
        std::alloc::dealloc(ptr as *mut u8, layout)
    };
    Ok(block.size)
}

/// Frees a tool-owned result the library returned (a string, a vector), as a tool does with
/// `free_memory`. Foreign and double frees are recorded and refused.
pub fn tool_free(ptr: *const c_void) -> Result<(), Rc> {
    release(ptr as *mut c_void, "tool").map(|_| ())
}

/// The size of the live block that starts at `ptr`, if `ptr` starts one.
pub fn block_size(ptr: *const c_void) -> Option<u64> {
    ledger().live_block(ptr as usize).map(|a| a.size)
}

/// Reads a NUL-terminated string from a live block, bounded by the block's size. `Err` names what
/// is wrong: not a live block, or no terminator inside it.
pub fn read_block_cstr(ptr: *const c_char) -> Result<Vec<u8>, String> {
    let size = match ledger().live_block(ptr as usize) {
        Some(a) => a.size as usize,
        None => return Err(format!("{ptr:p} is not a live block from alloc_memory")),
    };
    // SAFETY: the ledger says `ptr` starts a live block of `size` bytes that we allocated.
    let bytes = unsafe { std::slice::from_raw_parts(ptr as *const u8, size) };
    match bytes.iter().position(|b| *b == 0) {
        Some(n) => Ok(bytes[..n].to_vec()),
        None => Err(format!(
            "no NUL terminator inside the {size}-byte block at {ptr:p}"
        )),
    }
}

/// Reads up to `max` bytes at `addr` from inside a live block, bounded by the block's end (a
/// library may hand out pointers into a block it allocated). `Err` when no live block holds
/// `addr`.
pub fn read_inside_block(addr: usize, max: usize) -> Result<Vec<u8>, String> {
    let (start, size) = match ledger().containing(addr) {
        Some(a) => (a.ptr, a.size as usize),
        None => return Err(format!("{addr:#x} lies in no live block from alloc_memory")),
    };
    let len = (start + size).saturating_sub(addr).min(max);
    // SAFETY: `[addr, addr + len)` lies inside a live block of `size` bytes that `allocate`
    // handed out and nobody has freed.
    let bytes = unsafe { std::slice::from_raw_parts(addr as *const u8, len) };
    Ok(bytes.to_vec())
}

pub(super) unsafe extern "C" fn alloc_memory(nbytes: u64, ptr: *mut *mut c_void) -> Rc {
    guarded("alloc_memory", |site| {
        ledger().record(Event::AllocMemory { size: nbytes });
        if ptr.is_null() {
            return null_arg("alloc_memory", "ptr");
        }
        if let Some(rc) = broken(Op::Alloc) {
            // SAFETY: `ptr` is non-NULL and points to the library's out-parameter.
            unsafe { poison(ptr.cast(), std::mem::size_of::<*mut c_void>()) };
            return rc;
        }
        if nbytes > MAX_TRANSFER {
            return Rc::NOMEM;
        }
        match allocate(nbytes, site) {
            Some(p) => {
                // SAFETY: `ptr` is non-NULL and points to the library's out-parameter.
                unsafe { ptr.write_unaligned(p) };
                Rc::OK
            }
            None => Rc::NOMEM,
        }
    })
}

pub(super) unsafe extern "C" fn free_memory(ptr: *mut c_void) -> Rc {
    guarded("free_memory", |site| {
        if ptr.is_null() {
            ledger().record(Event::FreeMemory { size: 0 });
            return Rc::OK;
        }
        let r = release(ptr, site);
        ledger().record(Event::FreeMemory {
            size: *r.as_ref().unwrap_or(&0),
        });
        r.map(|_| Rc::OK).unwrap_or_else(|e| e)
    })
}
