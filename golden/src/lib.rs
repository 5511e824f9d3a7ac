//! The OMPD conformance suite's data: per-vendor expectations, the requirement table, the report
//! schema and the answer snapshots.
//!
//! The data lives beside this crate: `expectations/<vendor>.toml` holds every known finding of a
//! vendor's library, each with a reason (format: `ompd_review::expectations`). This crate only
//! tells the other crates where the data is.

use std::path::PathBuf;

/// The requirement ids of the conformance checklist, one per line: `id<TAB>level<TAB>text`
/// (lines starting with `#` are comments). Checks cite these ids.
pub const REQUIREMENTS_TSV: &str = include_str!("../requirements.tsv");

/// The MUST requirements no check judges, one per line: `id<TAB>status<TAB>reason`, status
/// `unjudgeable` (reviewed: it cannot be judged from outside the library) or `open` (judgeable,
/// not yet judged). The coverage gate reads it (`ompd_review::coverage::gate`).
pub const MUST_EXCEPTIONS_TSV: &str = include_str!("../must-exceptions.tsv");

/// The per-vendor expectations files, embedded at compile time so that an installed runner has
/// them: (file name, TOML text, the judged baseline beside it), sorted by name. A test keeps the
/// list equal to the directory.
pub const EXPECTATIONS: &[(&str, &str, &str)] = &[
    (
        "intel-legacy.toml",
        include_str!("../expectations/intel-legacy.toml"),
        include_str!("../expectations/intel-legacy.judged.tsv"),
    ),
    (
        "intel.toml",
        include_str!("../expectations/intel.toml"),
        include_str!("../expectations/intel.judged.tsv"),
    ),
    (
        "llvm.toml",
        include_str!("../expectations/llvm.toml"),
        include_str!("../expectations/llvm.judged.tsv"),
    ),
    (
        "runtime.toml",
        include_str!("../expectations/runtime.toml"),
        include_str!("../expectations/runtime.judged.tsv"),
    ),
];

/// The JSON Schema of the `ompd-conformance/report/v3` document (the subset the report uses).
pub const REPORT_SCHEMA_JSON: &str = include_str!("../report-v3.schema.json");

/// The JSON Schema of the `ompd-conformance/report/v2` document, which v3 only adds fields to.
pub const REPORT_SCHEMA_V2_JSON: &str = include_str!("../report-v2.schema.json");

/// The JSON Schema of the `ompd-conformance/report/v1` document, which `compare` and `html` still
/// read.
pub const REPORT_SCHEMA_V1_JSON: &str = include_str!("../report-v1.schema.json");

/// The directory holding the per-vendor expectations files.
pub fn expectations_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("expectations")
}

/// The list of checks allowed to judge nothing on the reference builds, with reasons (a test of
/// `ompd-conform` reads and enforces it).
pub fn reference_unjudged_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("reference-unjudged.tsv")
}

/// The directory holding the answer snapshots, one `<library>.txt` per vendor library
/// (format: `ompd_engine::snapshot`).
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
    fn every_expectations_file_is_embedded() {
        let mut on_disk: Vec<String> = std::fs::read_dir(super::expectations_dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".toml"))
            .collect();
        on_disk.sort();
        let embedded: Vec<&str> = super::EXPECTATIONS.iter().map(|(n, _, _)| *n).collect();
        assert_eq!(on_disk, embedded);
        for (name, text, judged) in super::EXPECTATIONS {
            let dir = super::expectations_dir();
            let disk = std::fs::read_to_string(dir.join(name)).unwrap();
            assert_eq!(&disk, text, "{name}");
            let beside = dir.join(name.replace(".toml", ".judged.tsv"));
            assert_eq!(&std::fs::read_to_string(beside).unwrap(), judged, "{name}");
        }
    }

    #[test]
    fn every_requirement_line_has_three_fields_and_maybe_tr16() {
        for l in super::REQUIREMENTS_TSV
            .lines()
            .filter(|l| !l.starts_with('#'))
        {
            let f: Vec<&str> = l.split('\t').collect();
            assert!(f.len() == 3 || (f.len() == 4 && f[3] == "TR16"), "{l}");
            assert!(l.starts_with("OMPD-"), "{l}");
        }
    }
}
