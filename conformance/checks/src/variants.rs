//! Which checks judge each runtime variant of the simulator ([`Variant`]): a variant's scenario
//! changes what these checks expect and nothing the others judge, so it runs only them (the
//! others would repeat their findings of the other scenarios). Stated here, by family: a family
//! is a check id's leading components (`thread.`, `fault.get_thread_handle.`).

use sim_target::model::Variant;

/// The families that judge `v`.
pub fn families(v: Variant) -> &'static [&'static str] {
    match v {
        // The thread lookup is the one path the mode changes; every other family starts from a
        // thread handle and would repeat the lookup's findings.
        Variant::ThreadLookup => &[
            "thread.",
            "fault.get_thread_handle.",
            "null.get_thread_handle.",
            "callbacks.",
        ],
        // The families that pass, return, compare or look up thread ids.
        Variant::ThreadIdWidth => &[
            "thread.",
            "compare.thread.",
            "route.thread.",
            "device.",
            "lifecycle.",
            "fault.get_thread_handle.",
            "fault.get_thread_id.",
            "null.get_thread_handle.",
            "null.get_thread_id.",
            "callbacks.",
        ],
        // The families that read the runtime's strings.
        Variant::Strings => &[
            "dcv.",
            "icv.",
            "fault.get_display_control_vars.",
            "fault.get_icv_string_from_scope.",
            "null.get_display_control_vars.",
            "null.get_icv_string_from_scope.",
            "callbacks.",
        ],
        // The families that read the self-description it changes.
        Variant::OlderSelfDescription => {
            &["aspace.", "thread.", "icv.", "state.", "dcv.", "callbacks."]
        }
        // The family that accepts every answer the text and the runtime's memory allow for
        // a teams construct's regions; the others judge a region by the model alone.
        Variant::Teams => &["teams.", "callbacks."],
    }
}

/// True when check `id` judges the runtime variant `v`.
pub fn judges(v: Variant, id: &str) -> bool {
    families(v).iter().any(|f| id.starts_with(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_named_is_a_family_of_registered_checks() {
        for v in Variant::ALL {
            for f in families(v) {
                assert!(f.ends_with('.'), "{v:?}: {f} is not a family");
                let n = crate::registry()
                    .iter()
                    .filter(|c| c.id.starts_with(f))
                    .count();
                assert!(n > 0, "{v:?}: no check is in {f}");
            }
        }
    }

    #[test]
    fn a_variant_is_judged_by_its_families_only() {
        assert!(judges(Variant::ThreadLookup, "thread.handle.by_pthread_id"));
        assert!(!judges(Variant::ThreadLookup, "state.get.matches_model"));
        assert!(judges(Variant::Strings, "dcv.get.values_match_model"));
        assert!(!judges(Variant::Strings, "thread.handle.by_pthread_id"));
    }
}
