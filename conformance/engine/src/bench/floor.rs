//! The bench's floor: fresh instances per second of an OMPD library that does nothing
//! (`c/empty_ompd.c`, compiled on first need), started exactly as a vendor library's are. What a
//! real library costs beyond it is the library's own work; the harness cannot go below it.

use ompd_vendors::Resolved;
use std::path::PathBuf;

/// The empty library's source.
const SOURCE: &str = include_str!("../../c/empty_ompd.c");

/// The empty library's file name.
const FILE: &str = "libompd_empty.so";

/// The empty library, built under the temporary directory, as a library to run.
pub fn empty_library() -> Result<Resolved, String> {
    let root = std::env::temp_dir().join("ompd-bench-floor");
    let path: PathBuf =
        crate::cshared::build(&root, FILE, SOURCE, &[], "the bench's empty library")?;
    Ok(Resolved {
        name: "empty".into(),
        path,
        preload: Vec::new(),
        needs_cxx_runtime: false,
        version: None,
    })
}
