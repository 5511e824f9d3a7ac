//! The OMPD API generations, oldest first: which specification introduced (or dropped) an entry
//! point, and which one a library implements (detection itself belongs to the checks).

use crate::api_version;
use serde::{Deserialize, Serialize};

/// An OMPD API generation, oldest first (the order is the order of the specifications).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Generation {
    /// The OMPD draft of March 2014 (seed `001_…`): a debugger context on every call, the
    /// `ompd_get_version_compatibility` query, library-reported breakpoint addresses.
    #[serde(rename = "2014-draft")]
    Draft2014,
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

impl Generation {
    /// Every generation, oldest first.
    pub const ALL: [Generation; 6] = [
        Generation::Draft2014,
        Generation::Tr2,
        Generation::V5_0,
        Generation::V5_1,
        Generation::V5_2,
        Generation::V6_0,
    ];

    /// The generation of a 5.x API version value, if it is one the specifications define.
    pub fn from_api_version(v: i64) -> Option<Generation> {
        Generation::ALL
            .into_iter()
            .find(|g| g.api_version() == Some(v))
    }

    /// The `ompd_get_api_version` value of the generation (none before 5.0).
    pub fn api_version(self) -> Option<i64> {
        match self {
            Generation::Draft2014 | Generation::Tr2 => None,
            Generation::V5_0 => Some(api_version::V5_0),
            Generation::V5_1 => Some(api_version::V5_1),
            Generation::V5_2 => Some(api_version::V5_2),
            Generation::V6_0 => Some(api_version::V6_0),
        }
    }

    /// The name used in reports and skip reasons.
    pub fn name(self) -> &'static str {
        match self {
            Generation::Draft2014 => "the OMPD 2014 draft",
            Generation::Tr2 => "TR 2.001",
            Generation::V5_0 => "OpenMP 5.0",
            Generation::V5_1 => "OpenMP 5.1",
            Generation::V5_2 => "OpenMP 5.2",
            Generation::V6_0 => "OpenMP 6.0",
        }
    }

    /// The entry points the generation's header declares, in the order of the table
    /// ([`crate::EntryPoint::ALL`]).
    pub fn entry_points(self) -> Vec<crate::EntryPoint> {
        crate::EntryPoint::ALL
            .iter()
            .copied()
            .filter(|e| e.declared_in(self))
            .collect()
    }
}

impl std::fmt::Display for Generation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
