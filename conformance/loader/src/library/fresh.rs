//! The private directory of a fresh library instance (`Library::load_fresh`): a copy of the file
//! beside links to its siblings, in `ompd-fresh-<pid>-…` under the temporary directory. The
//! directory goes with the instance; one whose process ended first (a crash, a watchdog's `_exit`,
//! which run no destructor) is swept by the first fresh instance of a later process.

use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;
use std::path::{Path, PathBuf};
use std::sync::Once;
use tempfile::TempDir;

/// The name prefix of the directories, before the owner's process id.
const PREFIX: &str = "ompd-fresh-";

/// A new private directory holding a copy of the library at `path` (the returned path) and links
/// to every other file of its directory; the process's first call sweeps the directories of
/// ended processes.
pub(super) fn stage(path: &Path) -> Result<(TempDir, PathBuf), String> {
    let (Some(name), Some(home)) = (path.file_name(), path.parent()) else {
        return Err("no file name".into());
    };
    // Once per process: the layout check alone makes about a hundred fresh instances.
    static SWEPT: Once = Once::new();
    SWEPT.call_once(|| sweep(&std::env::temp_dir()));
    let dir = tempfile::Builder::new()
        .prefix(&format!("{PREFIX}{}-", std::process::id()))
        .tempdir()
        .map_err(|e| format!("no temporary directory: {e}"))?;
    let copy = dir.path().join(name);
    std::fs::copy(path, &copy).map_err(|e| format!("cannot copy it: {e}"))?;
    for entry in std::fs::read_dir(home).into_iter().flatten().flatten() {
        if entry.file_name() != name {
            sibling(&entry.path(), &dir.path().join(entry.file_name()));
        }
    }
    Ok((dir, copy))
}

/// Puts `target` at `link`: a hard link where it can (a file or a symbolic link on the same file
/// system: no new inode, where a symbolic link costs one, and on ext4 a slow one; a linked
/// symbolic link is the same link, so a relative one resolves among the siblings), else a
/// symbolic link (a directory, another file system).
fn sibling(target: &Path, link: &Path) {
    let dir = std::fs::symlink_metadata(target).is_ok_and(|m| m.is_dir());
    if dir || std::fs::hard_link(target, link).is_err() {
        let _ = std::os::unix::fs::symlink(target, link);
    }
}

/// Removes every fresh-instance directory under `tmp` whose owner process has ended.
fn sweep(tmp: &Path) {
    for entry in std::fs::read_dir(tmp).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let owner = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<i32>().ok());
        if owner.is_some_and(|pid| !alive(pid)) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// True unless process `pid` is known to have ended (a process of another user is alive).
fn alive(pid: i32) -> bool {
    pid <= 0 || kill(Pid::from_raw(pid), None) != Err(Errno::ESRCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn siblings_are_linked_and_the_library_copied() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("libompd.so"), b"lib").unwrap();
        std::fs::write(home.path().join("libomp.so.5"), b"dep").unwrap();
        std::fs::create_dir(home.path().join("sub")).unwrap();
        std::os::unix::fs::symlink("libomp.so.5", home.path().join("libomp.so")).unwrap();
        let (dir, copy) = stage(&home.path().join("libompd.so")).unwrap();
        assert_eq!(std::fs::read(&copy).unwrap(), b"lib");
        use std::os::unix::fs::MetadataExt;
        let ino = |p: &Path| std::fs::metadata(p).unwrap().ino();
        assert_ne!(ino(&copy), ino(&home.path().join("libompd.so")), "a copy");
        for name in ["libomp.so.5", "libomp.so"] {
            let theirs = home.path().join(name);
            assert_eq!(
                ino(&dir.path().join(name)),
                ino(&theirs),
                "{name} is reachable"
            );
        }
        assert!(dir.path().join("sub").is_dir(), "a directory is linked too");
    }

    #[test]
    fn the_directories_of_ended_processes_are_swept_and_live_ones_kept() {
        let root = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let ended = root.path().join(format!("{PREFIX}{dead}-abc"));
        let mine = root
            .path()
            .join(format!("{PREFIX}{}-abc", std::process::id()));
        let other = root.path().join("ompd-fresh-not-a-pid");
        for d in [&ended, &mine, &other] {
            std::fs::create_dir(d).unwrap();
            std::fs::write(d.join("libompd.so"), b"x").unwrap();
        }
        sweep(root.path());
        assert!(!ended.exists(), "the ended process's directory is swept");
        assert!(mine.exists() && other.exists());
    }
}
