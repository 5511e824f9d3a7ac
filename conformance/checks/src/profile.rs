//! API generation profiles: which OMPD generation a library implements (from
//! `ompd_get_api_version`, or `ompd_get_version` for TR-era libraries). The generations and the
//! entry points each one declares are `ompd_abi`'s table; detection is the checks' business.

use ompd_abi::EntryPoint;

/// An OMPD API generation, oldest first: `ompd_abi`'s [`ompd_abi::Generation`] under the name
/// the checks use.
pub use ompd_abi::Generation as Profile;

/// Detects the generation of a library from what it exports and answers: a library that
/// exports `ompd_get_version` but not `ompd_get_api_version` is TR-era; one that exports
/// neither but a routine only the 2014 draft declares (`ompd_get_version_compatibility`,
/// `ompd_get_breakpoints`, ...) is a 2014-draft library; otherwise the API version decides,
/// and an unknown or missing one falls back to the newest profile not newer than it (5.0 when
/// there is no answer at all).
pub fn detect(exported: &[EntryPoint], api: Option<i64>) -> Profile {
    let has = |e: EntryPoint| exported.contains(&e);
    if !has(EntryPoint::GetApiVersion) {
        if has(EntryPoint::GetVersion) {
            return Profile::Tr2;
        }
        if exported.iter().any(|e| e.removed() == Some(Profile::Tr2)) {
            return Profile::Draft2014;
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_follows_exports_then_version() {
        assert_eq!(
            detect(&[EntryPoint::GetVersion, EntryPoint::Initialize], None),
            Profile::Tr2
        );
        let draft = [EntryPoint::GetVersionCompatibility, EntryPoint::Initialize];
        assert_eq!(detect(&draft, None), Profile::Draft2014);
        // A 5.x export wins over a stray 2014 name.
        let mixed = [EntryPoint::GetApiVersion, EntryPoint::GetBreakpoints];
        assert_eq!(detect(&mixed, Some(201811)), Profile::V5_0);
        let five = [EntryPoint::GetApiVersion];
        assert_eq!(detect(&five, Some(201811)), Profile::V5_0);
        assert_eq!(detect(&five, Some(202111)), Profile::V5_2);
        assert_eq!(detect(&five, Some(202411)), Profile::V6_0);
        assert_eq!(detect(&five, Some(202200)), Profile::V5_2);
        assert_eq!(detect(&five, Some(1)), Profile::V5_0);
        assert_eq!(detect(&five, None), Profile::V5_0);
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
        assert!(Profile::Draft2014 < Profile::Tr2);
        assert_eq!(Profile::Draft2014.entry_points().len(), 34);
    }
}
