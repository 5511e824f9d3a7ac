//! A zygote's stock of library copies: for each library file its requests name, sealed copies
//! in memory made once (`ompd_loader::library::stock`), which every worker it forks for that
//! library reaches through the zygote's descriptors (`/proc/<zygote>/fd/N`) and loads its first
//! fresh instances from, instead of copying the file again. The zygote reads the files' bytes
//! and never loads one.

use std::collections::HashMap;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

/// Copies a zygote keeps of each library: as many as a worker's batch has units.
const COPIES: usize = crate::batch::BATCH;

/// Libraries a zygote keeps copies of (a default run has fifteen).
const LIBRARIES_CAP: usize = 32;

/// Files larger than this get no copies (eight of them would be a zygote's burden).
const SIZE_CAP: u64 = 64 << 20;

/// What a library file was when its copies were made: device, inode, length and modification
/// time. A file rebuilt since (a new inode, or new bytes) is copied again.
type Version = (u64, u64, u64, i64, i64);

/// The version of the file at `path`, if it can be read.
fn version(path: &Path) -> Option<Version> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some((m.dev(), m.ino(), m.len(), m.mtime(), m.mtime_nsec()))
}

/// The copies made so far, by library file, with the version they copy.
#[derive(Default)]
pub(super) struct Stock {
    copies: HashMap<PathBuf, (Version, Vec<OwnedFd>)>,
}

impl Stock {
    /// Makes the copies of the library at `path` unless copies of its current version were
    /// made already. A file that cannot be copied, or is larger than [`SIZE_CAP`], gets none:
    /// its workers copy it themselves, and report what fails.
    pub(super) fn prepare(&mut self, path: &Path) {
        let Some(now) = version(path) else {
            self.copies.remove(path);
            return;
        };
        if self.copies.get(path).is_some_and(|(v, _)| *v == now) {
            return;
        }
        self.copies.remove(path);
        if now.2 > SIZE_CAP {
            return;
        }
        let made: Result<Vec<OwnedFd>, String> = (0..COPIES)
            .map(|_| ompd_loader::library::stock::sealed_copy(path))
            .collect();
        if let Ok(made) = made {
            if self.copies.len() >= LIBRARIES_CAP {
                self.copies.clear();
            }
            self.copies.insert(path.to_path_buf(), (now, made));
        }
    }

    /// The descriptor numbers of the copies of the library at `path` (none when there are
    /// none), which a forked worker reaches through this process's descriptors.
    pub(super) fn numbers(&self, path: &Path) -> Vec<RawFd> {
        self.copies
            .get(path)
            .map(|(_, fds)| fds.iter().map(AsRawFd::as_raw_fd).collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The raw numbers of the copies of `path` in `stock`.
    fn numbers(stock: &Stock, path: &Path) -> Vec<RawFd> {
        stock.copies[path].1.iter().map(|c| c.as_raw_fd()).collect()
    }

    #[test]
    fn a_library_is_copied_once_per_version_and_its_copies_are_named_by_number() {
        let home = tempfile::tempdir().unwrap();
        let (lib, other) = (home.path().join("libompd.so"), home.path().join("other.so"));
        std::fs::write(&lib, b"first").unwrap();
        std::fs::write(&other, b"other").unwrap();
        let mut stock = Stock::default();
        stock.prepare(&lib);
        let first = numbers(&stock, &lib);
        assert_eq!(first.len(), COPIES);
        stock.prepare(&lib);
        assert_eq!(
            numbers(&stock, &lib),
            first,
            "the same version is not copied again"
        );
        // A rebuild: a new file at the same path.
        std::fs::remove_file(&lib).unwrap();
        std::fs::write(&lib, b"second").unwrap();
        stock.prepare(&lib);
        let bytes = |fd: &OwnedFd| {
            use std::os::unix::fs::FileExt;
            let mut buf = [0u8; 16];
            let file = std::fs::File::from(fd.try_clone().unwrap());
            let n = file.read_at(&mut buf, 0).unwrap();
            buf[..n].to_vec()
        };
        assert!(stock.copies[&lib].1.iter().all(|c| bytes(c) == b"second"));
        stock.prepare(&other);
        stock.prepare(Path::new(""));
        assert_eq!(stock.copies.len(), 2, "no path, no copies");
        assert_eq!(stock.numbers(&lib), numbers(&stock, &lib));
        assert!(stock.numbers(Path::new("/no/such.so")).is_empty());
    }
}
