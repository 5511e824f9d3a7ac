//! The two populations of generated cases ([`Population`]): the cases with the layouts drawn
//! with them, and the first of the same cases placed at the address extremes, each judged,
//! shrunk and reported on its own.

use super::{case, PropertyOptions, FAR_SCENARIO, SCENARIO};
use ompd_serve::arch::Arch;
use proptest::prelude::*;
use sim_target::layout::Policy;
use sim_target::model::Model;

/// By default the far population is the first 1/`FAR_SHARE` of the cases (`--full`: all): one
/// wave of the default 1 024. Far placement is fixed by the order structures are laid out in,
/// so the defects it shows (compare results truncated to 32 bits, pointers above 2 GiB read
/// sign-extended) show in almost every case with two threads or two regions.
pub const FAR_SHARE: u32 = 32;

/// The far population's failing checks shrink for at most 1/`FAR_SHRINK_SHARE` of the steps the
/// drawn population's do (`--shrink-iters`): its reproducers are smaller for less, and the whole
/// run grows by little.
pub const FAR_SHRINK_SHARE: u32 = 4;

/// The cases of the far population a run of `cases` generated cases judges.
pub fn far_cases(cases: u32, full: bool) -> u32 {
    if full {
        cases
    } else {
        cases.div_ceil(FAR_SHARE)
    }
}

/// A population of generated cases, judged and reported on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Population {
    /// Each case with the layout drawn with it (natural, packed, random, Intel's).
    Drawn,
    /// The same cases (same models, same archs) placed at the address extremes
    /// ([`Policy::Far`]): the layout is the last draw, so no other case changes.
    Far,
}

impl Population {
    /// Both, in the order they run.
    pub const ALL: [Population; 2] = [Population::Drawn, Population::Far];

    /// The scenario name of its results.
    pub fn scenario(self) -> &'static str {
        match self {
            Population::Drawn => SCENARIO,
            Population::Far => FAR_SCENARIO,
        }
    }

    /// How many cases it judges.
    pub(super) fn cases(self, popts: &PropertyOptions) -> u32 {
        match self {
            Population::Drawn => popts.cases,
            Population::Far => popts.far_cases,
        }
    }

    /// What one of its cases and several are called in a result.
    pub(super) fn nouns(self) -> (&'static str, &'static str) {
        match self {
            Population::Drawn => ("generated case", "generated cases"),
            Population::Far => ("far-placed generated case", "far-placed generated cases"),
        }
    }

    /// The shrink steps each of its failing checks is allowed.
    pub(crate) fn shrink_iters(self, popts: &PropertyOptions) -> u32 {
        match self {
            Population::Drawn => popts.max_shrink_iters,
            Population::Far => popts.max_shrink_iters.div_ceil(FAR_SHRINK_SHARE),
        }
    }

    /// The layout its summing-up results are reported against.
    pub(super) fn layout(self) -> &'static str {
        match self {
            Population::Drawn => "*",
            Population::Far => "far",
        }
    }
}

/// A generated case of population `pop`: the far population replaces the drawn layout, after
/// every draw, so case `i` of both has the same model and arch.
pub(super) fn case_of(pop: Population) -> BoxedStrategy<(Model, Arch, Policy)> {
    match pop {
        Population::Drawn => case().boxed(),
        Population::Far => case().prop_map(|(m, a, _)| (m, a, Policy::Far)).boxed(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_far_population_is_a_wave_of_the_cases_or_all_of_them() {
        assert_eq!(far_cases(1024, false), 32);
        let popts = PropertyOptions::default();
        assert_eq!(Population::Far.shrink_iters(&popts), 32);
        assert_eq!(Population::Drawn.shrink_iters(&popts), 128);
        assert_eq!(far_cases(1024, true), 1024);
        assert_eq!(
            far_cases(1, false),
            1,
            "a run of one case places it far too"
        );
        assert_eq!(far_cases(0, false), 0);
    }
}
