//! The structural invariants of a model, which the lowering relies on.

use super::*;

impl Model {
    /// Checks every structural invariant the lowering relies on.
    pub fn validate(&self) -> Result<(), ModelError> {
        let err = |m: String| Err(ModelError(m));
        if self.threads.is_empty() {
            return err("no threads".into());
        }
        if self.regions.is_empty() || self.regions[0].parent.is_some() {
            return err("region 0 must be the initial region without parent".into());
        }
        if self.regions[0].members != [ThreadId(0)] {
            return err("the initial region's team is exactly gtid 0".into());
        }
        for (i, r) in self.regions.iter().enumerate() {
            self.validate_region(i, r)?;
        }
        for g in 0..self.threads.len() {
            self.validate_thread(g)?;
        }
        for i in 0..self.tasks.len() {
            self.validate_task_links(i)?;
        }
        self.validate_vacant_gtids()
    }

    /// Region `i`: its team, parent, implicit tasks and nested regions.
    fn validate_region(&self, i: usize, r: &Region) -> Result<(), ModelError> {
        let err = |m: String| Err(ModelError(m));
        if r.members.is_empty() || r.members.len() != r.implicit_tasks.len() {
            return err(format!(
                "region {i}: members and implicit tasks differ in number"
            ));
        }
        if let Some(p) = r.parent {
            if p.0 >= i {
                return err(format!("region {i}: parent {} must come first", p.0));
            }
            if self.thread_num(p, r.members[0]).is_none() {
                return err(format!(
                    "region {i}: primary thread is not in the parent team"
                ));
            }
        } else if i != 0 {
            return err(format!("region {i} has no parent"));
        }
        if let Some(p) = r.parent {
            let gen = self
                .tasks
                .get(r.implicit_tasks[0].0)
                .and_then(|t| t.generating);
            let parent_task = self.regions[p.0].implicit_tasks.first().copied();
            if self.is_serialized(RegionId(i)) && self.is_serialized(p) && gen != parent_task {
                return err(format!(
                    "region {i}: a serialized region inside a serialized region must be \
                     encountered by the outer region's implicit task"
                ));
            }
        }
        for (n, t) in r.implicit_tasks.iter().enumerate() {
            let task = self
                .tasks
                .get(t.0)
                .ok_or_else(|| ModelError(format!("task {}", t.0)))?;
            if task.kind
                != (TaskKind::Implicit {
                    region: RegionId(i),
                    index: n,
                })
            {
                return err(format!("region {i}: implicit task {n} has the wrong kind"));
            }
        }
        let mut primaries: Vec<ThreadId> = self
            .regions
            .iter()
            .filter(|c| c.parent == Some(RegionId(i)))
            .map(|c| c.members[0])
            .collect();
        let n_children = primaries.len();
        primaries.sort();
        primaries.dedup();
        if primaries.len() != n_children {
            return err(format!(
                "region {i}: one thread forks two nested regions at once"
            ));
        }
        self.validate_teams_part(i, r)?;
        let mut seen = r.members.clone();
        seen.sort();
        seen.dedup();
        if seen.len() != r.members.len() {
            return err(format!("region {i}: a thread appears twice"));
        }
        Ok(())
    }

    /// Region `i`'s part in a teams construct: a league is forked by a thread, an initial
    /// team lies under a league and keeps at least its members.
    fn validate_teams_part(&self, i: usize, r: &Region) -> Result<(), ModelError> {
        let err = |m: &str| Err(ModelError(format!("region {i}: {m}")));
        let parent_part = r.parent.and_then(|p| self.regions[p.0].teams);
        match (r.teams, parent_part) {
            (Some(TeamsPart::League), _) if r.parent.is_none() => {
                err("a league is forked by a thread")
            }
            (Some(TeamsPart::InitialTeam { .. }), part) if part != Some(TeamsPart::League) => {
                err("an initial team's parent is no league")
            }
            (Some(TeamsPart::InitialTeam { threads }), _) if threads < r.members.len() => {
                err("an initial team keeps fewer threads than it has")
            }
            _ => Ok(()),
        }
    }

    /// Thread `g`: its region and task exist, and it is a member of every enclosing team.
    fn validate_thread(&self, g: usize) -> Result<(), ModelError> {
        let err = |m: String| Err(ModelError(m));
        let t = &self.threads[g];
        if t.region.0 >= self.regions.len() || t.current_task.0 >= self.tasks.len() {
            return err(format!("thread {g}: dangling region or task"));
        }
        let mut r = t.region;
        let mut thread = ThreadId(g);
        loop {
            if self.thread_num(r, thread).is_none() {
                return err(format!("thread {g}: not a member of region {}", r.0));
            }
            match self.regions[r.0].parent {
                Some(p) => {
                    // The thread that forked r is r's primary thread.
                    thread = self.regions[r.0].members[0];
                    r = p;
                }
                None => break,
            }
        }
        Ok(())
    }

    /// Task `i`: its generating and scheduling links exist and never loop.
    fn validate_task_links(&self, i: usize) -> Result<(), ModelError> {
        let err = |m: String| Err(ModelError(m));
        let task = &self.tasks[i];
        for (what, link) in [
            ("generating", task.generating),
            ("scheduling", task.scheduling),
        ] {
            if let Some(l) = link {
                if l.0 >= self.tasks.len() || l.0 == i {
                    return err(format!("task {i}: bad {what} link"));
                }
            }
        }
        for next in [|t: &Task| t.generating, |t: &Task| t.scheduling] {
            let mut seen = vec![false; self.tasks.len()];
            let mut cur = Some(TaskId(i));
            while let Some(c) = cur {
                if std::mem::replace(&mut seen[c.0], true) {
                    return err(format!("task {i}: cyclic parent chain"));
                }
                cur = next(&self.tasks[c.0]);
            }
        }
        Ok(())
    }

    /// Vacant gtids ascend, after the initial thread's 0 and before the last thread.
    fn validate_vacant_gtids(&self) -> Result<(), ModelError> {
        let live = self.threads.len() + self.idle_threads.len();
        let v = &self.vacant_gtids;
        let ascending = v.windows(2).all(|p| p[0] < p[1]);
        if ascending && v.iter().all(|g| *g > 0 && *g < live + v.len()) {
            return Ok(());
        }
        Err(ModelError(format!(
            "vacant gtids {v:?} must ascend, after 0 and before the last of {live} threads"
        )))
    }
}
