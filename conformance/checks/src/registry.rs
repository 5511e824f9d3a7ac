//! The check registry: every family's tables in run order.

use crate::checks;
use crate::{Check, Stage};

/// Every registered check, in run order (built once).
pub fn registry() -> &'static [&'static Check] {
    static REGISTRY: std::sync::OnceLock<Vec<&'static Check>> = std::sync::OnceLock::new();
    REGISTRY.get_or_init(|| {
        // Within a stage checks run in registry order: the NULL-argument family is one table of
        // both stages; its version-string query runs with the other queries, before
        // `ompd_initialize`, and its target checks run after every other family (so a NULL that
        // upsets a library's state affects no other family). The corrupted-image and the
        // fault-injection families come last, for the same reason, before the three checks that
        // close every unit: no direct output, the address-space release, the callback contract.
        use checks::*;
        let nulls_at = |stage: Stage| null::CHECKS.iter().filter(move |c| c.stage == stage);
        let families: &[&'static [Check]] = &[
            aspace::CHECKS,
            thread::CHECKS,
            device::CHECKS,
            tr::CHECKS,
            parallel::CHECKS,
            teams::CHECKS,
            task::CHECKS,
            state::CHECKS,
            icv::CHECKS,
            task::frames::CHECKS,
            tool_data::CHECKS,
            dcv::CHECKS,
            icv::strings::CHECKS,
            compare::CHECKS,
            alike::CHECKS,
            route::CHECKS,
            lib::RUNTIME_VERSION,
            own::CHECKS,
            lifecycle::CHECKS,
            runtime::CHECKS,
            runtime_state::CHECKS,
            bp::CHECKS,
            bp_kept::CHECKS,
        ];
        r#static::CHECKS
            .iter()
            .chain(lib::QUERIES)
            .chain(tr::QUERIES)
            .chain(nulls_at(Stage::Library))
            .chain(lib::INITIALIZE)
            .chain(families.iter().flat_map(|f| f.iter()))
            .chain(nulls_at(Stage::Target))
            .chain(corrupt::CHECKS)
            .chain(layout::CHECKS)
            .chain(fault::CHECKS)
            .chain(fault::CODE_CHECKS)
            .chain(callbacks::OUTPUT)
            .chain(aspace::RELEASE)
            .chain(callbacks::CONTRACT)
            .collect()
    })
}

/// Looks up a check by id.
pub fn find(id: &str) -> Option<&'static Check> {
    // Looked up for every check a worker runs and every result the supervisor records: an
    // index, not a walk of the registry.
    type Index = std::collections::HashMap<&'static str, &'static Check>;
    static INDEX: std::sync::OnceLock<Index> = std::sync::OnceLock::new();
    INDEX
        .get_or_init(|| registry().iter().map(|c| (c.id, *c)).collect())
        .get(id)
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Profile;

    #[test]
    fn ids_are_unique_and_dotted_and_cite_requirements() {
        let all = registry();
        let mut ids: Vec<_> = all.iter().map(|c| c.id).collect();
        ids.sort();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n, "duplicate check ids");
        for c in all {
            assert!(
                c.id.split('.').count() >= 3,
                "{}: ids are family.api.property",
                c.id
            );
            assert!(!c.requirements.is_empty(), "{}: no requirement ids", c.id);
            // Rows complete themselves with `..Check::TARGET`; what is no default is their own.
            assert!(!c.summary.is_empty(), "{}: no summary", c.id);
            assert!(c.has_run(), "{}: no run function", c.id);
            assert!(
                c.requirements.iter().all(|r| r.starts_with("OMPD-")),
                "{}",
                c.id
            );
            // Static checks and the inventory read the file, runtime-interface checks the target
            // itself; every other check calls the library.
            let calls_nothing = c.stage == Stage::Static
                || ompd_report::runtime_row::is_runtime_check(c.id)
                || c.id.starts_with("lib.inventory.");
            assert_eq!(
                c.entry_points.is_empty(),
                calls_nothing,
                "{}: entry points",
                c.id
            );
        }
    }

    #[test]
    fn every_5_0_entry_point_has_a_positive_and_a_negative_check() {
        // Negative checks: the NULL matrix and the injected faults, plus the lifecycle checks
        // that probe refusals of routines the matrix leaves to them.
        let negative_lifecycle = [
            "lib.api_version.known_value",
            "lib.initialize.null_callbacks",
            "lib.initialize.unsupported_version",
            "lib.finalize.before_initialize",
        ];
        let is_negative = |c: &Check| {
            (c.input == crate::Input::Provoking && !c.id.starts_with("corrupt."))
                || negative_lifecycle.contains(&c.id)
        };
        for ep in &Profile::V5_0.entry_points() {
            let calling: Vec<&&Check> = registry()
                .iter()
                .filter(|c| c.entry_points.contains(ep))
                .collect();
            assert!(
                calling.iter().any(|c| !is_negative(c)),
                "{ep}: no positive check"
            );
            assert!(
                calling.iter().any(|c| is_negative(c)),
                "{ep}: no negative check"
            );
        }
    }
}
