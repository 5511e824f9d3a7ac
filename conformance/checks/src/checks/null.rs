//! NULL arguments: every pointer argument of every OMPD 5.0 entry point passed as NULL, with
//! valid values for all the other arguments, and the return code judged by what the argument is:
//!
//! - an out-parameter must give `ompd_rc_bad_input` (OMPD-RC-003: MUST from 5.1; for a 5.0
//!   library another error code only warns);
//! - a handle must give `ompd_rc_stale_handle`, with `ompd_rc_bad_input` accepted as a warning
//!   (OMPD-RC-004);
//! - any other input pointer (a context, a thread id, the display-control vector) must give
//!   `ompd_rc_bad_input`.
//!
//! `ok` always fails, and so does a library that passes our NULL on to a callback (the harness's
//! callbacks refuse it, a debugger's might not); a crash is attributed by the supervisor. The
//! checks come from one table, [`CHECKS`], one row per (entry point, argument). Three pointer
//! arguments are judged elsewhere: `ompd_get_state`'s optional `wait_id`
//! (`state.get.null_wait_id`), `ompd_initialize`'s callback table
//! (`lib.initialize.null_callbacks`) and `ompd_get_api_version`'s `version`
//! (`lib.api_version.known_value`).
//!
//! The valid arguments are the unit's address space and the handles of one thread: thread 0,
//! except for the routines that need a thread whose region or task has the relative asked for
//! (enclosing region, generating or scheduling task), where the first such thread of the model
//! is used. When a library answers a NULL out-parameter or input with another error code, the
//! all-valid call is made too: if it fails with the same code the NULL cannot be told apart and
//! the check skips (for `ompd_device_initialize` on a host-only target, `unsupported` from both
//! is not-supported).

use crate::known::Fact;
use crate::{describe, Check, Ctx, Input, Profile, Property, Run, Severity, Stage, Verdict};
use ompd_abi::EntryPoint;
use ompd_abi::{thread_id_kind, Rc, Scope};
use ompd_loader::library::{AnyHandle, Call, Fail, NullArgs};
use ompd_report::Outcome;
use ompd_serve::callbacks;
use sim_target::model::ThreadId;

/// What the NULL argument is, which decides the code required.
use crate::NullClass as Class;

impl Class {
    fn want(self) -> Rc {
        match self {
            Class::Handle => Rc::STALE_HANDLE,
            Class::Out | Class::Input => Rc::BAD_INPUT,
        }
    }

    fn expected(self, profile: Profile) -> &'static str {
        match (self, profile >= Profile::V5_1) {
            (Class::Out, true) => {
                "bad_input; ok, another code or passing the NULL on to a callback fails"
            }
            (Class::Out, false) => {
                "bad_input (a SHOULD for 5.0 libraries: another error code warns); ok or passing the NULL on to a callback fails"
            }
            (Class::Handle, _) => {
                "stale_handle (bad_input warns); ok, another code or passing the NULL on to a callback fails"
            }
            (Class::Input, _) => {
                "bad_input; ok, another code or passing the NULL on to a callback fails"
            }
        }
    }
}

/// The summary's tail for a class (after "ompd_X with a NULL arg").
macro_rules! summary_tail {
    (Out) => {
        " out-parameter returns ompd_rc_bad_input, never ok and without passing the NULL on to a callback (MUST from 5.1; for 5.0 libraries another error code warns)"
    };
    (Handle) => {
        " handle returns ompd_rc_stale_handle (ompd_rc_bad_input warns), never ok"
    };
    (Input) => {
        " returns ompd_rc_bad_input, never ok and without passing the NULL on to a callback"
    };
}

/// The generation whose text states the NULL answer of `e`: TR 2.001 for the version string
/// (§4.1: "the same as ompd_get_version", OMPD-INIT-012), 5.0 for the others.
const fn since(e: EntryPoint) -> Profile {
    if matches!(e, EntryPoint::GetVersionString) {
        Profile::Tr2
    } else {
        Profile::V5_0
    }
}

/// One check of the family: `Stage "routine" "argument": Class [requirements]`, the routine
/// named without the `ompd_` prefix and the argument as in `omp-tools.h`. Each table row is its
/// own invocation, so the check records the row's line.
macro_rules! null {
    ($stage:ident $api:literal $arg:literal: $class:ident [$($req:literal),+]) => {
        Check {
            at: crate::here!(),
            id: concat!("null.", $api, ".", $arg),
            requirements: &[$($req),+],
            summary: concat!("ompd_", $api, " with a NULL ", $arg, summary_tail!($class)),
            severity: Severity::Must,
            entry_points: &[EntryPoint::by_short_name($api)],
            stage: Stage::$stage,
            since: since(EntryPoint::by_short_name($api)),
            real: Some(&[Fact::Threads, Fact::Regions, Fact::Tasks]),
            property: Property::ScenariosOnly,
            input: Input::Provoking,
            arg: crate::Arg::Null(crate::NullArg {
                class: Class::$class,
                entry: EntryPoint::by_short_name($api),
                name: $arg,
            }),
            run: Run::Worker(run),
        }
    };
}

/// Checks of this family, one per pointer argument of each OMPD 5.0 entry point.
pub static CHECKS: &[Check] = &[
    null!(Library "get_version_string" "string": Out ["OMPD-RC-003", "OMPD-INIT-012"]),
    null!(Target "process_initialize" "context": Input ["OMPD-PROC-003"]),
    null!(Target "process_initialize" "handle": Out ["OMPD-RC-003", "OMPD-PROC-003"]),
    null!(Target "device_initialize" "process_handle": Handle ["OMPD-RC-004", "OMPD-PROC-011"]),
    null!(Target "device_initialize" "device_context": Input ["OMPD-PROC-011"]),
    null!(Target "device_initialize" "id": Input ["OMPD-PROC-011"]),
    null!(Target "device_initialize" "device_handle": Out ["OMPD-RC-003", "OMPD-PROC-011"]),
    null!(Target "rel_address_space_handle" "handle": Handle ["OMPD-RC-004", "OMPD-REL-001"]),
    null!(Target "get_omp_version" "address_space": Handle ["OMPD-RC-004", "OMPD-ASP-003"]),
    null!(Target "get_omp_version" "omp_version": Out ["OMPD-RC-003", "OMPD-ASP-003"]),
    null!(Target "get_omp_version_string" "address_space": Handle ["OMPD-RC-004", "OMPD-ASP-003"]),
    null!(Target "get_omp_version_string" "string": Out ["OMPD-RC-003", "OMPD-ASP-003"]),
    null!(Target "get_thread_in_parallel" "parallel_handle": Handle ["OMPD-RC-004", "OMPD-HANDLE-THREAD-013"]),
    null!(Target "get_thread_in_parallel" "thread_handle": Out ["OMPD-RC-003", "OMPD-HANDLE-THREAD-013"]),
    null!(Target "get_thread_handle" "handle": Handle ["OMPD-RC-004", "OMPD-HANDLE-THREAD-006"]),
    null!(Target "get_thread_handle" "thread_id": Input ["OMPD-HANDLE-THREAD-006"]),
    null!(Target "get_thread_handle" "thread_handle": Out ["OMPD-RC-003", "OMPD-HANDLE-THREAD-006"]),
    null!(Target "rel_thread_handle" "thread_handle": Handle ["OMPD-RC-004", "OMPD-REL-010"]),
    null!(Target "thread_handle_compare" "thread_handle_1": Handle ["OMPD-RC-004", "OMPD-CMP-010"]),
    null!(Target "thread_handle_compare" "thread_handle_2": Handle ["OMPD-RC-004", "OMPD-CMP-010"]),
    null!(Target "thread_handle_compare" "cmp_value": Out ["OMPD-RC-003", "OMPD-CMP-010"]),
    null!(Target "get_thread_id" "thread_handle": Handle ["OMPD-RC-004", "OMPD-HANDLE-THREAD-021"]),
    null!(Target "get_thread_id" "thread_id": Out ["OMPD-RC-003", "OMPD-HANDLE-THREAD-021"]),
    null!(Target "get_curr_parallel_handle" "thread_handle": Handle ["OMPD-RC-004", "OMPD-HANDLE-PAR-008"]),
    null!(Target "get_curr_parallel_handle" "parallel_handle": Out ["OMPD-RC-003", "OMPD-HANDLE-PAR-008"]),
    null!(Target "get_enclosing_parallel_handle" "parallel_handle": Handle ["OMPD-RC-004", "OMPD-HANDLE-PAR-008"]),
    null!(Target "get_enclosing_parallel_handle" "enclosing_parallel_handle": Out ["OMPD-RC-003", "OMPD-HANDLE-PAR-008"]),
    null!(Target "get_task_parallel_handle" "task_handle": Handle ["OMPD-RC-004", "OMPD-HANDLE-PAR-008"]),
    null!(Target "get_task_parallel_handle" "task_parallel_handle": Out ["OMPD-RC-003", "OMPD-HANDLE-PAR-008"]),
    null!(Target "rel_parallel_handle" "parallel_handle": Handle ["OMPD-RC-004", "OMPD-REL-020"]),
    null!(Target "parallel_handle_compare" "parallel_handle_1": Handle ["OMPD-RC-004", "OMPD-CMP-010"]),
    null!(Target "parallel_handle_compare" "parallel_handle_2": Handle ["OMPD-RC-004", "OMPD-CMP-010"]),
    null!(Target "parallel_handle_compare" "cmp_value": Out ["OMPD-RC-003", "OMPD-CMP-010"]),
    null!(Target "get_curr_task_handle" "thread_handle": Handle ["OMPD-RC-004", "OMPD-HANDLE-TASK-007"]),
    null!(Target "get_curr_task_handle" "task_handle": Out ["OMPD-RC-003", "OMPD-HANDLE-TASK-007"]),
    null!(Target "get_generating_task_handle" "task_handle": Handle ["OMPD-RC-004", "OMPD-HANDLE-TASK-007"]),
    null!(Target "get_generating_task_handle" "generating_task_handle": Out ["OMPD-RC-003", "OMPD-HANDLE-TASK-007"]),
    null!(Target "get_scheduling_task_handle" "task_handle": Handle ["OMPD-RC-004", "OMPD-HANDLE-TASK-007"]),
    null!(Target "get_scheduling_task_handle" "scheduling_task_handle": Out ["OMPD-RC-003", "OMPD-HANDLE-TASK-007"]),
    null!(Target "get_task_in_parallel" "parallel_handle": Handle ["OMPD-RC-004", "OMPD-HANDLE-TASK-007"]),
    null!(Target "get_task_in_parallel" "task_handle": Out ["OMPD-RC-003", "OMPD-HANDLE-TASK-007"]),
    null!(Target "rel_task_handle" "task_handle": Handle ["OMPD-RC-004", "OMPD-REL-030"]),
    null!(Target "task_handle_compare" "task_handle_1": Handle ["OMPD-RC-004", "OMPD-CMP-010"]),
    null!(Target "task_handle_compare" "task_handle_2": Handle ["OMPD-RC-004", "OMPD-CMP-010"]),
    null!(Target "task_handle_compare" "cmp_value": Out ["OMPD-RC-003", "OMPD-CMP-010"]),
    null!(Target "get_task_function" "task_handle": Handle ["OMPD-RC-004", "OMPD-HANDLE-TASK-007"]),
    null!(Target "get_task_function" "entry_point": Out ["OMPD-RC-003", "OMPD-HANDLE-TASK-007"]),
    null!(Target "get_task_frame" "task_handle": Handle ["OMPD-RC-004", "OMPD-FRAME-005"]),
    null!(Target "get_task_frame" "exit_frame": Out ["OMPD-RC-003", "OMPD-FRAME-005"]),
    null!(Target "get_task_frame" "enter_frame": Out ["OMPD-RC-003", "OMPD-FRAME-005"]),
    null!(Target "enumerate_states" "address_space_handle": Handle ["OMPD-RC-004", "OMPD-STATE-007"]),
    null!(Target "enumerate_states" "next_state": Out ["OMPD-RC-003", "OMPD-STATE-007"]),
    null!(Target "enumerate_states" "next_state_name": Out ["OMPD-RC-003", "OMPD-STATE-007"]),
    null!(Target "enumerate_states" "more_enums": Out ["OMPD-RC-003", "OMPD-STATE-007"]),
    null!(Target "get_state" "thread_handle": Handle ["OMPD-RC-004", "OMPD-STATE-014"]),
    null!(Target "get_state" "state": Out ["OMPD-RC-003", "OMPD-STATE-014"]),
    null!(Target "get_display_control_vars" "address_space_handle": Handle ["OMPD-RC-004", "OMPD-DCV-006"]),
    null!(Target "get_display_control_vars" "control_vars": Out ["OMPD-RC-003", "OMPD-DCV-006"]),
    null!(Target "rel_display_control_vars" "control_vars": Input ["OMPD-DCV-006"]),
    null!(Target "enumerate_icvs" "handle": Handle ["OMPD-RC-004", "OMPD-ICV-008"]),
    null!(Target "enumerate_icvs" "next_id": Out ["OMPD-RC-003", "OMPD-ICV-008"]),
    null!(Target "enumerate_icvs" "next_icv_name": Out ["OMPD-RC-003", "OMPD-ICV-008"]),
    null!(Target "enumerate_icvs" "next_scope": Out ["OMPD-RC-003", "OMPD-ICV-008"]),
    null!(Target "enumerate_icvs" "more": Out ["OMPD-RC-003", "OMPD-ICV-008"]),
    null!(Target "get_icv_from_scope" "handle": Handle ["OMPD-RC-004", "OMPD-ICV-016"]),
    null!(Target "get_icv_from_scope" "icv_value": Out ["OMPD-RC-003", "OMPD-ICV-016"]),
    null!(Target "get_icv_string_from_scope" "handle": Handle ["OMPD-RC-004", "OMPD-ICV-023"]),
    null!(Target "get_icv_string_from_scope" "icv_string": Out ["OMPD-RC-003", "OMPD-ICV-023"]),
    null!(Target "get_tool_data" "handle": Handle ["OMPD-RC-004", "OMPD-TDATA-004"]),
    null!(Target "get_tool_data" "value": Out ["OMPD-RC-003", "OMPD-TDATA-004"]),
    null!(Target "get_tool_data" "ptr": Out ["OMPD-RC-003", "OMPD-TDATA-004"]),
];

/// One row of the table.
type Row = crate::NullArg;

fn run(ctx: &mut Ctx, arg: crate::Arg) -> Verdict {
    let crate::Arg::Null(row) = arg else {
        return Verdict::harness_error(format!("a NULL-argument row gives {arg:?}"));
    };
    if ctx.target.is_none() {
        // Library stage: the version string needs no target.
        return judge(ctx, row, &NullArgs::default());
    }
    let ah = crate::aspace_or_skip!(ctx);
    if ctx.model.threads.is_empty() {
        return Verdict::skip("the scenario has no OpenMP thread");
    }
    let t = match ctx.subject_thread(row.entry) {
        Ok(t) => t,
        // A NULL handle leaves the library nothing to look at: any thread will do.
        Err(_) if row.class == Class::Handle => ThreadId(0),
        Err(why) => {
            return Verdict::skip(format!(
            "no thread of the scenario {why}, so the all-valid call of {} has nothing to return",
            row.entry
        ))
        }
    };
    let held = ctx.thread_handles(ah, t);
    let thread_id = ctx.thread_id(t, thread_id_kind::PTHREAD);
    let icv = match row.entry {
        EntryPoint::GetIcvFromScope | EntryPoint::GetIcvStringFromScope => {
            held.answered_icv(ctx, ah, row.entry == EntryPoint::GetIcvStringFromScope)
        }
        _ => None,
    };
    let args = NullArgs {
        target: ctx.target,
        aspace: Some(ah),
        thread: held.thread.as_ref(),
        thread_id: &thread_id,
        parallel: held.parallel.as_ref(),
        task: held.task.as_ref(),
        icv,
        tool_data: held
            .thread
            .as_ref()
            .map(|h| (AnyHandle::Thread(h), Scope::THREAD)),
    };
    judge(ctx, row, &args)
}

/// Makes the NULL call of `row` and judges it.
fn judge(ctx: &Ctx, row: Row, args: &NullArgs) -> Verdict {
    let expected = row.class.expected(ctx.profile);
    let what = format!("{}({} = NULL)", row.entry, row.name);
    let mark = callbacks::ledger().mark();
    let got = ctx.lib.call_with_null(row.entry, Some(row.name), args);
    // Violations the NULL provoked are this check's finding, not the unit's contract check's.
    let provoked = callbacks::ledger().take_violations_since(mark);
    let got = match got {
        Ok(c) => c,
        Err(why) => return Verdict::skip(format!("{} is not called: {why}", row.entry)),
    };
    if !provoked.is_empty() {
        let actual = format!(
            "{what}: {}, after passing the NULL on to the tool: {:?}",
            describe(&got),
            provoked[0]
        );
        let detail = format!("{} callback contract violation(s)", provoked.len());
        return Verdict::new(Outcome::Fail, expected, actual, detail);
    }
    let rc = match got {
        Ok(()) => return Verdict::new(Outcome::Fail, expected, format!("{what}: ok"), ""),
        // The inventory checks judge what a library exports; here there is nothing to call.
        Err(Fail::Missing(n)) => return Verdict::skip(format!("{n} is not exported")),
        Err(Fail::Invalid(m)) => return Verdict::new(Outcome::Fail, expected, m, ""),
        Err(Fail::Rc(rc)) => rc,
        Err(e) => return Verdict::skip(e.to_string()), // not called
    };
    if rc == row.class.want() {
        return Verdict::new(Outcome::Pass, expected, format!("{what}: {rc}"), "");
    }
    if rc == Rc::BAD_INPUT && row.class == Class::Handle {
        let actual = format!("{what}: bad_input (the spec prefers stale_handle for a NULL handle)");
        return Verdict::new(Outcome::Warn, expected, actual, "");
    }
    let device = row.entry == EntryPoint::DeviceInitialize;
    if row.class == Class::Handle && !(device && rc == Rc::UNSUPPORTED) {
        let actual = format!("{what}: {rc}, expected {}", row.class.want());
        return Verdict::new(Outcome::Fail, expected, actual, "");
    }
    // Another error code: does the all-valid call fail the same way?
    let baseline: Option<Call<()>> = match row.entry {
        // The unit's own address space came from the all-valid call.
        EntryPoint::ProcessInitialize => ctx.setup.process_initialize.clone(),
        _ => ctx.lib.call_with_null(row.entry, None, args).ok(),
    };
    let same = matches!(&baseline, Some(Err(Fail::Rc(b))) if *b == rc);
    let base = baseline
        .as_ref()
        .map(describe)
        .unwrap_or_else(|| "not made".into());
    if device {
        if rc == Rc::UNSUPPORTED && same {
            let actual = format!(
                "{what}: unsupported, as is the all-valid call (no device on a host-only target)"
            );
            return Verdict::new(Outcome::NotSupported, expected, actual, "");
        }
        let actual = format!(
            "{what}: {rc}, expected {} (the all-valid call: {base})",
            row.class.want()
        );
        return Verdict::new(Outcome::Fail, expected, actual, "");
    }
    if same {
        return Verdict::skip(format!(
            "{what}: {rc}, which the all-valid call returns too: the NULL cannot be told apart"
        ));
    }
    let outcome = if row.class == Class::Out && ctx.profile < Profile::V5_1 {
        Outcome::Warn
    } else {
        Outcome::Fail
    };
    let actual = format!(
        "{what}: {rc}, expected {} (the all-valid call: {base})",
        row.class.want()
    );
    Verdict::new(outcome, expected, actual, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pointer arguments judged by other families.
    const ELSEWHERE: &[(EntryPoint, &str)] = &[
        (EntryPoint::Initialize, "callbacks"),
        (EntryPoint::GetApiVersion, "version"),
        (EntryPoint::GetState, "wait_id"),
    ];

    #[test]
    fn the_table_covers_every_pointer_argument_of_the_5_0_interface_once() {
        let mut want: Vec<(EntryPoint, &str)> = Vec::new();
        for e in Profile::V5_0.entry_points() {
            want.extend(
                e.pointer_args()
                    .map(|a| (e, a.name))
                    .filter(|p| !ELSEWHERE.contains(p)),
            );
        }
        let rows: Vec<Row> = CHECKS
            .iter()
            .map(|c| match c.arg {
                crate::Arg::Null(r) if r.entry.pointer_arg(r.name).is_some() => r,
                other => panic!("{}: bad row {other:?}", c.id),
            })
            .collect();
        let mut have: Vec<(EntryPoint, &str)> = rows.iter().map(|r| (r.entry, r.name)).collect();
        assert_eq!(have, want, "rows follow the header order");
        have.dedup();
        assert_eq!(have.len(), CHECKS.len());
        for (c, r) in CHECKS.iter().zip(&rows) {
            assert_eq!(c.entry_points, [r.entry], "{}", c.id);
            assert_eq!(c.id, format!("null.{}.{}", r.entry.short_name(), r.name),);
            let class_req = match r.class {
                Class::Out => Some("OMPD-RC-003"),
                Class::Handle => Some("OMPD-RC-004"),
                Class::Input => None,
            };
            if let Some(req) = class_req {
                assert!(c.requirements.contains(&req), "{}", c.id);
            }
            let library = r.entry == EntryPoint::GetVersionString;
            assert_eq!(c.stage == Stage::Library, library, "{}", c.id);
        }
    }
}
