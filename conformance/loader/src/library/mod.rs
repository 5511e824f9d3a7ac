//! Loading a vendor OMPD library and calling its entry points: the only `unsafe` FFI of the crate.
//!
//! [`Library::load`] opens the shared object (working around real packaging quirks, each reported
//! as a diagnostic), resolves every known entry point once, and [`Library`]'s methods wrap each
//! call: the entry point in flight is marked for the callback ledger, out-parameters are poisoned
//! beforehand so an unwritten output is caught, and every pointer the library hands back is
//! validated before it is read. Nothing here judges conformance: wrappers return what happened.

use libloading::os::unix::{Library as RawLibrary, RTLD_GLOBAL, RTLD_LOCAL, RTLD_NOW};
use ompd_abi::{
    Address, AddressSpaceHandle, EntryPoint, FrameInfo, ParallelHandle, Rc, Scope, TaskHandle,
    ThreadHandle,
};
use ompd_serve::callbacks::{self, SiteGuard};
use std::ffi::{c_char, c_int, c_void};
use std::path::{Path, PathBuf};

mod api;
mod device;
mod fresh;
pub mod stock;
pub use fresh::release as release_fresh_directories;
mod handles;
mod heap;
mod lifecycle;
mod memory;
mod nulls;
mod objects;
mod raw;
mod runtimes;
mod tr;
pub mod watch;
pub use heap::{
    heap_growth, heap_watch, process_changes, signal_changes, HeapWatch,
    ABSENT_ENV as HEAP_WATCH_ABSENT_ENV,
};
pub use runtimes::{init_cxx_streams, keep_loaded};

pub use api::Api;
use handles::MAX_CONTROL_VARS;
pub use handles::{
    AnyHandle, AspaceH, ControlVar, ControlVars, Handle, Kind, ParallelH, TaskH, ThreadH,
};
use memory::{kept_string, read_mapped_cstr, read_returned, until_nul};
pub use memory::{Residence, StaticString, ToolString};
pub use nulls::NullArgs;
use raw::Raw;
pub use tr::{TrApi, TrWordOf};

/// Why a library could not be loaded.
#[derive(Debug, thiserror::Error)]
#[error("cannot load {path}: {message}")]
pub struct LoadError {
    /// The library.
    pub path: PathBuf,
    /// What the dynamic loader said, with our diagnosis.
    pub message: String,
}

/// What went wrong in a call, other than the library's return code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fail {
    /// The library returned a non-ok code.
    Rc(Rc),
    /// The entry point is not exported.
    Missing(EntryPoint),
    /// The library returned ok with an invalid output (unwritten, NULL, not owned as required).
    Invalid(String),
    /// The entry point is quarantined in this worker (it hung or crashed in earlier checks):
    /// the call was not made.
    Quarantined(EntryPoint),
    /// The library is TR-era and declares the entry point with the TR's form, not the 5.x form
    /// of the wrapper ([`EntryPoint::form_since`]): the call was not made.
    OtherForm(EntryPoint),
}

impl std::fmt::Display for Fail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fail::Rc(rc) => write!(f, "{rc}"),
            Fail::Missing(n) => write!(f, "{n} is not exported"),
            Fail::Invalid(m) => write!(f, "ok with invalid output: {m}"),
            Fail::Quarantined(n) => write!(f, "{n} was not called: it is quarantined"),
            Fail::OtherForm(n) => write!(f, "{n} was not called: the library has the TR's form"),
        }
    }
}

/// The result of a wrapped call.
pub type Call<T> = Result<T, Fail>;

/// A pointer value no allocator returns, written into pointer out-parameters before each call.
const POISON_PTR: usize = 0xA5A5_A5A5_A5A5_A5A5u64 as usize;
/// A word written into integer out-parameters before each call; an output still holding it
/// after `ok` was not written (wrappers that return outputs as written leave the test to the
/// caller).
pub const POISON_WORD: i64 = 0x5A5A_5A5A_5A5A_5A5A;

/// A loaded vendor library with its resolved entry points.
#[derive(Debug)]
pub struct Library {
    _lib: RawLibrary,
    _preloaded: Vec<RawLibrary>,
    /// Path it was loaded from.
    pub path: PathBuf,
    /// Resolved entry points.
    pub api: Api,
    /// The TR 2.001 forms of the routines, resolved when the library is TR-era.
    pub tr: tr::TrApi,
    /// What the loader needed to be told, in one line each (quirks worked around).
    pub diagnostics: Vec<String>,
}

fn dlopen(path: &Path, flags: c_int) -> Result<RawLibrary, String> {
    // SAFETY: loading a shared object runs its initializers; the library is untrusted, which is
    // why this only ever happens in a worker process that the supervisor can lose.
    unsafe { RawLibrary::open(Some(path), RTLD_NOW | flags) }.map_err(|e| {
        // libloading's own text is just "dlopen failed"; the loader's message is the source.
        match std::error::Error::source(&e) {
            Some(source) => source.to_string(),
            None => e.to_string(),
        }
    })
}

/// Options for loading.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Libraries to load with `RTLD_GLOBAL` first (undeclared or unshipped dependencies).
    pub preload: Vec<PathBuf>,
    /// Load the C++ runtime first (the library uses it without declaring it).
    pub needs_cxx_runtime: bool,
}

impl Library {
    /// Loads the library at `path`.
    pub fn load(path: &Path, opts: &LoadOptions) -> Result<Library, LoadError> {
        let fail = |message: String| LoadError {
            path: path.to_path_buf(),
            message,
        };
        let mut diagnostics = Vec::new();
        let mut preloaded = Vec::new();
        for p in &opts.preload {
            let lib = dlopen(p, RTLD_GLOBAL)
                .map_err(|e| fail(format!("preloading dependency {}: {e}", p.display())))?;
            diagnostics.push(format!(
                "preloaded {} with RTLD_GLOBAL before the library (a dependency it needs that the system does not provide)",
                p.display()
            ));
            preloaded.push(lib);
        }
        let cxx = Path::new("libstdc++.so.6");
        if opts.needs_cxx_runtime {
            preloaded.push(
                dlopen(cxx, RTLD_GLOBAL).map_err(|e| fail(format!("preloading libstdc++: {e}")))?,
            );
            diagnostics.push(
                "preloaded libstdc++.so.6: the library uses the C++ runtime but does not list it in DT_NEEDED".into(),
            );
        }
        let lib = match dlopen(path, RTLD_LOCAL) {
            Ok(l) => l,
            Err(e) => return Err(fail(diagnose_load_failure(&e))),
        };
        let api = Api::resolve(&lib);
        let tr = tr::TrApi::resolve(&lib, &api);
        watch::resolve_exceptions(&lib);
        Ok(Library {
            _lib: lib,
            _preloaded: preloaded,
            path: path.to_path_buf(),
            api,
            tr,
            diagnostics,
        })
    }
}

impl Library {
    /// Loads a fresh instance of the library at `path`: a new copy of the file (which the dynamic
    /// linker maps anew, where another `dlopen` of the same file would give back the instance
    /// already loaded) in a private directory beside links to every other file of the library's
    /// own directory (a library may find its siblings next to itself), loaded through a path no
    /// earlier instance had (`fresh.rs`). The copy starts with none of the state an earlier
    /// instance keeps; its dependencies, and a sibling it loads itself (a forwarder's inner
    /// library, unless it makes its own copy), are the instances already loaded. The directory
    /// goes with [`release_fresh_directories`], or with the first fresh instance of a later
    /// process.
    pub fn load_fresh(path: &Path) -> Result<Library, LoadError> {
        Library::load_fresh_with(path, &LoadOptions::default())
    }

    /// [`Library::load_fresh`] with `opts` (its preloads are the instances already loaded).
    pub fn load_fresh_with(path: &Path, opts: &LoadOptions) -> Result<Library, LoadError> {
        let stage = || {
            fresh::stage(path).map_err(|message| LoadError {
                path: path.to_path_buf(),
                message,
            })
        };
        match stage()? {
            (copy, fresh::Copy::InMemory) => Library::load(&copy, opts).or_else(|_| {
                // The system would not map it: a file, from now on.
                fresh::copies_only();
                Library::load(&stage()?.0, opts)
            }),
            (copy, fresh::Copy::File) => Library::load(&copy, opts),
        }
    }

    /// Loads an instance of the library at `path` that no one has used: the file itself, or a
    /// fresh copy ([`Library::load_fresh_with`]) when this process still holds an instance of it
    /// (one that unloading leaves in place, such as a library linked `-z nodelete`).
    pub fn load_unused(path: &Path, opts: &LoadOptions) -> Result<Library, LoadError> {
        if is_loaded(path) {
            Library::load_fresh_with(path, opts)
        } else {
            Library::load(path, opts)
        }
    }

    /// True when `other` is the same loaded instance (its routines at the same addresses).
    pub fn same_instance(&self, other: &Library) -> bool {
        let at = |l: &Library| l.api.get_api_version.map(|f| f as usize);
        at(self).is_some() && at(self) == at(other)
    }
}

/// True when this process holds an instance of the library at `path` (`RTLD_NOLOAD`).
fn is_loaded(path: &Path) -> bool {
    // SAFETY: with RTLD_NOLOAD nothing is loaded and no initializer runs; the handle only counts
    // a reference, which its drop gives back.
    unsafe { RawLibrary::open(Some(path), RTLD_NOW | nix::libc::RTLD_NOLOAD) }.is_ok()
}

/// One line naming why `dlopen` refused a library, with the way around it where there is one.
/// The harness never works around an undeclared dependency on its own: it does when asked
/// (`--preload`, or a vendor entry that records the quirk).
fn diagnose_load_failure(e: &str) -> String {
    if let Some(sym) = e.split("undefined symbol: ").nth(1) {
        let sym = sym.split_whitespace().next().unwrap_or(sym);
        let provider = if sym.starts_with("_Z") || sym.starts_with("__cxa_") {
            "a C++ runtime symbol: libstdc++.so.6 provides it"
        } else {
            "a symbol of a library it does not declare"
        };
        return format!(
            "undeclared dependency: undefined symbol {sym} ({provider}); no DT_NEEDED entry \
             provides it, so the library cannot load on its own; rerun with --preload LIBRARY \
             to load the provider first ({e})"
        );
    }
    if e.contains("cannot open shared object file") {
        let dep = e.split(':').next().unwrap_or("?").trim();
        return format!(
            "a DT_NEEDED dependency is missing ({dep}); it is not installed on this system: {e}"
        );
    }
    e.to_string()
}

/// Flushes every C `stdio` output stream of this process (`fflush(NULL)`). A library that
/// prints with `printf` writes into the C library's buffer, which, with stdout redirected to a
/// file, reaches the file only when full or at exit: flushed after each check, the output lands
/// where the worker attributes it to the check that printed it.
pub fn flush_c_stdio() {
    // SAFETY: `fflush(NULL)` is defined by C to flush every open output stream; it takes no
    // pointer from us, and the worker calls it between checks, when no library code runs.
    unsafe {
        nix::libc::fflush(std::ptr::null_mut());
    }
}

fn rc_of<T>(rc: Rc, value: impl FnOnce() -> Call<T>) -> Call<T> {
    if rc.is_ok() {
        value()
    } else {
        Err(Fail::Rc(rc))
    }
}

/// A thread id written by `call` into a `size`-byte tool-owned buffer (the pointer it is
/// given), with guard bytes on each side: writing outside the buffer is invalid output.
fn guarded_id(
    size: usize,
    call: impl FnOnce(*mut c_void) -> Result<(Rc, SiteGuard), Fail>,
) -> Call<Vec<u8>> {
    const GUARD: usize = 16;
    let mut buf = vec![0xEEu8; size + 2 * GUARD];
    // The buffer has `size` bytes after the leading guard.
    let (rc, _g) = call(buf[GUARD..].as_mut_ptr().cast())?;
    if buf[..GUARD]
        .iter()
        .chain(&buf[GUARD + size..])
        .any(|b| *b != 0xEE)
    {
        return Err(Fail::Invalid(format!(
            "wrote outside the {size}-byte thread id buffer"
        )));
    }
    rc_of(rc, || Ok(buf[GUARD..GUARD + size].to_vec()))
}

fn out_ptr<T>(p: *mut T, what: &str) -> Call<*mut T> {
    if p as usize == POISON_PTR {
        Err(Fail::Invalid(format!("{what} was not written")))
    } else if p.is_null() {
        Err(Fail::Invalid(format!("{what} is NULL")))
    } else {
        Ok(p)
    }
}

/// A one-step navigation routine: one handle in, one new handle out.
macro_rules! step {
    ($method:ident, $ep:ident, $in:ident, $out:ident, $kind:ident, $what:literal) => {
        #[doc = concat!("[`EntryPoint::", stringify!($ep), "`].")]
        pub fn $method(&self, from: &$in) -> Call<$out<'_>> {
            let mut h = POISON_PTR as *mut $kind;
            // SAFETY: live handle; valid out-parameter.
            let (rc, _g) = unsafe { self.raw().$method(from.ptr, &mut h) }?;
            rc_of(rc, || self.handle(h, $what))
        }
    };
}

impl Library {
    fn raw(&self) -> Raw<'_> {
        Raw(&self.api)
    }

    fn handle<K: Kind>(&self, p: *mut K, what: &str) -> Call<Handle<'_, K>> {
        out_ptr(p, what).map(|ptr| Handle { lib: self, ptr })
    }

    /// `ompd_get_api_version` (on a TR-era library, the TR's `ompd_get_version`).
    pub fn get_api_version(&self) -> Call<i64> {
        if self.api.adapted(EntryPoint::GetApiVersion) {
            return self.tr_get_version().map(i64::from);
        }
        let mut v = POISON_WORD;
        // SAFETY: valid out-parameter.
        let (rc, _g) = unsafe { self.raw().get_api_version(&mut v) }?;
        rc_of(rc, || {
            if v == POISON_WORD {
                Err(Fail::Invalid("version was not written".into()))
            } else {
                Ok(v)
            }
        })
    }

    /// `ompd_get_version_string`: the string must be static library memory.
    pub fn get_version_string(&self) -> Call<StaticString> {
        let mut s = POISON_PTR as *const c_char;
        // SAFETY: valid out-parameter.
        let (rc, _g) = unsafe { self.raw().get_version_string(&mut s) }?;
        rc_of(rc, || {
            let p = out_ptr(s as *mut c_char, "string")?;
            let is_tool_block = callbacks::ledger().live_block(p as usize).is_some();
            let (bytes, mapping) = read_mapped_cstr(p).map_err(Fail::Invalid)?;
            Ok(StaticString {
                text: String::from_utf8_lossy(&bytes).into_owned(),
                mapping,
                is_tool_block,
            })
        })
    }

    /// `ompd_process_initialize` for a simulated target.
    pub fn process_initialize(&self, target: &'static callbacks::Target) -> Call<AspaceH<'_>> {
        let mut h = POISON_PTR as *mut AddressSpaceHandle;
        // SAFETY: the context is a leaked, registered Target; valid out-parameter.
        let (rc, _g) = unsafe { self.raw().process_initialize(target.context(), &mut h) }?;
        rc_of(rc, || self.handle(h, "address space handle"))
    }

    /// `ompd_device_initialize` for a device of `kind` with id `id`, whose context is `device`.
    pub fn device_initialize(
        &self,
        ah: &AspaceH,
        device: &'static callbacks::Target,
        kind: u64,
        id: &[u8],
    ) -> Call<AspaceH<'_>> {
        let mut h = POISON_PTR as *mut AddressSpaceHandle;
        let mut buf = id.to_vec();
        // SAFETY: live handle; a registered context; `buf` holds `buf.len()` bytes; valid
        // out-parameter.
        let (rc, _g) = unsafe {
            self.raw().device_initialize(
                ah.ptr,
                device.context(),
                kind,
                buf.len() as u64,
                buf.as_mut_ptr().cast(),
                &mut h,
            )
        }?;
        rc_of(rc, || self.handle(h, "device address space handle"))
    }

    /// `ompd_get_omp_version`.
    pub fn get_omp_version(&self, ah: &AspaceH) -> Call<i64> {
        let mut v = POISON_WORD;
        // SAFETY: live handle; valid out-parameter.
        let (rc, _g) = unsafe { self.raw().get_omp_version(ah.ptr, &mut v) }?;
        rc_of(rc, || {
            if v == POISON_WORD {
                Err(Fail::Invalid("omp_version was not written".into()))
            } else {
                Ok(v)
            }
        })
    }

    /// `ompd_get_omp_version_string` (tool-owned result, freed here).
    pub fn get_omp_version_string(&self, ah: &AspaceH) -> Call<String> {
        self.get_omp_version_string_kept(ah)?.into_text()
    }

    /// `ompd_get_omp_version_string`, keeping the tool-owned block until the result is dropped.
    pub fn get_omp_version_string_kept(&self, ah: &AspaceH) -> Call<ToolString> {
        let mut s = POISON_PTR as *const c_char;
        // SAFETY: live handle; valid out-parameter.
        let (rc, _g) = unsafe { self.raw().get_omp_version_string(ah.ptr, &mut s) }?;
        rc_of(rc, || kept_string(s, "string"))
    }

    /// `ompd_get_icv_string_from_scope`, keeping the tool-owned block until the result is
    /// dropped.
    pub fn get_icv_string_kept(
        &self,
        handle: AnyHandle,
        scope: Scope,
        id: u64,
    ) -> Call<ToolString> {
        let mut s = POISON_PTR as *const c_char;
        // SAFETY: `handle` is a live handle; the scope may name another kind, which the library
        // must detect from the scope; valid out-parameter.
        let (rc, _g) = unsafe {
            self.raw()
                .get_icv_string_from_scope(handle.raw(), scope, id, &mut s)
        }?;
        rc_of(rc, || kept_string(s, "icv_string"))
    }

    /// `ompd_get_thread_handle` for a native id given in target byte order.
    pub fn get_thread_handle(&self, ah: &AspaceH, kind: u64, id: &[u8]) -> Call<ThreadH<'_>> {
        let (rc, h, _g) = self.thread_handle_call(ah, kind, id)?;
        rc_of(rc, || self.handle(h, "thread handle"))
    }

    /// `ompd_get_thread_handle` for an id the library should refuse: its code and what it left
    /// in the out-parameter (pre-filled with a poison pointer, `POISON_PTR`); a handle it gave
    /// anyway is released.
    pub fn get_thread_handle_out(&self, ah: &AspaceH, kind: u64, id: &[u8]) -> Call<(Rc, usize)> {
        let (rc, h, _g) = self.thread_handle_call(ah, kind, id)?;
        if rc.is_ok() {
            drop(self.handle::<ThreadHandle>(h, "thread handle"));
        }
        Ok((rc, h as usize))
    }

    /// The raw call of `ompd_get_thread_handle`: its code, the out-parameter and the site.
    fn thread_handle_call(
        &self,
        ah: &AspaceH,
        kind: u64,
        id: &[u8],
    ) -> Call<(Rc, *mut ThreadHandle, SiteGuard)> {
        let mut h = POISON_PTR as *mut ThreadHandle;
        // The id buffer is ours and only valid for the call (OMPD-OWN-005).
        let mut buf = id.to_vec();
        callbacks::ledger().set_given_thread_id(Some((kind, buf.len() as u64)));
        // SAFETY: live handle; `buf` holds `buf.len()` bytes; valid out-parameter.
        let called = unsafe {
            self.raw().get_thread_handle(
                ah.ptr,
                kind,
                buf.len() as u64,
                buf.as_ptr().cast(),
                &mut h,
            )
        };
        callbacks::ledger().set_given_thread_id(None);
        let (rc, g) = called?;
        // Scribble over the id once the call returned: a library that kept the pointer instead
        // of copying the id now sees garbage, which `ompd_get_thread_id` round trips reveal.
        buf.fill(0xFF);
        std::hint::black_box(&buf);
        Ok((rc, h, g))
    }

    /// `ompd_get_thread_id` into a guarded buffer of `size` bytes. Returns the bytes written.
    pub fn get_thread_id(&self, th: &ThreadH, kind: u64, size: usize) -> Call<Vec<u8>> {
        guarded_id(size, |out| {
            // SAFETY: live handle; `out` has `size` bytes.
            unsafe { self.raw().get_thread_id(th.ptr, kind, size as u64, out) }
        })
    }

    /// `ompd_get_thread_in_parallel`.
    pub fn get_thread_in_parallel(&self, ph: &ParallelH, n: i32) -> Call<ThreadH<'_>> {
        let mut h = POISON_PTR as *mut ThreadHandle;
        // SAFETY: live handle; valid out-parameter.
        let (rc, _g) = unsafe { self.raw().get_thread_in_parallel(ph.ptr, n, &mut h) }?;
        rc_of(rc, || self.handle(h, "thread handle"))
    }

    step!(
        get_curr_parallel_handle,
        GetCurrParallelHandle,
        ThreadH,
        ParallelH,
        ParallelHandle,
        "parallel handle"
    );
    step!(
        get_enclosing_parallel_handle,
        GetEnclosingParallelHandle,
        ParallelH,
        ParallelH,
        ParallelHandle,
        "parallel handle"
    );
    step!(
        get_task_parallel_handle,
        GetTaskParallelHandle,
        TaskH,
        ParallelH,
        ParallelHandle,
        "parallel handle"
    );
    step!(
        get_curr_task_handle,
        GetCurrTaskHandle,
        ThreadH,
        TaskH,
        TaskHandle,
        "task handle"
    );
    step!(
        get_generating_task_handle,
        GetGeneratingTaskHandle,
        TaskH,
        TaskH,
        TaskHandle,
        "task handle"
    );
    step!(
        get_scheduling_task_handle,
        GetSchedulingTaskHandle,
        TaskH,
        TaskH,
        TaskHandle,
        "task handle"
    );

    /// `ompd_get_task_in_parallel`.
    pub fn get_task_in_parallel(&self, ph: &ParallelH, n: i32) -> Call<TaskH<'_>> {
        if self.api.adapted(EntryPoint::GetTaskInParallel) {
            return self.tr_task_in_parallel(ph, n);
        }
        let mut h = POISON_PTR as *mut TaskHandle;
        // SAFETY: live handle; valid out-parameter.
        let (rc, _g) = unsafe { self.raw().get_task_in_parallel(ph.ptr, n, &mut h) }?;
        rc_of(rc, || self.handle(h, "task handle"))
    }

    fn compare<'l, K: Kind>(
        &'l self,
        raw: unsafe fn(Raw<'l>, *mut K, *mut K, *mut c_int) -> raw::Answer,
        a: &Handle<K>,
        b: &Handle<K>,
    ) -> Call<i32> {
        let mut v: c_int = 0x5A5A_5A5A;
        // SAFETY: live handles of this kind; valid out-parameter.
        let (rc, _g) = unsafe { raw(self.raw(), a.ptr, b.ptr, &mut v) }?;
        rc_of(rc, || Ok(v))
    }

    /// `ompd_thread_handle_compare`.
    pub fn thread_compare(&self, a: &ThreadH, b: &ThreadH) -> Call<i32> {
        self.compare(Raw::thread_handle_compare, a, b)
    }

    /// `ompd_parallel_handle_compare`.
    pub fn parallel_compare(&self, a: &ParallelH, b: &ParallelH) -> Call<i32> {
        self.compare(Raw::parallel_handle_compare, a, b)
    }

    /// `ompd_task_handle_compare`.
    pub fn task_compare(&self, a: &TaskH, b: &TaskH) -> Call<i32> {
        self.compare(Raw::task_handle_compare, a, b)
    }

    /// `ompd_get_state`; `with_wait_id` false passes NULL for the optional wait id.
    pub fn get_state(&self, th: &ThreadH, with_wait_id: bool) -> Call<(i64, Option<u64>)> {
        let mut s = POISON_WORD;
        let mut w = POISON_WORD as u64;
        let wp = if with_wait_id {
            &mut w as *mut u64
        } else {
            std::ptr::null_mut()
        };
        // SAFETY: live handle; valid (or NULL optional) out-parameters.
        let (rc, _g) = unsafe { self.raw().get_state(th.ptr, &mut s, wp) }?;
        rc_of(rc, || {
            if s == POISON_WORD {
                return Err(Fail::Invalid("state was not written".into()));
            }
            Ok((s, with_wait_id.then_some(w)))
        })
    }

    /// `ompd_enumerate_states`: next state, its (tool-owned) name, and more_enums.
    pub fn enumerate_states(&self, ah: &AspaceH, current: i64) -> Call<(i64, String, i64)> {
        let (mut next, mut more) = (POISON_WORD, POISON_WORD);
        let mut name = POISON_PTR as *const c_char;
        // SAFETY: live handle; valid out-parameters.
        let (rc, _g) = unsafe {
            self.raw()
                .enumerate_states(ah.ptr, current, &mut next, &mut name, &mut more)
        }?;
        rc_of(rc, || {
            if next == POISON_WORD || more == POISON_WORD {
                return Err(Fail::Invalid(
                    "next_state or more_enums was not written".into(),
                ));
            }
            Ok((
                next,
                kept_string(name, "next_state_name")?.into_text()?,
                more,
            ))
        })
    }

    /// `ompd_get_display_control_vars`: the vector, validated before it is read (it must be
    /// readable tool-block or mapped memory, NULL-terminated, each entry a readable
    /// NUL-terminated string).
    pub fn get_display_control_vars(&self, ah: &AspaceH) -> Call<ControlVars<'_>> {
        let mut v = POISON_PTR as *const *const c_char;
        // SAFETY: live handle; valid out-parameter.
        let (rc, g) = unsafe { self.raw().get_display_control_vars(ah.ptr, &mut v) }?;
        drop(g);
        rc_of(rc, || {
            let vec = out_ptr(v as *mut *const c_char, "control_vars")? as *const *const c_char;
            let width = std::mem::size_of::<usize>();
            let (bytes, residence) = read_returned(vec as usize, MAX_CONTROL_VARS * width)
                .map_err(|e| Fail::Invalid(format!("control_vars vector: {e}")))?;
            let mut vars = ControlVars {
                lib: self,
                vec,
                entries: Vec::new(),
                residence,
            };
            let mut terminated = false;
            for word in bytes.chunks_exact(width) {
                let p = usize::from_ne_bytes(word.try_into().expect("pointer-sized chunk"));
                if p == 0 {
                    terminated = true;
                    break;
                }
                let n = vars.entries.len();
                let (text, residence) = read_returned(p, 64 * 1024)
                    .and_then(|(b, r)| Ok((until_nul(&b, p)?, r)))
                    .map_err(|e| Fail::Invalid(format!("control_vars[{n}]: {e}")))?;
                vars.entries.push(ControlVar {
                    text: String::from_utf8_lossy(&text).into_owned(),
                    residence,
                });
            }
            if !terminated {
                return Err(Fail::Invalid(format!(
                    "control_vars is not NULL-terminated within its {} readable bytes",
                    bytes.len()
                )));
            }
            Ok(vars)
        })
    }

    /// `ompd_enumerate_icvs`: next id, its (tool-owned) name, scope and more.
    pub fn enumerate_icvs(&self, ah: &AspaceH, current: u64) -> Call<(u64, String, Scope, i32)> {
        let mut next = POISON_WORD as u64;
        let mut name = POISON_PTR as *const c_char;
        let mut scope = Scope(0x5A5A_5A5A);
        let mut more: c_int = 0x5A5A_5A5A;
        // SAFETY: live handle; valid out-parameters.
        let (rc, _g) = unsafe {
            self.raw()
                .enumerate_icvs(ah.ptr, current, &mut next, &mut name, &mut scope, &mut more)
        }?;
        rc_of(rc, || {
            if next == POISON_WORD as u64 || scope.0 == 0x5A5A_5A5A || more == 0x5A5A_5A5A {
                return Err(Fail::Invalid(
                    "next_id, next_scope or more was not written".into(),
                ));
            }
            Ok((
                next,
                kept_string(name, "next_icv_name")?.into_text()?,
                scope,
                more,
            ))
        })
    }

    /// `ompd_get_icv_from_scope`. Returns the code and the value when one was written (ok, or
    /// incomplete for list ICVs).
    pub fn get_icv(&self, handle: AnyHandle, scope: Scope, id: u64) -> Call<(Rc, Option<i64>)> {
        let mut v = POISON_WORD;
        // SAFETY: `handle` is a live handle; the scope may name another kind, which the library
        // must detect from the scope; valid out-parameter.
        let (rc, _g) = unsafe {
            self.raw()
                .get_icv_from_scope(handle.raw(), scope, id, &mut v)
        }?;
        Ok((rc, (v != POISON_WORD).then_some(v)))
    }

    /// `ompd_get_icv_string_from_scope` (tool-owned result, freed here).
    pub fn get_icv_string(&self, handle: AnyHandle, scope: Scope, id: u64) -> Call<String> {
        self.get_icv_string_kept(handle, scope, id)?.into_text()
    }

    /// `ompd_get_task_function`.
    pub fn get_task_function(&self, task: &TaskH) -> Call<Address> {
        let mut a = Address {
            segment: POISON_WORD as u64,
            address: POISON_WORD as u64,
        };
        // SAFETY: live handle; valid out-parameter.
        let (rc, _g) = unsafe { self.raw().get_task_function(task.ptr, &mut a) }?;
        rc_of(rc, || Ok(a))
    }

    /// `ompd_get_task_frame`: (exit, enter), with poisoned flags left as written. Each output is
    /// followed by guard bytes: a library that writes past an `ompd_frame_info_t` (e.g. a frame
    /// field read with a larger `ompd_sizeof__*` than its variable) gives an invalid output.
    pub fn get_task_frame(&self, task: &TaskH) -> Call<(FrameInfo, FrameInfo)> {
        const GUARD: usize = 64;
        #[repr(C)]
        struct Guarded {
            info: FrameInfo,
            guard: [u8; GUARD],
        }
        let poisoned = || Guarded {
            info: FrameInfo {
                frame_address: Address {
                    segment: POISON_WORD as u64,
                    address: POISON_WORD as u64,
                },
                frame_flag: POISON_WORD,
            },
            guard: [0xEE; GUARD],
        };
        let (mut exit, mut enter) = (poisoned(), poisoned());
        // SAFETY: live handle; valid out-parameters, each followed by its guard.
        let (rc, _g) = unsafe {
            self.raw()
                .get_task_frame(task.ptr, &mut exit.info, &mut enter.info)
        }?;
        for (which, g) in [("exit_frame", &exit), ("enter_frame", &enter)] {
            if let Some(last) = g.guard.iter().rposition(|b| *b != 0xEE) {
                return Err(Fail::Invalid(format!(
                    "wrote {} bytes past the {which} ompd_frame_info_t",
                    last + 1
                )));
            }
        }
        rc_of(rc, || Ok((exit.info, enter.info)))
    }

    /// `ompd_get_tool_data`.
    pub fn get_tool_data(&self, handle: AnyHandle, scope: Scope) -> Call<(i64, Address)> {
        let mut v = POISON_WORD;
        let mut a = Address {
            segment: POISON_WORD as u64,
            address: POISON_WORD as u64,
        };
        // SAFETY: `handle` is a live handle; valid out-parameters.
        let (rc, _g) = unsafe {
            self.raw()
                .get_tool_data(handle.raw(), scope, &mut v, &mut a)
        }?;
        rc_of(rc, || Ok((v, a)))
    }
}
