//! Display control variables: the `NAME=VALUE` vector of `ompd_get_display_control_vars` against
//! the runtime's displayed environment in the model, where its memory lives, and that
//! `ompd_rel_display_control_vars` gives back everything the library allocated for it.

use crate::known::Fact;
use crate::{Check, Ctx, Judge, Profile, Run, Severity, Verdict};
use ompd_abi::EntryPoint;
use ompd_loader::library::{Call, ControlVars};
use ompd_serve::callbacks;

/// Checks of this family.
pub static CHECKS: &[Check] = &[
    Check {
        at: crate::here!(),
        id: "dcv.get.well_formed",
        requirements: &["OMPD-DCV-001", "OMPD-OWN-002"],
        summary: "ok with a readable NULL-terminated vector of readable NUL-terminated NAME=VALUE strings with non-empty names",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetDisplayControlVars, EntryPoint::RelDisplayControlVars],
    since: Profile::Tr2,
        real: Some(&[]),
        run: Run::Worker(well_formed),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "dcv.get.names_match_model",
        requirements: &["OMPD-DCV-002"],
        summary: "the vector names exactly the runtime's displayed variables, in its order",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetDisplayControlVars, EntryPoint::RelDisplayControlVars],
        real: Some(&[Fact::DisplayEnv]),
        run: Run::Worker(names),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "dcv.get.values_match_model",
        requirements: &["OMPD-DCV-003"],
        summary: "every displayed variable has the runtime's value",
        severity: Severity::Should,
        entry_points: &[EntryPoint::GetDisplayControlVars, EntryPoint::RelDisplayControlVars],
        real: Some(&[Fact::DisplayEnv]),
        run: Run::Worker(values),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "dcv.get.memory_owned",
        requirements: &["OMPD-OWN-002", "OMPD-DCV-004"],
        summary: "the vector and its strings lie in alloc_memory blocks or static library memory, never in the raw heap",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetDisplayControlVars, EntryPoint::RelDisplayControlVars],
    since: Profile::Tr2,
        real: Some(&[]),
        run: Run::Worker(memory_owned),
        ..Check::TARGET
    },
    Check {
        at: crate::here!(),
        id: "dcv.rel.releases_everything",
        requirements: &["OMPD-DCV-004", "OMPD-OWN-002", "OMPD-MEM-004"],
        summary: "ompd_rel_display_control_vars returns ok and leaves no block of the vector live, with no foreign or double free",
        severity: Severity::Must,
        entry_points: &[EntryPoint::GetDisplayControlVars, EntryPoint::RelDisplayControlVars],
        real: Some(&[]),
        run: Run::Worker(releases_everything),
        ..Check::TARGET
    },
];

/// The vector of this unit's address space (released when dropped).
fn get<'l>(ctx: &Ctx<'l>) -> Result<Call<ControlVars<'l>>, Verdict> {
    let ah = ctx.aspace()?;
    let entry = EntryPoint::GetDisplayControlVars;
    if !ctx.lib.api.serves(entry) {
        return Err(Verdict::skip(format!("{entry} is not exported")));
    }
    Ok(ctx.lib.get_display_control_vars(ah))
}

/// The vector for a check that judges its content: a failed call is judged once, by
/// dcv.get.well_formed, and skips the others.
fn vector<'l>(ctx: &Ctx<'l>) -> Result<ControlVars<'l>, Verdict> {
    get(ctx)?.map_err(|e| {
        Verdict::skip(format!(
            "ompd_get_display_control_vars: {e} (judged by dcv.get.well_formed)"
        ))
    })
}

/// Splits an entry at its first `=`.
fn split(text: &str) -> Option<(&str, &str)> {
    text.split_once('=')
}

fn well_formed(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let got = match get(ctx) {
        Ok(g) => g,
        Err(v) => return v,
    };
    let mut j = Judge::new(ctx, "ok; NULL-terminated; every entry NAME=VALUE");
    match got {
        Ok(vars) => {
            j.holds();
            for (i, e) in vars.entries.iter().enumerate() {
                j.expect(split(&e.text).is_some_and(|(n, _)| !n.is_empty()), || {
                    format!("entry {i} {:?} is not NAME=VALUE", e.text)
                });
            }
        }
        Err(e) => j.fail(format!("ompd_get_display_control_vars: {e}")),
    }
    j.verdict()
}

/// The model's displayed variables and the library's entries, split into (name, value).
fn pairs(vars: &ControlVars) -> Vec<(String, String)> {
    vars.entries
        .iter()
        .map(|e| match split(&e.text) {
            Some((n, v)) => (n.to_string(), v.to_string()),
            None => (e.text.clone(), String::new()),
        })
        .collect()
}

fn names(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let vars = match vector(ctx) {
        Ok(v) => v,
        Err(v) => return v,
    };
    let want: Vec<&str> = ctx
        .model
        .globals
        .display_env
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    let mut j = Judge::new(ctx, format!("[{}]", want.join(", ")));
    let got = pairs(&vars);
    let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
    j.expect(names == want, || format!("[{}]", names.join(", ")));
    j.verdict()
}

fn values(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let vars = match vector(ctx) {
        Ok(v) => v,
        Err(v) => return v,
    };
    let mut j = Judge::new(ctx, "the runtime's value of every displayed variable");
    let got = pairs(&vars);
    for (name, want) in &ctx.model.globals.display_env {
        // A missing name is judged by dcv.get.names_match_model.
        if let Some((_, v)) = got.iter().find(|(n, _)| n == name) {
            j.expect(v == want, || format!("{name}={v:?}, model {want:?}"));
        }
    }
    j.verdict()
}

fn memory_owned(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let vars = match vector(ctx) {
        Ok(v) => v,
        Err(v) => return v,
    };
    let mut j = Judge::new(ctx, "alloc_memory blocks or static library data");
    j.expect(vars.residence.is_tool_block_or_static(), || {
        format!("the vector lies in {:?}", vars.residence)
    });
    for (i, e) in vars.entries.iter().enumerate() {
        j.expect(e.residence.is_tool_block_or_static(), || {
            format!("entry {i} lies in {:?}", e.residence)
        });
    }
    j.verdict()
}

fn releases_everything(ctx: &mut Ctx, _: crate::Arg) -> Verdict {
    let mark = callbacks::ledger().mark();
    let vars = match vector(ctx) {
        Ok(v) => v,
        Err(v) => return v,
    };
    let mut j = Judge::new(
        ctx,
        "ok from the release, no block of the vector left live, no bad free",
    );
    match vars.release() {
        Ok(()) => {
            j.holds();
            let l = callbacks::ledger();
            let d = l.since(mark);
            for a in &d.new_live {
                j.fail(format!(
                    "a {}-byte block allocated by {} is still live after the release",
                    a.size, a.site
                ));
            }
            for v in d.violations {
                j.fail(format!("{v:?}"));
            }
        }
        Err(e) => j.fail(format!("ompd_rel_display_control_vars: {e}")),
    }
    j.verdict()
}
