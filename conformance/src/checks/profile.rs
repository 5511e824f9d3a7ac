//! API generation profiles: which OMPD generation a library implements (from
//! `ompd_get_api_version`, or `ompd_get_version` for TR-era libraries) and the entry points each
//! generation defines, for the exported-symbol inventory and for skipping newer requirements.

use ompd_abi::{self as abi, api_version};
use serde::{Deserialize, Serialize};

/// An OMPD API generation, oldest first (the order is the order of the specifications).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Profile {
    /// OMPD Technical Report 2.001 (July 2016): `ompd_get_version`, string ids, no API version
    /// argument to `ompd_initialize`.
    #[serde(rename = "TR2.001")]
    Tr2,
    /// OpenMP 5.0 (201811).
    #[serde(rename = "5.0")]
    V5_0,
    /// OpenMP 5.1 (202011).
    #[serde(rename = "5.1")]
    V5_1,
    /// OpenMP 5.2 (202111).
    #[serde(rename = "5.2")]
    V5_2,
    /// OpenMP 6.0 (202411).
    #[serde(rename = "6.0")]
    V6_0,
}

/// The entry points of OMPD TR 2.001 (seed `000_…`, §4–§13), in the report's order.
pub const ENTRY_POINTS_TR2: &[&str] = &[
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

impl Profile {
    /// Every profile, oldest first.
    pub const ALL: [Profile; 5] = [
        Profile::Tr2,
        Profile::V5_0,
        Profile::V5_1,
        Profile::V5_2,
        Profile::V6_0,
    ];

    /// The profile of a 5.x API version value, if it is one the specifications define.
    pub fn from_api_version(v: i64) -> Option<Profile> {
        match v {
            api_version::V5_0 => Some(Profile::V5_0),
            api_version::V5_1 => Some(Profile::V5_1),
            api_version::V5_2 => Some(Profile::V5_2),
            api_version::V6_0 => Some(Profile::V6_0),
            _ => None,
        }
    }

    /// Detects the generation of a library from what it exports and answers: a library that
    /// exports `ompd_get_version` but not `ompd_get_api_version` is TR-era; otherwise the API
    /// version decides, and an unknown or missing one falls back to the newest profile not newer
    /// than it (5.0 when there is no answer at all).
    pub fn detect(exported: &[&str], api: Option<i64>) -> Profile {
        let has = |n: &str| exported.contains(&n);
        if has("ompd_get_version") && !has("ompd_get_api_version") {
            return Profile::Tr2;
        }
        match api {
            Some(v) => Profile::from_api_version(v).unwrap_or_else(|| {
                Profile::ALL
                    .iter()
                    .rev()
                    .copied()
                    .find(|p| p.api_version().is_some_and(|pv| pv <= v))
                    .unwrap_or(Profile::V5_0)
            }),
            None => Profile::V5_0,
        }
    }

    /// The `ompd_get_api_version` value of the profile (none for the TR).
    pub fn api_version(self) -> Option<i64> {
        match self {
            Profile::Tr2 => None,
            Profile::V5_0 => Some(api_version::V5_0),
            Profile::V5_1 => Some(api_version::V5_1),
            Profile::V5_2 => Some(api_version::V5_2),
            Profile::V6_0 => Some(api_version::V6_0),
        }
    }

    /// The name used in reports and skip reasons.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Tr2 => "TR 2.001",
            Profile::V5_0 => "OpenMP 5.0",
            Profile::V5_1 => "OpenMP 5.1",
            Profile::V5_2 => "OpenMP 5.2",
            Profile::V6_0 => "OpenMP 6.0",
        }
    }

    /// The entry points the profile's header declares.
    pub fn entry_points(self) -> Vec<&'static str> {
        match self {
            Profile::Tr2 => ENTRY_POINTS_TR2.to_vec(),
            Profile::V5_0 | Profile::V5_1 => abi::ENTRY_POINTS_5_0.to_vec(),
            Profile::V5_2 | Profile::V6_0 => abi::ENTRY_POINTS_5_0
                .iter()
                .chain(abi::ENTRY_POINTS_5_2_ADDED)
                .copied()
                .collect(),
        }
    }
}

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_follows_exports_then_version() {
        assert_eq!(
            Profile::detect(&["ompd_get_version", "ompd_initialize"], None),
            Profile::Tr2
        );
        let five = ["ompd_get_api_version"];
        assert_eq!(Profile::detect(&five, Some(201811)), Profile::V5_0);
        assert_eq!(Profile::detect(&five, Some(202111)), Profile::V5_2);
        assert_eq!(Profile::detect(&five, Some(202411)), Profile::V6_0);
        assert_eq!(Profile::detect(&five, Some(202200)), Profile::V5_2);
        assert_eq!(Profile::detect(&five, Some(1)), Profile::V5_0);
        assert_eq!(Profile::detect(&five, None), Profile::V5_0);
    }

    #[test]
    fn inventories_have_the_documented_sizes() {
        assert_eq!(Profile::V5_0.entry_points().len(), 35);
        assert_eq!(Profile::V5_1.entry_points().len(), 35);
        assert_eq!(Profile::V5_2.entry_points().len(), 37);
        assert_eq!(Profile::V6_0.entry_points().len(), 37);
        let tr = Profile::Tr2.entry_points();
        let mut dedup = tr.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), tr.len(), "no duplicate TR entry points");
        assert!(Profile::V5_0 < Profile::V6_0 && Profile::Tr2 < Profile::V5_0);
    }
}
