//! Round trip: reading a lowered image gives back the model, for every architecture and policy.

use ompd_serve::arch::Arch;
use proptest::prelude::*;
use sim_target::image::{lower, read};
use sim_target::layout::Policy;
use sim_target::{model, strategy};

/// The JSON paths where two values differ (at most a few), for readable failures.
fn diff(a: &serde_json::Value, b: &serde_json::Value, path: &str, out: &mut Vec<String>) {
    use serde_json::Value;
    if out.len() >= 6 {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                diff(
                    v,
                    y.get(k).unwrap_or(&Value::Null),
                    &format!("{path}.{k}"),
                    out,
                );
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                diff(v, w, &format!("{path}[{i}]"), out);
            }
        }
        _ if a != b => out.push(format!("{path}: read {a}, model {b}")),
        _ => {}
    }
}

fn round_trip(m: &model::Model, arch: Arch, policy: Policy) {
    let img = lower(m, arch, policy).unwrap_or_else(|e| panic!("{arch} {policy}: {e}"));
    let back = read(&img).unwrap_or_else(|e| panic!("{arch} {policy}: {e}"));
    let (got, want) = (back.canonical(), m.normalized(arch).canonical());
    if got != want {
        let mut out = Vec::new();
        let (g, w) = (
            serde_json::to_value(&got).unwrap(),
            serde_json::to_value(&want).unwrap(),
        );
        diff(&g, &w, "", &mut out);
        panic!("{arch} {policy}: round trip differs:\n{}", out.join("\n"));
    }
}

#[test]
fn built_in_scenarios_round_trip_everywhere() {
    let named = model::known_names().filter(|n| !model::scenario_names().any(|d| d == *n));
    let extra: Vec<_> = named.filter_map(model::scenario).collect();
    assert!(!extra.is_empty(), "the scenarios run only when named");
    for s in model::default_scenarios().into_iter().chain(extra) {
        for arch in Arch::ALL {
            for policy in [
                Policy::Natural,
                Policy::Packed,
                Policy::Random(1),
                Policy::Random(0xdead_beef),
                Policy::Intel2026_2,
                Policy::Far,
            ] {
                if policy.supports(arch) {
                    round_trip(&s.model, arch, policy);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn generated_models_round_trip(m in strategy::model(), (arch, policy) in strategy::arch().prop_flat_map(|a| (Just(a), strategy::policy(a)))) {
        round_trip(&m, arch, policy);
    }
}

#[test]
fn the_generator_covers_nesting_serialization_and_task_trees() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut serialized_runs, mut deep_levels, mut deep_tasks) = (0, 0, 0);
    for _ in 0..256 {
        let m = strategy::model().new_tree(&mut runner).unwrap().current();
        let r = (0..m.regions.len()).map(model::RegionId);
        if r.clone().any(|r| {
            m.is_serialized(r) && m.regions[r.0].parent.is_some_and(|p| m.is_serialized(p))
        }) {
            serialized_runs += 1;
        }
        if r.clone().any(|r| m.level(r) >= 3) {
            deep_levels += 1;
        }
        if (0..m.tasks.len()).any(|t| m.generating_chain(model::TaskId(t)).len() >= 4) {
            deep_tasks += 1;
        }
    }
    assert!(
        serialized_runs > 10,
        "{serialized_runs} models with nested serialized regions"
    );
    assert!(deep_levels > 20, "{deep_levels} models 3 levels deep");
    assert!(
        deep_tasks > 20,
        "{deep_tasks} models with 4-deep task chains"
    );
}

#[test]
fn a_runtime_without_ompt_describes_no_tool_data() {
    let m = model::scenario("no-ompt").unwrap().model;
    assert!(!m.ompt_support);
    let img = sim_target::image::lower(
        &m,
        ompd_serve::arch::Arch::LP64_LE,
        sim_target::layout::Policy::Natural,
    )
    .unwrap();
    assert!(img.symbol(sim_target::layout::TOOL_DATA_PROBE).is_none());
    assert!(img
        .symbol("ompd_access__ompt_team_info_t__parallel_data")
        .is_none());
    assert!(
        img.symbol("ompd_sizeof__ompt_data_t").is_some(),
        "the frames' type stays"
    );
    assert!(img
        .symbol("ompd_access__ompt_frame_t__exit_frame")
        .is_some());
}

#[test]
fn an_older_runtime_publishes_the_older_self_description() {
    let m = model::scenario("older-runtime").unwrap().model;
    assert!(m.older_description);
    let img = sim_target::image::lower(
        &m,
        ompd_serve::arch::Arch::ILP32_BE,
        sim_target::layout::Policy::Random(7),
    )
    .unwrap();
    for gone in [
        "ompd_state",
        "ompd_env_block_size",
        "ompd_sizeof__int",
        "ompd_sizeof____kmp_gtid",
        "ompd_access__kmp_internal_control_t__thread_limit",
        "ompd_access__kmp_nested_nthreads_t__nth",
        "ompd_sizeof__kmp_nested_proc_bind_t",
    ] {
        assert!(img.symbol(gone).is_none(), "{gone}");
    }
    for kept in [
        "ompd_env_block",
        "__kmp_nested_nth",
        "ompd_sizeof__kmp_taskdata_t",
        "ompd_access__kmp_internal_control_t__nproc",
        "ompd_sizeof____kmp_avail_proc",
    ] {
        assert!(img.symbol(kept).is_some(), "{kept}");
    }
}

#[test]
fn thread_ids_of_the_other_width_are_laid_out_served_and_read_back() {
    use ompd_serve::source::Source;
    let m = model::scenario("thread-id-width").unwrap().model;
    for (arch, width) in [(Arch::ILP32_BE, 8usize), (Arch::LP64_LE, 4)] {
        for policy in [Policy::Natural, Policy::Packed, Policy::Far] {
            let img = lower(&m, arch, policy).unwrap();
            let word = |n: &str| img.memory.read(img.symbol(n).unwrap(), 8).unwrap().to_vec();
            assert_eq!(
                arch.decode(&word("ompd_sizeof__kmp_thread_t")),
                width as u64
            );
            assert_eq!(img.pthread_size(), width as u64);
            let id = img.thread_id_bytes(0, 0).unwrap();
            assert_eq!((id.len(), img.find_thread(0, &id)), (width, Some(0)));
            assert_eq!(
                read(&img).unwrap().canonical(),
                m.normalized(arch).canonical()
            );
        }
    }
}
