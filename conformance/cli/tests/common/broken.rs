//! Staging the deliberately broken OMPD libraries of `c-fixtures` (`c/broken_ompd.c`) for a run:
//! each forwards to an inner vendor library that it finds in its own directory.

use c_fixtures::Fixture;
use ompd_vendors as vendors;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The vendor library every fixture forwards to: `llvm-14` (its build has no stack protector,
/// its DT_NEEDED is complete, and it is a Debian package that CI fetches anyway).
pub const INNER: &str = "llvm-14";

/// The path of the inner vendor library, fetched once if needed.
pub fn inner_library() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let cache = vendors::default_cache_dir();
        vendors::fetch(&cache, &[INNER], false, &mut |_| {}).expect("the inner library fetches");
        vendors::resolve(INNER, &cache)
            .expect("the inner library resolves")
            .path
    })
}

/// Copies `fixture` into a fresh directory beside `libompd_inner.so` (a link to the inner
/// library): the directory (kept alive by the caller) and the copy's path. A copy, because the
/// harness canonicalizes the path and the fixture finds its inner library where it was loaded
/// from; under the target directory, not /tmp, which may be mounted noexec.
pub fn stage(fixture: &Fixture) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("broken-fixture-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("temporary directory");
    let lib = dir
        .path()
        .join(format!("libompd_broken_{}.so", fixture.name));
    std::fs::copy(fixture.path, &lib).expect("copy the fixture");
    std::os::unix::fs::symlink(inner_library(), dir.path().join(c_fixtures::INNER_LIBRARY))
        .expect("link the inner library");
    (dir, lib)
}
