//! Building valid models step by step.

use super::*;

/// Builds valid models step by step, the way a program would create them.
///
/// ```
/// use sim_target::model::ModelBuilder;
/// let mut b = ModelBuilder::new();
/// let outer = b.parallel(b.initial_thread(), 4);
/// let t2 = b.member(outer, 2);
/// let inner = b.parallel(t2, 2);
/// let task = b.explicit_task(b.member(inner, 1));
/// let model = b.build().unwrap();
/// assert_eq!(model.level(inner), 2);
/// # let _ = task;
/// ```
#[derive(Clone, Debug)]
pub struct ModelBuilder {
    model: Model,
    next_native: u64,
    next_addr: u64,
}

impl Default for ModelBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ModelBuilder {
    /// A process with only the initial thread executing the initial task in serial code.
    pub fn new() -> Self {
        let initial_task = Task {
            kind: TaskKind::Implicit {
                region: RegionId(0),
                index: 0,
            },
            region: RegionId(0),
            generating: None,
            scheduling: None,
            is_final: false,
            icvs: TaskIcvs::default(),
            function: u64::MAX,
            exit_frame: 0,
            enter_frame: 0,
            tool_data: 0x1000,
        };
        let model = Model {
            omp_version: 201611,
            ompd_state: 1,
            ompt_support: true,
            older_description: false,
            gtid_mode: GtidMode::Tls,
            thread_id_width: ThreadIdWidth::Pointer,
            vacant_gtids: Vec::new(),
            globals: Globals::default(),
            threads: vec![Thread {
                native: NativeId {
                    pthread: 0x7f00_0000_1000,
                    lwp: 1000,
                },
                region: RegionId(0),
                current_task: TaskId(0),
                state: ompd_abi::state::WORK_SERIAL,
                wait_id: 0,
                tool_data: 0x2000,
            }],
            foreign_threads: Vec::new(),
            idle_threads: Vec::new(),
            regions: vec![Region {
                parent: None,
                members: vec![ThreadId(0)],
                implicit_tasks: vec![TaskId(0)],
                function: u64::MAX,
                tool_data: 0x3000,
                teams: None,
            }],
            tasks: vec![initial_task],
        };
        ModelBuilder {
            model,
            next_native: 1,
            next_addr: 0x40_1000,
        }
    }

    /// The initial thread (gtid 0).
    pub fn initial_thread(&self) -> ThreadId {
        ThreadId(0)
    }

    /// Direct access to the model under construction (for ICVs, globals, states).
    pub fn model_mut(&mut self) -> &mut Model {
        &mut self.model
    }

    /// Thread number `n` of region `r`.
    pub fn member(&self, r: RegionId, n: usize) -> ThreadId {
        self.model.regions[r.0].members[n]
    }

    fn fresh_code_addr(&mut self) -> u64 {
        self.next_addr += 0x140;
        self.next_addr
    }

    fn fresh_thread(&mut self, region: RegionId, task: TaskId) -> ThreadId {
        let n = self.next_native;
        self.next_native += 1;
        self.model.threads.push(Thread {
            native: NativeId {
                pthread: 0x7f00_0000_1000 + n * 0x80_0000,
                lwp: 1000 + n as u32,
            },
            region,
            current_task: task,
            state: ompd_abi::state::WORK_PARALLEL,
            wait_id: 0,
            tool_data: 0x2000 + n,
        });
        ThreadId(self.model.threads.len() - 1)
    }

    /// The encountering thread `primary` forks a parallel region with `team_size` threads
    /// (1 gives a serialized region). New worker threads are created for the other members.
    /// Every member starts executing its implicit task.
    pub fn parallel(&mut self, primary: ThreadId, team_size: usize) -> RegionId {
        self.fork(primary, team_size, &[])
    }

    /// [`ModelBuilder::parallel`], with `workers` (existing threads) as its first members
    /// after the primary and fresh threads for the rest.
    fn fork(&mut self, primary: ThreadId, team_size: usize, workers: &[ThreadId]) -> RegionId {
        assert!(team_size >= 1, "a team has at least one thread");
        let parent = self.model.threads[primary.0].region;
        let encountering = self.model.threads[primary.0].current_task;
        let r = RegionId(self.model.regions.len());
        let function = self.fresh_code_addr();
        let parent_icvs = self.model.tasks[encountering.0].icvs;
        let level = self.model.level(parent) + 1;
        let mut icvs = parent_icvs;
        if team_size > 1 {
            // nthreads-var of the implicit tasks: the list entry for the new level, if any.
            if let Some(n) = self.model.globals.nthreads_list.get(level) {
                icvs.nthreads = *n;
            }
        }
        let enter_frame = 0x7ff0_0000 - 0x400 * self.model.tasks.len() as u64;
        self.model.tasks[encountering.0].enter_frame = enter_frame;
        let mut members = Vec::with_capacity(team_size);
        let mut implicit = Vec::with_capacity(team_size);
        for n in 0..team_size {
            let task = TaskId(self.model.tasks.len());
            self.model.tasks.push(Task {
                kind: TaskKind::Implicit {
                    region: r,
                    index: n,
                },
                region: r,
                generating: Some(encountering),
                scheduling: None,
                is_final: false,
                icvs,
                function,
                exit_frame: if n == 0 {
                    enter_frame - 0x80
                } else {
                    0x7e00_0000 + 0x100 * n as u64
                },
                enter_frame: 0,
                tool_data: 0x5000 + task.0 as u64,
            });
            let thread = match (n, workers.get(n.wrapping_sub(1))) {
                (0, _) => primary,
                (_, Some(w)) => *w,
                (_, None) => self.fresh_thread(r, task),
            };
            members.push(thread);
            implicit.push(task);
        }
        self.model.regions.push(Region {
            parent: Some(parent),
            members: members.clone(),
            implicit_tasks: implicit.clone(),
            function,
            tool_data: 0x4000 + r.0 as u64,
            teams: None,
        });
        for (thread, task) in members.iter().zip(&implicit) {
            let t = &mut self.model.threads[thread.0];
            t.region = r;
            t.current_task = *task;
            t.state = ompd_abi::state::WORK_PARALLEL;
        }
        r
    }

    /// The encountering thread `primary` encounters a host `teams` construct of `nteams`
    /// initial teams, with `threads` threads a team (teams-thread-limit-var): the league, and
    /// under it each initial team's region, whose threads but the initial one wait at the fork
    /// barrier ([`TeamsPart`]). Returns the league; team `k`'s region is the one its member `k`
    /// is in.
    pub fn teams(&mut self, primary: ThreadId, nteams: usize, threads: usize) -> RegionId {
        let league = self.parallel(primary, nteams);
        self.model.regions[league.0].teams = Some(TeamsPart::League);
        for k in 0..nteams {
            let initial = self.member(league, k);
            let team = self.parallel(initial, threads);
            self.model.regions[team.0].teams = Some(TeamsPart::InitialTeam { threads });
            for parked in self.model.regions[team.0].members[1..].iter().copied() {
                self.model.threads[parked.0].state = ompd_abi::state::IDLE;
            }
        }
        league
    }

    /// The region of initial team `k` of `league` (see [`ModelBuilder::teams`]).
    pub fn initial_team(&self, league: RegionId, k: usize) -> RegionId {
        let initial = self.member(league, k);
        let regions = self.model.regions.iter().enumerate();
        regions
            .rev()
            .find(|(_, r)| r.parent == Some(league) && r.members[0] == initial)
            .map(|(i, _)| RegionId(i))
            .expect("every initial thread of a league forms its team")
    }

    /// The initial thread of the initial team `team` forks a parallel region nested in the
    /// teams region, with the threads the runtime parked in the team: a team one level deeper,
    /// under the initial team's (as live LLVM and Intel runtimes keep it).
    pub fn parallel_in_team(&mut self, team: RegionId) -> RegionId {
        let part = self.model.teams_part(team);
        assert!(matches!(part, Some(TeamsPart::InitialTeam { .. })));
        let members = self.model.regions[team.0].members.clone();
        self.fork(members[0], members.len(), &members[1..])
    }

    /// `thread` encounters a `task` construct whose task runs at once on the same thread
    /// (undeferred, or executed at a task scheduling point): the new task becomes current,
    /// generated and scheduled by the previous current task.
    pub fn explicit_task(&mut self, thread: ThreadId) -> TaskId {
        let cur = self.model.threads[thread.0].current_task;
        self.explicit_task_from(cur, thread)
    }

    /// A task generated by `generator` and now executed by `thread`, in place of `thread`'s
    /// current task (its scheduling parent).
    pub fn explicit_task_from(&mut self, generator: TaskId, thread: ThreadId) -> TaskId {
        let scheduling = self.model.threads[thread.0].current_task;
        let gen = &self.model.tasks[generator.0];
        let (region, icvs) = (gen.region, gen.icvs);
        let function = self.fresh_code_addr();
        let id = TaskId(self.model.tasks.len());
        let enter_frame = 0x7d00_0000 - 0x200 * id.0 as u64;
        self.model.tasks[scheduling.0].enter_frame = enter_frame;
        self.model.tasks.push(Task {
            kind: TaskKind::Explicit,
            region,
            generating: Some(generator),
            scheduling: Some(scheduling),
            is_final: false,
            icvs,
            function,
            exit_frame: enter_frame - 0x60,
            enter_frame: 0,
            tool_data: 0x6000 + id.0 as u64,
        });
        self.model.threads[thread.0].current_task = id;
        id
    }

    /// A fresh native id in the range starting at (`pthread`, `lwp`).
    fn next_native_id(&mut self, pthread: u64, lwp: u32) -> NativeId {
        let n = self.next_native;
        self.next_native += 1;
        NativeId {
            pthread: pthread + n * 0x80_0000,
            lwp: lwp + n as u32,
        }
    }

    /// Adds a native thread that never entered OpenMP.
    pub fn foreign_thread(&mut self) -> NativeId {
        let id = self.next_native_id(0x7e00_0000_1000, 5000);
        self.model.foreign_threads.push(id);
        id
    }

    /// Adds an OpenMP thread of the pool that is in no team (its gtid follows every thread of
    /// a team; add it after them).
    pub fn idle_thread(&mut self) -> NativeId {
        let id = self.next_native_id(0x7d00_0000_1000, 6000);
        self.model.idle_threads.push(id);
        id
    }

    /// Finishes and validates the model.
    pub fn build(self) -> Result<Model, ModelError> {
        self.model.validate()?;
        Ok(self.model)
    }
}
