//! The facts about a target's state that checks judge against, and which of them a target knows.
//! A simulated target knows everything about itself; a real one (a live process, a core file)
//! knows only what its fixture recorded. The engine's real targets decide which facts they know
//! and which checks apply; the checks read [`Known`] to judge only against known facts.

use std::collections::{BTreeMap, BTreeSet};

/// A fact about a target's state that checks judge against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fact {
    /// The OpenMP threads, their native ids and thread numbers, and the non-OpenMP threads.
    Threads,
    /// The parallel regions: nesting, teams, levels.
    Regions,
    /// A teams construct's league and initial teams (`TeamsPart`), whose regions only the
    /// `teams.*` checks judge: the text and the runtime's memory answer them differently.
    Teams,
    /// The tasks: kinds, generating and scheduling parents, and their data environments as far
    /// as a thread executes them (the ICVs of a thread's current task).
    Tasks,
    /// Every thread's state and wait id (state tracking on or off).
    States,
    /// OMPT tool data of threads, regions and tasks.
    ToolData,
    /// Task frames (exit and enter frame addresses).
    Frames,
    /// Task entry points.
    Functions,
    /// The runtime's OpenMP version.
    OmpVersion,
    /// The runtime's display-control variables.
    DisplayEnv,
    /// The `OMP_NUM_THREADS` and `OMP_PROC_BIND` lists the process started with (the deeper
    /// levels of nthreads-var and bind-var).
    IcvLists,
    /// Address-space-wide ICVs the fixture did not set or record (stack size, affinity display
    /// and format, tool ICVs).
    UnrecordedGlobals,
    /// The target's memory is a simulated image the harness may corrupt.
    Image,
    /// The runtime side of the interface (`ompd_dll_locations`, breakpoint symbols) is there
    /// to inspect: a real runtime, not a simulation of the structures a library reads.
    RuntimeInterface,
    /// The process is stopped at an OMPD breakpoint of a breakpoint tour ([`Known::stop`]).
    Stop,
    /// The state word a real runtime keeps for each OpenMP thread, read by the harness, beside
    /// the state the program's point implies ([`Known::state_words`]).
    StateWords,
}

/// One OpenMP thread of a real target: the state its program's point implies, and the state
/// word its runtime keeps (what [`Fact::States`] holds there, for a library to answer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateWord {
    /// The thread's index in the model.
    pub thread: usize,
    /// The state the program's point implies (a thread in `taskwait`: `wait_taskwait`).
    pub program: i64,
    /// The state word the runtime keeps.
    pub word: i64,
}

/// Where a breakpoint tour stopped a live process, and what the tour saw so far.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BpStop {
    /// The breakpoint function the process stopped in (`ompd_bp_parallel_begin`).
    pub breakpoint: String,
    /// The thread that passed it.
    pub tid: u32,
    /// The runtime's own OMPT view of that thread there, when the fixture's OMPT tool is loaded:
    /// the tool data of its parallel region, that region's team size, the tool data of its task
    /// and of the region OMPT binds that task to (0 where OMPT did not answer).
    pub view: Option<[u64; 4]>,
    /// The process id: its main thread's `ompd_bp_thread_end` comes after every region and task.
    pub pid: u32,
    /// Every stop of the tour so far, this one last: (breakpoint, thread).
    pub log: Vec<(String, u32)>,
    /// How many parallel regions the fixture program runs, serialized ones included.
    pub parallel_regions: usize,
    /// How many explicit tasks it creates.
    pub explicit_tasks: usize,
    /// How many teams constructs it runs, and the most initial teams one creates.
    #[serde(default)]
    pub teams: (usize, usize),
    /// A directory of this tour where a unit leaves what the next stop's unit of the same
    /// library needs (the memory its thread handles rested on: `bp.thread.*`).
    #[serde(default)]
    pub keep: Option<std::path::PathBuf>,
}

/// The facts a target's truth covers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Known {
    facts: BTreeSet<Fact>,
    /// Why each fact that is missing is missing (shown in the skip reason).
    why_not: BTreeMap<Fact, String>,
    /// The breakpoint stop, when the target is stopped at one ([`Fact::Stop`]).
    pub stop: Option<BpStop>,
    /// Every OpenMP thread's state word, when they were read ([`Fact::StateWords`]).
    pub state_words: Vec<StateWord>,
}

impl Known {
    /// Every fact but the runtime interface (and its state words): a simulated target built
    /// from its model.
    pub fn everything() -> Known {
        use Fact::*;
        let mut k = Known::default();
        for f in [
            Threads,
            Regions,
            Teams,
            Tasks,
            States,
            ToolData,
            Frames,
            Functions,
            OmpVersion,
            DisplayEnv,
            IcvLists,
            UnrecordedGlobals,
            Image,
        ] {
            k.facts.insert(f);
        }
        k.missing(
            Fact::StateWords,
            "a simulated runtime keeps the states its model gives: the program is its memory",
        );
        k
    }

    /// Adds a fact.
    pub fn insert(&mut self, f: Fact) {
        self.facts.insert(f);
        self.why_not.remove(&f);
    }

    /// Records why a fact is not known.
    pub fn missing(&mut self, f: Fact, why: impl Into<String>) {
        self.facts.remove(&f);
        self.why_not.insert(f, why.into());
    }

    /// True when `f` is known.
    pub fn has(&self, f: Fact) -> bool {
        self.facts.contains(&f)
    }

    /// Why `f` is not known (the skip reason of a check that judges against it).
    pub fn reason(&self, f: Fact) -> String {
        self.why_not
            .get(&f)
            .cloned()
            .unwrap_or_else(|| format!("{f:?} is not known on this target"))
    }
}
