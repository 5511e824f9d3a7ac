//! The tool's callback table, copied at `ompd_initialize` with the generation the tool asked for,
//! and dropped at `ompd_finalize`; and one typed call per callback. Every call into the tool is
//! made here, and only while an entry point runs, on the calling thread (OMPD-THR-004).

use ompd_abi::{
    Address, AddressSpaceContext, Callbacks, DeviceTypeSizes, Generation, Rc, ThreadContext,
};
use std::ffi::c_void;
use std::sync::Mutex;

/// The table copied at `ompd_initialize` (the tool's own table need not outlive the call), and
/// the generation whose API version the tool asked for.
static TABLE: Mutex<Option<(Callbacks, Generation)>> = Mutex::new(None);

fn slot() -> std::sync::MutexGuard<'static, Option<(Callbacks, Generation)>> {
    // Nothing panics while holding the lock, so a poisoned lock still holds a sound table.
    TABLE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Installs the tool's table for the generation `g` it asked for; `bad_input` when a callback
/// the library needs is missing.
pub fn install(c: Callbacks, g: Generation) -> Result<(), Rc> {
    let complete = c.alloc_memory.is_some()
        && c.free_memory.is_some()
        && c.sizeof_type.is_some()
        && c.symbol_addr_lookup.is_some()
        && c.read_memory.is_some()
        && c.read_string.is_some()
        && c.device_to_host.is_some()
        && c.get_thread_context_for_thread_id.is_some();
    if !complete {
        return Err(Rc::BAD_INPUT);
    }
    *slot() = Some((c, g));
    Ok(())
}

/// Drops the table; false when none was installed.
pub fn clear() -> bool {
    slot().take().is_some()
}

/// The tool: the installed table, or `callback_error` before `ompd_initialize`.
pub fn tool() -> Result<Tool, Rc> {
    slot().map(|(cb, _)| Tool { cb }).ok_or(Rc::CALLBACK_ERROR)
}

/// The generation the tool asked for at `ompd_initialize`; none before it or after
/// `ompd_finalize`.
pub fn asked() -> Option<Generation> {
    slot().map(|(_, g)| g)
}

/// A copy of the installed table, with one safe call per callback.
#[derive(Clone, Copy)]
pub struct Tool {
    cb: Callbacks,
}

/// Ok for `ompd_rc_ok`, the callback's own code otherwise.
fn check(rc: Rc) -> Result<(), Rc> {
    if rc.is_ok() {
        Ok(())
    } else {
        Err(rc)
    }
}

impl Tool {
    /// A block of `n` bytes from `alloc_memory`, 8-byte aligned; `nomem` when it fails.
    pub fn alloc(&self, n: u64) -> Result<*mut u8, Rc> {
        let f = self.cb.alloc_memory.ok_or(Rc::NOMEM)?;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: the tool's alloc callback with a valid out-pointer.
        let rc = unsafe { f(n, &mut p) };
        if !rc.is_ok() || p.is_null() {
            return Err(Rc::NOMEM);
        }
        if !(p as usize).is_multiple_of(8) {
            self.free(p.cast());
            return Err(Rc::NOMEM);
        }
        Ok(p.cast())
    }

    /// Returns a block to `free_memory`.
    pub fn free(&self, p: *mut u8) {
        if let (Some(f), false) = (self.cb.free_memory, p.is_null()) {
            // SAFETY: `p` came from this tool's alloc callback and is freed once.
            let _ = unsafe { f(p.cast()) };
        }
    }

    /// The target's primitive type sizes.
    pub fn sizes(&self, ctx: *mut AddressSpaceContext) -> Result<DeviceTypeSizes, Rc> {
        let f = self.cb.sizeof_type.ok_or(Rc::CALLBACK_ERROR)?;
        let mut s = DeviceTypeSizes::default();
        // SAFETY: the tool's callback with its own context and a valid out-pointer.
        check(unsafe { f(ctx, &mut s) })?;
        Ok(s)
    }

    /// The address of `name` (NUL-terminated), seen from `tctx` (NULL for globals).
    pub fn lookup(
        &self,
        ctx: *mut AddressSpaceContext,
        tctx: *mut ThreadContext,
        name: &[u8],
    ) -> Result<Address, Rc> {
        let f = self.cb.symbol_addr_lookup.ok_or(Rc::CALLBACK_ERROR)?;
        if name.last() != Some(&0) {
            return Err(Rc::ERROR);
        }
        let mut a = Address::default();
        // SAFETY: a NUL-terminated name, a valid out-pointer, no file name.
        check(unsafe { f(ctx, tctx, name.as_ptr().cast(), &mut a, std::ptr::null()) })?;
        Ok(a)
    }

    /// True when the process of `ctx` defines the global `name` (NUL-terminated): a lookup
    /// that finds nothing (`error`) is `false`; any other code is the tool's and is passed on.
    pub fn defines(&self, ctx: *mut AddressSpaceContext, name: &[u8]) -> Result<bool, Rc> {
        match self.lookup(ctx, std::ptr::null_mut(), name) {
            Ok(_) => Ok(true),
            Err(Rc::ERROR) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Fills `buf` from target memory at `addr`.
    pub fn read(
        &self,
        ctx: *mut AddressSpaceContext,
        tctx: *mut ThreadContext,
        addr: Address,
        buf: &mut [u8],
    ) -> Result<(), Rc> {
        let f = self.cb.read_memory.ok_or(Rc::CALLBACK_ERROR)?;
        // SAFETY: `buf` is writable for exactly the length passed.
        check(unsafe { f(ctx, tctx, &addr, buf.len() as u64, buf.as_mut_ptr().cast()) })
    }

    /// Reads a NUL-terminated string at `addr` into `buf`; its length without the NUL, or
    /// `error` when no NUL came within the buffer.
    pub fn read_string(
        &self,
        ctx: *mut AddressSpaceContext,
        addr: Address,
        buf: &mut [u8],
    ) -> Result<usize, Rc> {
        let f = self.cb.read_string.ok_or(Rc::CALLBACK_ERROR)?;
        buf.fill(0);
        let n = buf.len() as u64;
        // SAFETY: `buf` is writable for exactly the length passed.
        let rc = unsafe { f(ctx, std::ptr::null_mut(), &addr, n, buf.as_mut_ptr().cast()) };
        check(rc)?;
        buf.iter().position(|b| *b == 0).ok_or(Rc::ERROR)
    }

    /// Converts `count` units of `unit` bytes from target to host order, `input` to `output`.
    pub fn device_to_host(
        &self,
        ctx: *mut AddressSpaceContext,
        input: &[u8],
        unit: u64,
        output: &mut [u8],
    ) -> Result<(), Rc> {
        let f = self.cb.device_to_host.ok_or(Rc::CALLBACK_ERROR)?;
        if input.len() != output.len() || unit == 0 || !(input.len() as u64).is_multiple_of(unit) {
            return Err(Rc::ERROR);
        }
        let count = input.len() as u64 / unit;
        // SAFETY: both buffers hold `unit * count` bytes and do not overlap.
        check(unsafe {
            f(
                ctx,
                input.as_ptr().cast(),
                unit,
                count,
                output.as_mut_ptr().cast(),
            )
        })
    }

    /// The tool's thread context of a native thread id.
    pub fn thread_context(
        &self,
        ctx: *mut AddressSpaceContext,
        kind: u64,
        id: &[u8],
    ) -> Result<*mut ThreadContext, Rc> {
        let f = self
            .cb
            .get_thread_context_for_thread_id
            .ok_or(Rc::CALLBACK_ERROR)?;
        let mut t: *mut ThreadContext = std::ptr::null_mut();
        // SAFETY: `id` is readable for the length passed; a valid out-pointer.
        check(unsafe { f(ctx, kind, id.len() as u64, id.as_ptr().cast(), &mut t) })?;
        if t.is_null() {
            return Err(Rc::CALLBACK_ERROR);
        }
        Ok(t)
    }
}
