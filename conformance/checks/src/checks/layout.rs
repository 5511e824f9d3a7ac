//! Layout words the runtime lacks: an LLVM-family library learns every size, offset and bit
//! mask from `ompd_sizeof__*`, `ompd_access__*` and `ompd_bitfield__*` words the runtime
//! exports, and a runtime of another build or version may lack one. For each word a fresh copy
//! of the library looks up (a copy loaded anew, so no lookup cached by an earlier call can hide
//! the missing word), the library serves the unit's image without that word: it must fail
//! cleanly, never answer `ok` with a value it made up (OMPD-CB-030).

use crate::ctx::native_id_bytes;
use crate::{Check, Ctx, Input, Judge, Property, Run, Severity, Verdict};
use ompd_abi::{thread_id_kind, EntryPoint};
use ompd_loader::library::Library;
use ompd_serve::callbacks::{self, Target};
use ompd_serve::ledger::Event;
use ompd_serve::source::TargetKind;
use sim_target::image::{Image, ServedImage};
use sim_target::model::Model;
use std::collections::BTreeMap;

/// Checks of this family.
pub static CHECKS: &[Check] = &[Check {
    at: crate::here!(),
    id: "layout.missing_word.no_made_up_answer",
    requirements: &["OMPD-CB-030", "OMPD-CB-034"],
    summary: "with any one layout word (ompd_sizeof__*, ompd_access__*, ompd_bitfield__*) it looks up missing from the runtime, a fresh copy of the library fails cleanly: every answer that was right with the word present is right or non-ok without it (the OpenMP version, each thread's pthread id back, state and current task's function)",
    severity: Severity::Must,
    entry_points: &[
        EntryPoint::ProcessInitialize,
        EntryPoint::GetOmpVersion,
        EntryPoint::GetThreadHandle,
        EntryPoint::GetThreadId,
        EntryPoint::GetState,
        EntryPoint::GetCurrTaskHandle,
        EntryPoint::GetTaskFunction,
    ],
    // Its own loop over the words, on the scenario units.
    property: Property::OwnCases,
    input: Input::Provoking,
    run: Run::Worker(missing_word),
    ..Check::TARGET
}];

/// The prefixes of the layout words.
const PREFIXES: [&str; 3] = ["ompd_sizeof__", "ompd_access__", "ompd_bitfield__"];

/// One fact's answer: the value shown, or why there is none.
type Answer = Result<String, String>;

/// What a fresh copy of the library answered over one image: each fact by name, with the
/// model's value, and the layout words it looked up.
struct Survey {
    facts: BTreeMap<String, (String, Answer)>,
    words: Vec<String>,
}

/// A fresh instance of the unit's library, initialized like the unit's.
pub(super) fn fresh_library(ctx: &Ctx) -> Result<Library, String> {
    let lib = Library::load_fresh(&ctx.lib.path).map_err(|e| e.to_string())?;
    if lib.same_instance(ctx.lib) {
        return Err("the dynamic linker gave back the instance already loaded".into());
    }
    lib.initialize_in_its_form(ctx.setup.requested_version())
        .map_err(|e| format!("ompd_initialize of the copy: {e}"))?;
    Ok(lib)
}

/// The facts a fresh copy answers over `image`, or why the copy could not be made.
fn survey(ctx: &Ctx, image: Image) -> Result<Survey, String> {
    let lib = fresh_library(ctx)?;
    let seen = callbacks::ledger().events().len();
    let target = Target::leak(image);
    let truth: Model = ctx.model.normalized(ctx.arch);
    let mut facts = BTreeMap::new();
    let mut fact = |name: String, want: String, got: Answer| {
        facts.insert(name, (want, got));
    };
    match lib.process_initialize(target) {
        Err(e) => fact("address space".into(), "ok".into(), Err(e.to_string())),
        Ok(ah) => {
            fact(
                "OpenMP version".into(),
                truth.omp_version.to_string(),
                lib.get_omp_version(&ah)
                    .map(|v| v.to_string())
                    .map_err(|e| e.to_string()),
            );
            for (i, t) in truth.threads.iter().enumerate() {
                let id = native_id_bytes(ctx.model, ctx.arch, &t.native, thread_id_kind::PTHREAD);
                let th = match lib.get_thread_handle(&ah, thread_id_kind::PTHREAD, &id) {
                    Ok(th) => th,
                    Err(e) => {
                        fact(
                            format!("thread {i}'s handle"),
                            "ok".into(),
                            Err(e.to_string()),
                        );
                        continue;
                    }
                };
                let shown = |b: Vec<u8>| format!("{b:02x?}");
                fact(
                    format!("thread {i}'s pthread id"),
                    shown(id.clone()),
                    lib.get_thread_id(&th, thread_id_kind::PTHREAD, id.len())
                        .map(shown)
                        .map_err(|e| e.to_string()),
                );
                fact(
                    format!("thread {i}'s state"),
                    format!("{:#x}", t.state),
                    lib.get_state(&th, true)
                        .map(|(s, _)| format!("{s:#x}"))
                        .map_err(|e| e.to_string()),
                );
                let function = lib
                    .get_curr_task_handle(&th)
                    .and_then(|task| lib.get_task_function(&task));
                fact(
                    format!("thread {i}'s current task's function"),
                    format!("{:#x}", truth.tasks[t.current_task.0].function),
                    function
                        .map(|a| format!("{:#x}", a.address))
                        .map_err(|e| e.to_string()),
                );
            }
        }
    }
    let words = looked_up_words(&callbacks::ledger().events()[seen..]);
    Ok(Survey { facts, words })
}

/// The layout words among the symbols looked up in `events` that the target defines, in order.
fn looked_up_words(events: &[(&'static str, Event)]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, e) in events {
        if let Event::SymbolAddrLookup {
            name, found: true, ..
        } = e
        {
            if PREFIXES.iter().any(|p| name.starts_with(p)) && !out.contains(name) {
                out.push(name.clone());
            }
        }
    }
    out
}

/// The one simulated unit of each library's default run that judges every word: a fresh
/// library per word costs a load and an initialization, which every unit would multiply without
/// reaching other code (the words are the same on every arch and layout).
const JUDGED_ON: (&str, &str, &str) = ("nested-tasks", "lp64-le", "natural");

/// The real units that judge the checks that load fresh copies: the live process of this
/// fixture, once per runtime and build (its core file and the other fixtures are the same
/// runtime, read the same way at `ompd_process_initialize`).
const JUDGED_ON_REAL: (&str, TargetKind) = ("nested", TargetKind::Live);

/// The skip of a check that loads fresh copies of the library on a unit other than
/// [`JUDGED_ON`] (a simulated target) or [`JUDGED_ON_REAL`] (a real one); `None` on those units,
/// and on every unit of a `--full` run.
pub(super) fn elsewhere(ctx: &Ctx) -> Option<Verdict> {
    if ctx.fresh_everywhere {
        return None;
    }
    let kind = ctx.target().kind();
    if kind != TargetKind::Sim {
        let (fixture, judged) = JUDGED_ON_REAL;
        return ((ctx.scenario, kind) != JUDGED_ON_REAL).then(|| {
            Verdict::skip(format!(
                "judged with fresh copies of the library on the {} `{fixture}` target of each runtime and build",
                judged.name()
            ))
        });
    }
    let here = (ctx.scenario, ctx.arch.name(), ctx.policy.to_string());
    let (s, a, l) = JUDGED_ON;
    ((here.0, here.1, here.2.as_str()) != JUDGED_ON).then(|| {
        Verdict::skip(format!(
            "judged with fresh copies of the library on the unit {s}/{a}/{l}"
        ))
    })
}

fn missing_word(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    crate::aspace_or_skip!(ctx);
    if let Some(skip) = elsewhere(ctx) {
        return skip;
    }
    let Some(image) = ctx.target().image().cloned() else {
        return Verdict::skip("the target is no simulated image: no layout word can be withheld");
    };
    let mut j = Judge::new(
        ctx,
        "every answer right with all words present is right or non-ok without any one of them",
    );
    let base = match survey(ctx, image.clone()) {
        Ok(s) => s,
        Err(why) => return Verdict::harness_error(format!("no fresh copy of the library: {why}")),
    };
    if base.words.is_empty() {
        return Verdict::skip("the library looks up no layout word on this target");
    }
    for word in &base.words {
        let mut lacking = image.clone();
        lacking.symbols.remove(word);
        let now = match survey(ctx, lacking) {
            Ok(s) => s,
            Err(why) => {
                return Verdict::harness_error(format!("no fresh copy of the library: {why}"))
            }
        };
        judge_word(&mut j, word, &base, &now);
    }
    j.verdict()
}

/// Fails each fact that held with every word present and answers `ok` with another value
/// without `word`.
fn judge_word(j: &mut Judge, word: &str, base: &Survey, now: &Survey) {
    for (name, (want, got)) in &base.facts {
        if got.as_ref() != Ok(want) {
            continue;
        }
        if let Some((_, Ok(v))) = now.facts.get(name) {
            j.expect(v == want, || {
                format!("without {word}: {name}: ok with {v}, the runtime's is {want}")
            });
        } else {
            j.holds();
        }
    }
}
