//! Copies of a library file that another process holds: a zygote's stock, which every worker
//! it forks reaches through the zygote's descriptors (`/proc/<zygote>/fd/N`), so that a worker's
//! first fresh instances load without copying the file again (`fresh.rs` makes a copy for each
//! instance past the stock, or when the stock cannot be reached). The worker holds no
//! descriptor of the stock but the one it opens for an instance's load, so its descriptor
//! probes watch no more than before.
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

use nix::fcntl::{fcntl, FcntlArg, SealFlag};
use std::collections::BTreeMap;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The seals that keep a copy's bytes as they are: a stocked copy has them, and a worker loads
/// only a copy that has them.
const BYTES_SEALED: SealFlag = SealFlag::F_SEAL_WRITE
    .union(SealFlag::F_SEAL_SHRINK)
    .union(SealFlag::F_SEAL_GROW);

/// A sealed copy in memory of the library file at `path`, with the bytes `fresh::kept_ranges`
/// keeps (the debugging sections read as zeros); its seals are sealed too.
pub fn sealed_copy(path: &Path) -> Result<OwnedFd, String> {
    let original = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let kept = super::fresh::kept_ranges(&original);
    let sealing = nix::sys::memfd::MFdFlags::MFD_ALLOW_SEALING;
    let copy = super::fresh::copy_in_memory(&original, &kept, sealing)?;
    let seals = BYTES_SEALED | SealFlag::F_SEAL_SEAL;
    fcntl(&copy, FcntlArg::F_ADD_SEALS(seals)).map_err(|e| format!("cannot seal: {e}"))?;
    Ok(copy.into())
}

/// Where this process reaches stocked copies: the process holding them, and its descriptor
/// numbers of the copies.
struct Held {
    holder: i32,
    numbers: Vec<i32>,
    used: usize,
}

/// This process's stocked copies, by the library file they copy.
static STOCK: Mutex<BTreeMap<PathBuf, Held>> = Mutex::new(BTreeMap::new());

/// Gives this process the copies of the library file at `path` ([`sealed_copy`]s) that process
/// `holder` (its zygote) holds at descriptors `numbers`, for its first fresh instances of that
/// file.
pub fn give(path: PathBuf, holder: i32, numbers: Vec<i32>) {
    let held = Held {
        holder,
        numbers,
        used: 0,
    };
    STOCK
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(path, held);
}

/// A new descriptor (read-only, close-on-exec) of a stocked copy of the library file at `path`
/// that this process has not loaded, if one is left: `Err` when it cannot be opened, or what
/// it opens is not sealed against change.
pub(super) fn take(path: &Path) -> Option<std::io::Result<OwnedFd>> {
    let mut stock = STOCK.lock().unwrap_or_else(|e| e.into_inner());
    let held = stock.get_mut(path)?;
    let n = *held.numbers.get(held.used)?;
    held.used += 1;
    let copy = format!("/proc/{}/fd/{n}", held.holder);
    Some(std::fs::File::open(copy).and_then(sealed))
}

/// `file`, if it is sealed against every change of its bytes.
fn sealed(file: std::fs::File) -> std::io::Result<OwnedFd> {
    let seals = fcntl(&file, FcntlArg::F_GET_SEALS)?;
    match SealFlag::from_bits_truncate(seals).contains(BYTES_SEALED) {
        true => Ok(file.into()),
        false => Err(std::io::Error::other("not a sealed copy")),
    }
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
    fn stocked_copies_are_sealed_and_loaded_first_each_once_through_their_holders_descriptors() {
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
        give(lib.clone(), std::process::id() as i32, raw);
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
        for (copy, was) in copies.iter().zip(stocked) {
            assert_eq!(
                identity(copy),
                was,
                "the holder's descriptors stay as they were"
            );
        }
        // A stock this process cannot reach (a number the holder has not open), or that is no
        // sealed copy: a copy of its own.
        let other = home.path().join("libunreachable.so");
        std::fs::write(&other, b"other").unwrap();
        let unsealed = std::fs::File::open(&lib).unwrap();
        let numbers = vec![i32::MAX, unsealed.as_raw_fd()];
        give(other.clone(), std::process::id() as i32, numbers);
        for _ in 0..2 {
            let copy = super::super::fresh::stage(&other).unwrap().0;
            assert_eq!(std::fs::read(copy).unwrap(), b"other");
        }
    }
}
