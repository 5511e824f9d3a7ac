//! Compare ordering: the laws every `ompd_*_handle_compare` must obey over all the handles of a
//! kind that a scenario offers — reflexive, antisymmetric, transitive, stable, and consistent with
//! entity identity (the same entity reached by different routes compares 0, different entities
//! never do) — plus handles of the same entity from two address spaces.
//!
//! Handles are gathered through every route the interface offers for the kind and labelled with
//! the model entity they must denote; with the randomized layout the entities sit anywhere in
//! the 32- or 64-bit address space, which is where a comparator built on a truncated pointer
//! difference breaks.

use crate::known::Fact;
use crate::{Arg, Check, Ctx, Judge, Profile, Run, Severity, Verdict};
use ompd_abi::{thread_id_kind, ParallelHandle, TaskHandle, ThreadHandle};
use ompd_abi::{EntryPoint, HandleKind};
use ompd_loader::library::{watch, AspaceH, Call, Fail, Handle, Kind, Library};
use ompd_serve::callbacks::Target;

macro_rules! law {
    ($id:expr, $kind:literal, $reqs:expr, $sev:expr, $summary:literal, $run:ident) => {
        law!($id, $kind, $reqs, $sev, $summary, $run, V5_0)
    };
    ($id:expr, $kind:literal, $reqs:expr, $sev:expr, $summary:literal, $run:ident, $since:ident) => {
        Check {
            at: crate::here!(),
            id: $id,
            requirements: $reqs,
            summary: $summary,
            severity: $sev,
            entry_points: &[EntryPoint::by_short_name(concat!($kind, "_handle_compare"))],
            since: Profile::$since,
            real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
            arg: Arg::Handle(handle_kind($kind)),
            run: Run::Worker($run),
            ..Check::TARGET
        }
    };
}

/// The handle kind a row's literal names; usable in constants, where another name stops the
/// build.
const fn handle_kind(name: &str) -> HandleKind {
    match name.as_bytes() {
        b"thread" => HandleKind::Thread,
        b"parallel" => HandleKind::Parallel,
        b"task" => HandleKind::Task,
        _ => panic!("not a comparable handle kind"),
    }
}

/// The six laws for each handle kind, in one flat table.
macro_rules! laws_for {
    ($($kind:literal),*) => {
        &[$(
            law!(
                concat!("compare.", $kind, ".reflexive"),
                $kind,
                &["OMPD-CMP-001", "OMPD-CMP-003"],
                Severity::Must,
                "every handle compares 0 with itself",
                reflexive
            ),
            law!(
                concat!("compare.", $kind, ".antisymmetric"),
                $kind,
                &["OMPD-CMP-002", "OMPD-CMP-006"],
                Severity::Must,
                "swapping the arguments flips the sign of the result",
                antisymmetric
            ),
            law!(
                concat!("compare.", $kind, ".transitive"),
                $kind,
                &["OMPD-CMP-007"],
                Severity::Should,
                "the comparator is a consistent total order over every triple of handles",
                transitive
            ),
            law!(
                concat!("compare.", $kind, ".entity_identity"),
                $kind,
                &["OMPD-CMP-004", "OMPD-CMP-005", "OMPD-CMP-012"],
                Severity::Must,
                "handles to one entity reached by different routes compare 0; handles to different entities never do",
                identity,
                Tr2
            ),
            law!(
                concat!("compare.", $kind, ".stable"),
                $kind,
                &["OMPD-CMP-008"],
                Severity::Should,
                "repeated comparisons, and comparisons of freshly obtained handles to the same entities, give the same sign",
                stable
            ),
            law!(
                concat!("compare.", $kind, ".other_address_space"),
                $kind,
                &["OMPD-CMP-011", "OMPD-RC-005", "OMPD-CMP-005"],
                Severity::Must,
                "handles to the same entity from two address spaces never compare equal (ok with 0 fails in every profile); 6.0 requires ompd_rc_incompatible_handle, before it another non-ok code holds and a non-zero ok warns",
                other_aspace
            ),
        )*]
    };
}

/// Checks of this family.
pub static CHECKS: &[Check] = laws_for!("thread", "parallel", "task");

/// At most this many handles take part in the all-pairs and all-triples laws.
const MAX_POOL: usize = 16;

/// A handle with the model entity it must denote and how it was obtained.
pub(crate) struct Item<'l, K: Kind> {
    pub(crate) entity: usize,
    pub(crate) route: String,
    /// The route the consumer families judge a handle of this kind by (a thread by its pthread
    /// id, a thread's current region or task).
    pub(crate) primary: bool,
    pub(crate) h: Handle<'l, K>,
}

/// Handles of one kind, gathered through every route, with the comparator of the kind.
pub(crate) struct Pool<'l, K: Kind> {
    pub(crate) items: Vec<Item<'l, K>>,
    cmp: fn(&'l Library, &Handle<'l, K>, &Handle<'l, K>) -> Call<i32>,
    lib: &'l Library,
}

impl<'l, K: Kind> Pool<'l, K> {
    pub(crate) fn cmp(&self, a: usize, b: usize) -> Call<i32> {
        (self.cmp)(self.lib, &self.items[a].h, &self.items[b].h)
    }

    pub(crate) fn name(&self, i: usize) -> String {
        let it = &self.items[i];
        format!("{} (entity {})", it.route, it.entity)
    }

    /// Keeps at most [`MAX_POOL`] handles, preferring one per entity, then second routes.
    pub(crate) fn trim(&mut self) {
        let mut keep: Vec<usize> = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for (i, it) in self.items.iter().enumerate() {
            if seen.insert(it.entity) {
                keep.push(i);
            }
        }
        for i in 0..self.items.len() {
            if !keep.contains(&i) {
                keep.push(i);
            }
        }
        keep.truncate(MAX_POOL);
        keep.sort_unstable();
        let mut n = 0;
        self.items.retain(|_| {
            n += 1;
            keep.contains(&(n - 1))
        });
    }
}

/// The sign of a comparison.
fn sign(v: i32) -> i32 {
    v.signum()
}

/// Every handle of the kind the scenario offers, through every route.
pub(crate) fn threads<'l>(
    ctx: &Ctx<'l>,
    ah: &AspaceH<'l>,
    j: &mut Judge,
) -> Pool<'l, ThreadHandle> {
    let mut items = Vec::new();
    for t in ctx.threads() {
        match ctx.thread_handle(ah, t) {
            Ok(h) => items.push(Item {
                entity: t.0,
                route: format!("thread by pthread id of gtid {}", t.0),
                primary: true,
                h,
            }),
            Err(e) => j.fail(format!("gtid {}: ompd_get_thread_handle: {e}", t.0)),
        }
        let lwp = ctx.thread_id(t, thread_id_kind::LWP);
        if let Ok(h) = ctx.lib.get_thread_handle(ah, thread_id_kind::LWP, &lwp) {
            items.push(Item {
                entity: t.0,
                route: format!("thread by lwp id of gtid {}", t.0),
                primary: false,
                h,
            });
        }
    }
    for (r, _, ph) in ctx.regions_with_handles(ah, j) {
        for (n, member) in ctx.model.regions[r.0].members.iter().enumerate() {
            if let Ok(h) = ctx.lib.get_thread_in_parallel(&ph, n as i32) {
                items.push(Item {
                    entity: member.0,
                    route: format!("thread {n} in parallel region {}", r.0),
                    primary: false,
                    h,
                });
            }
        }
    }
    Pool {
        items,
        cmp: Library::thread_compare,
        lib: ctx.lib,
    }
}

/// Every handle of the kind the scenario offers, through every route.
pub(crate) fn parallels<'l>(
    ctx: &Ctx<'l>,
    ah: &AspaceH<'l>,
    j: &mut Judge,
) -> Pool<'l, ParallelHandle> {
    let mut items = Vec::new();
    for t in ctx.threads() {
        let r = crate::innermost_region(ctx.model, t);
        let Ok(ph) = ctx.curr_parallel(ah, t) else {
            j.fail(format!("gtid {}: no current parallel handle", t.0));
            continue;
        };
        if let (Some(parent), Ok(eh)) = (
            ctx.model.regions[r.0].parent,
            ctx.lib.get_enclosing_parallel_handle(&ph),
        ) {
            items.push(Item {
                entity: parent.0,
                route: format!("enclosing region of gtid {}'s region", t.0),
                primary: false,
                h: eh,
            });
        }
        if let Ok(task) = ctx.curr_task(ah, t) {
            if let Ok(h) = ctx.lib.get_task_parallel_handle(&task) {
                let tr = ctx.model.tasks[ctx.model.threads[t.0].current_task.0].region;
                items.push(Item {
                    entity: tr.0,
                    route: format!("region of gtid {}'s current task", t.0),
                    primary: false,
                    h,
                });
            }
        }
        items.push(Item {
            entity: r.0,
            route: format!("current region of gtid {}", t.0),
            primary: true,
            h: ph,
        });
    }
    Pool {
        items,
        cmp: Library::parallel_compare,
        lib: ctx.lib,
    }
}

/// Every handle of the kind the scenario offers, through every route.
pub(crate) fn tasks<'l>(ctx: &Ctx<'l>, ah: &AspaceH<'l>, j: &mut Judge) -> Pool<'l, TaskHandle> {
    let mut items = Vec::new();
    for t in ctx.threads() {
        let task = ctx.model.threads[t.0].current_task;
        let Ok(h) = ctx.curr_task(ah, t) else {
            j.fail(format!("gtid {}: no current task handle", t.0));
            continue;
        };
        let m = &ctx.model.tasks[task.0];
        if let (Some(g), Ok(gh)) = (m.generating, ctx.lib.get_generating_task_handle(&h)) {
            items.push(Item {
                entity: g.0,
                route: format!("generating task of gtid {}'s task", t.0),
                primary: false,
                h: gh,
            });
        }
        if let (Some(s), Ok(sh)) = (m.scheduling, ctx.lib.get_scheduling_task_handle(&h)) {
            items.push(Item {
                entity: s.0,
                route: format!("scheduling task of gtid {}'s task", t.0),
                primary: false,
                h: sh,
            });
        }
        items.push(Item {
            entity: task.0,
            route: format!("current task of gtid {}", t.0),
            primary: true,
            h,
        });
    }
    for (r, _, ph) in ctx.regions_with_handles(ah, j) {
        for (n, it) in ctx.model.regions[r.0].implicit_tasks.iter().enumerate() {
            if let Ok(h) = ctx.lib.get_task_in_parallel(&ph, n as i32) {
                items.push(Item {
                    entity: it.0,
                    route: format!("implicit task {n} of region {}", r.0),
                    primary: false,
                    h,
                });
            }
        }
    }
    Pool {
        items,
        cmp: Library::task_compare,
        lib: ctx.lib,
    }
}

/// Runs `law` on the pool of the check's handle kind. Every law but `stable` judges the
/// comparisons the unit's first law made ([`CompareTables`]); `stable` gathers its own handles
/// and compares them twice.
fn with_pool(ctx: &mut Ctx, kind: crate::Arg, expected: &str, law: Law) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let mut j = Judge::new(ctx, expected);
    let Arg::Handle(kind @ (HandleKind::Thread | HandleKind::Parallel | HandleKind::Task)) = kind
    else {
        return Verdict::harness_error(format!("a compare row gives {kind:?}"));
    };
    let tabled = match law {
        Law::Stable => match kind {
            HandleKind::Thread => stable_over(threads(ctx, ah, &mut j), &mut j),
            HandleKind::Parallel => stable_over(parallels(ctx, ah, &mut j), &mut j),
            _ => stable_over(tasks(ctx, ah, &mut j), &mut j),
        },
        _ => {
            let t = ctx.compare_tables.get(kind, || tabulate(ctx, ah, kind));
            for f in &t.failures {
                j.fail(f.clone());
            }
            if let Some(ep) = t.blocked {
                watch::block_again(ep);
            }
            t
        }
    };
    law.apply(&tabled, &mut j);
    j.verdict()
}

/// Trims `p`, tabulates it and judges `stable` over it; the table for [`Law::apply`].
fn stable_over<K: Kind>(mut p: Pool<K>, j: &mut Judge) -> std::rc::Rc<Tabled> {
    p.trim();
    let t = Tabled::of(&p);
    t.stable(&p, j);
    std::rc::Rc::new(t)
}

/// The unit's pool of `kind`, trimmed and tabulated, with what failed while gathering it.
fn tabulate(ctx: &Ctx, ah: &AspaceH, kind: HandleKind) -> Tabled {
    let mut j = Judge::new(ctx, "");
    let t = match kind {
        HandleKind::Thread => trimmed(threads(ctx, ah, &mut j)),
        HandleKind::Parallel => trimmed(parallels(ctx, ah, &mut j)),
        _ => trimmed(tasks(ctx, ah, &mut j)),
    };
    Tabled {
        failures: j.into_failures(),
        blocked: watch::blocked(),
        ..t
    }
}

fn trimmed<K: Kind>(mut p: Pool<K>) -> Tabled {
    p.trim();
    Tabled::of(&p)
}

/// The tables of a unit's compare pools, one per handle kind, made by the first law that needs
/// one (the handles are released with that check; the table keeps their names and entities).
#[derive(Default)]
pub struct CompareTables(std::cell::RefCell<Vec<(HandleKind, std::rc::Rc<Tabled>)>>);

impl CompareTables {
    fn get(&self, kind: HandleKind, make: impl FnOnce() -> Tabled) -> std::rc::Rc<Tabled> {
        if let Some((_, t)) = self.0.borrow().iter().find(|(k, _)| *k == kind) {
            return t.clone();
        }
        let t = std::rc::Rc::new(make());
        self.0.borrow_mut().push((kind, t.clone()));
        t
    }
}

/// The laws over one pool.
#[derive(Clone, Copy)]
enum Law {
    Reflexive,
    Antisymmetric,
    Transitive,
    Identity,
    Stable,
}

impl Law {
    /// Judges the law over `t`; `stable` was judged where its handles were.
    fn apply(self, t: &Tabled, j: &mut Judge) {
        match self {
            Law::Reflexive => t.reflexive(j),
            Law::Antisymmetric => t.antisymmetric(j),
            Law::Transitive => t.transitive(j),
            Law::Identity => t.identity(j),
            Law::Stable => {}
        }
        if t.names.is_empty() {
            j.fail("no handle of this kind could be obtained");
        }
    }
}

/// A pool's handles by name and entity and every comparison of them, made once; a failed call
/// is a failure of every law that needs it.
pub(crate) struct Tabled {
    names: Vec<String>,
    entities: Vec<usize>,
    table: Vec<Vec<Call<i32>>>,
    /// What failed while the pool was gathered (each law reports it).
    failures: Vec<String>,
    /// A quarantined entry point a call was refused while the table was made (each law is then
    /// not run, as the one that made it is).
    blocked: Option<EntryPoint>,
}

impl Tabled {
    fn of<K: Kind>(p: &Pool<K>) -> Tabled {
        let n = p.items.len();
        Tabled {
            names: (0..n).map(|i| p.name(i)).collect(),
            entities: p.items.iter().map(|it| it.entity).collect(),
            table: (0..n)
                .map(|a| (0..n).map(|b| p.cmp(a, b)).collect())
                .collect(),
            failures: Vec::new(),
            blocked: None,
        }
    }

    fn at(&self, a: usize, b: usize) -> Call<i32> {
        self.table[a][b].clone()
    }

    fn name(&self, i: usize) -> &str {
        &self.names[i]
    }

    /// Every handle compares equal to itself.
    fn reflexive(&self, j: &mut Judge) {
        for a in 0..self.names.len() {
            let c = self.at(a, a);
            j.expect(c == Ok(0), || {
                format!("{} with itself: {}", self.name(a), crate::describe(&c))
            });
        }
    }

    /// Swapping the operands flips the sign.
    fn antisymmetric(&self, j: &mut Judge) {
        let n = self.names.len();
        for a in 0..n {
            for b in a + 1..n {
                match (self.at(a, b), self.at(b, a)) {
                    (Ok(x), Ok(y)) => j.expect(sign(x) == -sign(y), || {
                        format!(
                            "cmp({}, {}) = {x} but cmp reversed = {y}",
                            self.name(a),
                            self.name(b)
                        )
                    }),
                    (x, y) => j.fail(format!(
                        "{} vs {}: {} / {}",
                        self.name(a),
                        self.name(b),
                        crate::describe(&x),
                        crate::describe(&y)
                    )),
                }
            }
        }
    }

    /// a ≤ b ≤ c gives a ≤ c, strictly when either step is strict; equal steps give equality.
    fn transitive(&self, j: &mut Judge) {
        let n = self.names.len();
        let s = |a: usize, b: usize| self.at(a, b).ok().map(sign);
        for a in 0..n {
            for b in 0..n {
                for c in 0..n {
                    let (Some(ab), Some(bc), Some(ac)) = (s(a, b), s(b, c), s(a, c)) else {
                        continue;
                    };
                    if ab <= 0 && bc <= 0 {
                        let want = ab.min(bc);
                        j.expect(ac == want || (want < 0 && ac < 0), || {
                            format!(
                                "{} ≤ {} ≤ {} but cmp(first, last) has sign {ac}",
                                self.name(a),
                                self.name(b),
                                self.name(c)
                            )
                        });
                    }
                }
            }
        }
    }

    /// Two handles compare equal exactly when they stand for the same entity.
    fn identity(&self, j: &mut Judge) {
        let n = self.names.len();
        for a in 0..n {
            for b in a + 1..n {
                let same = self.entities[a] == self.entities[b];
                let c = self.at(a, b);
                match c {
                    Ok(v) if (v == 0) == same => j.holds(),
                    _ => j.fail(format!(
                        "{} vs {} ({}): {}",
                        self.name(a),
                        self.name(b),
                        if same {
                            "same entity"
                        } else {
                            "different entities"
                        },
                        crate::describe(&c)
                    )),
                }
            }
        }
    }

    /// Comparing again gives the same sign (the comparisons are made a second time).
    fn stable<K: Kind>(&self, p: &Pool<K>, j: &mut Judge) {
        let n = self.names.len();
        for a in 0..n {
            for b in 0..n {
                let again = p.cmp(a, b);
                let first = self.at(a, b);
                j.expect(
                    first.as_ref().map(|v| sign(*v)) == again.as_ref().map(|v| sign(*v)),
                    || {
                        format!(
                            "{} vs {}: {} then {}",
                            self.name(a),
                            self.name(b),
                            crate::describe(&first),
                            crate::describe(&again)
                        )
                    },
                );
            }
        }
    }
}

fn reflexive(ctx: &mut Ctx, kind: crate::Arg) -> Verdict {
    with_pool(ctx, kind, "ok with 0 for every handle", Law::Reflexive)
}

fn antisymmetric(ctx: &mut Ctx, kind: crate::Arg) -> Verdict {
    with_pool(
        ctx,
        kind,
        "sign(cmp(a, b)) = -sign(cmp(b, a)) for every pair",
        Law::Antisymmetric,
    )
}

fn transitive(ctx: &mut Ctx, kind: crate::Arg) -> Verdict {
    with_pool(
        ctx,
        kind,
        "a consistent total order over every triple",
        Law::Transitive,
    )
}

fn identity(ctx: &mut Ctx, kind: crate::Arg) -> Verdict {
    with_pool(
        ctx,
        kind,
        "0 exactly when both handles denote the same model entity",
        Law::Identity,
    )
}

fn stable(ctx: &mut Ctx, kind: crate::Arg) -> Verdict {
    with_pool(
        ctx,
        kind,
        "the same sign on every comparison of a pair",
        Law::Stable,
    )
}

/// A second address space over a copy of the unit's image, or the reason there is none.
fn second_aspace<'l>(ctx: &Ctx<'l>) -> Result<(AspaceH<'l>, &'static Target), Verdict> {
    let target = ctx.fresh_target()?;
    match ctx.lib.process_initialize(target) {
        Ok(ah) => Ok((ah, target)),
        Err(e) => Err(Verdict::skip(format!(
            "a second ompd_process_initialize in one library instance failed ({e}); \
             handles from two address spaces cannot be obtained \
             (lifecycle.second_process.own_answers judges the refusal)"
        ))),
    }
}

fn other_aspace(ctx: &mut Ctx, kind: crate::Arg) -> Verdict {
    let ah = crate::aspace_or_skip!(ctx);
    let (ah2, _) = match second_aspace(ctx) {
        Ok(x) => x,
        Err(v) => return v,
    };
    let mut j = Judge::new(
        ctx,
        "non-ok (ompd_rc_incompatible_handle in 6.0), never ok with 0",
    );
    let t = sim_target::model::ThreadId(0);
    let id = ctx.thread_id(t, thread_id_kind::PTHREAD);
    let th2 = ctx
        .lib
        .get_thread_handle(&ah2, thread_id_kind::PTHREAD, &id);
    let th1 = ctx.thread_handle(ah, t);
    let (th1, th2) = match (th1, th2) {
        (Ok(a), Ok(b)) => (a, b),
        (a, b) => {
            return Verdict::skip(format!(
                "thread handles unavailable: {} / {}",
                crate::describe(&a),
                crate::describe(&b)
            ))
        }
    };
    let got = match kind {
        Arg::Handle(HandleKind::Thread) => ctx.lib.thread_compare(&th1, &th2),
        Arg::Handle(HandleKind::Parallel) => match (
            ctx.lib.get_curr_parallel_handle(&th1),
            ctx.lib.get_curr_parallel_handle(&th2),
        ) {
            (Ok(a), Ok(b)) => ctx.lib.parallel_compare(&a, &b),
            (a, _) => {
                return Verdict::skip(format!("no parallel handles: {}", crate::describe(&a)))
            }
        },
        Arg::Handle(HandleKind::Task) => match (
            ctx.lib.get_curr_task_handle(&th1),
            ctx.lib.get_curr_task_handle(&th2),
        ) {
            (Ok(a), Ok(b)) => ctx.lib.task_compare(&a, &b),
            (a, _) => return Verdict::skip(format!("no task handles: {}", crate::describe(&a))),
        },
        other => return Verdict::harness_error(format!("a compare row gives {other:?}")),
    };
    let p60 = ctx.profile >= Profile::V6_0;
    match got {
        Ok(0) => j.fail("ok with 0: handles of two address spaces compare equal"),
        Ok(v) if p60 => j.fail(format!(
            "ok with {v}: compared across address spaces, expected ompd_rc_incompatible_handle"
        )),
        // 5.x has no code for handles of two address spaces; an order other than 0 says they
        // name distinct entities, which they do (OMPD-CMP-011 leaves 5.x open).
        Ok(_) => j.holds(),
        Err(Fail::Rc(rc)) if rc == ompd_abi::Rc::INCOMPATIBLE_HANDLE => j.holds(),
        Err(Fail::Rc(_)) if !p60 => j.holds(),
        Err(e) => j.fail(format!("{e}, expected ompd_rc_incompatible_handle")),
    }
    j.verdict()
}
