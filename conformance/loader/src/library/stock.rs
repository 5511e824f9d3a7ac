//! Copies of a library file made before a process was forked: a zygote's stock, which every
//! worker it forks inherits, so that a worker's first fresh instances load without copying the
//! file again (`fresh.rs` makes a copy for each instance past the stock).
//!
//! A stocked copy is a memfd sealed against every change (`F_SEAL_WRITE`, `_SHRINK`, `_GROW`,
//! `_SEAL`): the workers of one zygote share it, and none of them, nor a library loaded from
//! it, can alter what a later worker loads. The dynamic linker maps it privately, so each
//! instance's writes (relocations, data) stay its own process's. A process loads each copy at
//! most once: the dynamic linker knows a loaded file by its inode, and within one process each
//! instance must be a file of its own.
//!
//! Making a copy reads the file's bytes and nothing else: the process that stocks one never
//! loads the library.

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A sealed copy in memory of the library file at `path`, with the bytes `fresh::kept_ranges`
/// keeps (the debugging sections read as zeros).
pub fn sealed_copy(path: &Path) -> Result<OwnedFd, String> {
    use nix::fcntl::{fcntl, FcntlArg, SealFlag};
    // Named as the copies a process makes itself: a descriptor whose copy is replaced by
    // another keeps its name.
    let copy = super::fresh::memfd("ompd-fresh", nix::sys::memfd::MFdFlags::MFD_ALLOW_SEALING)?;
    let original = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let kept = super::fresh::kept_ranges(&original);
    super::fresh::copy_ranges(&original, &copy, &kept).map_err(|e| e.to_string())?;
    let seals = SealFlag::F_SEAL_WRITE
        | SealFlag::F_SEAL_SHRINK
        | SealFlag::F_SEAL_GROW
        | SealFlag::F_SEAL_SEAL;
    fcntl(&copy, FcntlArg::F_ADD_SEALS(seals)).map_err(|e| format!("cannot seal: {e}"))?;
    Ok(copy.into())
}

/// This process's stocked copies, by the library file they copy, and how many of them it has
/// loaded. The copies stay open as long as the process: their descriptors, open since it began,
/// are never closed or replaced (a descriptor probe would see that).
static STOCK: Mutex<BTreeMap<PathBuf, (Vec<OwnedFd>, usize)>> = Mutex::new(BTreeMap::new());

/// Gives this process `copies` of the library file at `path` ([`sealed_copy`]s made before it
/// was forked), for its first fresh instances of that file.
pub fn give(path: PathBuf, copies: Vec<OwnedFd>) {
    STOCK
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(path)
        .or_default()
        .0
        .extend(copies);
}

/// A new descriptor (close-on-exec) of a stocked copy of the library file at `path` that this
/// process has not loaded, if one is left.
pub(super) fn take(path: &Path) -> Option<std::io::Result<OwnedFd>> {
    let mut stock = STOCK.lock().unwrap_or_else(|e| e.into_inner());
    let (copies, used) = stock.get_mut(path)?;
    let copy = copies.get(*used)?;
    *used += 1;
    Some(copy.try_clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::{AsFd, AsRawFd};

    /// Device and inode of what `fd` refers to.
    fn identity(fd: impl AsFd) -> (u64, u64) {
        let st = nix::sys::stat::fstat(fd).unwrap();
        (st.st_dev, st.st_ino)
    }

    #[test]
    fn stocked_copies_are_sealed_and_loaded_first_each_once_their_descriptors_untouched() {
        let home = tempfile::tempdir().unwrap();
        let lib = home.path().join("libstocked.so");
        std::fs::write(&lib, b"pristine").unwrap();
        let copies: Vec<OwnedFd> = (0..2).map(|_| sealed_copy(&lib).unwrap()).collect();
        let stocked: Vec<_> = copies.iter().map(identity).collect();
        let mut file = std::fs::File::from(copies[0].try_clone().unwrap());
        use std::io::Write;
        assert!(file.write_all(b"changed").is_err(), "sealed against writes");
        assert!(file.set_len(1).is_err(), "sealed against shrinking");
        let raw: Vec<i32> = copies.iter().map(|c| c.as_raw_fd()).collect();
        give(lib.clone(), copies);
        // Each staged name is read as the library is loaded, before the next is staged (the
        // name reaches the copy at the slot, which the next instance's copy takes).
        let staged: Vec<_> = (0..3)
            .map(|_| {
                let copy = super::super::fresh::stage(&lib).unwrap().0;
                let opened = std::fs::File::open(copy).unwrap();
                assert_eq!(std::io::read_to_string(&opened).unwrap(), "pristine");
                identity(&opened)
            })
            .collect();
        assert_eq!(staged[..2], stocked[..], "the stock first, in turn");
        assert!(
            !stocked.contains(&staged[2]),
            "past the stock, a copy of its own"
        );
        for (fd, was) in raw.into_iter().zip(stocked) {
            // SAFETY: the stock still owns the descriptor, which is only looked at here.
            let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
            assert_eq!(
                identity(fd),
                was,
                "a stocked copy's descriptor stays as it was"
            );
        }
    }
}
