//! What a check sees ([`Ctx`]): the library, the target, the model, the setup's results, and
//! the helpers that reach one thread's handles or one ICV.

use crate::known::Known;
use crate::{Profile, Severity, Verdict};
use ompd_abi::{self as abi, EntryPoint, Rc, Scope, ICV_UNDEFINED};
use ompd_loader::library::{AnyHandle, AspaceH, Call, Library, ParallelH, TaskH, ThreadH};
use ompd_serve::arch::Arch;
use ompd_serve::callbacks::Target;
use sim_target::layout::Policy;
use sim_target::model::{Model, RegionId, TaskId, ThreadId};

/// Everything a check can use.
pub struct Ctx<'l> {
    /// The library under test.
    pub lib: &'l Library,
    /// Scenario name.
    pub scenario: &'l str,
    /// The scenario's model (the truth).
    pub model: &'l Model,
    /// Architecture of the image.
    pub arch: Arch,
    /// Layout of the image.
    pub policy: Policy,
    /// The simulated target (absent for library-stage checks).
    pub target: Option<&'static Target>,
    /// The address space, when process initialization succeeded.
    pub aspace: Option<AspaceH<'l>>,
    /// Results of setting up the target (initialize, process initialize).
    pub setup: Setup,
    /// The check's severity (set by the runner before each check).
    pub severity: Severity,
    /// The requirement ids the check cites (set with the severity): a deviation a check
    /// allows must be allowed by one of them ([`crate::Judge::allowed`]).
    pub cites: &'static [&'static str],
    /// The API generation the library implements (detected once per worker).
    pub profile: Profile,
    /// What checks of this unit wrote to stdout/stderr so far: (check id, first bytes). The
    /// harness writes nothing there, so all of it is the library's.
    pub printed: Vec<(String, String)>,
    /// Callback contract violations recorded by earlier workers of this unit (replaced after a
    /// crash or timeout): (check id, violation). This worker's own are in the ledger.
    pub earlier_violations: Vec<(String, ompd_serve::ledger::Carried)>,
    /// The library's ICV list, enumerated once per unit: the ICVs enumerated, and why the
    /// enumeration broke before its end, if it did.
    pub icv_table: std::cell::OnceCell<(Vec<IcvEntry>, Option<String>)>,
    /// The unit's compare tables, made once per handle kind by the first law that needs one.
    pub compare_tables: crate::CompareTables,
    /// What the model's facts cover (everything for a simulated target; what the fixture
    /// recorded for a real one).
    pub known: Known,
    /// The library's name in the run (`intel-2026.2`, or the file name of a path).
    pub library: &'l str,
    /// The OpenMP runtime a real target runs (`intel-2026.2`, `system-llvm-19`); `None` for a
    /// simulated target or a process the harness did not start.
    pub runtime: Option<&'l str>,
    /// The checks that load fresh copies of the library run on this unit even where it is not
    /// the one unit they run on by default (`--full`).
    pub fresh_everywhere: bool,
}

/// One enumerated ICV.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IcvEntry {
    /// Id.
    pub id: u64,
    /// Name.
    pub name: String,
    /// Enumerated scope.
    pub scope: Scope,
}

/// The spellings of the ICVs that have several: the name of the ICV table of OpenMP 5.1, then
/// the OMPD names (OpenMP 5.0 names them `ompd-num-procs-var`, `ompd-thread-num-var`,
/// `ompd-final-var`, `ompd-implicit-var` and `ompd-team-size-var`; 5.1 makes them "also
/// available with an ompd- prefix", OMPD-ICV-005).
pub const ICV_SPELLINGS: &[&[&str]] = &[
    &["num-procs-var", "ompd-num-procs-var"],
    &["thread-num-var", "ompd-thread-num-var"],
    &["final-task-var", "ompd-final-var", "ompd-final-task-var"],
    &[
        "implicit-task-var",
        "ompd-implicit-var",
        "ompd-implicit-task-var",
    ],
    &["team-size-var", "ompd-team-size-var"],
];

/// The first spelling of ICV `name` in [`ICV_SPELLINGS`] (`name` itself for an ICV with one).
pub fn canonical(name: &str) -> &str {
    ICV_SPELLINGS
        .iter()
        .find(|g| g.contains(&name))
        .map_or(name, |g| g[0])
}

/// What setting up a target unit returned.
#[derive(Clone, Debug, Default)]
pub struct Setup {
    /// `ompd_get_api_version`.
    pub api_version: Option<Call<i64>>,
    /// `ompd_initialize`.
    pub initialize: Option<Call<()>>,
    /// `ompd_process_initialize` (the handle is in [`Ctx::aspace`]).
    pub process_initialize: Option<Call<()>>,
    /// When `ompd_process_initialize` failed: the symbols it looked up that the target does not
    /// define. A library that needs a symbol the runtime lacks declines a runtime it does not
    /// serve (another vendor's, or an older release).
    pub undefined_symbols: Vec<String>,
}

impl Setup {
    /// The API version a tool asks `ompd_initialize` for: the one `ompd_get_api_version`
    /// reported, else 5.0's (a TR-era library has no `ompd_get_api_version`, and its
    /// `ompd_initialize` takes none).
    pub fn requested_version(&self) -> i64 {
        self.api_version
            .clone()
            .and_then(|r| r.ok())
            .unwrap_or(abi::api_version::V5_0)
    }

    /// Why the library declined the target, when `ompd_process_initialize` failed after looking
    /// up symbols the target does not define.
    pub fn declined(&self) -> Option<String> {
        let Some(Err(e)) = &self.process_initialize else {
            return None;
        };
        (!self.undefined_symbols.is_empty()).then(|| {
            format!(
                "the runtime does not define {}, which the library looks up: not a runtime it \
                 serves ({} failed: {e})",
                self.undefined_symbols.join(", "),
                EntryPoint::ProcessInitialize
            )
        })
    }
}

/// True for the thread-id kinds the suite can name an id of ([`native_id_bytes`]).
pub fn knows_kind(kind: u64) -> bool {
    kind == abi::thread_id_kind::PTHREAD || kind == abi::thread_id_kind::LWP
}

/// The id bytes (target byte order) of a native thread of `model`'s runtime lowered for `arch`,
/// for `kind` (0 pthread: the runtime's `kmp_thread_t` width, [`Model::pthread_size`]; 1 lwp: 4
/// bytes), as a debugger passes them to `ompd_get_thread_handle`.
///
/// [`Model::pthread_size`]: sim_target::model::Model::pthread_size
///
/// **How a thread id's bytes are laid out** (decided once, here; every thread-id check judges by
/// it). The specification never converts a thread id: TR 2.001 §3.4 and §15 say "the operating
/// system-specific information can vary in size and format, and therefore is not explicitly
/// represented in this API", passed "by reference" with its kind and size; 5.0–6.0 keep that
/// (`const void *thread_id` with `sizeof_thread_id`, and no `device_to_host` step). So the bytes
/// are the target operating system's own representation of the id: the target's size and the
/// target's byte order, as they lie in the target's memory (where the runtime keeps `ds_thread`)
/// and as the tool's `get_thread_context_for_thread_id` receives them back. A library that hands
/// back an id in the host's byte order, or matches one only in it, fails on a target of the
/// other byte order.
pub fn native_id_bytes(
    model: &Model,
    arch: Arch,
    native: &sim_target::model::NativeId,
    kind: u64,
) -> Vec<u8> {
    if kind == abi::thread_id_kind::LWP {
        arch.encode(u64::from(native.lwp), 4)
    } else {
        arch.encode(native.pthread, model.pthread_size(arch) as usize)
    }
}

/// Helpers shared by the target-stage families.
impl<'l> Ctx<'l> {
    /// The address space, or a skip verdict naming why there is none.
    pub fn aspace(&self) -> Result<&AspaceH<'l>, Verdict> {
        self.aspace.as_ref().ok_or_else(|| {
            if let Some(why) = self.setup.declined() {
                return Verdict::skip(why);
            }
            let why = match &self.setup.process_initialize {
                Some(Err(e)) => format!("{} failed: {e}", EntryPoint::ProcessInitialize),
                _ => match &self.setup.initialize {
                    Some(Err(e)) => format!("{} failed: {e}", EntryPoint::Initialize),
                    _ => "no address space".to_string(),
                },
            };
            Verdict::skip(why)
        })
    }

    /// The simulated target.
    pub fn target(&self) -> &'static Target {
        self.target.expect("target-stage checks run with a target")
    }

    /// A new, never-initialized target serving this unit's target in the same state: another
    /// process (or device) under a context the library has not seen; a skip verdict when the
    /// target's kind cannot give one.
    pub fn fresh_target(&self) -> Result<&'static Target, Verdict> {
        let target = self.target();
        target
            .source()
            .duplicate()
            .map(Target::leak_source)
            .ok_or_else(|| {
                Verdict::skip(format!(
                    "a {} target cannot serve a second address space",
                    target.kind().name()
                ))
            })
    }

    /// Native id bytes (target byte order) of OpenMP thread `t` for `kind`.
    pub fn thread_id(&self, t: ThreadId, kind: u64) -> Vec<u8> {
        native_id_bytes(self.model, self.arch, &self.model.threads[t.0].native, kind)
    }

    /// A thread handle for OpenMP thread `t`, obtained by its pthread id.
    pub fn thread_handle(&self, ah: &AspaceH<'l>, t: ThreadId) -> Call<ThreadH<'l>> {
        self.lib.get_thread_handle(
            ah,
            abi::thread_id_kind::PTHREAD,
            &self.thread_id(t, abi::thread_id_kind::PTHREAD),
        )
    }

    /// Every OpenMP thread of the model.
    pub fn threads(&self) -> impl Iterator<Item = ThreadId> {
        (0..self.model.threads.len()).map(ThreadId)
    }

    /// The current parallel handle of thread `t`.
    pub fn curr_parallel(&self, ah: &AspaceH<'l>, t: ThreadId) -> Call<ParallelH<'l>> {
        let th = self.thread_handle(ah, t)?;
        self.lib.get_curr_parallel_handle(&th)
    }

    /// The current task handle of thread `t`.
    pub fn curr_task(&self, ah: &AspaceH<'l>, t: ThreadId) -> Call<TaskH<'l>> {
        let th = self.thread_handle(ah, t)?;
        self.lib.get_curr_task_handle(&th)
    }

    /// The library's ICV list for this unit (enumerated once, cached in [`Ctx::icv_table`]), or
    /// why not (the enumeration broke before its end).
    pub fn icvs(&self, ah: &AspaceH) -> Result<Vec<IcvEntry>, String> {
        match self.icv_list(ah) {
            (list, None) => Ok(list),
            (_, Some(why)) => Err(why),
        }
    }

    /// The ICVs the library enumerated for this unit, in order, up to where the enumeration
    /// broke, and why it broke if it did (cached in [`Ctx::icv_table`]): a check of one ICV
    /// judges it when it came before the break.
    pub fn icv_list(&self, ah: &AspaceH) -> (Vec<IcvEntry>, Option<String>) {
        self.icv_table
            .get_or_init(|| self.enumerate_icv_list(ah))
            .clone()
    }

    /// The ICVs enumerated before the enumeration broke (all of them when it did not), or why
    /// none were: a check that judges ICVs one at a time judges these, so a library that breaks
    /// its enumeration late still has the ICVs it did list judged.
    pub fn icvs_before_break(&self, ah: &AspaceH) -> Result<Vec<IcvEntry>, String> {
        match self.icv_list(ah) {
            (list, Some(why)) if list.is_empty() => Err(why),
            (list, _) => Ok(list),
        }
    }

    /// The ICVs enumerated now (at most 1 025 entries), up to where the enumeration broke, and
    /// why it broke.
    pub fn enumerate_icv_list(&self, ah: &AspaceH) -> (Vec<IcvEntry>, Option<String>) {
        let mut out = Vec::new();
        let mut cur = ICV_UNDEFINED;
        loop {
            match self.lib.enumerate_icvs(ah, cur) {
                Ok((id, name, scope, more)) => {
                    out.push(IcvEntry { id, name, scope });
                    if more == 0 || out.len() > 1024 {
                        return (out, None);
                    }
                    cur = id;
                }
                Err(e) => {
                    let why = format!("ompd_enumerate_icvs after {} ICVs: {e}", out.len());
                    return (out, Some(why));
                }
            }
        }
    }

    /// The id of ICV `name` under any of its spellings ([`canonical`]) among the ICVs
    /// enumerated (up to where the enumeration broke, if it did), or why there is none.
    pub fn icv_id(&self, ah: &AspaceH, name: &str) -> Result<u64, String> {
        let want = canonical(name);
        let found = self.find_icv(ah, name, |n| canonical(n) == want);
        found.map(|e| e.id).map_err(|broke| {
            broke.unwrap_or_else(|| format!("{name} is not enumerated under any of its names"))
        })
    }

    /// The first ICV enumerated (up to where the enumeration broke, if it did) whose name `is`
    /// accepts, or why none is: where the enumeration broke, a text saying that `name` is not
    /// among the ICVs before the break; `None` when the whole enumeration lacks it.
    pub fn find_icv(
        &self,
        ah: &AspaceH,
        name: &str,
        is: impl Fn(&str) -> bool,
    ) -> Result<IcvEntry, Option<String>> {
        let (list, broke) = self.icv_list(ah);
        list.into_iter().find(|e| is(&e.name)).ok_or_else(|| {
            broke.map(|why| {
                format!("{name} is not among the ICVs enumerated before the break ({why})")
            })
        })
    }

    /// An integer ICV by name through `handle` at `scope` (looked up by enumeration), or why
    /// it could not be asked.
    pub fn icv(
        &self,
        handle: AnyHandle,
        scope: Scope,
        name: &str,
    ) -> Result<Call<(Rc, Option<i64>)>, String> {
        let ah = self.aspace.as_ref().ok_or("no address space")?;
        let id = self.icv_id(ah, name)?;
        Ok(self.lib.get_icv(handle, scope, id))
    }
}

/// Model facts the families share.
pub fn innermost_region(m: &Model, t: ThreadId) -> RegionId {
    m.threads[t.0].region
}

/// True when the task is an implicit task.
pub fn is_implicit(m: &Model, t: TaskId) -> bool {
    matches!(
        m.tasks[t.0].kind,
        sim_target::model::TaskKind::Implicit { .. }
    )
}

#[cfg(test)]
mod spelling_tests {
    use super::canonical;

    #[test]
    fn every_spelling_of_an_icv_is_the_same_icv() {
        assert_eq!(canonical("ompd-implicit-var"), "implicit-task-var");
        assert_eq!(canonical("ompd-implicit-task-var"), "implicit-task-var");
        assert_eq!(canonical("ompd-team-size-var"), "team-size-var");
        assert_eq!(canonical("ompd-final-var"), "final-task-var");
        assert_eq!(canonical("levels-var"), "levels-var");
        assert_ne!(
            canonical("ompd-thread-num-var"),
            canonical("ompd-team-size-var")
        );
    }
}
