//! Deviations that answer in the routine's place, or change its arguments, before the call.

use super::{alloc, free, generic::crash, tool, Deviation as D, ICV_STRING, INITIALIZED};
use super::{CONTEXT, FIRST_CONTEXT, RELEASES};
use crate::inner::routine;
use ompd_abi::{entry, EntryPoint, Rc};
use std::ffi::c_int;
use std::sync::atomic::Ordering;

/// A byte of this library's static data: what a foreign free frees.
static FOREIGN: u8 = 0;

/// The specific deviations' part before the call.
pub(super) fn before(d: D, ep: EntryPoint, w: &mut [u64]) -> Option<Rc> {
    side_effect(d, w);
    code_in_place(d, w).or_else(|| changed(d, ep, w))
}

/// The deviations that answer a fixed code in the routine's place (given its arguments `w`).
fn code_in_place(d: D, w: &[u64]) -> Option<Rc> {
    match d {
        D::ProcessInitializeDeclines => Some(Rc::INCOMPATIBLE),
        // Another context than the instance's first: a second address space is refused.
        D::OneAddressSpaceReadForgotten if FIRST_CONTEXT.load(Ordering::Acquire) != w[0] => {
            Some(Rc::ERROR)
        }
        D::DeviceInitializeMiscoded => Some(Rc::ERROR),
        D::ThreadHandleUnavailable
        | D::CurrParallelUnavailable
        | D::TrTopRegionUnavailable
        | D::EnclosingParallelUnavailable
        | D::TaskParallelUnavailable
        | D::CurrTaskUnavailable
        | D::GeneratingTaskUnavailable
        | D::SchedulingTaskUnavailable
        | D::DcvUnavailable
        | D::DeviceFromThreadUnavailable => Some(Rc::UNAVAILABLE),
        D::RelTaskLeaks | D::DcvRelLeaks => Some(Rc::OK),
        D::DcvEmptyLeaks => super::strings::release_empty_without_text(w[0]),
        D::ThreadIdPointerSized if target_pointer_size().is_some_and(|p| w[2] != p) => {
            Some(Rc::BAD_INPUT)
        }
        D::TrVersionNullOk if w.first() == Some(&0) => Some(Rc::OK),
        D::StateCrashes => {
            crash();
            Some(Rc::ERROR)
        }
        D::StateNeedsTracking => Some(Rc::NEEDS_STATE_TRACKING),
        D::StartsAThread => {
            start_a_thread();
            None
        }
        D::TaskFrameHangs => loop {
            std::thread::sleep(std::time::Duration::from_secs(1));
        },
        _ => None,
    }
}

/// The target's pointer size, from the tool's `sizeof_type` in the last address space
/// initialized.
fn target_pointer_size() -> Option<u64> {
    let f = tool()?.sizeof_type?;
    let ctx = CONTEXT.load(Ordering::Acquire) as usize as *mut ompd_abi::AddressSpaceContext;
    let mut sizes = ompd_abi::DeviceTypeSizes::default();
    // SAFETY: the tool's callback with its own context and a valid out-parameter.
    (unsafe { f(ctx, &mut sizes) } == Rc::OK).then_some(u64::from(sizes.sizeof_pointer))
}

/// The deviations that act before forwarding and change nothing of the call: output, a foreign
/// or context free, a callback, a blocked signal.
fn side_effect(d: D, w: &[u64]) {
    match d {
        D::OmpVersionPrints => {
            // Straight to descriptor 1: Rust's stdout takes its buffer from the heap.
            let line = b"mutant: ompd_get_omp_version called\n";
            // SAFETY: writes the bytes of a static buffer to descriptor 1.
            let _ = unsafe { nix::libc::write(1, line.as_ptr().cast(), line.len()) };
        }
        D::RelParallelFreesForeign => {
            free(std::ptr::addr_of!(FOREIGN) as *mut std::ffi::c_void);
        }
        D::CallsBackAfterFinalize if !INITIALIZED.load(Ordering::Acquire) => {
            free(alloc(8));
        }
        D::BlocksASignal => {
            let _ =
                nix::sys::signal::SigSet::from(nix::sys::signal::Signal::SIGUSR2).thread_block();
        }
        D::FreesContext => {
            free(w[0] as usize as *mut std::ffi::c_void);
        }
        D::ReplacesASignalHandler => replace_sigsegv_handler(),
        D::IgnoresASignalBySystemCall => ignore_sigusr2_by_system_call(),
        D::ClosesADescriptor => close_lowest_descriptor(false),
        D::ClosesADescriptorBySystemCall => close_lowest_descriptor(true),
        D::ScratchFromHeap => scratch_from_heap(),
        D::VersionQueryCallsBack if tool().is_some() => {
            free(alloc(8));
        }
        D::RelTaskFreesIcvString => {
            let s = ICV_STRING.swap(0, Ordering::AcqRel);
            if s != 0 {
                free(s as usize as *mut std::ffi::c_void);
            }
        }
        _ => {}
    }
}

/// Installs a SIGSEGV handler of this library's own in the tool's place, as a library with a
/// crash reporter of its own would: the signal stays caught, by other code.
fn replace_sigsegv_handler() {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    /// Back to the default action, then the signal again: the process dies of it.
    extern "C" fn on_segv(sig: c_int) {
        // SAFETY: raise is async-signal-safe; SA_RESETHAND restored the default action.
        unsafe { nix::libc::raise(sig) };
    }
    let own = SigAction::new(
        SigHandler::Handler(on_segv),
        SaFlags::SA_RESETHAND,
        SigSet::empty(),
    );
    // SAFETY: a handler that only re-raises; replacing the tool's is the deviation injected.
    let _ = unsafe { sigaction(Signal::SIGSEGV, &own) };
}

/// Sets SIGUSR2 to be ignored with the `rt_sigaction` system call, passing the C library by.
fn ignore_sigusr2_by_system_call() {
    /// The kernel's `struct sigaction` on x86-64 and aarch64: handler, flags, restorer, mask.
    #[repr(C)]
    struct KernelAction {
        handler: usize,
        flags: u64,
        restorer: usize,
        mask: u64,
    }
    let ignore = KernelAction {
        handler: nix::libc::SIG_IGN,
        flags: 0,
        restorer: 0,
        mask: 0,
    };
    // SAFETY: SIG_IGN runs no code, so no restorer is needed; the kernel reads one 8-byte mask;
    // changing the tool's signal configuration is the deviation being injected.
    let _ = unsafe {
        nix::libc::syscall(
            nix::libc::SYS_rt_sigaction,
            nix::libc::SIGUSR2,
            &ignore as *const KernelAction,
            std::ptr::null_mut::<KernelAction>(),
            8usize,
        )
    };
}

/// Closes the lowest open descriptor from 3 up, once per process, as a library that closes a
/// number it owned once, and which the tool has reused since, does.
fn close_lowest_descriptor(by_system_call: bool) {
    static DONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if DONE.swap(true, Ordering::AcqRel) {
        return;
    }
    // SAFETY: F_GETFD and close take integers; closing a descriptor the library does not own is
    // the deviation injected.
    unsafe {
        if let Some(fd) = (3..1024).find(|&fd| nix::libc::fcntl(fd, nix::libc::F_GETFD) >= 0) {
            if by_system_call {
                nix::libc::syscall(nix::libc::SYS_close, fd);
            } else {
                nix::libc::close(fd);
            }
        }
    }
}

/// Takes 256 bytes of scratch memory from the C heap and gives them back, as a library that
/// ignores `alloc_memory` for its temporaries would.
fn scratch_from_heap() {
    // SAFETY: malloc and free of the process's C heap, the block used only here.
    unsafe {
        let p = nix::libc::malloc(256);
        if !p.is_null() {
            std::ptr::write_bytes(p.cast::<u8>(), 0, 256);
            nix::libc::free(std::hint::black_box(p));
        }
    }
}

/// Starts a thread that sleeps for good, straight through pthread_create: std's threads take
/// their bookkeeping from the heap, which would add a heap-manager call to the deviation.
fn start_a_thread() {
    extern "C" fn sleeper(_: *mut std::ffi::c_void) -> *mut std::ffi::c_void {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
    let mut id = std::mem::MaybeUninit::<nix::libc::pthread_t>::uninit();
    // SAFETY: a valid out-parameter, default attributes, and a start routine of the right type
    // that never returns.
    unsafe {
        nix::libc::pthread_create(
            id.as_mut_ptr(),
            std::ptr::null(),
            sleeper,
            std::ptr::null_mut(),
        )
    };
}

/// The deviations that depend on the arguments or change them.
fn changed(d: D, ep: EntryPoint, w: &mut [u64]) -> Option<Rc> {
    match d {
        D::InitializeNullOk if w[1] == 0 => Some(Rc::OK),
        D::TaskFrameFlagsKept => {
            super::values::note_callers_frame_flags(w);
            None
        }
        D::InitializeRefusesOwnVersion if inner_api_version() == Some(w[0] as i64) => {
            Some(Rc::UNSUPPORTED)
        }
        D::InitializeAcceptsAny => {
            w[0] = inner_api_version()? as u64;
            None
        }
        D::FinalizeBeforeInitializeOk if !INITIALIZED.load(Ordering::Acquire) => Some(Rc::OK),
        D::ThreadHandleIgnoresSize => Some(thread_handle_any_size(w)),
        D::ThreadIdIgnoresKind => {
            w[1] = 0;
            None
        }
        D::ThreadIdIgnoresSize => Some(thread_id_any_size(w)),
        D::ThreadHandleIgnoresKind if w[1] > 3 => {
            w[1] = 0;
            None
        }
        D::ThreadHandleReadsFreshMemory => reads_fresh_memory(),
        D::ThreadInParallelIgnoresIndex | D::TaskInParallelIgnoresIndex => {
            w[1] = 0;
            None
        }
        D::ThreadInParallelNoRangeCheck | D::TaskInParallelNoRangeCheck
            if (w[1] as c_int) < 0 || (w[1] as c_int) >= 4 =>
        {
            w[1] = 0;
            None
        }
        D::StateRefusesNullWaitId if w[2] == 0 => Some(Rc::BAD_INPUT),
        D::ProcessInitializeFirstContext => {
            // Every address space reads the first process's target.
            w[0] = FIRST_CONTEXT.load(Ordering::Acquire);
            None
        }
        D::NoReinitializeAfterRelease if RELEASES.load(Ordering::Acquire) > 0 => Some(Rc::ERROR),
        D::ProcessInitializeLeaks => {
            alloc(16);
            None
        }
        D::ProcessInitializeDeclinesMiscoded => {
            look_up_absent_symbol(w[0]);
            Some(Rc::ERROR)
        }
        D::ToolDataAddressSpaceOk if matches!(w[1], 1 | 2) => {
            // SAFETY: the tool's out-parameters (NULL ones are skipped).
            unsafe {
                if let Some(v) = (w[2] as usize as *mut i64).as_mut() {
                    *v = 0;
                }
                if let Some(a) = (w[3] as usize as *mut ompd_abi::Address).as_mut() {
                    *a = ompd_abi::Address::default();
                }
            }
            Some(Rc::OK)
        }
        D::VersionNeedsTool if tool().is_none() => Some(Rc::ERROR),
        D::ThreadHandleCached => cached_thread_handle(w),
        _ => {
            let _ = ep;
            None
        }
    }
}

/// Looks up a symbol no runtime defines, through the tool's table, for the context `ctx`.
fn look_up_absent_symbol(ctx: u64) {
    let Some(f) = tool().and_then(|t| t.symbol_addr_lookup) else {
        return;
    };
    let mut addr = ompd_abi::Address::default();
    // SAFETY: the tool's callback with the context it passed and valid out-parameters.
    unsafe {
        f(
            ctx as usize as _,
            std::ptr::null_mut(),
            c"ompd_mutant_absent_symbol".as_ptr(),
            &mut addr,
            std::ptr::null(),
        )
    };
}

/// The handles `ompd_get_thread_handle` gave, by the id's first 8 bytes.
pub(super) static HANDED_OUT: std::sync::Mutex<Vec<(u64, u64)>> = std::sync::Mutex::new(Vec::new());

/// The handle handed out by the last call for the same thread id, written to the
/// out-parameter (once).
fn cached_thread_handle(w: &[u64]) -> Option<Rc> {
    let id = super::THREAD_ID
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .map(|(_, _, id)| id)?;
    let mut cache = HANDED_OUT.lock().unwrap_or_else(|p| p.into_inner());
    let at = cache.iter().position(|(i, _)| *i == id)?;
    // Handed out once more, then forgotten: the two handles are one, whoever releases first.
    let (_, handle) = cache.remove(at);
    // SAFETY: the tool's out-parameter for the handle (NULL is answered by the library).
    unsafe { (w[4] as usize as *mut u64).as_mut() }.map(|out| {
        *out = handle;
        Rc::OK
    })
}

/// The inner library's API version.
fn inner_api_version() -> Option<i64> {
    let f = routine::<entry::GetApiVersion>(EntryPoint::GetApiVersion)?;
    let mut v = 0i64;
    // SAFETY: the inner routine, with a valid out-parameter.
    (unsafe { f(&mut v) } == Rc::OK).then_some(v)
}

/// `ompd_get_thread_handle` trying every common id size until one is taken.
fn thread_handle_any_size(w: &[u64]) -> Rc {
    let Some(f) = routine::<entry::GetThreadHandle>(EntryPoint::GetThreadHandle) else {
        return Rc::UNSUPPORTED;
    };
    let mut rc = Rc::BAD_INPUT;
    for size in [w[2], 8, 4] {
        // SAFETY: the tool's arguments, with another id size (the id buffer holds at least
        // the size the tool gave; a larger read is the deviation being injected).
        rc = unsafe {
            f(
                w[0] as usize as _,
                w[1],
                size,
                w[3] as usize as _,
                w[4] as usize as _,
            )
        };
        if rc != Rc::BAD_INPUT {
            break;
        }
    }
    rc
}

/// `ompd_get_thread_id` into a buffer of any size: the id fetched at the size the inner
/// library takes, then as many of its bytes as the tool's buffer holds.
fn thread_id_any_size(w: &[u64]) -> Rc {
    let Some(f) = routine::<entry::GetThreadId>(EntryPoint::GetThreadId) else {
        return Rc::UNSUPPORTED;
    };
    let mut id = [0u8; 8];
    for size in [8u64, 4] {
        // SAFETY: the tool's handle and kind, into a local buffer of `size` (at most 8) bytes.
        let rc = unsafe { f(w[0] as usize as _, w[1], size, id.as_mut_ptr().cast()) };
        if rc == Rc::OK {
            let n = size.min(w[2]) as usize;
            // SAFETY: the tool's buffer holds `w[2]` bytes; at most that many are written.
            unsafe { std::ptr::copy_nonoverlapping(id.as_ptr(), w[3] as usize as *mut u8, n) };
            return Rc::OK;
        }
        if rc != Rc::BAD_INPUT {
            return rc;
        }
    }
    Rc::BAD_INPUT
}

/// Reads a byte of a fresh `alloc_memory` block and fails when it is not zero.
fn reads_fresh_memory() -> Option<Rc> {
    let p = alloc(8);
    if p.is_null() {
        return None;
    }
    // SAFETY: an 8-byte block the tool just allocated; reading it before writing is the
    // deviation being injected.
    let first = unsafe { std::ptr::read_volatile(p as *const u8) };
    free(p);
    (first != 0).then_some(Rc::ERROR)
}
