//! The tool-owned values a library returns and their release: handles of each kind (released
//! through the matching `ompd_rel_*` when dropped) and display-control-variables vectors.

use super::{rc_of, Call, Library, Residence};
use ompd_abi::{AddressSpaceHandle, EntryPoint, ParallelHandle, Rc, TaskHandle, ThreadHandle};
use std::ffi::{c_char, c_void};

/// A handle the tool owns; released through the matching `ompd_rel_*` when dropped.
pub struct Handle<'l, K: Kind> {
    pub(super) lib: &'l Library,
    pub(super) ptr: *mut K,
}

/// The handle kinds and how each is released.
pub trait Kind: Sized {
    /// Name used in diagnostics.
    const NAME: &'static str;
    /// Releases a handle; returns the library's code.
    ///
    /// # Safety
    /// `ptr` must be a live handle of this kind returned by `lib`, released only once.
    unsafe fn release(lib: &Library, ptr: *mut Self) -> Rc;
}

macro_rules! kind {
    ($t:ty, $name:literal, $rel:ident) => {
        impl Kind for $t {
            const NAME: &'static str = $name;
            unsafe fn release(lib: &Library, ptr: *mut Self) -> Rc {
                // SAFETY: the caller guarantees `ptr` is live and released once.
                // (A TR-era library's `ompd_release_*` fills the slot: `Api::renamed`.)
                match unsafe { lib.raw().$rel(ptr) } {
                    Ok((rc, _g)) => rc,
                    Err(_) => Rc::UNSUPPORTED,
                }
            }
        }
    };
}
kind!(
    AddressSpaceHandle,
    "address space handle",
    rel_address_space_handle
);
kind!(ThreadHandle, "thread handle", rel_thread_handle);
kind!(ParallelHandle, "parallel handle", rel_parallel_handle);
kind!(TaskHandle, "task handle", rel_task_handle);

impl<K: Kind> Handle<'_, K> {
    /// The handle's address (what the library returned), to compare with an address the
    /// library answers, as `ompd_get_device_from_thread` does.
    pub fn addr(&self) -> usize {
        self.ptr as usize
    }

    /// Releases the handle now and returns the library's code.
    pub fn release(self) -> Rc {
        // SAFETY: a Handle holds a live handle from its library; consuming it releases it once.
        let rc = unsafe { K::release(self.lib, self.ptr) };
        std::mem::forget(self);
        rc
    }
}

impl<K: Kind> std::fmt::Debug for Handle<'_, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {:p}", K::NAME, self.ptr)
    }
}

impl<K: Kind> Drop for Handle<'_, K> {
    fn drop(&mut self) {
        // SAFETY: a Handle holds a live handle from its library; dropping it releases it once.
        unsafe { K::release(self.lib, self.ptr) };
    }
}

/// Any handle, for the entry points that take `void *handle` with a scope.
#[derive(Clone, Copy)]
pub enum AnyHandle<'a, 'l> {
    /// An address-space handle.
    Aspace(&'a AspaceH<'l>),
    /// A thread handle.
    Thread(&'a ThreadH<'l>),
    /// A parallel handle.
    Parallel(&'a ParallelH<'l>),
    /// A task handle.
    Task(&'a TaskH<'l>),
}

impl AnyHandle<'_, '_> {
    pub(super) fn raw(self) -> *mut c_void {
        match self {
            AnyHandle::Aspace(h) => h.ptr.cast(),
            AnyHandle::Thread(h) => h.ptr.cast(),
            AnyHandle::Parallel(h) => h.ptr.cast(),
            AnyHandle::Task(h) => h.ptr.cast(),
        }
    }
}

/// A tool-owned address-space handle.
pub type AspaceH<'l> = Handle<'l, AddressSpaceHandle>;
/// A tool-owned thread handle.
pub type ThreadH<'l> = Handle<'l, ThreadHandle>;
/// A tool-owned parallel handle.
pub type ParallelH<'l> = Handle<'l, ParallelHandle>;
/// A tool-owned task handle.
pub type TaskH<'l> = Handle<'l, TaskHandle>;

/// One entry of a display-control-variables vector: its text and where it lies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlVar {
    /// The string (lossy UTF-8).
    pub text: String,
    /// Where the string lies.
    pub residence: Residence,
}

/// The most entries read from a display-control-variables vector before it counts as
/// unterminated.
pub(super) const MAX_CONTROL_VARS: usize = 4096;

/// A display-control-variables vector the tool holds. The tool owns it but may release it only
/// through `ompd_rel_display_control_vars` (OMPD-OWN-002): [`ControlVars::release`] or drop does
/// that, and nothing here frees any part of it.
pub struct ControlVars<'l> {
    pub(super) lib: &'l Library,
    pub(super) vec: *const *const c_char,
    /// The entries before the terminating NULL, in order.
    pub entries: Vec<ControlVar>,
    /// Where the vector itself lies.
    pub residence: Residence,
}

impl ControlVars<'_> {
    fn rel(&self) -> Call<()> {
        let mut v = self.vec;
        if self.lib.api.adapted(EntryPoint::RelDisplayControlVars) {
            // SAFETY: as below; the TR's release takes the vector itself.
            return unsafe { super::tr::release_control_vars(self.lib, v) };
        }
        // SAFETY: `v` is the vector the library returned; a ControlVars releases it once.
        let (rc, _g) = unsafe { self.lib.raw().rel_display_control_vars(&mut v) }?;
        rc_of(rc, || Ok(()))
    }

    /// Releases the vector with `ompd_rel_display_control_vars` now.
    pub fn release(self) -> Call<()> {
        let r = self.rel();
        std::mem::forget(self);
        r
    }
}

impl std::fmt::Debug for ControlVars<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "control vars {:p} {:?}", self.vec, self.entries)
    }
}

impl Drop for ControlVars<'_> {
    fn drop(&mut self) {
        let _ = self.rel();
    }
}
