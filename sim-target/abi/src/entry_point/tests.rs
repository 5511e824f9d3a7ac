//! The table reproduces the lists the suite kept before it existed, exactly.

use super::*;

/// The 35 entry points of the 5.0/5.1 header, in header order.
const V5_0: &[&str] = &[
    "ompd_initialize",
    "ompd_get_api_version",
    "ompd_get_version_string",
    "ompd_finalize",
    "ompd_process_initialize",
    "ompd_device_initialize",
    "ompd_rel_address_space_handle",
    "ompd_get_omp_version",
    "ompd_get_omp_version_string",
    "ompd_get_thread_in_parallel",
    "ompd_get_thread_handle",
    "ompd_rel_thread_handle",
    "ompd_thread_handle_compare",
    "ompd_get_thread_id",
    "ompd_get_curr_parallel_handle",
    "ompd_get_enclosing_parallel_handle",
    "ompd_get_task_parallel_handle",
    "ompd_rel_parallel_handle",
    "ompd_parallel_handle_compare",
    "ompd_get_curr_task_handle",
    "ompd_get_generating_task_handle",
    "ompd_get_scheduling_task_handle",
    "ompd_get_task_in_parallel",
    "ompd_rel_task_handle",
    "ompd_task_handle_compare",
    "ompd_get_task_function",
    "ompd_get_task_frame",
    "ompd_enumerate_states",
    "ompd_get_state",
    "ompd_get_display_control_vars",
    "ompd_rel_display_control_vars",
    "ompd_enumerate_icvs",
    "ompd_get_icv_from_scope",
    "ompd_get_icv_string_from_scope",
    "ompd_get_tool_data",
];

/// The entry points 5.2 added.
const V5_2_ADDED: &[&str] = &[
    "ompd_get_device_thread_id_kinds",
    "ompd_get_device_from_thread",
];

/// The entry points of TR 2.001, in the order the report used to list them.
const TR2: &[&str] = &[
    "ompd_get_version",
    "ompd_get_version_string",
    "ompd_initialize",
    "ompd_finalize",
    "ompd_process_initialize",
    "ompd_release_address_space_handle",
    "ompd_get_threads",
    "ompd_get_thread_in_parallel",
    "ompd_get_master_thread_in_parallel",
    "ompd_release_thread_handle",
    "ompd_thread_handle_compare",
    "ompd_get_thread_handle_string_id",
    "ompd_get_top_parallel_region",
    "ompd_get_enclosing_parallel_handle",
    "ompd_get_task_parallel_handle",
    "ompd_release_parallel_handle",
    "ompd_parallel_handle_compare",
    "ompd_get_parallel_handle_string_id",
    "ompd_get_top_task_region",
    "ompd_get_generating_ancestor_task_region",
    "ompd_get_scheduling_ancestor_task_region",
    "ompd_get_implicit_task_in_parallel",
    "ompd_release_task_handle",
    "ompd_task_handle_compare",
    "ompd_get_task_handle_string_id",
    "ompd_get_num_procs",
    "ompd_get_thread_limit",
    "ompd_get_num_threads",
    "ompd_get_active_level",
    "ompd_get_parallel_function",
    "ompd_get_thread_handle",
    "ompd_get_osthread",
    "ompd_get_state",
    "ompd_get_max_threads",
    "ompd_get_thread_num",
    "ompd_in_parallel",
    "ompd_in_final",
    "ompd_get_dynamic",
    "ompd_get_nested",
    "ompd_get_max_active_levels",
    "ompd_get_schedule",
    "ompd_get_proc_bind",
    "ompd_is_implicit",
    "ompd_get_task_frame",
    "ompd_get_task_function",
    "ompd_get_display_control_vars",
    "ompd_release_display_control_vars",
];

/// The pointer arguments of each 5.0 entry point, by their `omp-tools.h` names.
const POINTER_ARGS: &[(&str, &[&str])] = &[
    ("ompd_initialize", &["callbacks"]),
    ("ompd_get_api_version", &["version"]),
    ("ompd_get_version_string", &["string"]),
    ("ompd_finalize", &[]),
    ("ompd_process_initialize", &["context", "handle"]),
    (
        "ompd_device_initialize",
        &["process_handle", "device_context", "id", "device_handle"],
    ),
    ("ompd_rel_address_space_handle", &["handle"]),
    ("ompd_get_omp_version", &["address_space", "omp_version"]),
    ("ompd_get_omp_version_string", &["address_space", "string"]),
    (
        "ompd_get_thread_in_parallel",
        &["parallel_handle", "thread_handle"],
    ),
    (
        "ompd_get_thread_handle",
        &["handle", "thread_id", "thread_handle"],
    ),
    ("ompd_rel_thread_handle", &["thread_handle"]),
    (
        "ompd_thread_handle_compare",
        &["thread_handle_1", "thread_handle_2", "cmp_value"],
    ),
    ("ompd_get_thread_id", &["thread_handle", "thread_id"]),
    (
        "ompd_get_curr_parallel_handle",
        &["thread_handle", "parallel_handle"],
    ),
    (
        "ompd_get_enclosing_parallel_handle",
        &["parallel_handle", "enclosing_parallel_handle"],
    ),
    (
        "ompd_get_task_parallel_handle",
        &["task_handle", "task_parallel_handle"],
    ),
    ("ompd_rel_parallel_handle", &["parallel_handle"]),
    (
        "ompd_parallel_handle_compare",
        &["parallel_handle_1", "parallel_handle_2", "cmp_value"],
    ),
    (
        "ompd_get_curr_task_handle",
        &["thread_handle", "task_handle"],
    ),
    (
        "ompd_get_generating_task_handle",
        &["task_handle", "generating_task_handle"],
    ),
    (
        "ompd_get_scheduling_task_handle",
        &["task_handle", "scheduling_task_handle"],
    ),
    (
        "ompd_get_task_in_parallel",
        &["parallel_handle", "task_handle"],
    ),
    ("ompd_rel_task_handle", &["task_handle"]),
    (
        "ompd_task_handle_compare",
        &["task_handle_1", "task_handle_2", "cmp_value"],
    ),
    ("ompd_get_task_function", &["task_handle", "entry_point"]),
    (
        "ompd_get_task_frame",
        &["task_handle", "exit_frame", "enter_frame"],
    ),
    (
        "ompd_enumerate_states",
        &[
            "address_space_handle",
            "next_state",
            "next_state_name",
            "more_enums",
        ],
    ),
    ("ompd_get_state", &["thread_handle", "state", "wait_id"]),
    (
        "ompd_get_display_control_vars",
        &["address_space_handle", "control_vars"],
    ),
    ("ompd_rel_display_control_vars", &["control_vars"]),
    (
        "ompd_enumerate_icvs",
        &["handle", "next_id", "next_icv_name", "next_scope", "more"],
    ),
    ("ompd_get_icv_from_scope", &["handle", "icv_value"]),
    ("ompd_get_icv_string_from_scope", &["handle", "icv_string"]),
    ("ompd_get_tool_data", &["handle", "value", "ptr"]),
];

fn names(g: Generation) -> Vec<&'static str> {
    g.entry_points().into_iter().map(EntryPoint::name).collect()
}

#[test]
fn names_are_unique_prefixed_and_found_again() {
    let mut seen = std::collections::HashSet::new();
    for e in EntryPoint::ALL {
        assert!(e.name().starts_with("ompd_"), "{e}");
        assert!(seen.insert(e.name()), "{e} twice");
        assert_eq!(EntryPoint::from_name(e.name()), Some(*e));
        assert_eq!(format!("ompd_{}", e.short_name()), e.name());
        assert_eq!(EntryPoint::by_short_name(e.short_name()), *e);
    }
    assert_eq!(EntryPoint::from_name("ompd_state"), None);
}

#[test]
fn the_5_0_and_5_1_lists_are_the_header_order() {
    assert_eq!(names(Generation::V5_0), V5_0);
    assert_eq!(names(Generation::V5_1), V5_0);
}

#[test]
fn the_5_2_and_6_0_lists_add_the_two_device_routines() {
    let want: Vec<&str> = V5_0.iter().chain(V5_2_ADDED).copied().collect();
    assert_eq!(names(Generation::V5_2), want);
    assert_eq!(names(Generation::V6_0), want);
}

#[test]
fn the_tr_list_has_the_same_names() {
    let mut got = names(Generation::Tr2);
    let mut want = TR2.to_vec();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want);
}

/// The routines the 2014 draft declares (`EXTERN ompd_rc_t ompd_…(` and `EXTERN int
/// ompd_enable(` in seed `001_…`), 34 of them.
const DRAFT_2014: &[&str] = &[
    "ompd_initialize",
    "ompd_get_threads",
    "ompd_get_thread_in_parallel",
    "ompd_get_innermost_parallel_region",
    "ompd_get_enclosing_parallel_handle",
    "ompd_get_top_task_region",
    "ompd_get_ancestor_task_handle",
    "ompd_get_implicit_task_in_parallel",
    "ompd_get_num_procs",
    "ompd_get_thread_limit",
    "ompd_get_num_threads",
    "ompd_get_level",
    "ompd_get_active_level",
    "ompd_get_parallel_id",
    "ompd_get_thread_handle",
    "ompd_get_osthread",
    "ompd_get_state",
    "ompd_get_max_threads",
    "ompd_get_thread_num",
    "ompd_in_parallel",
    "ompd_in_final",
    "ompd_get_dynamic",
    "ompd_get_nested",
    "ompd_get_max_active_levels",
    "ompd_get_schedule",
    "ompd_get_proc_bind",
    "ompd_get_task_frame",
    "ompd_get_task_id",
    "ompd_get_version_string",
    "ompd_get_version_compatibility",
    "ompd_get_error_string",
    "ompd_get_breakpoints",
    "ompd_display_control_vars",
    "ompd_enable",
];

#[test]
fn the_2014_draft_list_has_its_34_names() {
    let mut got = names(Generation::Draft2014);
    let mut want = DRAFT_2014.to_vec();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(want.len(), 34);
    assert_eq!(got, want);
}

#[test]
fn pointer_arguments_are_the_ones_the_null_matrix_knew() {
    assert_eq!(POINTER_ARGS.len(), V5_0.len());
    for (name, want) in POINTER_ARGS {
        let e = EntryPoint::from_name(name).expect("known");
        let got: Vec<&str> = e.pointer_args().map(|a| a.name).collect();
        assert_eq!(&got, want, "{name}");
    }
}

#[test]
fn every_routine_the_suite_calls_has_a_signature() {
    for e in EntryPoint::ALL {
        let current = e.declared_in(Generation::V6_0);
        assert_eq!(e.args().is_some(), current, "{e}");
        for a in e.pointer_args() {
            assert!(a.ty.contains('*'), "{e} {}", a.name);
        }
    }
}

#[test]
fn a_tr_name_is_a_routine_only_the_tr_declares_for_a_routine_5_0_introduced() {
    for (v5, tr, _) in crate::TR_NAMES {
        assert_eq!(v5.introduced(), Generation::V5_0, "{v5}");
        assert!(tr.declared_in(Generation::Tr2), "{tr}");
        assert!(!tr.declared_in(Generation::V5_0), "{tr}");
        assert_eq!(v5.tr_name().map(|(t, _)| t), Some(*tr));
        assert!(v5.served_in(Generation::Tr2) && !v5.declared_in(Generation::Tr2));
    }
}

#[test]
fn forms_follow_the_generations_that_changed_them() {
    use EntryPoint as E;
    let tr = Generation::Tr2;
    for e in crate::FORM_CHANGED_IN_5_0 {
        assert!(e.declared_in(tr) && e.declared_in(Generation::V5_0), "{e}");
        assert!(e.other_form_in(tr), "{e}");
    }
    assert!(!E::GetThreadHandle.other_form_in(tr));
    assert!(E::GetThreadHandle.other_form_in(Generation::Draft2014));
    // The draft's version string query already had the 5.x form.
    assert!(!E::GetVersionString.other_form_in(Generation::Draft2014));
    // A routine 5.0 introduced has no other form in TR 2.001: the TR lacks the name.
    assert!(!E::GetCurrParallelHandle.other_form_in(tr));
    assert_eq!(E::GetState.form_since(), Generation::V5_0);
}
