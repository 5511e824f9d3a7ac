//! The private directory of fresh library instances (`Library::load_fresh`): one per library
//! file and process, in `ompd-fresh-<pid>-…` under a memory file system where there is one
//! (`/dev/shm`; else the temporary directory), holding a copy of the file beside links to its
//! siblings (a library may find its siblings next to itself).
//!
//! Each fresh instance gets a new copy (a new file: the dynamic linker knows a loaded file by
//! its device and inode) under the file's own name (a sibling the library names after itself,
//! such as a marker file, is found as beside the original), loaded through a path no earlier
//! instance had: the directory, as many `.` components as instances staged before, then the
//! name (the dynamic linker also knows a loaded file by the path it was loaded from, and never
//! normalizes it). So the siblings are linked once per process, not once per instance; a
//! sibling that appeared since is linked when the next instance is staged.
//!
//! The copy is held in memory where the system allows it ([`Copy::InMemory`]): a `memfd` kept
//! at one descriptor number, which the name in the directory is a symbolic link to
//! (`/proc/self/fd/N`); each instance puts a new memfd at that number (the earlier instance
//! keeps its mapping of the one it was loaded from). A file system would make a new inode for
//! each copy, and on ext4 that costs more than loading the library. Where the system will not
//! map such a copy executable, copies are files ([`copies_only`]), in new directories under the
//! temporary directory (a memory file system may forbid executable mappings).
//!
//! A worker forked by a zygote may reach copies in memory that the zygote holds, sealed and
//! shared with its other workers (`stock.rs`): its first instances of the file are those, and
//! only later ones are copied.
//!
//! A copy in memory leaves out the bytes of the file's debugging sections (`.debug_*`, which
//! nothing loads: they read as zeros, the file keeps its size and every other byte), which are
//! most of a library built with debugging information, such as Intel's
//! ([`kept_ranges`]).
//!
//! A worker process makes one such directory, so its cost is a worker's: on a memory file
//! system the links are symbolic ones held in memory, where on ext4 a hard link (a journaled
//! inode update) costs several times as much, and its removal as much again.
//!
//! The directories go with [`release`] (a worker's end); one whose process ended first (a crash,
//! a watchdog's `_exit`, which run no destructor) is swept by the first fresh instance of a
//! later process.

use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::ops::Range;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};
use tempfile::TempDir;

/// The name prefix of the directories, before the owner's process id.
const PREFIX: &str = "ompd-fresh-";

/// The private directory of one library file.
struct Private {
    dir: TempDir,
    /// The siblings linked so far.
    linked: BTreeSet<OsString>,
    /// The instances staged so far.
    staged: usize,
    /// The descriptor number the copy in memory is kept at, once there is one.
    slot: Option<OwnedFd>,
    /// The byte ranges of the file a copy in memory holds, once known ([`kept_ranges`]).
    kept: Option<Vec<Range<u64>>>,
}

/// Set when copies are files from now on: the system would not map a copy held in memory.
static FILES_ONLY: AtomicBool = AtomicBool::new(false);

/// Where a staged copy is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Copy {
    /// In a memfd, which the name in the directory is a link to.
    InMemory,
    /// In a file of the directory.
    File,
}

/// From now on, this process's copies are files, in new directories under the temporary
/// directory: one held in memory did not load.
pub(super) fn copies_only() {
    FILES_ONLY.store(true, Ordering::Relaxed);
    release();
}

/// A memory file system's directory, where this system has one.
const MEMORY_FS: &str = "/dev/shm";

/// Where new private directories go: on a memory file system while copies are held in memory,
/// else (or where none can be made there) under the temporary directory.
fn new_private_dir() -> Result<TempDir, String> {
    let make = |base: &Path| {
        tempfile::Builder::new()
            .prefix(&format!("{PREFIX}{}-", std::process::id()))
            .tempdir_in(base)
    };
    let in_memory = (!FILES_ONLY.load(Ordering::Relaxed))
        .then(|| make(Path::new(MEMORY_FS)).ok())
        .flatten();
    match in_memory {
        Some(dir) => Ok(dir),
        None => make(&std::env::temp_dir()).map_err(|e| format!("no temporary directory: {e}")),
    }
}

/// This process's private directories, by the library file they serve.
static DIRS: Mutex<BTreeMap<PathBuf, Private>> = Mutex::new(BTreeMap::new());

/// A new copy of the library at `path` in its private directory, and the path to load it by
/// (one no earlier instance of the process was loaded by); the process's first call sweeps the
/// directories of ended processes.
pub(super) fn stage(path: &Path) -> Result<(PathBuf, Copy), String> {
    let (Some(name), Some(home)) = (path.file_name(), path.parent()) else {
        return Err("no file name".into());
    };
    // Once per process: the layout check alone makes about a hundred fresh instances.
    static SWEPT: Once = Once::new();
    SWEPT.call_once(|| {
        sweep(&std::env::temp_dir());
        sweep(Path::new(MEMORY_FS));
    });
    let mut dirs = DIRS.lock().unwrap_or_else(|e| e.into_inner());
    let p = match dirs.entry(path.to_path_buf()) {
        std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::btree_map::Entry::Vacant(e) => e.insert(Private {
            dir: new_private_dir()?,
            linked: BTreeSet::new(),
            staged: 0,
            slot: None,
            kept: None,
        }),
    };
    p.link_siblings(home, name);
    let held = match FILES_ONLY.load(Ordering::Relaxed) {
        false if p.in_memory(path, name).is_ok() => Copy::InMemory,
        _ => p.in_file(path, name)?,
    };
    let mut load = p.dir.path().to_path_buf();
    for _ in 0..p.staged {
        load.push(".");
    }
    load.push(name);
    p.staged += 1;
    Ok((load, held))
}

impl Private {
    /// Links the siblings of `name` in `home` not linked yet (the two directories' file
    /// systems are compared only when there is one).
    fn link_siblings(&mut self, home: &Path, name: &std::ffi::OsStr) {
        let mut hard = None;
        for entry in std::fs::read_dir(home).into_iter().flatten().flatten() {
            let sib = entry.file_name();
            if sib != name && !self.linked.contains(&sib) {
                let hard = *hard.get_or_insert_with(|| same_file_system(home, self.dir.path()));
                sibling(&entry.path(), &self.dir.path().join(&sib), hard);
                self.linked.insert(sib);
            }
        }
    }

    /// Puts a copy of `path` in a memfd at the slot, the name linking to it: a stocked one
    /// while there is one left (`stock.rs`), else a new one.
    fn in_memory(&mut self, path: &Path, name: &std::ffi::OsStr) -> Result<(), String> {
        let copy = match super::stock::take(path) {
            Some(Ok(stocked)) => stocked,
            // None left, or out of reach: a copy of its own.
            _ => self.new_copy(path)?,
        };
        match &mut self.slot {
            Some(slot) => {
                nix::unistd::dup3(&copy, slot, nix::fcntl::OFlag::O_CLOEXEC)
                    .map_err(|e| e.to_string())?;
            }
            None => {
                let link = self.dir.path().join(name);
                let _ = std::fs::remove_file(&link);
                let target = format!("/proc/self/fd/{}", copy.as_raw_fd());
                std::os::unix::fs::symlink(target, &link).map_err(|e| e.to_string())?;
                self.slot = Some(copy);
            }
        }
        Ok(())
    }

    /// A new copy of `path` in a memfd.
    fn new_copy(&mut self, path: &Path) -> Result<OwnedFd, String> {
        let original = std::fs::File::open(path).map_err(|e| e.to_string())?;
        let kept = self.kept.get_or_insert_with(|| kept_ranges(&original));
        let copy = copy_in_memory(&original, kept, nix::sys::memfd::MFdFlags::empty())?;
        Ok(copy.into())
    }

    /// Puts a new copy of `path` in the directory under `name`.
    fn in_file(&mut self, path: &Path, name: &std::ffi::OsStr) -> Result<Copy, String> {
        let copy = self.dir.path().join(name);
        // The earlier instance keeps its mapping of the file it was loaded from.
        let _ = std::fs::remove_file(&copy);
        self.slot = None;
        std::fs::copy(path, &copy).map_err(|e| format!("cannot copy it: {e}"))?;
        Ok(Copy::File)
    }
}

/// A copy of `original` in a new memfd (close-on-exec, executable, with the flags `extra`)
/// holding the bytes of its `kept` ranges ([`copy_ranges`]). Every copy is named alike,
/// whoever made it: a process's maps and descriptors read the same whichever it loaded.
pub(super) fn copy_in_memory(
    original: &std::fs::File,
    kept: &[Range<u64>],
    extra: nix::sys::memfd::MFdFlags,
) -> Result<std::fs::File, String> {
    use nix::sys::memfd::{memfd_create, MFdFlags};
    const NAME: &str = "ompd-fresh";
    // MFD_EXEC (Linux 6.3): executable even where memfds are sealed against it by default; an
    // older kernel refuses the flag.
    let exec = MFdFlags::from_bits_retain(0x10);
    let flags = MFdFlags::MFD_CLOEXEC | extra;
    let fd = memfd_create(NAME, flags | exec)
        .or_else(|_| memfd_create(NAME, flags))
        .map_err(|e| format!("no memfd: {e}"))?;
    let copy = std::fs::File::from(fd);
    copy_ranges(original, &copy, kept).map_err(|e| e.to_string())?;
    Ok(copy)
}

/// Removes this process's private directories (the instances loaded from them keep their
/// mappings).
pub fn release() {
    DIRS.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// The byte ranges of `file` other than its debugging sections' (non-allocated sections named
/// `.debug_*` or `.zdebug_*`): all of it when it is no object file the `object` crate reads.
pub(super) fn kept_ranges(file: &std::fs::File) -> Vec<Range<u64>> {
    use object::{Object, ObjectSection};
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let cache = object::ReadCache::new(file);
    let mut holes: Vec<Range<u64>> = match object::File::parse(&cache) {
        Ok(obj) => obj
            .sections()
            .filter(|s| {
                // Other kinds than these are loaded (or are the file's own tables).
                let unloaded = matches!(
                    s.kind(),
                    object::SectionKind::Other | object::SectionKind::OtherString
                );
                let debug = s
                    .name()
                    .is_ok_and(|n| n.starts_with(".debug_") || n.starts_with(".zdebug_"));
                unloaded && debug
            })
            .filter_map(|s| s.file_range())
            .map(|(at, len)| at..at.saturating_add(len).min(size))
            .collect(),
        Err(_) => Vec::new(),
    };
    holes.sort_by_key(|h| h.start);
    let mut kept = Vec::new();
    let mut at = 0;
    for h in holes {
        if h.start > at {
            kept.push(at..h.start);
        }
        at = at.max(h.end);
    }
    if at < size {
        kept.push(at..size);
    }
    kept
}

/// Makes `copy` (empty) as long as `original`, with the bytes of `kept` copied and the rest zero.
fn copy_ranges(
    original: &std::fs::File,
    copy: &std::fs::File,
    kept: &[Range<u64>],
) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    copy.set_len(original.metadata()?.len())?;
    for r in kept {
        let (mut from, mut to) = (original, copy);
        from.seek(SeekFrom::Start(r.start))?;
        to.seek(SeekFrom::Start(r.start))?;
        let n = std::io::copy(&mut from.take(r.end - r.start), &mut to)?;
        if n != r.end - r.start {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
    }
    Ok(())
}

/// True when `a` and `b` are on one file system.
fn same_file_system(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let dev = |p: &Path| std::fs::metadata(p).map(|m| m.dev()).ok();
    dev(a).is_some() && dev(a) == dev(b)
}

/// Puts `target` at `link`: with `hard` (the two on one file system), a hard link where it can
/// (a file or a symbolic link: no new inode, where a symbolic link on ext4 costs a slow one; a
/// linked symbolic link is the same link, so a relative one resolves among the siblings), else
/// a symbolic link (a directory, another file system).
fn sibling(target: &Path, link: &Path, hard: bool) {
    let linked = hard
        && !std::fs::symlink_metadata(target).is_ok_and(|m| m.is_dir())
        && std::fs::hard_link(target, link).is_ok();
    if !linked {
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
    fn siblings_are_linked_once_and_each_instance_gets_a_new_copy_by_a_new_path() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("libompd.so"), b"lib").unwrap();
        std::fs::write(home.path().join("libomp.so.5"), b"dep").unwrap();
        std::fs::create_dir(home.path().join("sub")).unwrap();
        std::os::unix::fs::symlink("libomp.so.5", home.path().join("libomp.so")).unwrap();
        let lib = home.path().join("libompd.so");
        let (first, held) = stage(&lib).unwrap();
        assert_eq!(held, Copy::InMemory);
        // Where this user can make a directory on the memory file system, it is there.
        if tempfile::tempdir_in(MEMORY_FS).is_ok() {
            assert!(first.starts_with(MEMORY_FS), "{first:?} is in memory");
        }
        assert_eq!(std::fs::read(&first).unwrap(), b"lib");
        use std::os::unix::fs::MetadataExt;
        let ino = |p: &Path| std::fs::metadata(p).unwrap().ino();
        assert_ne!(ino(&first), ino(&lib), "a copy");
        let dir = first.parent().unwrap().to_path_buf();
        for name in ["libomp.so.5", "libomp.so"] {
            let theirs = home.path().join(name);
            assert_eq!(ino(&dir.join(name)), ino(&theirs), "{name} is reachable");
        }
        assert!(dir.join("sub").is_dir(), "a directory is linked too");
        let first_ino = ino(&first);
        // As an instance's mapping does, an open file keeps its inode from being reused.
        let _held = std::fs::File::open(&first).unwrap();
        std::fs::write(home.path().join("marker"), b"").unwrap();
        let (second, _) = stage(&lib).unwrap();
        assert_eq!(
            second,
            dir.join(".").join("libompd.so"),
            "a path no instance had"
        );
        assert_ne!(ino(&second), first_ino, "a new copy");
        assert!(
            dir.join("marker").exists(),
            "a sibling that appeared is linked"
        );
        // Where a copy in memory would not load: files, each a new one, in a new directory.
        let (second_ino, _held) = (ino(&second), std::fs::File::open(&second).unwrap());
        copies_only();
        assert!(!dir.exists(), "the directory in memory is gone");
        let (third, held) = stage(&lib).unwrap();
        assert_eq!(held, Copy::File);
        assert!(third.starts_with(std::env::temp_dir()));
        assert!(std::fs::symlink_metadata(&third).unwrap().is_file());
        assert_eq!(std::fs::read(&third).unwrap(), b"lib");
        assert_ne!(ino(&third), second_ino, "a new copy");
        assert!(third.parent().unwrap().join("marker").exists());
        FILES_ONLY.store(false, Ordering::Relaxed);
        release();
        assert!(
            !third.parent().unwrap().exists(),
            "the directories go with release"
        );
    }

    #[test]
    fn a_copy_in_memory_leaves_out_only_the_debugging_sections() {
        use object::{Object, ObjectSection, ObjectSegment};
        // This test program, built with debugging information or without.
        let exe = std::env::current_exe().unwrap();
        let original = std::fs::File::open(&exe).unwrap();
        let kept = kept_ranges(&original);
        let bytes = std::fs::read(&exe).unwrap();
        let obj = object::File::parse(&*bytes).unwrap();
        let within =
            |(at, len): (u64, u64)| kept.iter().any(|r| r.start <= at && at + len <= r.end);
        for seg in obj.segments() {
            assert!(within(seg.file_range()), "a loaded segment is kept whole");
        }
        match obj
            .section_by_name(".debug_info")
            .and_then(|s| s.file_range())
        {
            Some((at, len)) => {
                let overlaps = |r: &Range<u64>| r.start < at + len && at < r.end;
                assert!(!kept.iter().any(overlaps), ".debug_info is left out");
            }
            None => assert_eq!(
                kept,
                vec![Range {
                    start: 0,
                    end: bytes.len() as u64
                }]
            ),
        }
        let copy = tempfile::tempfile().unwrap();
        copy_ranges(&original, &copy, &kept).unwrap();
        let got = std::fs::read(format!("/proc/self/fd/{}", copy.as_raw_fd())).unwrap();
        assert_eq!(got.len(), bytes.len(), "the copy keeps the file's size");
        for (k, (g, b)) in got.iter().zip(&bytes).enumerate() {
            let k = k as u64;
            let want = if kept.iter().any(|r| r.contains(&k)) {
                *b
            } else {
                0
            };
            assert_eq!(*g, want, "byte {k}");
        }
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
