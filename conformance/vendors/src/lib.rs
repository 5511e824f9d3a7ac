//! Known vendor OMPD libraries: fetching them into a cache without root, and resolving names.
//!
//! Each known vendor ([`known`]) is a real OMPD library shipped by a distribution: LLVM's
//! `libompd.so` from Debian packages, LLVM's from the `cmeel-libomp` wheel and Intel's
//! `libiomp5_db.so` from the `intel-openmp` wheel. [`fetch`] downloads them with the ordinary
//! clients (`apt-get download`, `pip download`) and unpacks them (`dpkg-deb -x`,
//! `python3 -m zipfile -e`) into `<cache>/<name>/`, none of which needs root. What was fetched
//! is recorded in `<cache>/manifest.json` ([`Manifest`]), and [`resolve`] turns a command-line
//! argument (a vendor name or a path) into the library file to load.

use std::fmt::Write as _;
use std::fs;
use std::io::{self, Read, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

mod fetch;
mod reference;

pub use fetch::fetch;
use fetch::{create_dir_all, file_name};
pub use reference::{
    reference, reference_dir, Reference, REFERENCES, REFERENCE_5_2, REFERENCE_DIR_ENV,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The `schema` string of manifests written by this module.
pub const SCHEMA: &str = "ompd-conformance/vendors/v1";

/// File name of the manifest inside the cache directory.
pub const MANIFEST_FILE: &str = "manifest.json";

/// Environment variable that overrides the default cache directory.
pub const CACHE_ENV: &str = "OMPD_VENDOR_CACHE";

/// Where a vendor library comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A Debian package fetched with `apt-get download` and unpacked with `dpkg-deb -x`.
    Debian {
        /// The package holding the library; its version is the vendor's version.
        package: &'static str,
        /// Further packages unpacked into the same tree (e.g. the runtime the library links to).
        extra_packages: &'static [&'static str],
    },
    /// A wheel fetched with `pip download` and unpacked with `python3 -m zipfile -e`.
    Pypi {
        /// The distribution name on PyPI.
        package: &'static str,
        /// The exact version to fetch.
        version: &'static str,
    },
}

impl Origin {
    /// The origin as recorded in [`Entry::origin`]: `debian:<package>` or
    /// `pypi:<package>==<version>`.
    pub fn describe(&self) -> String {
        match self {
            Origin::Debian { package, .. } => format!("debian:{package}"),
            Origin::Pypi { package, version } => format!("pypi:{package}=={version}"),
        }
    }
}

/// A known vendor OMPD library and where to find its files once unpacked.
///
/// All paths are relative to the vendor's extracted tree `<cache>/<name>/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VendorSpec {
    /// Short name used on the command line, e.g. `llvm-19`.
    pub name: &'static str,
    /// Where the files come from.
    pub origin: Origin,
    /// The OMPD library itself.
    pub library: &'static str,
    /// The matching (unstripped) OpenMP runtime, if the package ships one worth recording.
    pub runtime: Option<&'static str>,
    /// The `omp-tools.h` header shipped with the library, if recorded.
    pub header: Option<&'static str>,
    /// Libraries that must be loaded (`RTLD_GLOBAL`) before the OMPD library because it
    /// needs them (`DT_NEEDED`) and they are not on the default search path.
    pub preload: &'static [&'static str],
    /// The library uses the C++ runtime without declaring `libstdc++` as needed, so the
    /// loader must make it available first.
    pub needs_cxx_runtime: bool,
}

/// An Intel release from the `intel-openmp` wheel of PyPI `version`: the OMPD library and its
/// runtime sit in the wheel's data directory. `cxx`: the library needs the C++ runtime loaded
/// first (2024.2 on; the releases before declare `libstdc++` themselves).
macro_rules! intel_wheel {
    ($name:literal, $version:literal, $cxx:literal) => {
        VendorSpec {
            name: $name,
            origin: Origin::Pypi {
                package: "intel-openmp",
                version: $version,
            },
            library: concat!("intel_openmp-", $version, ".data/data/lib/libiomp5_db.so"),
            runtime: Some(concat!(
                "intel_openmp-",
                $version,
                ".data/data/lib/libiomp5.so"
            )),
            header: None,
            preload: &[],
            needs_cxx_runtime: $cxx,
        }
    };
}

const KNOWN: [VendorSpec; 12] = [
    VendorSpec {
        name: "llvm-14",
        origin: Origin::Debian {
            package: "libomp-14-dev",
            extra_packages: &[],
        },
        library: "usr/lib/llvm-14/lib/libompd.so",
        runtime: None,
        header: None,
        preload: &[],
        needs_cxx_runtime: false,
    },
    VendorSpec {
        name: "llvm-15",
        origin: Origin::Debian {
            package: "libomp-15-dev",
            extra_packages: &["libomp5-15"],
        },
        library: "usr/lib/llvm-15/lib/libompd.so",
        runtime: None,
        header: None,
        preload: &["usr/lib/llvm-15/lib/libomp.so.5"],
        needs_cxx_runtime: false,
    },
    VendorSpec {
        name: "llvm-16",
        origin: Origin::Debian {
            package: "libomp-16-dev",
            extra_packages: &["libomp5-16"],
        },
        library: "usr/lib/llvm-16/lib/libompd.so",
        runtime: None,
        header: None,
        preload: &["usr/lib/llvm-16/lib/libomp.so.5"],
        needs_cxx_runtime: false,
    },
    VendorSpec {
        name: "llvm-19",
        origin: Origin::Debian {
            package: "libomp-19-dev",
            extra_packages: &[],
        },
        library: "usr/lib/llvm-19/lib/libompd.so",
        runtime: None,
        header: Some("usr/lib/llvm-19/lib/clang/19/include/omp-tools.h"),
        preload: &[],
        needs_cxx_runtime: false,
    },
    VendorSpec {
        name: "llvm-22",
        origin: Origin::Debian {
            package: "libomp-22-dev",
            extra_packages: &[],
        },
        library: "usr/lib/llvm-22/lib/libompd.so",
        runtime: None,
        header: None,
        preload: &[],
        needs_cxx_runtime: false,
    },
    VendorSpec {
        name: "llvm-21",
        origin: Origin::Pypi {
            package: "cmeel-libomp",
            version: "21.1.8",
        },
        library: "cmeel.prefix/lib/libompd.so",
        runtime: Some("cmeel.prefix/lib/libomp.so"),
        header: None,
        preload: &[],
        needs_cxx_runtime: false,
    },
    intel_wheel!("intel-2020.0", "2020.0.133", false),
    intel_wheel!("intel-2021.4", "2021.4.0", false),
    intel_wheel!("intel-2023.2", "2023.2.4", false),
    intel_wheel!("intel-2024.2", "2024.2.1", true),
    intel_wheel!("intel-2025.0", "2025.0.0", true),
    intel_wheel!("intel-2026.2", "2026.2.0", true),
];

/// All known vendor libraries, in a fixed order (the Debian LLVM builds, then the wheels).
pub fn known() -> &'static [VendorSpec] {
    &KNOWN
}

/// The known vendor called `name`, if any.
pub fn spec(name: &str) -> Option<&'static VendorSpec> {
    KNOWN.iter().find(|s| s.name == name)
}

/// The names of all known vendors and reference builds, comma-separated (for error messages).
pub fn known_names() -> String {
    KNOWN
        .iter()
        .map(|s| s.name)
        .chain(REFERENCES.iter().map(|r| r.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Everything that can go wrong while fetching, recording or resolving vendor libraries.
#[derive(Debug, thiserror::Error)]
pub enum VendorError {
    /// A name given to [`fetch`] is not a known vendor.
    #[error("unknown vendor name: {name} (known: {known})")]
    UnknownVendor {
        /// The name asked for.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// An argument given to [`resolve`] is neither an existing file nor a known vendor.
    #[error("no such library file or known vendor name: {arg} (known: {known})")]
    NoSuchLibrary {
        /// The argument as given.
        arg: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// A reference build is not built.
    #[error("reference library {name} is not built; run `cargo build -p {package}` (or `cargo xtask conform`, which builds it)")]
    NotBuilt {
        /// The reference's name.
        name: String,
        /// The cargo package that builds it.
        package: String,
    },
    /// A known vendor has no manifest entry.
    #[error("vendor library {name} is not fetched; run `cargo xtask vendors fetch {name}`")]
    NotFetched {
        /// The vendor name.
        name: String,
    },
    /// A vendor's manifest entry names a file that no longer exists.
    #[error(
        "vendor library {name} is recorded but its file {} is missing; run `cargo xtask vendors fetch --force {name}`",
        path.display()
    )]
    FetchedFileMissing {
        /// The vendor name.
        name: String,
        /// The recorded path.
        path: PathBuf,
    },
    /// A filesystem operation failed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done, e.g. `read` or `create directory`.
        action: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The manifest file is not valid JSON of the expected shape.
    #[error("corrupt vendor manifest {}: {source}", path.display())]
    CorruptManifest {
        /// The manifest file.
        path: PathBuf,
        /// The parse error.
        source: serde_json::Error,
    },
    /// The manifest file has a schema this module does not understand.
    #[error("vendor manifest {} has schema {found:?}, expected {SCHEMA:?}", path.display())]
    WrongSchema {
        /// The manifest file.
        path: PathBuf,
        /// The schema string found in it.
        found: String,
    },
    /// A helper program could not be started at all.
    #[error("cannot run {program} (needed for {package}): {source}")]
    Spawn {
        /// The program, e.g. `apt-get`.
        program: String,
        /// The package being fetched.
        package: String,
        /// The underlying error.
        source: io::Error,
    },
    /// `apt-get download` failed.
    #[error("apt-get download {package} failed: {detail}")]
    AptDownload {
        /// The Debian package.
        package: String,
        /// The last lines of apt-get's error output.
        detail: String,
    },
    /// A helper program (`dpkg-deb`, `pip`, `python3 -m zipfile`) failed.
    #[error("`{command}` failed for {package}: {detail}")]
    Command {
        /// The command line, abbreviated.
        command: String,
        /// The package being fetched.
        package: String,
        /// The last lines of the program's error output.
        detail: String,
    },
    /// A download finished but the expected archive is not in the download directory.
    #[error("downloading {package} produced no {kind} file in {}", dir.display())]
    NoArchive {
        /// The package.
        package: String,
        /// What was expected: `.deb` or `.whl`.
        kind: &'static str,
        /// Where it was looked for.
        dir: PathBuf,
    },
    /// A file the vendor's spec promises is not in the unpacked package(s).
    #[error("vendor {name}: expected file {rel} is not in the unpacked {origin}")]
    MissingFile {
        /// The vendor name.
        name: String,
        /// The expected path, relative to the vendor's tree.
        rel: String,
        /// The origin, e.g. `debian:libomp-19-dev`.
        origin: String,
    },
}

/// One fetched vendor library, as recorded in the manifest.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Entry {
    /// The vendor name, e.g. `llvm-19`.
    pub name: String,
    /// The package version, e.g. `1:19.1.7-3~deb12u1` or `2026.2.0`.
    pub version: String,
    /// Where it came from, e.g. `debian:libomp-19-dev` or `pypi:intel-openmp==2026.2.0`.
    pub origin: String,
    /// Lower-case hex SHA-256 of the library file.
    pub sha256: String,
    /// Absolute path of the OMPD library.
    pub path: PathBuf,
    /// Absolute path of the matching OpenMP runtime, if recorded.
    #[serde(default)]
    pub runtime: Option<PathBuf>,
    /// Absolute path of the shipped `omp-tools.h`, if recorded.
    #[serde(default)]
    pub header: Option<PathBuf>,
    /// Absolute paths of libraries to load globally before the OMPD library.
    #[serde(default)]
    pub preload: Vec<PathBuf>,
    /// The library needs the C++ runtime loaded first although it does not declare it.
    #[serde(default)]
    pub needs_cxx_runtime: bool,
}

/// The record of all fetched vendor libraries in one cache directory.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Manifest {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// One entry per fetched vendor, in [`known`] order.
    pub entries: Vec<Entry>,
}

impl Default for Manifest {
    /// An empty manifest with the current [`SCHEMA`].
    fn default() -> Self {
        Manifest {
            schema: SCHEMA.to_string(),
            entries: Vec::new(),
        }
    }
}

impl Manifest {
    /// The manifest file inside `cache`.
    pub fn file(cache: &Path) -> PathBuf {
        cache.join(MANIFEST_FILE)
    }

    /// Reads `<cache>/manifest.json`; a missing file is an empty manifest.
    pub fn load(cache: &Path) -> Result<Manifest, VendorError> {
        let path = Self::file(cache);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Manifest::default()),
            Err(source) => {
                return Err(VendorError::Io {
                    action: "read vendor manifest",
                    path,
                    source,
                })
            }
        };
        let manifest: Manifest = match serde_json::from_str(&text) {
            Ok(m) => m,
            Err(source) => return Err(VendorError::CorruptManifest { path, source }),
        };
        if manifest.schema != SCHEMA {
            return Err(VendorError::WrongSchema {
                path,
                found: manifest.schema,
            });
        }
        Ok(manifest)
    }

    /// Writes `<cache>/manifest.json` atomically (temporary file in `cache`, then rename),
    /// creating `cache` if needed.
    pub fn save(&self, cache: &Path) -> Result<(), VendorError> {
        create_dir_all(cache)?;
        let path = Self::file(cache);
        let mut text = serde_json::to_string_pretty(self).map_err(|e| VendorError::Io {
            action: "serialize vendor manifest",
            path: path.clone(),
            source: io::Error::other(e),
        })?;
        text.push('\n');
        let mut tmp = tempfile::Builder::new()
            .prefix(".manifest-")
            .suffix(".json.tmp")
            .tempfile_in(cache)
            .map_err(|source| VendorError::Io {
                action: "create temporary file in",
                path: cache.to_path_buf(),
                source,
            })?;
        let write_err = |source| VendorError::Io {
            action: "write temporary manifest",
            path: path.clone(),
            source,
        };
        // Temporary files are created private; the manifest is as readable as the cache.
        tmp.as_file()
            .set_permissions(fs::Permissions::from_mode(0o644))
            .map_err(write_err)?;
        tmp.write_all(text.as_bytes()).map_err(write_err)?;
        tmp.as_file().sync_all().map_err(write_err)?;
        tmp.persist(&path).map_err(|e| VendorError::Io {
            action: "replace vendor manifest",
            path: path.clone(),
            source: e.error,
        })?;
        Ok(())
    }

    /// The entry for vendor `name`, if fetched.
    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// Adds `entry`, replacing any entry with the same name, and keeps entries in
    /// [`known`] order (unknown names last, in their previous order).
    pub fn upsert(&mut self, entry: Entry) {
        match self.entries.iter_mut().find(|e| e.name == entry.name) {
            Some(slot) => *slot = entry,
            None => self.entries.push(entry),
        }
        let rank = |name: &str| {
            KNOWN
                .iter()
                .position(|s| s.name == name)
                .unwrap_or(KNOWN.len())
        };
        self.entries.sort_by_key(|e| rank(&e.name));
    }
}

/// The default cache directory: `$OMPD_VENDOR_CACHE` if set and non-empty, else
/// `<workspace>/target/ompd-vendors`.
pub fn default_cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(CACHE_ENV) {
        if !dir.is_empty() {
            return PathBuf::from(dir);
        }
    }
    workspace_root().join("target").join("ompd-vendors")
}

/// How many directories this crate's manifest sits below the workspace root.
const DEPTH_IN_WORKSPACE: usize = 2;

/// The workspace's root directory, where `Cargo.toml`, `target/` and the role directories are.
/// The one place in the suite that knows where a crate sits in the tree; every other crate asks
/// here.
pub fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .ancestors()
        .nth(DEPTH_IN_WORKSPACE)
        .unwrap_or(manifest_dir)
        .to_path_buf()
}

/// The directory `name` beside the vendor cache (`target/NAME` by default), where the runner
/// keeps what it writes for the user (replay files, unexpected results).
pub fn beside_cache(name: &str) -> PathBuf {
    let cache = default_cache_dir();
    cache
        .parent()
        .map(|p| p.join(name))
        .unwrap_or_else(|| PathBuf::from(name))
}

/// Lower-case hex SHA-256 of the file at `path`.
pub fn sha256_file(path: &Path) -> Result<String, VendorError> {
    let io_err = |source| VendorError::Io {
        action: "read",
        path: path.to_path_buf(),
        source,
    };
    let mut file = fs::File::open(path).map_err(io_err)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_err(e)),
        };
        hasher.update(&buf[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

/// Lower-case hex SHA-256 of bytes already in memory.
pub fn sha256_bytes(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

fn hex(digest: &[u8]) -> String {
    let mut hex = String::with_capacity(64);
    for byte in digest {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// What a CLI argument naming a library resolves to.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    /// The vendor name, or the file name for a path.
    pub name: String,
    /// Canonical path of the OMPD library.
    pub path: PathBuf,
    /// Libraries to load globally before the OMPD library (canonical paths).
    pub preload: Vec<PathBuf>,
    /// The C++ runtime must be loaded first.
    pub needs_cxx_runtime: bool,
    /// The vendor's package version; `None` for a plain path.
    pub version: Option<String>,
}

/// True when `name` is a known vendor's or a reference build's name (a command line may name
/// the library by it).
pub fn is_named(name: &str) -> bool {
    spec(name).is_some() || reference(name).is_some()
}

impl Resolved {
    /// How a command line names this library so that it loads as it did in this run: by its
    /// vendor or reference name (which brings what it preloads), else by its path with a
    /// `--preload` of each library loaded before it.
    pub fn command_name(&self) -> String {
        if is_named(&self.name) {
            return self.name.clone();
        }
        let mut out = self.path.display().to_string();
        for p in &self.preload {
            let _ = write!(out, " --preload {}", p.display());
        }
        out
    }
}

/// Resolves a command-line argument to a library: a reference build's name to its built file, a
/// known vendor name through the manifest in `cache`; otherwise an existing file is taken as is.
pub fn resolve(arg: &str, cache: &Path) -> Result<Resolved, VendorError> {
    if let Some(r) = reference(arg) {
        return r.resolve();
    }
    if let Some(s) = spec(arg) {
        let manifest = Manifest::load(cache)?;
        let entry = manifest
            .get(s.name)
            .ok_or_else(|| VendorError::NotFetched {
                name: s.name.to_string(),
            })?;
        let canonical = |p: &Path| {
            p.canonicalize()
                .map_err(|_| VendorError::FetchedFileMissing {
                    name: s.name.to_string(),
                    path: p.to_path_buf(),
                })
        };
        let path = canonical(&entry.path)?;
        let preload = entry
            .preload
            .iter()
            .map(|p| canonical(p))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(Resolved {
            name: s.name.to_string(),
            path,
            preload,
            needs_cxx_runtime: entry.needs_cxx_runtime,
            version: Some(entry.version.clone()),
        });
    }
    let candidate = Path::new(arg);
    if !arg.is_empty() && candidate.is_file() {
        let path = candidate.canonicalize().map_err(|source| VendorError::Io {
            action: "resolve",
            path: candidate.to_path_buf(),
            source,
        })?;
        return Ok(Resolved {
            name: file_name(&path),
            path,
            preload: Vec::new(),
            needs_cxx_runtime: false,
            version: None,
        });
    }
    Err(VendorError::NoSuchLibrary {
        arg: arg.to_string(),
        known: known_names(),
    })
}

/// One line per known vendor: `name  version  path` with aligned columns, or
/// `name  (not fetched)`; a recorded file that has disappeared is marked `(missing)`.
pub fn list_lines(manifest: &Manifest) -> Vec<String> {
    let name_w = KNOWN.iter().map(|s| s.name.len()).max().unwrap_or(0);
    let version_w = KNOWN
        .iter()
        .filter_map(|s| manifest.get(s.name))
        .map(|e| e.version.len())
        .max()
        .unwrap_or(0);
    KNOWN
        .iter()
        .map(|s| match manifest.get(s.name) {
            Some(e) => {
                let mut line = format!(
                    "{:name_w$}  {:version_w$}  {}",
                    s.name,
                    e.version,
                    e.path.display()
                );
                if !e.path.is_file() {
                    line.push_str("  (missing)");
                }
                line
            }
            None => format!("{:name_w$}  (not fetched)", s.name),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, path: PathBuf) -> Entry {
        Entry {
            name: name.to_string(),
            version: "1:19.1.7-3~deb12u1".to_string(),
            origin: "debian:libomp-19-dev".to_string(),
            sha256: "0".repeat(64),
            path,
            runtime: None,
            header: None,
            preload: Vec::new(),
            needs_cxx_runtime: false,
        }
    }

    #[test]
    fn a_command_names_a_vendor_by_name_and_a_path_with_its_preloads() {
        let lib = |name: &str, preload: Vec<PathBuf>| Resolved {
            name: name.into(),
            path: "/x/libiomp5_db.so".into(),
            preload,
            needs_cxx_runtime: true,
            version: None,
        };
        let stdcxx = PathBuf::from("/usr/lib/libstdc++.so.6");
        assert_eq!(
            lib("intel-2026.2", vec![stdcxx.clone()]).command_name(),
            "intel-2026.2"
        );
        assert_eq!(
            lib("reference-5.2", Vec::new()).command_name(),
            "reference-5.2"
        );
        assert_eq!(
            lib("libiomp5_db.so", vec![stdcxx]).command_name(),
            "/x/libiomp5_db.so --preload /usr/lib/libstdc++.so.6"
        );
        assert_eq!(
            lib("libompd.so", Vec::new()).command_name(),
            "/x/libiomp5_db.so"
        );
    }

    #[test]
    fn the_workspace_root_holds_the_workspace_manifest() {
        let manifest = std::fs::read_to_string(workspace_root().join("Cargo.toml"))
            .expect("the workspace root has a Cargo.toml");
        assert!(
            manifest.contains("[workspace]"),
            "{}",
            workspace_root().display()
        );
    }

    #[test]
    fn known_table_is_consistent() {
        assert_eq!(known().len(), 12);
        let names: Vec<_> = known().iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            [
                "llvm-14",
                "llvm-15",
                "llvm-16",
                "llvm-19",
                "llvm-22",
                "llvm-21",
                "intel-2020.0",
                "intel-2021.4",
                "intel-2023.2",
                "intel-2024.2",
                "intel-2025.0",
                "intel-2026.2"
            ]
        );
        for s in known() {
            assert_eq!(spec(s.name), Some(s));
            assert!(!s.library.starts_with('/'));
        }
        assert!(spec("llvm-99").is_none());
        assert_eq!(
            spec("intel-2026.2").unwrap().origin.describe(),
            "pypi:intel-openmp==2026.2.0"
        );
        assert_eq!(
            spec("llvm-19").unwrap().origin.describe(),
            "debian:libomp-19-dev"
        );
    }

    #[test]
    fn missing_manifest_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let m = Manifest::load(dir.path()).unwrap();
        assert_eq!(m, Manifest::default());
        assert_eq!(m.schema, SCHEMA);
        assert!(m.entries.is_empty());
    }

    #[test]
    fn manifest_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("nested").join("cache");
        let mut m = Manifest::default();
        let mut e = entry("llvm-19", cache.join("llvm-19/x.so"));
        e.header = Some(cache.join("h.h"));
        e.preload = vec![cache.join("p.so")];
        e.needs_cxx_runtime = true;
        m.upsert(e.clone());
        m.upsert(entry("llvm-14", cache.join("llvm-14/x.so")));
        assert_eq!(m.entries[0].name, "llvm-14", "entries kept in known order");
        m.save(&cache).unwrap();
        let back = Manifest::load(&cache).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.get("llvm-19"), Some(&e));
        assert!(back.get("llvm-22").is_none());
        // No temporary files are left behind.
        let names: Vec<_> = fs::read_dir(&cache)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [MANIFEST_FILE]);
        let mode = fs::metadata(Manifest::file(&cache))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o644);
        // Replacing keeps one entry per name.
        let mut m2 = back.clone();
        m2.upsert(entry("llvm-19", cache.join("other.so")));
        assert_eq!(m2.entries.len(), 2);
        assert_eq!(m2.get("llvm-19").unwrap().path, cache.join("other.so"));
    }

    #[test]
    fn corrupt_manifest_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(MANIFEST_FILE);
        fs::write(&file, "{ not json").unwrap();
        let err = Manifest::load(dir.path()).unwrap_err();
        assert!(matches!(err, VendorError::CorruptManifest { .. }));
        let msg = err.to_string();
        assert!(msg.contains(&file.display().to_string()), "{msg}");
        assert!(msg.starts_with("corrupt vendor manifest"), "{msg}");
        assert!(!msg.contains('\n'), "{msg}");

        fs::write(&file, r#"{"schema":"something/else","entries":[]}"#).unwrap();
        let msg = Manifest::load(dir.path()).unwrap_err().to_string();
        assert!(msg.contains("something/else"), "{msg}");
        assert!(msg.contains(&file.display().to_string()), "{msg}");
    }

    #[test]
    fn resolve_path() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("libompd.so");
        fs::write(&lib, b"not really elf").unwrap();
        let r = resolve(lib.to_str().unwrap(), dir.path()).unwrap();
        assert_eq!(r.name, "libompd.so");
        assert_eq!(r.path, lib.canonicalize().unwrap());
        assert!(r.path.is_absolute());
        assert!(r.preload.is_empty());
        assert!(!r.needs_cxx_runtime);
        assert_eq!(r.version, None);
        // A directory is not a library.
        let err = resolve(dir.path().to_str().unwrap(), dir.path()).unwrap_err();
        assert!(matches!(err, VendorError::NoSuchLibrary { .. }));
    }

    #[test]
    fn resolve_unknown_name() {
        let dir = tempfile::tempdir().unwrap();
        let err = resolve("llvm-99", dir.path()).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.starts_with("no such library file or known vendor name: llvm-99 (known: llvm-14,"),
            "{msg}"
        );
        assert!(msg.contains("intel-2026.2"), "{msg}");
        let err = resolve("", dir.path()).unwrap_err();
        assert!(matches!(err, VendorError::NoSuchLibrary { .. }));
    }

    #[test]
    fn resolve_unfetched_and_fetched_vendor() {
        let dir = tempfile::tempdir().unwrap();
        let msg = resolve("llvm-19", dir.path()).unwrap_err().to_string();
        assert_eq!(
            msg,
            "vendor library llvm-19 is not fetched; run `cargo xtask vendors fetch llvm-19`"
        );

        let lib = dir.path().join("llvm-15").join("libompd.so");
        let pre = dir.path().join("llvm-15").join("libomp.so.5");
        fs::create_dir_all(lib.parent().unwrap()).unwrap();
        fs::write(&lib, b"x").unwrap();
        fs::write(&pre, b"y").unwrap();
        let mut e = entry("llvm-15", lib.clone());
        e.version = "1:15.0.6-4+b1".to_string();
        e.preload = vec![pre.clone()];
        let mut m = Manifest::default();
        m.upsert(e);
        m.save(dir.path()).unwrap();
        let r = resolve("llvm-15", dir.path()).unwrap();
        assert_eq!(r.name, "llvm-15");
        assert_eq!(r.path, lib.canonicalize().unwrap());
        assert_eq!(r.preload, vec![pre.canonicalize().unwrap()]);
        assert_eq!(r.version.as_deref(), Some("1:15.0.6-4+b1"));

        fs::remove_file(&lib).unwrap();
        let err = resolve("llvm-15", dir.path()).unwrap_err();
        assert!(matches!(err, VendorError::FetchedFileMissing { .. }));
    }

    #[test]
    fn list_lines_aligns_columns() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.so");
        fs::write(&a, b"x").unwrap();
        let mut m = Manifest::default();
        m.upsert(entry("llvm-19", a.clone()));
        let mut intel = entry("intel-2026.2", dir.path().join("gone.so"));
        intel.version = "2026.2.0".to_string();
        m.upsert(intel);
        let lines = list_lines(&m);
        assert_eq!(lines.len(), known().len());
        assert_eq!(lines[0], "llvm-14       (not fetched)");
        assert_eq!(
            lines[3],
            format!("llvm-19       1:19.1.7-3~deb12u1  {}", a.display())
        );
        assert_eq!(
            lines[known().len() - 1],
            format!(
                "intel-2026.2  2026.2.0            {}  (missing)",
                dir.path().join("gone.so").display()
            )
        );
        // Paths start in the same column for every fetched vendor.
        let col = |l: &str| l.find('/').unwrap();
        assert_eq!(col(&lines[3]), col(&lines[known().len() - 1]));
    }

    #[test]
    fn fetch_rejects_unknown_names_before_doing_anything() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let mut lines = Vec::new();
        let err = fetch(&cache, &["llvm-19", "gcc-13"], false, &mut |l| {
            lines.push(l.to_string())
        })
        .unwrap_err();
        assert!(err
            .to_string()
            .starts_with("unknown vendor name: gcc-13 (known: llvm-14, llvm-15"));
        assert!(lines.is_empty());
        assert!(!cache.exists());
    }

    #[test]
    fn sha256_of_known_content() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("abc");
        fs::write(&f, b"abc").unwrap();
        assert_eq!(
            sha256_file(&f).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let msg = sha256_file(&dir.path().join("nope"))
            .unwrap_err()
            .to_string();
        assert!(msg.starts_with("cannot read "), "{msg}");
    }
}
