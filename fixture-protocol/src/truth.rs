//! Decoding of the first-party truth records the OpenMP fixtures write (`c/fixture_truth.h`).
//!
//! Two records exist in a fixture process:
//!
//! - [`TRUTH_SYMBOL`] (`struct fx_truth`, [`TRUTH_SIZE`] bytes) in the fixture executable: what
//!   every recording thread saw through the standard OpenMP API, decoded by [`Truth::decode`];
//! - [`OMPT_SYMBOL`] (`struct fx_ompt`, [`OMPT_SIZE`] bytes) in the OMPT truth tool
//!   `libompt_truth.so` when it is loaded: what the runtime reported through the OMPT inquiry
//!   functions, decoded by [`Ompt::decode`].
//!
//! Both are arrays of native-endian (x86-64: little-endian) 8-byte words; the word indices
//! below mirror the header field by field. A harness reads the bytes from the target's memory
//! at the symbol's address (live process or core file) or takes them from the fixture's
//! `TRUTH <hex>` / `OMPT <hex>` output lines ([`decode_hex`]). Slots a fixture did not use
//! (role `FX_ROLE_NONE` or tid 0) are dropped; every kept entry carries its slot index, which
//! is the same in both records.

use thiserror::Error;

/// Symbol of `struct fx_truth` in the fixture executable (`.symtab` and `.dynsym`).
pub const TRUTH_SYMBOL: &str = "ompd_fixture_truth";
/// Symbol of `struct fx_ompt` in `libompt_truth.so` (`.symtab` and `.dynsym`).
pub const OMPT_SYMBOL: &str = "ompd_fixture_ompt";
/// `FX_TRUTH_MAGIC` ("OMPDTRU"): the first word of both records once they are complete.
pub const MAGIC: u64 = 0x004f_4d50_4454_5255;
/// `FX_TRUTH_VERSION`, the layout version this module decodes.
pub const VERSION: i64 = 1;
/// `FX_MAX_THREADS`: slots per record.
pub const MAX_THREADS: usize = 32;
/// `FX_MAX_LEVELS`: entries of every per-level array (levels 0 to `MAX_LEVELS - 1`).
pub const MAX_LEVELS: usize = 8;

const WORD: usize = 8;
const TRUTH_HEADER_WORDS: usize = 8;
const THREAD_WORDS: usize = 7 + 2 * MAX_LEVELS + 18;
const OMPT_HEADER_WORDS: usize = 3;
const OMPT_THREAD_WORDS: usize = 5 + 2 * MAX_LEVELS + 1 + 8 * MAX_LEVELS;

/// `sizeof(struct fx_truth)`.
pub const TRUTH_SIZE: usize = (TRUTH_HEADER_WORDS + MAX_THREADS * THREAD_WORDS) * WORD;
/// `sizeof(struct fx_ompt)`.
pub const OMPT_SIZE: usize = (OMPT_HEADER_WORDS + MAX_THREADS * OMPT_THREAD_WORDS) * WORD;

/// Base of the values the OMPT truth tool gives thread data (`0x1000 + n`, n = 1, 2, ...).
pub const OMPT_THREAD_DATA_BASE: u64 = 0x1000;
/// Base of the values it gives parallel data (`parallel_begin`, and the initial parallel
/// region's data at the initial task's `implicit_task`).
pub const OMPT_PARALLEL_DATA_BASE: u64 = 0x2000;
/// Base of the values it gives implicit (and initial) task data.
pub const OMPT_IMPLICIT_TASK_DATA_BASE: u64 = 0x3000;
/// Base of the values it gives explicit task data (`task_create`).
pub const OMPT_EXPLICIT_TASK_DATA_BASE: u64 = 0x4000;

/// The base of the tool's value series `value` belongs to (one of the four `OMPT_*_BASE`),
/// or `None` for a value the tool never hands out (0 included).
pub fn ompt_series(value: u64) -> Option<u64> {
    [
        OMPT_THREAD_DATA_BASE,
        OMPT_PARALLEL_DATA_BASE,
        OMPT_IMPLICIT_TASK_DATA_BASE,
        OMPT_EXPLICIT_TASK_DATA_BASE,
    ]
    .into_iter()
    .find(|base| value > *base && value < base + 0x1000)
}

/// `ompt_state_work_serial`: the OMPT state of a thread outside any parallel region.
pub const OMPT_STATE_WORK_SERIAL: i64 = 0x000;
/// `ompt_state_work_parallel`: the OMPT state of a thread working in a parallel region.
pub const OMPT_STATE_WORK_PARALLEL: i64 = 0x001;

/// `ompt_task_flag_t` bits, as `ompt_get_task_info` reports them.
pub mod task_flags {
    /// `ompt_task_initial`.
    pub const INITIAL: i64 = 0x1;
    /// `ompt_task_implicit`.
    pub const IMPLICIT: i64 = 0x2;
    /// `ompt_task_explicit`.
    pub const EXPLICIT: i64 = 0x4;
    /// `ompt_task_undeferred`.
    pub const UNDEFERRED: i64 = 0x0800_0000;
    /// `ompt_task_untied`.
    pub const UNTIED: i64 = 0x1000_0000;
    /// `ompt_task_final`.
    pub const FINAL: i64 = 0x2000_0000;
}

/// What went wrong decoding a record.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum TruthError {
    /// The byte count is not the record's size.
    #[error("{what}: {actual} bytes, expected {expected}")]
    Size {
        /// Which record (`fx_truth` or `fx_ompt`).
        what: &'static str,
        /// Its size.
        expected: usize,
        /// The bytes given.
        actual: usize,
    },
    /// The magic word is not [`MAGIC`]: the record is incomplete (not READY yet, or the tool's
    /// initializer did not run) or the bytes are not a record.
    #[error("{what}: magic {found:#x}, expected {MAGIC:#x} (record incomplete or not a record)")]
    Magic {
        /// Which record.
        what: &'static str,
        /// The word found.
        found: u64,
    },
    /// The layout version is not [`VERSION`].
    #[error("{what}: layout version {found}, this decoder reads {VERSION}")]
    Version {
        /// Which record.
        what: &'static str,
        /// The version found.
        found: i64,
    },
    /// A slot's role is not an `enum fx_role` value.
    #[error("fx_truth slot {slot}: unknown role {value}")]
    Role {
        /// The slot.
        slot: usize,
        /// The role word.
        value: i64,
    },
    /// A level or level count is outside the per-level arrays.
    #[error("{what} slot {slot}: {field} = {value} is outside 0..{MAX_LEVELS}")]
    Level {
        /// Which record.
        what: &'static str,
        /// The slot.
        slot: usize,
        /// The field.
        field: &'static str,
        /// Its value.
        value: i64,
    },
    /// Text given to [`decode_hex`] is not an even number of hex digits.
    #[error("not a hex dump: {0}")]
    Hex(String),
}

/// What a recorded thread is doing at the stop point (`enum fx_role`, without `FX_ROLE_NONE`,
/// whose slots are dropped).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Spinning in user code in an implicit task.
    Spin,
    /// Waiting in an explicit `#pragma omp barrier`.
    Barrier,
    /// Waiting in `#pragma omp taskwait`.
    Taskwait,
    /// Waiting to enter a `#pragma omp critical` another thread holds.
    Critical,
    /// Waiting in `omp_set_lock` on a lock another thread holds.
    Lock,
    /// Spinning in user code inside an explicit task.
    TaskSpin,
    /// The initial thread outside any parallel region.
    Serial,
    /// A plain pthread that never called OpenMP.
    Foreign,
}

impl Role {
    /// The `enum fx_role` value.
    pub fn code(self) -> i64 {
        match self {
            Role::Spin => 1,
            Role::Barrier => 2,
            Role::Taskwait => 3,
            Role::Critical => 4,
            Role::Lock => 5,
            Role::TaskSpin => 6,
            Role::Serial => 7,
            Role::Foreign => 8,
        }
    }

    /// The role of an `enum fx_role` value; `None` for `FX_ROLE_NONE` (0) and unknown values.
    pub fn from_code(code: i64) -> Option<Role> {
        [
            Role::Spin,
            Role::Barrier,
            Role::Taskwait,
            Role::Critical,
            Role::Lock,
            Role::TaskSpin,
            Role::Serial,
            Role::Foreign,
        ]
        .into_iter()
        .find(|r| r.code() == code)
    }

    /// Whether the thread is blocked inside the runtime at the stop point (barrier, taskwait,
    /// critical, lock), rather than running user code.
    pub fn blocks_in_runtime(self) -> bool {
        matches!(
            self,
            Role::Barrier | Role::Taskwait | Role::Critical | Role::Lock
        )
    }
}

/// The decoded `struct fx_truth`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Truth {
    /// Layout version (always [`VERSION`] after a successful decode).
    pub version: i64,
    /// Scenario number (`crate::Scenario::number`).
    pub scenario: i64,
    /// Threads that record (OpenMP threads and the foreign thread).
    pub expected: i64,
    /// Threads that recorded; equal to `expected` in a complete record.
    pub arrived: i64,
    /// `OMP_DEBUG` was exactly `enabled` in the fixture's environment.
    pub omp_debug: bool,
    /// The OMPT truth tool was active (its initializer ran).
    pub ompt: bool,
    /// The fixture's process id.
    pub pid: i64,
    /// The used slots, in slot order.
    pub threads: Vec<ThreadTruth>,
}

/// One recorded thread (`struct fx_thread`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadTruth {
    /// Index of the slot in the record (the same slot in the OMPT record).
    pub slot: usize,
    /// What the thread is doing at the stop point.
    pub role: Role,
    /// Its kernel thread id (`gettid()`), the LWP id of OMPD's thread-id kind 1.
    pub tid: i64,
    /// Its `pthread_self()`, OMPD's thread-id kind 0 (on x86-64 glibc, also its `fs_base`).
    pub pthread: u64,
    /// Address of the user function the thread runs when the fixture can name it (the start
    /// routine of the foreign thread); `None` for outlined OpenMP bodies.
    pub function: Option<u64>,
    /// What the OpenMP API reported; `None` for [`Role::Foreign`], which never calls OpenMP.
    pub omp: Option<OmpView>,
}

/// What one thread saw through the OpenMP API, after every ICV setting of the fixture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OmpView {
    /// `omp_get_thread_num()`.
    pub thread_num: i64,
    /// `omp_get_num_threads()`.
    pub num_threads: i64,
    /// `omp_get_level()`.
    pub level: i64,
    /// `omp_get_active_level()`.
    pub active_level: i64,
    /// `omp_get_ancestor_thread_num(l)` for `l = 0..=level`.
    pub ancestor: Vec<i64>,
    /// `omp_get_team_size(l)` for `l = 0..=level`.
    pub team_size: Vec<i64>,
    /// `omp_in_final()`.
    pub in_final: bool,
    /// `omp_get_max_threads()` (the first element of the task's nthreads-var).
    pub max_threads: i64,
    /// `omp_get_dynamic()`.
    pub dynamic: bool,
    /// `omp_get_max_active_levels()`.
    pub max_active_levels: i64,
    /// `omp_get_thread_limit()`.
    pub thread_limit: i64,
    /// The kind `omp_get_schedule()` gave (`omp_sched_t`, modifier bits kept).
    pub sched_kind: i64,
    /// The chunk size `omp_get_schedule()` gave.
    pub sched_chunk: i64,
    /// `omp_get_proc_bind()` (`omp_proc_bind_t`: 0 false, 1 true, 2 primary, 3 close, 4 spread).
    pub proc_bind: i64,
    /// `omp_get_default_device()`.
    pub default_device: i64,
    /// `omp_get_num_procs()`.
    pub num_procs: i64,
    /// `omp_get_cancellation()`.
    pub cancellation: bool,
    /// `omp_get_max_task_priority()`.
    pub max_task_priority: i64,
    /// The explicit task the thread runs in; `None` in an implicit task.
    pub task: Option<ExplicitTask>,
    /// For [`Role::Lock`]: the address of the `omp_lock_t` waited on.
    pub wait_addr: Option<u64>,
}

/// The explicit task a thread runs in, by the fixture's own task ids (1, 2, 3, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExplicitTask {
    /// The fixture's id of the task (> 0).
    pub id: i64,
    /// The fixture's id of the explicit task that generated it; 0 when an implicit task did.
    pub parent: i64,
    /// `omp_get_thread_num()` of the thread that created it.
    pub creator: i64,
    /// The task is untied.
    pub untied: bool,
}

/// The decoded `struct fx_ompt`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ompt {
    /// Layout version (always [`VERSION`] after a successful decode).
    pub version: i64,
    /// Threads recorded.
    pub recorded: i64,
    /// The used slots (tid != 0), in slot order.
    pub threads: Vec<OmptThread>,
}

/// One thread's OMPT view (`struct fx_ompt_thread`), taken when the thread recorded its
/// truth: before it blocked, so `state` is the state at the record point (a thread that then
/// waits in a barrier recorded `work_parallel`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OmptThread {
    /// Index of the slot, the same as the thread's slot in [`Truth`].
    pub slot: usize,
    /// Kernel thread id of the thread that recorded.
    pub tid: i64,
    /// `ompt_get_state()`.
    pub state: i64,
    /// Its wait id out-argument.
    pub wait_id: u64,
    /// The thread data value the tool set at `thread_begin` (0 if none).
    pub thread_data: u64,
    /// `ompt_get_parallel_info(l)` for the ancestor levels `l = 0, 1, ...` that answered 2.
    pub parallel: Vec<OmptParallel>,
    /// `ompt_get_task_info(l)` for the ancestor levels that answered 2.
    pub tasks: Vec<OmptTask>,
}

/// One ancestor level of `ompt_get_parallel_info`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OmptParallel {
    /// The parallel data value (set by the tool; 0 if none).
    pub data: u64,
    /// The team size.
    pub team_size: i64,
}

/// One ancestor level of `ompt_get_task_info`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OmptTask {
    /// The task flags ([`task_flags`]).
    pub flags: i64,
    /// The task data value (set by the tool; 0 if none).
    pub data: u64,
    /// The value of the task's parallel data.
    pub parallel_data: u64,
    /// The thread number the runtime gave for the task.
    pub thread_num: i64,
    /// `task_frame->exit_frame.ptr`.
    pub exit_frame: u64,
    /// `task_frame->exit_frame_flags`.
    pub exit_frame_flags: i64,
    /// `task_frame->enter_frame.ptr`.
    pub enter_frame: u64,
    /// `task_frame->enter_frame_flags`.
    pub enter_frame_flags: i64,
}

/// Native-endian words of a record of `size` bytes.
fn words(what: &'static str, bytes: &[u8], size: usize) -> Result<Vec<i64>, TruthError> {
    if bytes.len() != size {
        return Err(TruthError::Size {
            what,
            expected: size,
            actual: bytes.len(),
        });
    }
    Ok(bytes
        .chunks_exact(WORD)
        .map(|c| i64::from_ne_bytes(c.try_into().expect("chunks_exact gives 8 bytes")))
        .collect())
}

fn check_header(what: &'static str, w: &[i64]) -> Result<(), TruthError> {
    if w[0] as u64 != MAGIC {
        return Err(TruthError::Magic {
            what,
            found: w[0] as u64,
        });
    }
    if w[1] != VERSION {
        return Err(TruthError::Version { what, found: w[1] });
    }
    Ok(())
}

fn level_count(
    what: &'static str,
    slot: usize,
    field: &'static str,
    value: i64,
    max: usize,
) -> Result<usize, TruthError> {
    usize::try_from(value)
        .ok()
        .filter(|v| *v <= max)
        .ok_or(TruthError::Level {
            what,
            slot,
            field,
            value,
        })
}

impl Truth {
    /// Decodes the bytes of `ompd_fixture_truth` ([`TRUTH_SIZE`] of them): checks the magic
    /// (the record is complete), the version and the size, and drops unused slots.
    pub fn decode(bytes: &[u8]) -> Result<Truth, TruthError> {
        const WHAT: &str = "fx_truth";
        let w = words(WHAT, bytes, TRUTH_SIZE)?;
        check_header(WHAT, &w)?;
        let mut threads = Vec::new();
        for slot in 0..MAX_THREADS {
            let t = &w[TRUTH_HEADER_WORDS + slot * THREAD_WORDS..][..THREAD_WORDS];
            if t[0] == 0 || t[1] == 0 {
                continue;
            }
            let role = Role::from_code(t[0]).ok_or(TruthError::Role { slot, value: t[0] })?;
            let omp = if role == Role::Foreign {
                None
            } else {
                let levels = level_count(WHAT, slot, "level", t[5], MAX_LEVELS - 1)? + 1;
                Some(OmpView {
                    thread_num: t[3],
                    num_threads: t[4],
                    level: t[5],
                    active_level: t[6],
                    ancestor: t[7..7 + levels].to_vec(),
                    team_size: t[15..15 + levels].to_vec(),
                    in_final: t[23] != 0,
                    max_threads: t[24],
                    dynamic: t[25] != 0,
                    max_active_levels: t[26],
                    thread_limit: t[27],
                    sched_kind: t[28],
                    sched_chunk: t[29],
                    proc_bind: t[30],
                    default_device: t[31],
                    num_procs: t[32],
                    cancellation: t[33] != 0,
                    max_task_priority: t[34],
                    task: (t[35] > 0).then_some(ExplicitTask {
                        id: t[35],
                        parent: t[36],
                        creator: t[37],
                        untied: t[38] != 0,
                    }),
                    wait_addr: (t[39] != 0).then_some(t[39] as u64),
                })
            };
            threads.push(ThreadTruth {
                slot,
                role,
                tid: t[1],
                pthread: t[2] as u64,
                function: (t[40] != 0).then_some(t[40] as u64),
                omp,
            });
        }
        Ok(Truth {
            version: w[1],
            scenario: w[2],
            expected: w[3],
            arrived: w[4],
            omp_debug: w[5] != 0,
            ompt: w[6] != 0,
            pid: w[7],
            threads,
        })
    }

    /// The thread recorded in `slot`, if that slot is used.
    pub fn slot(&self, slot: usize) -> Option<&ThreadTruth> {
        self.threads.iter().find(|t| t.slot == slot)
    }

    /// The thread with kernel thread id `tid`, if it recorded.
    pub fn by_tid(&self, tid: i64) -> Option<&ThreadTruth> {
        self.threads.iter().find(|t| t.tid == tid)
    }
}

impl Ompt {
    /// Decodes the bytes of `ompd_fixture_ompt` ([`OMPT_SIZE`] of them): checks the magic (the
    /// tool's initializer ran), the version and the size, and drops unused slots (tid 0).
    pub fn decode(bytes: &[u8]) -> Result<Ompt, TruthError> {
        const WHAT: &str = "fx_ompt";
        let w = words(WHAT, bytes, OMPT_SIZE)?;
        check_header(WHAT, &w)?;
        let mut threads = Vec::new();
        for slot in 0..MAX_THREADS {
            let t = &w[OMPT_HEADER_WORDS + slot * OMPT_THREAD_WORDS..][..OMPT_THREAD_WORDS];
            if t[0] == 0 {
                continue;
            }
            let parallel_levels = level_count(WHAT, slot, "parallel_levels", t[4], MAX_LEVELS)?;
            let task_levels = level_count(WHAT, slot, "task_levels", t[21], MAX_LEVELS)?;
            let at = |array: usize, level: usize| t[array + level];
            let parallel = (0..parallel_levels)
                .map(|l| OmptParallel {
                    data: at(5, l) as u64,
                    team_size: at(13, l),
                })
                .collect();
            let tasks = (0..task_levels)
                .map(|l| OmptTask {
                    flags: at(22, l),
                    data: at(30, l) as u64,
                    parallel_data: at(38, l) as u64,
                    thread_num: at(46, l),
                    exit_frame: at(54, l) as u64,
                    exit_frame_flags: at(62, l),
                    enter_frame: at(70, l) as u64,
                    enter_frame_flags: at(78, l),
                })
                .collect();
            threads.push(OmptThread {
                slot,
                tid: t[0],
                state: t[1],
                wait_id: t[2] as u64,
                thread_data: t[3] as u64,
                parallel,
                tasks,
            });
        }
        Ok(Ompt {
            version: w[1],
            recorded: w[2],
            threads,
        })
    }

    /// The thread recorded in `slot`, if that slot is used.
    pub fn slot(&self, slot: usize) -> Option<&OmptThread> {
        self.threads.iter().find(|t| t.slot == slot)
    }
}

/// The bytes of a fixture's hex dump (the text after `TRUTH ` or `OMPT ` on its output line).
pub fn decode_hex(text: &str) -> Result<Vec<u8>, TruthError> {
    let text = text.trim();
    if !text.len().is_multiple_of(2) {
        return Err(TruthError::Hex(format!("odd length {}", text.len())));
    }
    (0..text.len())
        .step_by(2)
        .map(|i| {
            text.get(i..i + 2)
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
                .ok_or_else(|| TruthError::Hex(format!("bad digits at offset {i}")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn to_bytes(words: &[i64]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_ne_bytes()).collect()
    }

    /// A complete truth record with one spinning level-1 thread in slot 2 and one foreign
    /// thread in slot 5.
    fn sample_truth() -> Vec<i64> {
        let mut w = vec![0i64; TRUTH_SIZE / WORD];
        w[..8].copy_from_slice(&[MAGIC as i64, VERSION, 5, 2, 2, 1, 0, 4242]);
        let t = TRUTH_HEADER_WORDS + 2 * THREAD_WORDS;
        w[t] = Role::Spin.code();
        w[t + 1] = 101;
        w[t + 2] = 0x7f00;
        w[t + 3] = 1; // thread_num
        w[t + 4] = 3;
        w[t + 5] = 1; // level
        w[t + 6] = 1;
        w[t + 7] = 0; // ancestor[0]
        w[t + 8] = 1;
        w[t + 15] = 1; // team_size[0]
        w[t + 16] = 3;
        w[t + 25] = 1; // dynamic
        w[t + 35] = 3; // task id
        w[t + 36] = 2;
        w[t + 37] = 2;
        w[t + 38] = 1;
        w[t + 39] = 0x5000;
        let f = TRUTH_HEADER_WORDS + 5 * THREAD_WORDS;
        w[f] = Role::Foreign.code();
        w[f + 1] = 102;
        w[f + 2] = 0x7f80;
        w[f + 40] = 0x1234;
        w
    }

    #[test]
    fn sizes_match_the_header() {
        // fixture_truth.h: fx_thread has 7 scalars, two level arrays and 18 more scalars;
        // fx_ompt_thread 5 scalars, two level arrays, task_levels and eight level arrays.
        assert_eq!(THREAD_WORDS, 41);
        assert_eq!(OMPT_THREAD_WORDS, 86);
        assert_eq!(TRUTH_SIZE, 10_560);
        assert_eq!(OMPT_SIZE, 22_040);
        assert_eq!(&MAGIC.to_le_bytes()[..7], b"URTDPMO");
    }

    #[test]
    fn decodes_used_slots_only() {
        let truth = Truth::decode(&to_bytes(&sample_truth())).unwrap();
        assert_eq!((truth.scenario, truth.expected, truth.arrived), (5, 2, 2));
        assert!(truth.omp_debug && !truth.ompt);
        assert_eq!(truth.pid, 4242);
        assert_eq!(truth.threads.len(), 2);
        let t = truth.slot(2).unwrap();
        assert_eq!(
            (t.role, t.tid, t.pthread, t.function),
            (Role::Spin, 101, 0x7f00, None)
        );
        let omp = t.omp.as_ref().unwrap();
        assert_eq!(omp.ancestor, [0, 1]);
        assert_eq!(omp.team_size, [1, 3]);
        assert!(omp.dynamic && !omp.in_final);
        assert_eq!(
            omp.task,
            Some(ExplicitTask {
                id: 3,
                parent: 2,
                creator: 2,
                untied: true
            })
        );
        assert_eq!(omp.wait_addr, Some(0x5000));
        let f = truth.by_tid(102).unwrap();
        assert_eq!(
            (f.slot, f.role, f.function),
            (5, Role::Foreign, Some(0x1234))
        );
        assert!(f.omp.is_none());
    }

    #[test]
    fn rejects_bad_records() {
        let good = sample_truth();
        let short = to_bytes(&good[..good.len() - 1]);
        assert!(matches!(
            Truth::decode(&short),
            Err(TruthError::Size { actual, .. }) if actual == TRUTH_SIZE - 8
        ));
        let mut w = good.clone();
        w[0] = 0;
        assert!(matches!(
            Truth::decode(&to_bytes(&w)),
            Err(TruthError::Magic { found: 0, .. })
        ));
        let mut w = good.clone();
        w[1] = 2;
        assert!(matches!(
            Truth::decode(&to_bytes(&w)),
            Err(TruthError::Version { found: 2, .. })
        ));
        let mut w = good.clone();
        w[TRUTH_HEADER_WORDS + 2 * THREAD_WORDS] = 9;
        assert_eq!(
            Truth::decode(&to_bytes(&w)),
            Err(TruthError::Role { slot: 2, value: 9 })
        );
        let mut w = good;
        w[TRUTH_HEADER_WORDS + 2 * THREAD_WORDS + 5] = MAX_LEVELS as i64;
        assert!(matches!(
            Truth::decode(&to_bytes(&w)),
            Err(TruthError::Level {
                slot: 2,
                field: "level",
                ..
            })
        ));
    }

    #[test]
    fn decodes_the_ompt_record() {
        let mut w = vec![0i64; OMPT_SIZE / WORD];
        w[..3].copy_from_slice(&[MAGIC as i64, VERSION, 1]);
        let t = OMPT_HEADER_WORDS + 3 * OMPT_THREAD_WORDS;
        w[t] = 77;
        w[t + 1] = OMPT_STATE_WORK_PARALLEL;
        w[t + 3] = 0x1001;
        w[t + 4] = 2;
        w[t + 5] = 0x2002;
        w[t + 6] = 0x2001;
        w[t + 13] = 4;
        w[t + 14] = 1;
        w[t + 21] = 1;
        w[t + 22] = task_flags::IMPLICIT | task_flags::UNDEFERRED;
        w[t + 30] = 0x3002;
        w[t + 38] = 0x2002;
        w[t + 46] = 3;
        w[t + 54] = 0x7ffe_0000;
        w[t + 62] = 0x10;
        let ompt = Ompt::decode(&to_bytes(&w)).unwrap();
        assert_eq!(ompt.recorded, 1);
        let th = ompt.slot(3).unwrap();
        assert_eq!((th.tid, th.thread_data), (77, 0x1001));
        assert_eq!(
            th.parallel,
            [
                OmptParallel {
                    data: 0x2002,
                    team_size: 4
                },
                OmptParallel {
                    data: 0x2001,
                    team_size: 1
                }
            ]
        );
        assert_eq!(th.tasks.len(), 1);
        assert_eq!(th.tasks[0].thread_num, 3);
        assert_eq!(th.tasks[0].exit_frame, 0x7ffe_0000);
        assert_eq!(
            ompt_series(th.tasks[0].data),
            Some(OMPT_IMPLICIT_TASK_DATA_BASE)
        );
        assert_eq!(ompt_series(0), None);
        assert_eq!(ompt_series(0x1000), None);

        w[t + 21] = 9;
        assert!(matches!(
            Ompt::decode(&to_bytes(&w)),
            Err(TruthError::Level {
                field: "task_levels",
                value: 9,
                ..
            })
        ));
    }

    #[test]
    fn hex_round_trip() {
        assert_eq!(decode_hex("00ff10\n").unwrap(), [0, 255, 16]);
        assert!(decode_hex("abc").is_err());
        assert!(decode_hex("zz").is_err());
    }
}
