//! The OMPD callback table served from any [`Source`] (a simulated image, a live process, a core
//! file): the only `extern "C"` code of the crate.
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
use crate::ledger::{AllocMode, Event, Ledger, Violation, POISON};
use crate::memory::{Memory, Reads};
use crate::source::{memory_cstr, Source, SymbolError, TargetKind};
use ompd_abi::{self as abi, AddressSpaceContext, Callbacks, DeviceTypeSizes, Rc, ThreadContext};
use std::alloc::Layout as AllocLayout;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::ops::ControlFlow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

mod access;
mod blocks;
mod tr;

use access::{
    device_to_host, get_thread_context_for_thread_id, host_to_device, print_string, read_memory,
    read_string, sizeof_type, symbol_addr_lookup, write_memory,
};
use blocks::{alloc_memory, free_memory};
pub use blocks::{block_size, read_block_cstr, read_inside_block, tool_free};
pub use tr::tr_table;

/// The largest single transfer a callback accepts (1 GiB); larger requests are bad input.
const MAX_TRANSFER: u64 = 1 << 30;
/// Alignment of every block `alloc_memory` hands out ("aligned for any type").
const BLOCK_ALIGN: usize = 16;

fn ledger_cell() -> &'static Mutex<Ledger> {
    static LEDGER: OnceLock<Mutex<Ledger>> = OnceLock::new();
    LEDGER.get_or_init(|| Mutex::new(Ledger::default()))
}

/// Starts the process-wide ledger afresh: nothing an earlier library instance of the process
/// allocated, violated, called or answered is in it (a worker's next unit of a batch).
pub fn fresh_ledger() {
    ledger().reset();
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
        l.begin(site);
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
        ledger().end(self.prev);
    }
}

/// The thread context handed to the library for one native thread of a target.
#[derive(Debug)]
pub struct ThreadCtx {
    /// Index into the source's native thread table (also makes every context non-zero-sized, so
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
    /// Memory served instead of the source's while a [`Substitution`] lives (corrupted images).
    substitute: Mutex<Option<Memory>>,
    /// Every read served while a [`Recording`] lives: (address, the bytes read).
    reads: Mutex<Option<Reads>>,
    /// How many [`Substitution`]s and [`Recording`]s of this target live: while none does, a
    /// read is the source's, and neither lock above is taken.
    guards: AtomicUsize,
}

/// Records the reads a target serves until [`Recording::finish`] (see [`Target::record_reads`]).
#[derive(Debug)]
pub struct Recording<'t> {
    target: &'t Target,
}

impl Recording<'_> {
    /// Stops recording and gives every read served since it started: (address, bytes).
    pub fn finish(self) -> Reads {
        self.target.log().take().unwrap_or_default()
    }
}

impl Drop for Recording<'_> {
    fn drop(&mut self) {
        self.target.log().take();
        self.target.guards.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Serves substituted memory until dropped (see [`Target::substitute`]).
#[derive(Debug)]
pub struct Substitution<'t> {
    target: &'t Target,
    prev: Option<Memory>,
}

impl Substitution<'_> {
    /// Serves the source's own memory again until the returned guard is dropped, then this
    /// substitute (to ask the same question of the intact target in the middle of a walk).
    pub fn pause(&self) -> Substitution<'_> {
        let prev = self.target.served().take();
        self.target.guards.fetch_add(1, Ordering::AcqRel);
        Substitution {
            target: self.target,
            prev,
        }
    }
}

impl Drop for Substitution<'_> {
    fn drop(&mut self) {
        *self.target.served() = self.prev.take();
        self.target.guards.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Target {
    /// Creates a target served from `source` (a simulated image, a live process, a core file). It
    /// is registered for the rest of the process (libraries keep context pointers), so the
    /// reference is `'static`.
    pub fn leak(source: impl Source + 'static) -> &'static Target {
        Target::leak_source(Box::new(source))
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
            reads: Mutex::new(None),
            guards: AtomicUsize::new(0),
        }));
        registry().push(t as *const Target as usize);
        t
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
    /// this target until the guard is dropped; symbols, threads and layout stay the source's. The
    /// library's caches keyed by the context survive, so handles obtained before stay usable.
    pub fn substitute(&self, memory: Memory) -> Substitution<'_> {
        let prev = self.served().replace(memory);
        self.guards.fetch_add(1, Ordering::AcqRel);
        Substitution { target: self, prev }
    }

    fn served(&self) -> MutexGuard<'_, Option<Memory>> {
        self.substitute.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records every read this target serves until the recording is finished or dropped: the
    /// memory a library's answers rested on, to serve again later ([`Memory::from_reads`]).
    pub fn record_reads(&self) -> Recording<'_> {
        *self.log() = Some(Vec::new());
        self.guards.fetch_add(1, Ordering::AcqRel);
        Recording { target: self }
    }

    /// Whether the source's own memory is served, unrecorded (no guard lives).
    fn plain(&self) -> bool {
        self.guards.load(Ordering::Acquire) == 0
    }

    fn log(&self) -> MutexGuard<'_, Option<Reads>> {
        self.reads.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a read to the recording, if one is under way.
    fn logged(&self, addr: u64, read: Result<Vec<u8>, String>) -> Result<Vec<u8>, String> {
        if let (Ok(bytes), Some(log)) = (&read, self.log().as_mut()) {
            log.push((addr, bytes.clone()));
        }
        read
    }

    /// Exactly `len` bytes at `addr` from the memory served now (the substitute's, else the
    /// source's).
    fn read(&self, addr: u64, len: u64) -> Result<Vec<u8>, String> {
        if self.plain() {
            return self.source.read(addr, len);
        }
        let read = match &*self.served() {
            Some(m) => m
                .read(addr, len)
                .map(<[u8]>::to_vec)
                .map_err(|e| e.to_string()),
            None => self.source.read(addr, len),
        };
        self.logged(addr, read)
    }

    /// Hands the `len` bytes at `addr` of the memory served now (the substitute's, else the
    /// source's) to `take`, as [`Target::read`] reads them, without copying them first.
    fn read_with(&self, addr: u64, len: u64, take: &mut dyn FnMut(&[u8])) -> Result<(), String> {
        if self.plain() {
            return self.source.read_with(addr, len, take);
        }
        let mut log = self.log();
        let mut take = |bytes: &[u8]| {
            if let Some(log) = log.as_mut() {
                log.push((addr, bytes.to_vec()));
            }
            take(bytes)
        };
        match &*self.served() {
            Some(m) => {
                take(m.read(addr, len).map_err(|e| e.to_string())?);
                Ok(())
            }
            None => self.source.read_with(addr, len, &mut take),
        }
    }

    /// A string at `addr` of at most `max` bytes from the memory served now, as
    /// [`Source::read_cstr`] answers.
    fn read_cstr(&self, addr: u64, max: u64) -> Result<Vec<u8>, String> {
        if self.plain() {
            return self.source.read_cstr(addr, max);
        }
        let read = match &*self.served() {
            Some(m) => memory_cstr(m, addr, max),
            None => self.source.read_cstr(addr, max),
        };
        self.logged(addr, read)
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
    // The context found last: a target is never freed, so it stays one (most callbacks of a
    // call name the same context).
    static LAST: AtomicUsize = AtomicUsize::new(0);
    let ctx_addr = ctx as usize;
    if ctx_addr == 0 || ctx_addr != LAST.load(Ordering::Relaxed) {
        if !registry().contains(&ctx_addr) {
            return None;
        }
        LAST.store(ctx_addr, Ordering::Relaxed);
    }
    // SAFETY: the address is in the registry, so it came from `Target::leak`, which never frees.
    Some(unsafe { &*(ctx as *const Target) })
}

/// The callback table. It lives in a `static` because libraries keep the pointer.
pub fn table() -> &'static Callbacks {
    static TABLE: Callbacks = FULL;
    &TABLE
}

/// The callback table without `print_string` (NULL), which OpenMP 6.0 lets a tool pass: the
/// library must then not call it (OMPD-CB-012).
pub fn table_without_print() -> &'static Callbacks {
    static TABLE: Callbacks = Callbacks {
        print_string: None,
        ..FULL
    };
    &TABLE
}

/// Every callback the tool implements.
const FULL: Callbacks = Callbacks {
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

/// Runs a callback body with the entry point it is attributed to ([`Ledger::attribute`]); a
/// panic becomes a recorded violation and `ompd_rc_error`. A metered callback over the call's
/// budget answers `ompd_rc_error` without running.
fn guarded(callback: &'static str, body: impl FnOnce(&'static str) -> Rc) -> Rc {
    let site = {
        let mut l = ledger();
        if METERED.contains(&callback) && !l.charge(callback) {
            return Rc::ERROR;
        }
        l.attribute(callback)
    };
    match catch_unwind(AssertUnwindSafe(|| body(site))) {
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
    PLANNED.store(true, Ordering::Release);
    FaultGuard { live: true }
}

/// Whether a fault plan may be in force ([`set_fault_plan`] sets it, its guard clears it): while
/// none is, no callback asks the ledger whether it is broken.
static PLANNED: AtomicBool = AtomicBool::new(false);

/// What the fault plan in force does to `op` (see [`Ledger::inject`]); nothing without a plan.
fn inject(op: Op) -> Option<Action> {
    if !PLANNED.load(Ordering::Acquire) {
        return None;
    }
    ledger().inject(op)
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
        PLANNED.store(false, Ordering::Release);
        ledger().faults.clear()
    }
}

impl Drop for FaultGuard {
    fn drop(&mut self) {
        if self.live {
            PLANNED.store(false, Ordering::Release);
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
    inject(op).map(|a| match a {
        Action::Fail(rc) | Action::Short(rc) => rc,
    })
}
