//! The OMPD callback table served from any [`Source`] (a simulated [`Image`], a live process, a
//! core file): the only `extern "C"` code of the crate.
//!
//! Every callback catches panics (none crosses FFI), validates each pointer it is given, checks
//! that contexts are ones the tool handed out, bounds every read by the target, and records what it
//! did in the process-wide [`Ledger`], attributed to the OMPD entry point in flight. The
//! target-access callbacks are metered by the ledger's per-call budget ([`METERED`]). Once its
//! arguments are validated, each callback reports itself to the fault plan in force
//! ([`set_fault_plan`], [`crate::faults`]) and fails as the plan says instead of doing its work.
//!
//! The libraries keep the table pointer and the context pointers for their whole life, so both
//! live for the rest of the process: the table is a `static`, and [`Target`]s are leaked.

use crate::faults::{short_len, Action, Census, FaultPlan, Op};
use crate::image::{Image, Memory};
use crate::ledger::{AllocMode, Event, Ledger, Violation, POISON};
use crate::source::{memory_cstr, Source, SymbolError, TargetKind};
use ompd_abi::{self as abi, AddressSpaceContext, Callbacks, DeviceTypeSizes, Rc, ThreadContext};
use std::alloc::Layout as AllocLayout;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::ops::ControlFlow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// The largest single transfer a callback accepts (1 GiB); larger requests are bad input.
const MAX_TRANSFER: u64 = 1 << 30;
/// Alignment of every block `alloc_memory` hands out ("aligned for any type").
const BLOCK_ALIGN: usize = 16;

fn ledger_cell() -> &'static Mutex<Ledger> {
    static LEDGER: OnceLock<Mutex<Ledger>> = OnceLock::new();
    LEDGER.get_or_init(|| Mutex::new(Ledger::default()))
}

/// The process-wide ledger. A poisoned lock is recovered: the ledger stays readable after a
/// panic elsewhere.
pub fn ledger() -> MutexGuard<'static, Ledger> {
    ledger_cell().lock().unwrap_or_else(|e| e.into_inner())
}

fn registry() -> MutexGuard<'static, Vec<usize>> {
    static TARGETS: OnceLock<Mutex<Vec<usize>>> = OnceLock::new();
    TARGETS
        .get_or_init(|| Mutex::new(Vec::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Marks `site` as the OMPD entry point in flight until the guard is dropped.
pub fn enter(site: &'static str) -> SiteGuard {
    let prev = {
        let mut l = ledger();
        let prev = l.site();
        l.set_site(Some(site));
        prev
    };
    SiteGuard { prev }
}

/// Restores the previous entry point when dropped.
#[derive(Debug)]
pub struct SiteGuard {
    prev: Option<&'static str>,
}

impl Drop for SiteGuard {
    fn drop(&mut self) {
        ledger().set_site(self.prev);
    }
}

/// The thread context handed to the library for one native thread of a target.
#[derive(Debug)]
pub struct ThreadCtx {
    /// Index into the image's native thread table (also makes every context non-zero-sized, so
    /// each has its own address).
    index: usize,
}

/// An address space served to a library: a [`Source`] (simulated image, live process or core
/// file) plus one thread context per native thread. Its address is the
/// `ompd_address_space_context_t *` the library sees.
#[derive(Debug)]
pub struct Target {
    source: Box<dyn Source>,
    /// One context per native thread; the vector is never resized, so addresses are stable.
    threads: Vec<ThreadCtx>,
    /// Memory served instead of the image's while a [`Substitution`] lives (corrupted images).
    substitute: Mutex<Option<Memory>>,
}

/// Serves substituted memory until dropped (see [`Target::substitute`]).
#[derive(Debug)]
pub struct Substitution<'t> {
    target: &'t Target,
    prev: Option<Memory>,
}

impl Substitution<'_> {
    /// Serves the image's own memory again until the returned guard is dropped, then this
    /// substitute (to ask the same question of the intact image in the middle of a walk).
    pub fn pause(&self) -> Substitution<'_> {
        let prev = self.target.served().take();
        Substitution {
            target: self.target,
            prev,
        }
    }
}

impl Drop for Substitution<'_> {
    fn drop(&mut self) {
        *self.target.served() = self.prev.take();
    }
}

impl Target {
    /// Creates a target for `image`. It is registered for the rest of the process (libraries keep
    /// context pointers), so the reference is `'static`.
    pub fn leak(image: Image) -> &'static Target {
        Target::leak_source(Box::new(image))
    }

    /// Creates a target served from any source (a live process, a core file), registered for the
    /// rest of the process like [`Target::leak`].
    pub fn leak_source(source: Box<dyn Source>) -> &'static Target {
        let n = source.thread_count();
        let threads = (0..n).map(|index| ThreadCtx { index }).collect();
        let t: &'static Target = Box::leak(Box::new(Target {
            source,
            threads,
            substitute: Mutex::new(None),
        }));
        registry().push(t as *const Target as usize);
        t
    }

    /// The simulated image served, for a simulated target (its memory is replaced while a
    /// [`Substitution`] lives).
    pub fn image(&self) -> Option<&Image> {
        self.source.image()
    }

    /// The source served.
    pub fn source(&self) -> &dyn Source {
        self.source.as_ref()
    }

    /// The kind of target served.
    pub fn kind(&self) -> TargetKind {
        self.source.kind()
    }

    /// Serves `memory` (e.g. a corrupted copy of the image's) to the reads of every context of
    /// this target until the guard is dropped; symbols, threads and layout stay the image's. The
    /// library's caches keyed by the context survive, so handles obtained before stay usable.
    pub fn substitute(&self, memory: Memory) -> Substitution<'_> {
        let prev = self.served().replace(memory);
        Substitution { target: self, prev }
    }

    fn served(&self) -> MutexGuard<'_, Option<Memory>> {
        self.substitute.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Exactly `len` bytes at `addr` from the memory served now (the substitute's, else the
    /// source's).
    fn read(&self, addr: u64, len: u64) -> Result<Vec<u8>, String> {
        match &*self.served() {
            Some(m) => m
                .read(addr, len)
                .map(<[u8]>::to_vec)
                .map_err(|e| e.to_string()),
            None => self.source.read(addr, len),
        }
    }

    /// A string at `addr` of at most `max` bytes from the memory served now, as
    /// [`Source::read_cstr`] answers.
    fn read_cstr(&self, addr: u64, max: u64) -> Result<Vec<u8>, String> {
        match &*self.served() {
            Some(m) => memory_cstr(m, addr, max),
            None => self.source.read_cstr(addr, max),
        }
    }

    /// The context pointer to pass to `ompd_process_initialize`.
    pub fn context(&self) -> *mut AddressSpaceContext {
        self as *const Target as *mut AddressSpaceContext
    }

    /// The thread context of native thread `index` (as `get_thread_context_for_thread_id` would
    /// return it).
    pub fn thread_context(&self, index: usize) -> Option<*mut ThreadContext> {
        self.threads
            .get(index)
            .map(|b| b as *const ThreadCtx as *mut ThreadContext)
    }

    fn thread_index(&self, tctx: *mut ThreadContext) -> Option<usize> {
        self.threads
            .iter()
            .find(|b| std::ptr::eq(*b as *const ThreadCtx, tctx as *const ThreadCtx))
            .map(|b| b.index)
    }
}

/// Resolves an address-space context the library handed back to the target it names.
fn target_of(ctx: *mut AddressSpaceContext) -> Option<&'static Target> {
    if !registry().contains(&(ctx as usize)) {
        return None;
    }
    // SAFETY: the address is in the registry, so it came from `Target::leak`, which never frees.
    Some(unsafe { &*(ctx as *const Target) })
}

/// The callback table. It lives in a `static` because libraries keep the pointer.
pub fn table() -> &'static Callbacks {
    static TABLE: Callbacks = Callbacks {
        alloc_memory: Some(alloc_memory),
        free_memory: Some(free_memory),
        print_string: Some(print_string),
        sizeof_type: Some(sizeof_type),
        symbol_addr_lookup: Some(symbol_addr_lookup),
        read_memory: Some(read_memory),
        write_memory: Some(write_memory),
        read_string: Some(read_string),
        device_to_host: Some(device_to_host),
        host_to_device: Some(host_to_device),
        get_thread_context_for_thread_id: Some(get_thread_context_for_thread_id),
    };
    &TABLE
}

/// The target-access callbacks: each is charged to the call in flight, and refused with
/// `ompd_rc_error` past the ledger's budget (allocation, release and printing are not metered).
pub const METERED: [&str; 6] = [
    "symbol_addr_lookup",
    "read_memory",
    "read_string",
    "device_to_host",
    "host_to_device",
    "get_thread_context_for_thread_id",
];

/// Runs a callback body; a panic becomes a recorded violation and `ompd_rc_error`. A metered
/// callback over the call's budget answers `ompd_rc_error` without running.
fn guarded(callback: &'static str, body: impl FnOnce() -> Rc) -> Rc {
    if METERED.contains(&callback) && !ledger().charge(callback) {
        return Rc::ERROR;
    }
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(rc) => rc,
        Err(_) => {
            ledger().violate(Violation::HarnessPanic { callback });
            Rc::ERROR
        }
    }
}

fn null_arg(callback: &'static str, argument: &'static str) -> Rc {
    let mut l = ledger();
    let site = l.site().unwrap_or("(none)");
    l.violate(Violation::NullArgument {
        callback,
        argument,
        site,
    });
    Rc::BAD_INPUT
}

fn unknown_context(callback: &'static str) -> Rc {
    let mut l = ledger();
    let site = l.site().unwrap_or("(none)");
    l.violate(Violation::UnknownContext { callback, site });
    Rc::STALE_HANDLE
}

/// Copies `data` to the library's buffer.
///
/// # Safety
/// `dst` must be valid for `data.len()` bytes of writes.
unsafe fn copy_out(data: &[u8], dst: *mut c_void) {
    // SAFETY: the caller guarantees `dst` has room for `data.len()` bytes; `data` is our own
    // memory, so the ranges cannot overlap.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst as *mut u8, data.len()) }
}

/// Sets the allocation mode for blocks handed out from now on.
pub fn set_alloc_mode(mode: AllocMode) {
    ledger().mode = mode;
}

/// Sets the fault plan for the callbacks from now on (replacing any other) and starts its
/// census; the plan is cleared when the returned guard is finished or dropped, so an early
/// return cannot leave it in force.
pub fn set_fault_plan(plan: FaultPlan) -> FaultGuard {
    ledger().faults.set(plan);
    FaultGuard { live: true }
}

/// Clears the fault plan when dropped; [`FaultGuard::finish`] also returns the census.
#[derive(Debug)]
pub struct FaultGuard {
    live: bool,
}

impl FaultGuard {
    /// Clears the plan and returns what the callbacks did under it.
    pub fn finish(mut self) -> Census {
        self.live = false;
        ledger().faults.clear()
    }
}

impl Drop for FaultGuard {
    fn drop(&mut self) {
        if self.live {
            ledger().faults.clear();
        }
    }
}

/// Fills the `len` bytes of a broken callback's output at `out` with [`POISON`]: a library that
/// uses the output of a failed callback anyway sees the same bytes every run, where its own
/// uninitialized memory would make the outcome depend on what ran before.
///
/// # Safety
/// `out` must be valid for `len` bytes of writes (or `len` must be 0).
unsafe fn poison(out: *mut c_void, len: usize) {
    if len > 0 {
        // SAFETY: the caller guarantees `len` writable bytes at `out`.
        unsafe { std::ptr::write_bytes(out as *mut u8, POISON, len) };
    }
}

/// The code an injected failure of `op` returns, if the fault plan breaks it (for callbacks
/// that have no partial answer to give).
fn broken(op: Op) -> Option<Rc> {
    ledger().inject(op).map(|a| match a {
        Action::Fail(rc) | Action::Short(rc) => rc,
    })
}

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
    let action = ledger().inject(op)?;
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
    // removed it, so it is freed exactly once.
    unsafe { std::alloc::dealloc(ptr as *mut u8, layout) };
    Ok(block.size)
}

/// Frees a tool-owned result the library returned (a string, a vector), as a tool does with
/// `free_memory`. Foreign and double frees are recorded and refused.
pub fn tool_free(ptr: *const c_void) -> Result<(), Rc> {
    release(ptr as *mut c_void, "tool").map(|_| ())
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

unsafe extern "C" fn alloc_memory(nbytes: u64, ptr: *mut *mut c_void) -> Rc {
    guarded("alloc_memory", || {
        let site = ledger().attribute("alloc_memory");
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

unsafe extern "C" fn free_memory(ptr: *mut c_void) -> Rc {
    guarded("free_memory", || {
        let site = ledger().attribute("free_memory");
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

unsafe extern "C" fn print_string(string: *const c_char, category: c_int) -> Rc {
    guarded("print_string", || {
        ledger().attribute("print_string");
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

unsafe extern "C" fn sizeof_type(ctx: *mut AddressSpaceContext, sizes: *mut DeviceTypeSizes) -> Rc {
    guarded("sizeof_type", || {
        ledger().attribute("sizeof_type");
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

unsafe extern "C" fn symbol_addr_lookup(
    ctx: *mut AddressSpaceContext,
    tctx: *mut ThreadContext,
    name: *const c_char,
    out: *mut abi::Address,
    _file_name: *const c_char,
) -> Rc {
    guarded("symbol_addr_lookup", || {
        ledger().attribute("symbol_addr_lookup");
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
    ledger().attribute(name);
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

unsafe extern "C" fn read_memory(
    ctx: *mut AddressSpaceContext,
    tctx: *mut ThreadContext,
    addr: *const abi::Address,
    nbytes: u64,
    buffer: *mut c_void,
) -> Rc {
    guarded("read_memory", || {
        // SAFETY: the library provides a buffer of at least `nbytes` bytes (or NULL).
        let (t, a) = match unsafe { read_prologue(Op::ReadMemory, ctx, tctx, addr, nbytes, buffer) }
        {
            ControlFlow::Continue(x) => x,
            ControlFlow::Break(rc) => return rc,
        };
        let res = t.read(a, nbytes);
        ledger().record(Event::ReadMemory {
            addr: a,
            len: nbytes,
            ok: res.is_ok(),
        });
        match res {
            Ok(data) => {
                // SAFETY: the library provides a buffer of at least `nbytes` bytes.
                unsafe { copy_out(&data, buffer) };
                Rc::OK
            }
            Err(_) => Rc::ERROR,
        }
    })
}

unsafe extern "C" fn read_string(
    ctx: *mut AddressSpaceContext,
    tctx: *mut ThreadContext,
    addr: *const abi::Address,
    nbytes: u64,
    buffer: *mut c_void,
) -> Rc {
    guarded("read_string", || {
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

unsafe extern "C" fn write_memory(
    ctx: *mut AddressSpaceContext,
    _tctx: *mut ThreadContext,
    addr: *const abi::Address,
    nbytes: u64,
    _buffer: *const c_void,
) -> Rc {
    guarded("write_memory", || {
        let site = ledger().attribute("write_memory");
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
    guarded(callback, || {
        ledger().attribute(callback);
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
        let mut tmp = vec![0u8; total as usize];
        // SAFETY: the library provides `total` readable bytes at `input`; `tmp` is ours, so a
        // library that converts in place (input == output) is handled by copying through it.
        unsafe { std::ptr::copy(input as *const u8, tmp.as_mut_ptr(), tmp.len()) };
        t.source.arch().convert_units(&mut tmp, unit as usize);
        // SAFETY: the library provides `total` writable bytes at `output`.
        unsafe { copy_out(&tmp, output) };
        Rc::OK
    })
}

unsafe extern "C" fn device_to_host(
    ctx: *mut AddressSpaceContext,
    input: *const c_void,
    unit: u64,
    count: u64,
    output: *mut c_void,
) -> Rc {
    convert("device_to_host", ctx, input, unit, count, output, true)
}

unsafe extern "C" fn host_to_device(
    ctx: *mut AddressSpaceContext,
    input: *const c_void,
    unit: u64,
    count: u64,
    output: *mut c_void,
) -> Rc {
    convert("host_to_device", ctx, input, unit, count, output, false)
}

unsafe extern "C" fn get_thread_context_for_thread_id(
    ctx: *mut AddressSpaceContext,
    kind: u64,
    size: u64,
    id: *const c_void,
    out: *mut *mut ThreadContext,
) -> Rc {
    guarded("get_thread_context_for_thread_id", || {
        ledger().attribute("get_thread_context_for_thread_id");
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
            abi::thread_id_kind::PTHREAD => t.source.arch().pointer as u64,
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
            ledger().record(Event::ThreadContext {
                kind,
                size,
                found: false,
            });
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{arch::Arch, image::lower, layout::Policy, model};

    /// The ledger (entry point in flight, budget, fault plan) is process-wide: these tests run one
    /// at a time.
    fn serial() -> MutexGuard<'static, ()> {
        static SERIAL: Mutex<()> = Mutex::new(());
        SERIAL.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `get_thread_context_for_thread_id` for the pthread id of native thread `index` of a 64-bit
    /// target.
    fn thread_context(t: &Target, index: usize) -> (Rc, *mut ThreadContext) {
        let id = t
            .image()
            .unwrap()
            .thread_id_bytes(index, abi::thread_id_kind::PTHREAD)
            .unwrap();
        let mut tctx = std::ptr::null_mut();
        // SAFETY: valid context, 8-byte id buffer and out-parameter.
        let rc = unsafe {
            table().get_thread_context_for_thread_id.unwrap()(
                t.context(),
                abi::thread_id_kind::PTHREAD,
                8,
                id.as_ptr().cast(),
                &mut tctx,
            )
        };
        (rc, tctx)
    }

    fn target(arch: Arch) -> &'static Target {
        let m = model::scenario("nested-tasks").unwrap().model;
        Target::leak(lower(&m, arch, Policy::Natural).unwrap())
    }

    #[test]
    fn lookups_and_reads_serve_the_image() {
        let _serial = serial();
        let t = target(Arch::ILP32_BE);
        let _g = enter("test");
        let cb = table();
        let name = c"__kmp_openmp_version";
        let mut addr = abi::Address::default();
        // SAFETY: valid context, name and out-parameter.
        let rc = unsafe {
            cb.symbol_addr_lookup.unwrap()(
                t.context(),
                std::ptr::null_mut(),
                name.as_ptr(),
                &mut addr,
                std::ptr::null(),
            )
        };
        assert_eq!(rc, Rc::OK);
        let mut buf = [0u8; 4];
        // SAFETY: valid context, address and 4-byte buffer.
        let rc = unsafe {
            cb.read_memory.unwrap()(
                t.context(),
                std::ptr::null_mut(),
                &addr,
                4,
                buf.as_mut_ptr().cast(),
            )
        };
        assert_eq!(rc, Rc::OK);
        // SAFETY: in-place conversion of 4 bytes, which the callback supports.
        let rc = unsafe {
            cb.device_to_host.unwrap()(
                t.context(),
                buf.as_ptr().cast(),
                4,
                1,
                buf.as_mut_ptr().cast(),
            )
        };
        assert_eq!(rc, Rc::OK);
        assert_eq!(i32::from_le_bytes(buf), 201611);
    }

    #[test]
    fn substituted_memory_is_served_until_the_guard_drops() {
        let _serial = serial();
        let t = target(Arch::LP64_LE);
        let _g = enter("test");
        let a = abi::Address {
            segment: 0,
            address: t.image().unwrap().symbol("__kmp_openmp_version").unwrap(),
        };
        let read = |t: &Target| {
            let mut buf = [0u8; 4];
            // SAFETY: valid context, address and 4-byte buffer.
            let rc = unsafe {
                table().read_memory.unwrap()(
                    t.context(),
                    std::ptr::null_mut(),
                    &a,
                    4,
                    buf.as_mut_ptr().cast(),
                )
            };
            (rc, i32::from_le_bytes(buf))
        };
        let mut memory = t.image().unwrap().memory.clone();
        memory.write(a.address, &7i32.to_le_bytes()).unwrap();
        {
            let s = t.substitute(memory);
            assert_eq!(read(t), (Rc::OK, 7));
            {
                let _p = s.pause();
                assert_eq!(read(t), (Rc::OK, 201611));
            }
            assert_eq!(read(t), (Rc::OK, 7));
        }
        assert_eq!(read(t), (Rc::OK, 201611));
    }

    #[test]
    fn unknown_contexts_are_refused() {
        let _serial = serial();
        let _g = enter("test");
        let mut sizes = DeviceTypeSizes::default();
        let bogus = 0x1234 as *mut AddressSpaceContext;
        // SAFETY: the callback must not dereference an unknown context.
        let rc = unsafe { table().sizeof_type.unwrap()(bogus, &mut sizes) };
        assert_eq!(rc, Rc::STALE_HANDLE);
        assert!(ledger()
            .violations()
            .iter()
            .any(|v| matches!(v, Violation::UnknownContext { .. })));
    }

    #[test]
    fn thread_contexts_resolve_the_tls_gtid() {
        let _serial = serial();
        let t = target(Arch::LP64_LE);
        let _g = enter("test");
        let (rc, mut tctx) = thread_context(t, 2);
        let id = t
            .image()
            .unwrap()
            .thread_id_bytes(2, abi::thread_id_kind::PTHREAD)
            .unwrap();
        assert_eq!(rc, Rc::OK);
        let mut addr = abi::Address::default();
        // SAFETY: valid context, thread context, name and out-parameter.
        let rc = unsafe {
            table().symbol_addr_lookup.unwrap()(
                t.context(),
                tctx,
                c"__kmp_gtid".as_ptr(),
                &mut addr,
                std::ptr::null(),
            )
        };
        assert_eq!(rc, Rc::OK);
        assert_eq!(
            t.image().unwrap().memory.read(addr.address, 4).unwrap(),
            2i32.to_le_bytes()
        );
        // SAFETY: wrong size for the kind.
        let rc = unsafe {
            table().get_thread_context_for_thread_id.unwrap()(
                t.context(),
                0,
                4,
                id.as_ptr().cast(),
                &mut tctx,
            )
        };
        assert_eq!(rc, Rc::BAD_INPUT);
    }

    #[test]
    fn allocation_modes_zero_or_poison_new_blocks() {
        let _serial = serial();
        let _g = enter("test");
        for (mode, byte) in [(AllocMode::Zeroed, 0u8), (AllocMode::Poisoned, POISON)] {
            set_alloc_mode(mode);
            let mut p = std::ptr::null_mut();
            let alloc = table().alloc_memory.unwrap();
            // SAFETY: valid out-parameter.
            assert_eq!(unsafe { alloc(32, &mut p) }, Rc::OK);
            // SAFETY: the block is live and 32 bytes long.
            let bytes = unsafe { std::slice::from_raw_parts(p as *const u8, 32) };
            assert!(bytes.iter().all(|b| *b == byte), "{mode:?}");
            tool_free(p).unwrap();
        }
        set_alloc_mode(AllocMode::default());
    }

    #[test]
    fn allocations_are_tracked_and_double_free_refused() {
        let _serial = serial();
        let _g = enter("test");
        let mut p = std::ptr::null_mut();
        // SAFETY: valid out-parameter.
        assert_eq!(unsafe { table().alloc_memory.unwrap()(8, &mut p) }, Rc::OK);
        assert!(ledger().live_block(p as usize).is_some());
        // SAFETY: freeing a block we allocated, then again (refused, not freed twice).
        assert_eq!(unsafe { table().free_memory.unwrap()(p) }, Rc::OK);
        // SAFETY: see above.
        assert_eq!(unsafe { table().free_memory.unwrap()(p) }, Rc::BAD_INPUT);
    }

    #[test]
    fn zero_width_reads_and_conversions_succeed() {
        let _serial = serial();
        let t = target(Arch::LP64_LE);
        let _g = enter("test");
        let a = abi::Address {
            segment: 0,
            address: t.image().unwrap().symbol("__kmp_version_lib_ver").unwrap(),
        };
        let read = table().read_memory.unwrap();
        // SAFETY: a 0-byte read needs no buffer.
        let rc = unsafe {
            read(
                t.context(),
                std::ptr::null_mut(),
                &a,
                0,
                std::ptr::null_mut(),
            )
        };
        assert_eq!(rc, Rc::OK);
        let convert = table().device_to_host.unwrap();
        // SAFETY: a unit-0 conversion touches no memory.
        let rc = unsafe { convert(t.context(), std::ptr::null(), 0, 1, std::ptr::null_mut()) };
        assert_eq!(rc, Rc::OK);
    }

    /// Reads through the table: `read_string` when `string`, else `read_memory`.
    fn read(t: &Target, addr: u64, buf: &mut [u8], string: bool) -> Rc {
        let a = abi::Address {
            segment: 0,
            address: addr,
        };
        let f = if string {
            table().read_string.unwrap()
        } else {
            table().read_memory.unwrap()
        };
        // SAFETY: valid context and address; `buf` has `buf.len()` bytes.
        unsafe {
            f(
                t.context(),
                std::ptr::null_mut(),
                &a,
                buf.len() as u64,
                buf.as_mut_ptr().cast(),
            )
        }
    }

    fn plan(fault: crate::faults::Fault) -> FaultGuard {
        set_fault_plan(FaultPlan {
            site: Some("fault-test"),
            fault: Some(fault),
        })
    }

    #[test]
    fn a_fault_plan_breaks_the_kth_read_and_records_it() {
        use crate::faults::Fault;
        let _serial = serial();
        let t = target(Arch::LP64_LE);
        let addr = t.image().unwrap().symbol("__kmp_version_lib_ver").unwrap();
        let _g = enter("fault-test");
        let mut buf = [0u8; 4];
        let guard = plan(Fault::ReadError(2));
        let got: Vec<Rc> = (0..3).map(|_| read(t, addr, &mut buf, false)).collect();
        let census = guard.finish();
        assert_eq!(got, [Rc::OK, Rc::ERROR, Rc::OK]);
        assert_eq!((census.reads, census.target_accesses), (3, 3));
        assert_eq!(census.injected.len(), 1);
        assert!(matches!(
            ledger().events().last(),
            Some(("fault-test", Event::ReadMemory { ok: true, .. }))
        ));
        assert!(ledger().events().iter().any(|(_, e)| matches!(
            e,
            Event::Injected {
                into: "read_memory",
                fault: Fault::ReadError(2),
                rc: 4
            }
        )));
        // Cleared: nothing fails any more.
        assert_eq!(read(t, addr, &mut buf, false), Rc::OK);
    }

    #[test]
    fn short_reads_deliver_half_and_never_a_terminator() {
        use crate::faults::Fault;
        let _serial = serial();
        let t = target(Arch::LP64_LE);
        let _g = enter("fault-test");
        let slot = t.image().unwrap().symbol("ompd_env_block").unwrap();
        let mut word = [0u8; 8];
        assert_eq!(read(t, slot, &mut word, false), Rc::OK);
        let text = u64::from_le_bytes(word);
        let mut full = [0u8; 4096];
        assert_eq!(read(t, text, &mut full, true), Rc::OK);
        let len = full.iter().position(|b| *b == 0).unwrap();
        assert!(len >= 2, "the scenario has a display environment");

        let guard = plan(Fault::ShortRead(1));
        let mut short = [0xEEu8; 4096];
        assert_eq!(read(t, text, &mut short, true), Rc::INCOMPLETE);
        let half = len.div_ceil(2);
        assert_eq!(short[..half], full[..half]);
        assert!(!short[..half].contains(&0), "no terminator delivered");
        assert!(
            short[half..].iter().all(|b| *b == POISON),
            "the rest poisoned"
        );
        drop(guard);

        let _guard = plan(Fault::ShortRead(1));
        let mut prefix = [0xEEu8; 8];
        assert_eq!(read(t, slot, &mut prefix, false), Rc::ERROR);
        assert_eq!(prefix[..4], word[..4]);
        assert_eq!(prefix[4..], [POISON; 4]);
    }

    #[test]
    fn symbol_alloc_conversion_and_context_faults_return_their_codes() {
        use crate::faults::Fault;
        let _serial = serial();
        let t = target(Arch::LP64_LE);
        let _g = enter("fault-test");
        let lookup = |name: &std::ffi::CStr| {
            let mut addr = abi::Address::default();
            // SAFETY: valid context, name and out-parameter.
            unsafe {
                table().symbol_addr_lookup.unwrap()(
                    t.context(),
                    std::ptr::null_mut(),
                    name.as_ptr(),
                    &mut addr,
                    std::ptr::null(),
                )
            }
        };
        let guard = plan(Fault::MissingSymbol("__kmp_version_lib_ver".into()));
        assert_eq!(lookup(c"__kmp_openmp_version"), Rc::OK);
        assert_eq!(lookup(c"__kmp_version_lib_ver"), Rc::ERROR);
        assert_eq!(lookup(c"__kmp_version_lib_ver"), Rc::ERROR);
        let census = guard.finish();
        assert_eq!(
            census.symbols,
            ["__kmp_openmp_version", "__kmp_version_lib_ver"]
        );
        assert_eq!(census.injected.len(), 2);

        let guard = plan(Fault::AllocFailure(1));
        let mut p = std::ptr::dangling_mut::<c_void>();
        // SAFETY: valid out-parameter.
        let rc = unsafe { table().alloc_memory.unwrap()(8, &mut p) };
        assert_eq!(rc, Rc::NOMEM);
        assert_eq!(p as usize, usize::from_ne_bytes([POISON; 8]), "poisoned");
        drop(guard);

        let guard = plan(Fault::ConversionFailure(1));
        let mut v = [1u8, 2, 3, 4];
        // SAFETY: in-place conversion of 4 bytes.
        let rc = unsafe {
            table().device_to_host.unwrap()(
                t.context(),
                v.as_ptr().cast(),
                4,
                1,
                v.as_mut_ptr().cast(),
            )
        };
        assert_eq!((rc, v), (Rc::ERROR, [POISON; 4]));
        drop(guard);

        let guard = plan(Fault::ThreadContextFailure(1));
        let (rc, tctx) = thread_context(t, 0);
        assert_eq!(
            (rc, tctx as usize),
            (Rc::ERROR, usize::from_ne_bytes([POISON; 8]))
        );
        assert_eq!(guard.finish().thread_contexts, 1);

        let _guard = plan(Fault::StaleHandle(2));
        assert_eq!(lookup(c"__kmp_openmp_version"), Rc::OK);
        assert_eq!(lookup(c"__kmp_openmp_version"), Rc::STALE_HANDLE);
    }

    #[test]
    fn a_dropped_guard_clears_the_plan() {
        use crate::faults::Fault;
        let _serial = serial();
        let t = target(Arch::LP64_LE);
        let addr = t.image().unwrap().symbol("__kmp_version_lib_ver").unwrap();
        let _g = enter("fault-test");
        drop(plan(Fault::ReadError(1)));
        let mut buf = [0u8; 4];
        assert_eq!(read(t, addr, &mut buf, false), Rc::OK);
        assert_eq!(ledger().faults.clear(), Census::default());
    }

    #[test]
    fn metered_callbacks_refuse_past_the_budget() {
        let _serial = serial();
        let t = target(Arch::LP64_LE);
        let a = abi::Address {
            segment: 0,
            address: t.image().unwrap().symbol("__kmp_openmp_version").unwrap(),
        };
        let read = || {
            let mut buf = [0u8; 4];
            // SAFETY: a registered context, a valid address and a 4-byte buffer.
            unsafe {
                table().read_memory.unwrap()(
                    t.context(),
                    std::ptr::null_mut(),
                    &a,
                    4,
                    buf.as_mut_ptr().cast(),
                )
            }
        };
        assert!(METERED.contains(&"read_memory") && !METERED.contains(&"alloc_memory"));
        let before = ledger().budget();
        let mark = ledger().mark();
        ledger().set_budget(Some(2));
        let rcs: Vec<Rc> = {
            let _g = enter("ompd_budget_test");
            (0..4).map(|_| read()).collect()
        };
        let again = {
            let _g = enter("ompd_budget_test_2");
            read()
        };
        ledger().set_budget(before);
        assert_eq!(rcs, [Rc::OK, Rc::OK, Rc::ERROR, Rc::ERROR]);
        assert_eq!(again, Rc::OK, "the next call has a budget of its own");
        assert_eq!(
            ledger().take_violations_since(mark),
            [Violation::BudgetExceeded {
                site: "ompd_budget_test",
                callback: "read_memory",
                cap: 2
            }]
        );
    }
}
