//! Fetching vendor libraries without root: `apt-get download` and `dpkg-deb -x` for Debian
//! packages, `pip download` and `python3 -m zipfile -e` for wheels, each into a scratch tree that
//! replaces `<cache>/<name>/` only once every promised file is in it.

use crate::{
    known_names, sha256_file, spec, Entry, Manifest, Origin, VendorError, VendorSpec, KNOWN,
};
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Fetches the vendors called `names` (all known vendors if empty) into `cache` and returns
/// the updated manifest.
///
/// A vendor whose manifest entry still points at the expected file with a matching SHA-256
/// is left alone unless `force` is set. Other vendors' entries are kept. The manifest is
/// saved after each vendor, so an error part-way keeps what was already fetched.
/// `progress` receives one human-readable line per step.
pub fn fetch(
    cache: &Path,
    names: &[&str],
    force: bool,
    progress: &mut dyn FnMut(&str),
) -> Result<Manifest, VendorError> {
    let specs: Vec<&'static VendorSpec> = if names.is_empty() {
        KNOWN.iter().collect()
    } else {
        let mut specs = Vec::new();
        for name in names {
            let s = spec(name).ok_or_else(|| VendorError::UnknownVendor {
                name: (*name).to_string(),
                known: known_names(),
            })?;
            if !specs.contains(&s) {
                specs.push(s);
            }
        }
        specs
    };
    create_dir_all(cache)?;
    let cache = cache.canonicalize().map_err(|source| VendorError::Io {
        action: "resolve cache directory",
        path: cache.to_path_buf(),
        source,
    })?;
    let mut manifest = Manifest::load(&cache)?;
    for s in specs {
        if !force {
            if let Some(entry) = manifest.get(s.name) {
                if is_current(s, &cache, entry) {
                    progress(&format!(
                        "{}: up to date ({}, {})",
                        s.name,
                        entry.version,
                        entry.path.display()
                    ));
                    continue;
                }
                progress(&format!(
                    "{}: recorded files are missing or changed; fetching again",
                    s.name
                ));
            }
        }
        let entry = fetch_one(s, &cache, progress)?;
        progress(&format!(
            "{}: fetched {} -> {}",
            s.name,
            entry.version,
            entry.path.display()
        ));
        manifest.upsert(entry);
        manifest.save(&cache)?;
    }
    Ok(manifest)
}

/// Whether `entry` still describes what fetching `s` into `cache` would produce.
fn is_current(s: &VendorSpec, cache: &Path, entry: &Entry) -> bool {
    let dir = cache.join(s.name);
    let extras_ok = entry.runtime.iter().all(|p| p.is_file())
        && entry.header.iter().all(|p| p.is_file())
        && entry.preload.iter().all(|p| p.is_file());
    entry.origin == s.origin.describe()
        && entry.path == dir.join(s.library)
        && entry.path.is_file()
        && extras_ok
        && sha256_file(&entry.path).is_ok_and(|h| h == entry.sha256)
}

/// Downloads and unpacks one vendor into `<cache>/<name>/`, replacing what was there.
fn fetch_one(
    s: &VendorSpec,
    cache: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<Entry, VendorError> {
    let scratch = tempfile::Builder::new()
        .prefix(&format!(".fetch-{}-", s.name))
        .tempdir_in(cache)
        .map_err(|source| VendorError::Io {
            action: "create temporary directory in",
            path: cache.to_path_buf(),
            source,
        })?;
    let tree = scratch.path().join("tree");
    create_dir_all(&tree)?;
    let version = match s.origin {
        Origin::Debian {
            package,
            extra_packages,
        } => unpack_debian(s, package, extra_packages, scratch.path(), &tree, progress)?,
        Origin::Pypi { package, version } => {
            unpack_pypi(s, package, version, scratch.path(), &tree, progress)?
        }
    };
    install(s, cache, &tree, version)
}

/// Downloads a Debian vendor's packages into `scratch` and unpacks them into `tree`; returns the
/// library package's version.
fn unpack_debian(
    s: &VendorSpec,
    package: &str,
    extra_packages: &[&str],
    scratch: &Path,
    tree: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<String, VendorError> {
    let mut version = String::new();
    for (i, pkg) in std::iter::once(package)
        .chain(extra_packages.iter().copied())
        .enumerate()
    {
        let dl = scratch.join(format!("dl-{i}"));
        create_dir_all(&dl)?;
        progress(&format!("{}: downloading {pkg} with apt-get", s.name));
        let deb = apt_download(pkg, &dl)?;
        let v = deb_version(pkg, &deb)?;
        progress(&format!("{}: unpacking {} ({v})", s.name, file_name(&deb)));
        run(
            Command::new("dpkg-deb").arg("-x").arg(&deb).arg(tree),
            "dpkg-deb",
            &format!("dpkg-deb -x {}", file_name(&deb)),
            pkg,
        )?;
        if i == 0 {
            version = v;
        } else if v != version {
            progress(&format!(
                "{}: note: {pkg} has version {v}, {package} has {version}",
                s.name
            ));
        }
    }
    Ok(version)
}

/// Downloads a PyPI vendor's wheel into `scratch` and unpacks it into `tree`; returns its version.
fn unpack_pypi(
    s: &VendorSpec,
    package: &str,
    version: &str,
    scratch: &Path,
    tree: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<String, VendorError> {
    let dl = scratch.join("dl");
    create_dir_all(&dl)?;
    progress(&format!(
        "{}: downloading {package}=={version} with pip",
        s.name
    ));
    let requirement = format!("{package}=={version}");
    run(
        Command::new("python3")
            .args([
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--disable-pip-version-check",
                "--no-input",
                "--only-binary=:all:",
                "-d",
            ])
            .arg(&dl)
            .arg(&requirement),
        "python3",
        &format!("pip download {requirement}"),
        &requirement,
    )?;
    let wheel = find_file(&dl, "", ".whl").ok_or_else(|| VendorError::NoArchive {
        package: requirement.clone(),
        kind: ".whl",
        dir: dl.clone(),
    })?;
    progress(&format!("{}: unpacking {}", s.name, file_name(&wheel)));
    run(
        Command::new("python3")
            .args(["-m", "zipfile", "-e"])
            .arg(&wheel)
            .arg(tree),
        "python3",
        &format!("python3 -m zipfile -e {}", file_name(&wheel)),
        &requirement,
    )?;
    Ok(version.to_string())
}

/// Checks every file `s` promises in the unpacked `tree`, then replaces `<cache>/<name>/` with it
/// and describes it.
fn install(
    s: &VendorSpec,
    cache: &Path,
    tree: &Path,
    version: String,
) -> Result<Entry, VendorError> {
    // Check every promised file before touching the previous tree.
    let origin = s.origin.describe();
    let require = |rel: &str| -> Result<(), VendorError> {
        if tree.join(rel).is_file() {
            Ok(())
        } else {
            Err(VendorError::MissingFile {
                name: s.name.to_string(),
                rel: rel.to_string(),
                origin: origin.clone(),
            })
        }
    };
    require(s.library)?;
    for rel in s.runtime.iter().chain(s.header.iter()).chain(s.preload) {
        require(rel)?;
    }

    let dir = cache.join(s.name);
    if fs::symlink_metadata(&dir).is_ok() {
        remove_all(&dir)?;
    }
    fs::rename(tree, &dir).map_err(|source| VendorError::Io {
        action: "move unpacked files to",
        path: dir.clone(),
        source,
    })?;
    let path = dir.join(s.library);
    Ok(Entry {
        name: s.name.to_string(),
        version,
        origin,
        sha256: sha256_file(&path)?,
        path,
        runtime: s.runtime.map(|rel| dir.join(rel)),
        header: s.header.map(|rel| dir.join(rel)),
        preload: s.preload.iter().map(|rel| dir.join(rel)).collect(),
        needs_cxx_runtime: s.needs_cxx_runtime,
    })
}

/// Runs `apt-get download <package>` in `dir` and returns the downloaded `.deb`. When the
/// system's package lists do not have it (a fresh machine whose lists were never fetched, or
/// are stale), current lists are fetched into a private directory, without root, and the
/// download is tried once more against them.
fn apt_download(package: &str, dir: &Path) -> Result<PathBuf, VendorError> {
    let again = |detail: String, more: String| VendorError::AptDownload {
        package: package.to_string(),
        detail: format!("{detail}; {more}"),
    };
    match apt_get_download(package, dir, &[]) {
        Err(VendorError::AptDownload { detail, .. }) => match private_lists(&dir.join(".apt")) {
            Ok(private) => apt_get_download(package, dir, &private).map_err(|e| {
                again(
                    detail,
                    format!("with current package lists fetched privately: {e}"),
                )
            }),
            Err(e) => Err(again(
                detail,
                format!("fetching current package lists failed: {e}"),
            )),
        },
        done => done,
    }
}

/// `apt-get download` with `options`.
fn apt_get_download(package: &str, dir: &Path, options: &[String]) -> Result<PathBuf, VendorError> {
    let out = Command::new("apt-get")
        .args(options)
        .args(["download", "-q", package])
        .current_dir(dir)
        .output()
        .map_err(|source| VendorError::Spawn {
            program: "apt-get".to_string(),
            package: package.to_string(),
            source,
        })?;
    if !out.status.success() {
        return Err(VendorError::AptDownload {
            package: package.to_string(),
            detail: failure_detail(&out),
        });
    }
    find_file(dir, &format!("{package}_"), ".deb").ok_or_else(|| VendorError::NoArchive {
        package: package.to_string(),
        kind: ".deb",
        dir: dir.to_path_buf(),
    })
}

/// Fetches the package lists of the system's sources into `state` (no root needed: apt reads
/// and writes only there) and returns the options that make apt use them.
fn private_lists(state: &Path) -> Result<Vec<String>, VendorError> {
    let lists = state.join("lists");
    let cache = state.join("cache");
    create_dir_all(&lists.join("partial"))?;
    create_dir_all(&cache.join("archives").join("partial"))?;
    let options = vec![
        "-o".to_string(),
        format!("Dir::State::Lists={}", lists.display()),
        "-o".to_string(),
        format!("Dir::Cache={}", cache.display()),
        "-o".to_string(),
        "Debug::NoLocking=1".to_string(),
    ];
    run(
        Command::new("apt-get")
            .args(&options)
            .args(["-q", "update"]),
        "apt-get",
        "apt-get update (private lists)",
        "the package lists",
    )?;
    Ok(options)
}

/// The `Version` field of a `.deb`.
fn deb_version(package: &str, deb: &Path) -> Result<String, VendorError> {
    let out = run(
        Command::new("dpkg-deb").arg("-f").arg(deb).arg("Version"),
        "dpkg-deb",
        &format!("dpkg-deb -f {} Version", file_name(deb)),
        package,
    )?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if version.is_empty() {
        return Err(VendorError::Command {
            command: format!("dpkg-deb -f {} Version", file_name(deb)),
            package: package.to_string(),
            detail: "empty version field".to_string(),
        });
    }
    Ok(version)
}

/// Runs `cmd`, turning a spawn failure or non-zero exit into an error naming `package`.
fn run(
    cmd: &mut Command,
    program: &str,
    command: &str,
    package: &str,
) -> Result<std::process::Output, VendorError> {
    let out = cmd.output().map_err(|source| VendorError::Spawn {
        program: program.to_string(),
        package: package.to_string(),
        source,
    })?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(VendorError::Command {
            command: command.to_string(),
            package: package.to_string(),
            detail: failure_detail(&out),
        })
    }
}

/// The gist of a failed program's output, on one line.
fn failure_detail(out: &std::process::Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let text = if stderr.trim().is_empty() {
        stdout
    } else {
        stderr
    };
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let tail = &lines[lines.len().saturating_sub(3)..];
    if tail.is_empty() {
        format!("{} with no output", out.status)
    } else {
        tail.join("; ")
    }
}

/// The first regular file in `dir` whose name starts with `prefix` and ends with `suffix`
/// (by sorted name, for determinism).
fn find_file(dir: &Path, prefix: &str, suffix: &str) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.file_name()
                    .and_then(OsStr::to_str)
                    .is_some_and(|n| n.starts_with(prefix) && n.ends_with(suffix))
        })
        .collect();
    found.sort();
    found.into_iter().next()
}

pub(crate) fn file_name(path: &Path) -> String {
    path.file_name()
        .unwrap_or(path.as_os_str())
        .to_string_lossy()
        .into_owned()
}

pub(crate) fn create_dir_all(dir: &Path) -> Result<(), VendorError> {
    fs::create_dir_all(dir).map_err(|source| VendorError::Io {
        action: "create directory",
        path: dir.to_path_buf(),
        source,
    })
}

fn remove_all(path: &Path) -> Result<(), VendorError> {
    let result = if fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        fs::remove_dir_all(path)
    } else {
        fs::remove_file(path)
    };
    result.map_err(|source| VendorError::Io {
        action: "remove",
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a fresh machine meets: package lists that do not have the package. The private lists
    /// fetched without touching the system's have it.
    #[test]
    fn a_package_missing_from_the_lists_is_fetched_through_private_lists() {
        let d = tempfile::tempdir().unwrap();
        let empty = d.path().join("no-lists");
        create_dir_all(&empty.join("partial")).unwrap();
        let none = [
            "-o".to_string(),
            format!("Dir::State::Lists={}", empty.display()),
        ];
        let missing = apt_get_download("libomp-19-dev", d.path(), &none);
        assert!(
            matches!(missing, Err(VendorError::AptDownload { .. })),
            "{missing:?}"
        );
        let private = private_lists(&d.path().join(".apt")).expect("private lists fetch");
        let deb = apt_get_download("libomp-19-dev", d.path(), &private).expect("it downloads");
        assert!(file_name(&deb).starts_with("libomp-19-dev_"));
    }
}
