//! Fetches real vendor OMPD libraries (network: Debian and PyPI mirrors) into a temporary cache.

use ompd_vendors::{self as vendors, Manifest};

fn is_sha256(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

#[test]
fn fetch_llvm19_and_intel_then_noop() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let names = ["llvm-19", "intel-2026.2"];
    let mut lines = Vec::new();
    let manifest = vendors::fetch(&cache, &names, false, &mut |l| {
        eprintln!("{l}");
        lines.push(l.to_string());
    })
    .unwrap();
    assert!(!lines.is_empty());
    assert_eq!(manifest.entries.len(), 2);
    assert_eq!(Manifest::load(&cache).unwrap(), manifest);

    let llvm = manifest.get("llvm-19").expect("llvm-19 entry");
    assert_eq!(llvm.origin, "debian:libomp-19-dev");
    assert!(!llvm.version.is_empty());
    assert!(is_sha256(&llvm.sha256), "{}", llvm.sha256);
    assert!(llvm.path.is_absolute() && llvm.path.is_file());
    assert!(llvm
        .path
        .ends_with("llvm-19/usr/lib/llvm-19/lib/libompd.so"));
    assert_eq!(vendors::sha256_file(&llvm.path).unwrap(), llvm.sha256);
    let header = llvm.header.as_ref().expect("llvm-19 header");
    assert!(header.is_file() && header.ends_with("omp-tools.h"));
    assert!(llvm.preload.is_empty() && !llvm.needs_cxx_runtime);

    let intel = manifest.get("intel-2026.2").expect("intel entry");
    assert_eq!(intel.origin, "pypi:intel-openmp==2026.2.0");
    assert_eq!(intel.version, "2026.2.0");
    assert!(is_sha256(&intel.sha256), "{}", intel.sha256);
    assert!(intel.path.is_file() && intel.path.ends_with("libiomp5_db.so"));
    let runtime = intel.runtime.as_ref().expect("intel runtime");
    assert!(runtime.is_file() && runtime.ends_with("libiomp5.so"));
    assert!(intel.needs_cxx_runtime);

    let r = vendors::resolve("intel-2026.2", &cache).unwrap();
    assert_eq!(r.path, intel.path.canonicalize().unwrap());
    assert!(r.needs_cxx_runtime);
    assert_eq!(r.version.as_deref(), Some("2026.2.0"));

    // Second fetch: nothing is downloaded and nothing changes.
    let mtime = std::fs::metadata(&llvm.path).unwrap().modified().unwrap();
    let mut lines2 = Vec::new();
    let again = vendors::fetch(&cache, &names, false, &mut |l| lines2.push(l.to_string())).unwrap();
    assert_eq!(again, manifest);
    assert_eq!(lines2.len(), 2, "{lines2:?}");
    assert!(
        lines2.iter().all(|l| l.contains("up to date")),
        "{lines2:?}"
    );
    assert_eq!(
        std::fs::metadata(&llvm.path).unwrap().modified().unwrap(),
        mtime
    );

    // Fetching one vendor keeps the others' entries.
    let one = vendors::fetch(&cache, &["llvm-19"], false, &mut |_| {}).unwrap();
    assert_eq!(one, manifest);

    // No scratch directories are left behind.
    let mut left: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, ["intel-2026.2", "llvm-19", "manifest.json"]);

    let listing = vendors::list_lines(&manifest);
    assert!(listing[0].contains("(not fetched)"));
    assert!(listing[3].starts_with("llvm-19 ") && listing[3].contains(&llvm.version));
}
