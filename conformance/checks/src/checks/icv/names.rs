//! The ICV names each profile's ICV table requires a library to enumerate (OMPD-ICV-005): the
//! table of its OpenMP version (checklist §6.1), with the OMPD-specific names 5.0 and 5.1 ask
//! for. Whether 5.2 and 6.0 still require the `ompd-` names the text does not say (AMBIG-12),
//! so for them those names are accepted, never required.

use crate::Profile;

/// The ICV table of OpenMP 5.0 (§2.3).
const TABLE_5_0: &[&str] = &[
    "dyn-var",
    "nthreads-var",
    "run-sched-var",
    "def-sched-var",
    "bind-var",
    "stacksize-var",
    "wait-policy-var",
    "thread-limit-var",
    "max-active-levels-var",
    "active-levels-var",
    "levels-var",
    "place-partition-var",
    "cancel-var",
    "display-affinity-var",
    "affinity-format-var",
    "default-device-var",
    "target-offload-var",
    "max-task-priority-var",
    "tool-var",
    "tool-libraries-var",
    "debug-var",
    "def-allocator-var",
];

/// The OMPD-specific names 5.0 requires (§5.5.9.1, Table 5.2).
const OMPD_5_0: &[&str] = &[
    "ompd-num-procs-var",
    "ompd-thread-num-var",
    "ompd-final-var",
    "ompd-implicit-var",
    "ompd-team-size-var",
];

/// What OpenMP 5.1's table adds.
const ADDED_5_1: &[&str] = &[
    "tool-verbose-init-var",
    "num-procs-var",
    "thread-num-var",
    "final-task-var",
    "implicit-task-var",
    "team-size-var",
    "nteams-var",
    "teams-thread-limit-var",
];

/// The `ompd-` forms 5.1 requires of five of its ICVs.
const OMPD_5_1: &[&str] = &[
    "ompd-num-procs-var",
    "ompd-thread-num-var",
    "ompd-final-task-var",
    "ompd-implicit-task-var",
    "ompd-team-size-var",
];

/// What OpenMP 5.2's table drops, and what it adds (explicit-task-var, the opposite sense of
/// implicit-task-var).
const DROPPED_5_2: &[&str] = &["def-sched-var", "implicit-task-var"];
const ADDED_5_2: &[&str] = &["explicit-task-var"];

/// What OpenMP 6.0's table adds.
pub const ADDED_6_0: &[&str] = &[
    "available-devices-var",
    "device-num-var",
    "free-agent-thread-limit-var",
    "free-agent-var",
    "league-size-var",
    "num-devices-var",
    "place-assignment-var",
    "structured-thread-limit-var",
    "team-generator-var",
    "team-num-var",
];

/// The names a library of profile `p` must enumerate (none for a profile without ICV
/// enumeration).
pub fn required(p: Profile) -> Vec<&'static str> {
    let v5_1 = || TABLE_5_0.iter().chain(ADDED_5_1);
    let v5_2 = || v5_1().filter(|n| !DROPPED_5_2.contains(n)).chain(ADDED_5_2);
    let names: Vec<&&str> = match p {
        Profile::Draft2014 | Profile::Tr2 => vec![],
        Profile::V5_0 => TABLE_5_0.iter().chain(OMPD_5_0).collect(),
        Profile::V5_1 => v5_1().chain(OMPD_5_1).collect(),
        Profile::V5_2 => v5_2().collect(),
        Profile::V6_0 => v5_2().chain(ADDED_6_0).collect(),
    };
    names.into_iter().copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_table_follows_its_version() {
        assert_eq!(required(Profile::V5_0).len(), 27);
        assert_eq!(required(Profile::V5_1).len(), 35);
        let v5_2 = required(Profile::V5_2);
        assert_eq!(v5_2.len(), 29);
        assert!(v5_2.contains(&"explicit-task-var") && !v5_2.contains(&"def-sched-var"));
        assert_eq!(required(Profile::V6_0).len(), 39);
        assert!(required(Profile::Tr2).is_empty());
    }
}
