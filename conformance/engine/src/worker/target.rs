//! A unit's target, ready for its checks: the model they judge against, the arch and layout it
//! is served with, what of it is known, and the opened real target ([`prepare`]); served to the
//! library and initialized as a debugger does ([`set_up_target`]). A simulated target's image
//! may arrive pre-lowered from the zygote that forked this worker ([`hand_over`]).

use super::{HarnessFailure, Scenario, Target, Unit};
use crate::real::{Known, OpenedTarget, RealTarget};
use ompd_checks::{Ctx, Stage};
use ompd_serve::arch::Arch;
use ompd_serve::callbacks;
use ompd_serve::source::Source;
use sim_target::image::Image;
use sim_target::layout::Policy;
use sim_target::model::Model;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Opens a real target and lifts its fixture's truth (a program that is no fixture gives a
/// model of nothing known). `env`: the fixture's environment (empty: read it from the process).
/// At a breakpoint stop (`stop`) only the stop is known: the fixture records its truth once
/// every thread arrived, and a tour stops it before and after.
fn open_real(
    target: &RealTarget,
    env: &[(String, String)],
    stop: Option<&ompd_checks::known::BpStop>,
) -> Result<(OpenedTarget, crate::real::Lifted), String> {
    let source = crate::real::open(target)?;
    if let Some(stop) = stop {
        let mut lifted = crate::real::unknown_state(&format!(
            "stopped at {} in a breakpoint tour: the fixture's truth is not judged there",
            stop.breakpoint
        ));
        lifted.known.insert(ompd_checks::known::Fact::Stop);
        lifted.known.stop = Some(stop.clone());
        return Ok((source, lifted));
    }
    // A process the harness did not start: the environment it started with is in /proc.
    let env = match (target, env.is_empty()) {
        (RealTarget::Live { pid }, true) => crate::real::start_environment(*pid),
        _ => env.to_vec(),
    };
    let mut lifted = match crate::real::recorded(&source)? {
        Some(rec) => {
            let mut lifted = crate::real::lift(&rec, &env)?;
            crate::real::read_state_words(&source, &mut lifted);
            lifted
        }
        None => crate::real::unknown_state(&format!(
            "the {} target is no fixture: its OpenMP state is not recorded",
            source.kind().name()
        )),
    };
    lifted.known.missing(
        ompd_checks::known::Fact::Stop,
        "not stopped at an OMPD breakpoint: the breakpoint tours of --live stop there",
    );
    Ok((source, lifted))
}

/// A unit's target, ready for its checks: the model they judge against, the arch and layout it
/// is served with, what of the model is known, and the opened real target.
pub(super) struct Prepared {
    pub(super) model: Model,
    pub(super) arch: Arch,
    pub(super) policy: Policy,
    pub(super) known: Known,
    pub(super) real: Option<OpenedTarget>,
    /// The simulated target's image, when it arrived pre-lowered.
    pub(super) image: Option<Image>,
}

/// Prepares `unit`'s target (a real target is opened and its truth lifted here).
pub(super) fn prepare(unit: &Unit) -> Result<Prepared, HarnessFailure> {
    let known = Known::everything();
    let empty = || {
        sim_target::model::ModelBuilder::new()
            .build()
            .expect("the empty model is valid")
    };
    match (unit.stage, &unit.target) {
        (Stage::Static, _) => Err(HarnessFailure::MalformedUnit(
            "static checks are judged from the file, never in a worker".into(),
        )),
        (Stage::Library, t) => Ok(Prepared {
            model: empty(),
            arch: t.arch(),
            policy: t.layout().unwrap_or(Policy::Natural),
            known,
            real: None,
            image: None,
        }),
        (Stage::Target, Target::Host) => Err(HarnessFailure::MalformedUnit(
            "a target-stage unit names no target".into(),
        )),
        (
            Stage::Target,
            Target::Simulated {
                scenario,
                arch,
                layout,
            },
        ) => {
            let (model, image) = match key(&unit.target).and_then(|k| taken(&k)) {
                Some((m, i)) => (m, Some(i)),
                None => (scenario.runtime_state(), None),
            };
            Ok(Prepared {
                model,
                arch: *arch,
                policy: *layout,
                known,
                real: None,
                image,
            })
        }
        (
            Stage::Target,
            Target::Real {
                target, env, stop, ..
            },
        ) => {
            let (source, lifted) = open_real(target, env, stop.as_deref())
                .map_err(HarnessFailure::TargetUnavailable)?;
            Ok(Prepared {
                model: lifted.model,
                arch: source.arch(),
                policy: Policy::Natural,
                known: lifted.known,
                real: Some(source),
                image: None,
            })
        }
    }
}

/// Serves the prepared target to the library and initializes it and the address space, as a
/// debugger does (the results go into `ctx.setup` for the checks to judge).
pub(super) fn set_up_target(
    ctx: &mut Ctx,
    prepared: &Prepared,
    image: Option<Image>,
) -> Result<(), HarnessFailure> {
    let target = match &prepared.real {
        // The target lives for the rest of the worker (libraries keep the context); the
        // worker's exit releases a live process (the kernel detaches a dead tracer's tracees,
        // which go on running).
        Some(source) => callbacks::Target::leak_source(Box::new(source.clone())),
        None => match image.map_or_else(
            || {
                crate::phases::timed(crate::phases::Phase::Lower, || {
                    sim_target::image::lower(ctx.model, ctx.arch, ctx.policy)
                })
            },
            Ok,
        ) {
            Ok(i) => callbacks::Target::leak(i),
            Err(e) => return Err(HarnessFailure::Unlowerable(e.to_string())),
        },
    };
    crate::phases::timed(crate::phases::Phase::Load, || initialize(ctx, target));
    Ok(())
}

/// Initializes the library and the address space of `target` as a debugger does, into
/// `ctx.setup`.
fn initialize(ctx: &mut Ctx, target: &'static callbacks::Target) {
    let lib = ctx.lib;
    ctx.target = Some(target);
    ctx.setup.api_version = Some(lib.get_api_version());
    ctx.setup.initialize = Some(lib.initialize_in_its_form(ctx.setup.requested_version()));
    if matches!(ctx.setup.initialize, Some(Ok(()))) {
        let seen = callbacks::ledger().events().len();
        match lib.process_initialize(target) {
            Ok(ah) => {
                ctx.aspace = Some(ah);
                ctx.setup.process_initialize = Some(Ok(()));
            }
            Err(e) => {
                ctx.setup.process_initialize = Some(Err(e));
                ctx.setup.undefined_symbols = undefined_symbols(seen);
            }
        }
    }
}

/// The symbols looked up since ledger event `seen` that the target does not define, in lookup
/// order (no fault plan is active while a target is set up, so none of them was withheld).
fn undefined_symbols(seen: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, e) in &callbacks::ledger().events()[seen..] {
        if let ompd_serve::ledger::Event::SymbolAddrLookup {
            name, found: false, ..
        } = e
        {
            if !out.contains(name) {
                out.push(name.clone());
            }
        }
    }
    out
}

/// The key a zygote prepares a target under ([`prelower`]): a simulated target of a built-in
/// scenario (its unit JSON), or a real target (the JSON of what the worker opens); none for
/// other targets (a generated or replayed model is lowered once, by its worker).
pub fn key(target: &Target) -> Option<String> {
    match target {
        Target::Simulated {
            scenario: Scenario::BuiltIn(_),
            ..
        } => serde_json::to_string(target).ok(),
        Target::Real { target, .. } => serde_json::to_string(target).ok(),
        _ => None,
    }
}

/// What a zygote prepares, before it forks, for the target whose [`key`] is `key`: a simulated
/// target's model and lowered image; for a real target, nothing to hand over, but the symbol
/// tables of the files it maps parsed into the zygote's cache, which every worker it forks
/// inherits instead of parsing them again (`live_target::elf::SymbolTable::cached`). `Err`:
/// why not (the worker then does it all itself, and reports what fails).
pub fn prelower(key: &str) -> Result<Option<(Model, Image)>, String> {
    if let Ok(real) = serde_json::from_str::<RealTarget>(key) {
        match real {
            RealTarget::Live { pid } => live_target::LiveTarget::preload_symbols(pid)
                .map_err(|e| format!("the mappings of pid {pid}: {e}"))?,
            RealTarget::Core { path } => {
                live_target::CoreTarget::preload_symbols(path).map_err(|e| e.to_string())?
            }
        };
        return Ok(None);
    }
    let target: Target = serde_json::from_str(key).map_err(|e| e.to_string())?;
    let Target::Simulated {
        scenario,
        arch,
        layout,
    } = target
    else {
        return Err("neither a simulated nor a real target".into());
    };
    let model = scenario.runtime_state();
    let image = sim_target::image::lower(&model, arch, layout).map_err(|e| e.to_string())?;
    Ok(Some((model, image)))
}

/// The keys of the targets of `unit` and of every unit after it in its batch ([`key`]), in
/// order, one for each unit that has one (a key comes again for each unit that shares it).
pub fn keys(unit: &Unit) -> Vec<String> {
    std::iter::once(unit)
        .chain(&unit.then)
        .filter_map(|u| key(&u.target))
        .collect()
}

/// A target pre-lowered before this worker was forked, with the number of this worker's units
/// still to take it.
struct Handed {
    model: Model,
    image: Image,
    uses: usize,
}

/// The targets pre-lowered before this worker was forked, by key, waiting for their units.
static HANDED: Mutex<BTreeMap<String, Handed>> = Mutex::new(BTreeMap::new());

/// Leaves the prepared target of `key` for the `uses` units of this process that have that key
/// (in a freshly forked worker).
pub fn hand_over(key: String, model: Model, image: Image, uses: usize) {
    let handed = Handed { model, image, uses };
    HANDED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, handed);
}

/// The target handed over under `key`, if there is one: the last of its units takes it, each
/// earlier one a copy (a unit's library may write to its target's memory).
fn taken(key: &str) -> Option<(Model, Image)> {
    let mut handed = HANDED.lock().unwrap_or_else(|e| e.into_inner());
    let h = handed.get_mut(key)?;
    if h.uses > 1 {
        h.uses -= 1;
        return Some((h.model.clone(), h.image.clone()));
    }
    handed.remove(key).map(|h| (h.model, h.image))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn simulated(scenario: Scenario) -> Target {
        Target::Simulated {
            scenario,
            arch: Arch::ILP32_BE,
            layout: Policy::Packed,
        }
    }

    #[test]
    fn only_built_in_scenarios_are_pre_lowered_and_only_their_own_units_take_them_each_its_own() {
        let built_in = simulated(Scenario::built_in("nested-tasks").unwrap());
        let k = key(&built_in).expect("a built-in scenario has a key");
        let generated = simulated(Scenario::model("generated", built_in_model()));
        assert_eq!(key(&generated), None);
        assert_eq!(key(&Target::Host), None);
        let (model, image) = prelower(&k)
            .unwrap()
            .expect("a simulated target is lowered");
        assert_eq!(model, built_in_model());
        hand_over(k.clone(), model, image, 2);
        assert!(taken("another key").is_none(), "a mismatch takes nothing");
        let (first, mut image) = taken(&k).expect("the first of two units takes a copy");
        assert_eq!(first, built_in_model());
        let at = image.symbols["__kmp_threads"];
        let before = image.memory.read(at, 1).unwrap()[0];
        image.memory.write(at, &[!before]).unwrap();
        let (_, last) = taken(&k).expect("the last unit takes the target itself");
        assert_eq!(
            last.memory.read(at, 1).unwrap(),
            [before],
            "a unit's copy is its own"
        );
        assert!(
            taken(&k).is_none(),
            "taken by as many units as were handed it"
        );
    }

    #[test]
    fn a_real_target_is_prepared_by_reading_its_module_symbols_and_hands_nothing_over() {
        let real = |target| Target::Real {
            target,
            info: Default::default(),
            env: Vec::new(),
            stop: None,
        };
        let own = key(&real(RealTarget::Live {
            pid: std::process::id() as i32,
        }))
        .expect("a real target has a key");
        assert!(
            matches!(prelower(&own), Ok(None)),
            "read, nothing handed over"
        );
        let gone = key(&real(RealTarget::Core {
            path: "/no/such/core".into(),
        }))
        .unwrap();
        let why = prelower(&gone).unwrap_err();
        assert!(why.contains("/no/such/core"), "{why}");
    }

    fn built_in_model() -> Model {
        Scenario::built_in("nested-tasks").unwrap().runtime_state()
    }
}
