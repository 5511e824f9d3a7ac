//! Renumbering a model canonically, and normalizing it for an architecture.

use super::*;

impl Model {
    /// The same state with regions and tasks renumbered in a canonical order (regions by the
    /// path of primary threads from the initial region, implicit tasks by region, explicit tasks
    /// in discovery order from each thread's current task), so that two models describing the
    /// same state compare equal whatever order they were built in.
    pub fn canonical(&self) -> Model {
        let key = |r: RegionId| -> Vec<usize> {
            let mut k: Vec<usize> = self
                .region_chain(r)
                .iter()
                .map(|x| self.regions[x.0].members[0].0)
                .collect();
            k.reverse();
            k
        };
        let mut rorder: Vec<usize> = (0..self.regions.len()).collect();
        rorder.sort_by_key(|r| key(RegionId(*r)));
        let mut rmap = vec![0; self.regions.len()];
        for (new, old) in rorder.iter().enumerate() {
            rmap[*old] = new;
        }
        let torder = self.task_order(&rorder);
        let mut tmap = vec![0; self.tasks.len()];
        for (new, old) in torder.iter().enumerate() {
            tmap[*old] = new;
        }
        let rid = |r: RegionId| RegionId(rmap[r.0]);
        let tid = |t: TaskId| TaskId(tmap[t.0]);
        Model {
            threads: self
                .threads
                .iter()
                .map(|t| Thread {
                    region: rid(t.region),
                    current_task: tid(t.current_task),
                    ..t.clone()
                })
                .collect(),
            regions: rorder
                .iter()
                .map(|r| {
                    let reg = &self.regions[*r];
                    Region {
                        parent: reg.parent.map(rid),
                        implicit_tasks: reg.implicit_tasks.iter().map(|t| tid(*t)).collect(),
                        ..reg.clone()
                    }
                })
                .collect(),
            tasks: torder
                .iter()
                .map(|t| {
                    let task = &self.tasks[*t];
                    Task {
                        kind: match task.kind {
                            TaskKind::Implicit { region, index } => TaskKind::Implicit {
                                region: rid(region),
                                index,
                            },
                            TaskKind::Explicit => TaskKind::Explicit,
                        },
                        region: rid(task.region),
                        generating: task.generating.map(tid),
                        scheduling: task.scheduling.map(tid),
                        ..task.clone()
                    }
                })
                .collect(),
            ..self.clone()
        }
    }

    /// Tasks in canonical order: implicit tasks by region (`rorder`), then explicit tasks in
    /// discovery order from each thread's current task, then any left over.
    fn task_order(&self, rorder: &[usize]) -> Vec<usize> {
        let mut torder: Vec<usize> = Vec::new();
        let mut seen = vec![false; self.tasks.len()];
        fn visit(t: TaskId, torder: &mut Vec<usize>, seen: &mut [bool]) {
            if !seen[t.0] {
                seen[t.0] = true;
                torder.push(t.0);
            }
        }
        for r in rorder {
            for t in &self.regions[*r].implicit_tasks {
                visit(*t, &mut torder, &mut seen);
            }
        }
        // Depth-first over both links from each thread's current task, generating link first.
        let mut expanded = vec![false; self.tasks.len()];
        for th in &self.threads {
            let mut stack = vec![th.current_task];
            while let Some(t) = stack.pop() {
                // Implicit tasks are already numbered; their links must still be followed.
                if std::mem::replace(&mut expanded[t.0], true) {
                    continue;
                }
                visit(t, &mut torder, &mut seen);
                let task = &self.tasks[t.0];
                stack.extend(task.scheduling);
                stack.extend(task.generating);
            }
        }
        for t in 0..self.tasks.len() {
            visit(TaskId(t), &mut torder, &mut seen);
        }
        torder
    }

    /// What survives a trip through a runtime image of `arch`: pointer-sized values are truncated
    /// to the pointer width, implicit tasks run their region's function, and the outer levels of
    /// a run of nested serialized regions carry the innermost level's ICVs, flags and function
    /// (the runtime keeps only their OMPT data in memory the libraries can see).
    pub fn normalized(&self, arch: ompd_serve::arch::Arch) -> Model {
        let mask = u64::MAX >> (64 - 8 * arch.pointer as u32);
        let tid_mask = u64::MAX >> (64 - 8 * self.pthread_size(arch) as u32);
        let mut m = self.clone();
        m.globals.stacksize &= mask;
        for t in &mut m.threads {
            t.native.pthread &= tid_mask;
        }
        for t in m.foreign_threads.iter_mut().chain(&mut m.idle_threads) {
            t.pthread &= tid_mask;
        }
        for r in &mut m.regions {
            r.function &= mask;
        }
        for t in &mut m.tasks {
            t.exit_frame &= mask;
            t.enter_frame &= mask;
            t.function &= mask;
        }
        for i in 0..m.tasks.len() {
            if let TaskKind::Implicit { region, .. } = m.tasks[i].kind {
                m.tasks[i].function = m.regions[region.0].function;
            }
        }
        // Innermost region of each serialized run, found from the deepest level outwards.
        for i in (0..m.regions.len()).rev() {
            let r = RegionId(i);
            if !m.is_serialized(r) {
                continue;
            }
            let child = (i + 1..m.regions.len())
                .find(|c| m.regions[*c].parent == Some(r) && m.is_serialized(RegionId(*c)));
            if let Some(c) = child {
                // c has already taken its run's innermost values.
                let inner_task = m.tasks[m.regions[c].implicit_tasks[0].0].clone();
                m.regions[i].function = m.regions[c].function;
                let t = m.regions[i].implicit_tasks[0].0;
                m.tasks[t].icvs = inner_task.icvs;
                m.tasks[t].is_final = inner_task.is_final;
                m.tasks[t].function = inner_task.function;
            }
        }
        m
    }
}
