//! Per-vendor expectations and golden data for the OMPD conformance suite.
//!
//! The data lives beside this crate: `expectations/<vendor>.toml` holds every known finding of a
//! vendor's library, each with a reason (format: `conformance::expectations`). This crate only
//! tells the other crates where the data is.

use std::path::PathBuf;

/// The requirement ids of the conformance checklist, one per line: `id<TAB>level<TAB>text`
/// (lines starting with `#` are comments). Checks cite these ids.
pub const REQUIREMENTS_TSV: &str = include_str!("../requirements.tsv");

/// The directory holding the per-vendor expectations files.
pub fn expectations_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("expectations")
}

/// The directory holding the golden snapshots, one `<library>.txt` per vendor library
/// (format: `conformance::snapshot`).
pub fn snapshots_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("snapshots")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_expectations_directory_exists() {
        assert!(super::expectations_dir().join("llvm.toml").is_file());
    }

    #[test]
    fn every_requirement_line_has_three_fields() {
        for l in super::REQUIREMENTS_TSV
            .lines()
            .filter(|l| !l.starts_with('#'))
        {
            assert_eq!(l.split('\t').count(), 3, "{l}");
            assert!(l.starts_with("OMPD-"), "{l}");
        }
    }
}
