//! Per-vendor expectations and golden data for the OMPD conformance suite.
//!
//! The data lives beside this crate: `expectations/<vendor>.toml` holds every known finding of a
//! vendor's library, each with a reason (format: `conformance::expectations`). This crate only
//! tells the other crates where the data is.

use std::path::PathBuf;

/// The directory holding the per-vendor expectations files.
pub fn expectations_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("expectations")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_expectations_directory_exists() {
        assert!(super::expectations_dir().join("llvm.toml").is_file());
    }
}
