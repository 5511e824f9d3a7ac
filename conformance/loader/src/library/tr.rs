//! The TR 2.001 routines of a TR-era library (it exports `ompd_get_version` and no
//! `ompd_get_api_version`): their TR signatures resolved apart from the 5.x table, because
//! `ompd_initialize` and others keep their name with another form. Each call is made like a
//! raw 5.x call (gated, marked in flight for the ledger and the watchdog), and its tool-owned
//! results are checked and freed like the 5.x ones.

use super::memory::kept_string;
use super::raw::Unwinding;
use super::watch::{self, AsWord};
use super::{rc_of, Api, AspaceH, Call, Fail, Library, ThreadH, ToolString};
use super::{ParallelH, TaskH, POISON_PTR, POISON_WORD};
use libloading::os::unix::Library as RawLibrary;
use ompd_abi::tr::entry as tr;
use ompd_abi::{EntryPoint, Rc, TaskHandle, ThreadHandle};
use ompd_serve::callbacks::{self, SiteGuard};
use std::ffi::{c_char, c_int, c_void};

/// The TR-only routines (no 5.x signature) `lib` exports, one bit per [`EntryPoint`].
pub(super) fn present(lib: &RawLibrary) -> u128 {
    let mut bits = 0u128;
    for e in EntryPoint::ALL.iter().filter(|e| e.args().is_none()) {
        // SAFETY: only the symbol's presence is asked; nothing is called or read through it.
        let found = unsafe { lib.get::<*const c_void>(e.name().as_bytes()) }.is_ok();
        if found {
            bits |= 1u128 << *e as usize;
        }
    }
    bits
}

macro_rules! tr_api {
    ($($field:ident: $ty:ident = $ep:ident,)*) => {
        /// The TR forms of the routines of a TR-era library (all `None` for a 5.x library).
        #[derive(Clone, Copy, Debug, Default)]
        pub struct TrApi {
            $(
                #[doc = concat!("[`EntryPoint::", stringify!($ep), "`], TR form.")]
                pub $field: Option<tr::$ty>,
            )*
        }

        impl TrApi {
            /// Resolves the TR forms when `api` shows a TR-era library.
            pub(super) fn resolve(lib: &RawLibrary, api: &Api) -> TrApi {
                if !api.tr_era {
                    return TrApi::default();
                }
                TrApi {
                    $(
                        // SAFETY: the symbol has this type in the TR (`ompd_abi::tr`); the
                        // library stays loaded while its `TrApi` is in use.
                        $field: unsafe { lib.get::<tr::$ty>(EntryPoint::$ep.name().as_bytes()) }
                            .ok()
                            .map(|s| *s),
                    )*
                }
            }
        }
    };
}

tr_api! {
    initialize: Initialize = Initialize,
    get_version: GetVersion = GetVersion,
    get_threads: GetThreads = GetThreads,
    get_state: GetState = GetState,
    implicit_tasks: GetImplicitTaskInParallel = GetImplicitTaskInParallel,
    thread_string_id: ThreadStringId = GetThreadHandleStringId,
    parallel_string_id: ParallelStringId = GetParallelHandleStringId,
    task_string_id: TaskStringId = GetTaskHandleStringId,
    release_control_vars: ReleaseDisplayControlVars = ReleaseDisplayControlVars,
    get_num_procs: SpaceWord = GetNumProcs,
    get_num_threads: ParallelWord = GetNumThreads,
    get_thread_num: ThreadWord = GetThreadNum,
    get_max_threads: TaskWord = GetMaxThreads,
    in_final: TaskWord = InFinal,
    get_dynamic: TaskWord = GetDynamic,
    is_implicit: TaskWord = IsImplicit,
}

/// One TR call: gated and marked in flight like a raw 5.x call.
fn call<F: Unwinding>(
    f: Option<F>,
    ep: EntryPoint,
    args: &[u64],
    go: impl FnOnce(F::Unwind) -> Rc,
) -> Result<(Rc, SiteGuard), Fail> {
    // Called as `C-unwind`, like the 5.x routines: an exception the routine lets escape reaches
    // `contained`.
    let f = f.ok_or(Fail::Missing(ep))?.unwinding();
    watch::gate(ep)?;
    let guard = callbacks::enter(ep.name());
    let mark = watch::begin(ep, args);
    let heap = super::heap::begin();
    let rc = super::raw::contained(|| go(f));
    super::heap::end(heap, ep.name());
    drop(mark);
    Ok((rc, guard))
}

/// The TR's `ompd_release_display_control_vars` (§13), which takes the vector itself.
///
/// # Safety
/// `v` is the vector the library returned, released once.
pub(super) unsafe fn release_control_vars(lib: &Library, v: *const *const c_char) -> Call<()> {
    let f = lib.tr.release_control_vars;
    let ep = EntryPoint::ReleaseDisplayControlVars;
    // SAFETY: the caller guarantees `v`.
    let (rc, _g) = call(f, ep, &[v.word()], |f| unsafe { f(v) })?;
    rc_of(rc, || Ok(()))
}

/// The per-ICV getters of the TR the checks call, by the handle they take.
#[derive(Clone, Copy, Debug)]
pub enum TrWordOf<'a, 'l> {
    /// `ompd_get_num_procs`.
    NumProcs(&'a AspaceH<'l>),
    /// `ompd_get_num_threads`.
    NumThreads(&'a ParallelH<'l>),
    /// `ompd_get_thread_num`.
    ThreadNum(&'a ThreadH<'l>),
    /// `ompd_get_max_threads`.
    MaxThreads(&'a TaskH<'l>),
    /// `ompd_in_final`.
    InFinal(&'a TaskH<'l>),
    /// `ompd_get_dynamic`.
    Dynamic(&'a TaskH<'l>),
    /// `ompd_is_implicit`.
    IsImplicit(&'a TaskH<'l>),
}

impl Library {
    /// `ompd_initialize` in the form the library takes, as a tool starts it: the TR's with the TR
    /// callback table for a TR-era library, else the 5.x form asking for API `version` with the
    /// suite's table.
    pub fn initialize_in_its_form(&self, version: i64) -> Call<()> {
        if self.tr.initialize.is_some() {
            self.tr_initialize()
        } else {
            self.initialize(version)
        }
    }

    /// The TR's `ompd_initialize` with the TR callback table.
    pub fn tr_initialize(&self) -> Call<()> {
        let table = callbacks::tr_table();
        let (rc, _g) = call(
            self.tr.initialize,
            EntryPoint::Initialize,
            &[(table as *const ompd_abi::tr::Callbacks).word()],
            |f| {
                // SAFETY: the table is a `'static` that outlives the library.
                unsafe { f(table) }
            },
        )?;
        if rc == Rc::OK {
            callbacks::ledger().set_finalized(false);
        }
        rc_of(rc, || Ok(()))
    }

    /// The TR's `ompd_get_version`.
    pub fn tr_get_version(&self) -> Call<i32> {
        let mut v: c_int = 0x5A5A_5A5A;
        let (rc, _g) = call(self.tr.get_version, EntryPoint::GetVersion, &[], |f| {
            // SAFETY: a valid out-parameter.
            unsafe { f(&mut v) }
        })?;
        rc_of(rc, || Ok(v))
    }

    /// The TR's `ompd_get_version` with a NULL `version`: the code it answers.
    pub fn tr_get_version_null(&self) -> Call<Rc> {
        let (rc, _g) = call(self.tr.get_version, EntryPoint::GetVersion, &[0], |f| {
            // SAFETY: NULL is the argument under test; the library must refuse it.
            unsafe { f(std::ptr::null_mut()) }
        })?;
        Ok(rc)
    }

    /// A TR string id (`ompd_get_{thread,parallel,task}_handle_string_id`): a tool-owned block.
    fn string_id<K>(
        &self,
        f: Option<unsafe extern "C" fn(*mut K, *mut *mut c_char) -> Rc>,
        ep: EntryPoint,
        h: *mut K,
    ) -> Call<ToolString> {
        let mut s = POISON_PTR as *mut c_char;
        let (rc, _g) = call(f, ep, &[h.word()], |f| {
            // SAFETY: a live handle; a valid out-parameter.
            unsafe { f(h, &mut s) }
        })?;
        rc_of(rc, || kept_string(s, "string_id"))
    }

    /// `ompd_get_thread_handle_string_id`.
    pub fn tr_thread_string_id(&self, th: &ThreadH) -> Call<ToolString> {
        self.string_id(
            self.tr.thread_string_id,
            EntryPoint::GetThreadHandleStringId,
            th.ptr,
        )
    }

    /// `ompd_get_parallel_handle_string_id`.
    pub fn tr_parallel_string_id(&self, ph: &ParallelH) -> Call<ToolString> {
        self.string_id(
            self.tr.parallel_string_id,
            EntryPoint::GetParallelHandleStringId,
            ph.ptr,
        )
    }

    /// `ompd_get_task_handle_string_id`.
    pub fn tr_task_string_id(&self, task: &TaskH) -> Call<ToolString> {
        self.string_id(
            self.tr.task_string_id,
            EntryPoint::GetTaskHandleStringId,
            task.ptr,
        )
    }

    /// `ompd_get_threads`: a handle per OpenMP thread, from a tool-owned vector (freed here).
    pub fn tr_get_threads(&self, ah: &AspaceH) -> Call<Vec<ThreadH<'_>>> {
        let mut v = POISON_PTR as *mut *mut ThreadHandle;
        let mut n: c_int = -1;
        let f = self.tr.get_threads;
        let (rc, _g) = call(f, EntryPoint::GetThreads, &[ah.ptr.word()], |f| {
            // SAFETY: a live handle; valid out-parameters.
            unsafe { f(ah.ptr, &mut v, &mut n) }
        })?;
        rc_of(rc, || self.vector(v, n, "thread_handle_vector"))
    }

    /// The TR's `ompd_get_state` (§10.2): its `ompd_state_t`, read as the C `int` it is, and
    /// the wait id as written (the caller judges it only in a wait state).
    pub fn tr_get_state(&self, th: &ThreadH) -> Call<(i64, u64)> {
        const UNWRITTEN: c_int = 0x5A5A_5A5A;
        let mut s = [UNWRITTEN; 2];
        let mut w = POISON_WORD as u64;
        let (rc, _g) = call(
            self.tr.get_state,
            EntryPoint::GetState,
            &[th.ptr.word()],
            |f| {
                // SAFETY: a live handle; valid out-parameters (two ints, for a library that writes
                // a word).
                unsafe { f(th.ptr, s.as_mut_ptr(), &mut w) }
            },
        )?;
        rc_of(rc, || match s[0] {
            UNWRITTEN => Err(Fail::Invalid("state was not written".into())),
            v => Ok((i64::from(v), w)),
        })
    }

    /// TR 2.001's `ompd_get_implicit_task_in_parallel` (§7.4), which 5.0 made
    /// `ompd_get_task_in_parallel`: the `n`th handle of its vector, the others released (the TR
    /// promises no order; thread numbers are the reference's and the model's). An index outside
    /// the vector is a question the TR form cannot answer ([`Fail::OtherForm`]).
    pub(super) fn tr_task_in_parallel(&self, ph: &ParallelH, n: i32) -> Call<TaskH<'_>> {
        let mut v = POISON_PTR as *mut *mut TaskHandle;
        let mut count: c_int = -1;
        let (f, ep) = (
            self.tr.implicit_tasks,
            EntryPoint::GetImplicitTaskInParallel,
        );
        let (rc, _g) = call(f, ep, &[ph.ptr.word()], |f| {
            // SAFETY: a live handle; valid out-parameters.
            unsafe { f(ph.ptr, &mut v, &mut count) }
        })?;
        let mut all = rc_of(rc, || self.vector(v, count, "task_handle_vector"))?;
        let i = usize::try_from(n).ok().filter(|i| *i < all.len());
        let i = i.ok_or(Fail::OtherForm(EntryPoint::GetTaskInParallel))?;
        Ok(all.swap_remove(i))
    }

    /// The `n` handles of a tool-owned vector `v` the library allocated (freed here).
    fn vector<K: super::Kind>(
        &self,
        v: *mut *mut K,
        n: c_int,
        what: &str,
    ) -> Call<Vec<super::Handle<'_, K>>> {
        let n = usize::try_from(n).map_err(|_| Fail::Invalid(format!("count {n}")))?;
        let words = super::device::tool_words(v.cast(), n, what)?;
        words
            .into_iter()
            .map(|w| self.handle(w as *mut K, K::NAME))
            .collect()
    }

    /// A TR per-ICV getter.
    pub fn tr_word(&self, of: TrWordOf) -> Call<i64> {
        let t = &self.tr;
        let mut v = POISON_WORD;
        let (rc, _g) = match of {
            TrWordOf::NumProcs(h) => word(t.get_num_procs, EntryPoint::GetNumProcs, h.ptr, &mut v),
            TrWordOf::NumThreads(h) => {
                word(t.get_num_threads, EntryPoint::GetNumThreads, h.ptr, &mut v)
            }
            TrWordOf::ThreadNum(h) => {
                word(t.get_thread_num, EntryPoint::GetThreadNum, h.ptr, &mut v)
            }
            TrWordOf::MaxThreads(h) => {
                word(t.get_max_threads, EntryPoint::GetMaxThreads, h.ptr, &mut v)
            }
            TrWordOf::InFinal(h) => word(t.in_final, EntryPoint::InFinal, h.ptr, &mut v),
            TrWordOf::Dynamic(h) => word(t.get_dynamic, EntryPoint::GetDynamic, h.ptr, &mut v),
            TrWordOf::IsImplicit(h) => word(t.is_implicit, EntryPoint::IsImplicit, h.ptr, &mut v),
        }?;
        rc_of(rc, || {
            if v == POISON_WORD {
                Err(Fail::Invalid("val was not written".into()))
            } else {
                Ok(v)
            }
        })
    }
}

/// One call of a TR per-ICV getter on handle `h`, writing `out`.
fn word<H>(
    f: Option<unsafe extern "C" fn(*mut H, *mut i64) -> Rc>,
    ep: EntryPoint,
    h: *mut H,
    out: &mut i64,
) -> Result<(Rc, SiteGuard), Fail> {
    call(f, ep, &[h.word()], |f| {
        // SAFETY: a live handle of the getter's kind; a valid out-parameter.
        unsafe { f(h, out) }
    })
}
