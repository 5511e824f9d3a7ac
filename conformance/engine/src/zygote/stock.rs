//! A zygote's stock of library copies: for each library file its requests name, sealed copies
//! in memory made once (`ompd_loader::library::stock`), which every worker it forks for that
//! library reaches through the zygote's descriptors (`/proc/<zygote>/fd/N`) and loads its first
//! fresh instances from, instead of copying the file again. The zygote reads the files' bytes
//! and never loads one.

use std::collections::HashMap;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

/// The most copies a zygote keeps of one library (a worker's batch has 8 units at most).
const COPIES_CAP: usize = 16;

/// Libraries a zygote keeps copies of (a default run has fifteen).
const LIBRARIES_CAP: usize = 32;

/// Files larger than this get no copies (a copy for each unit would burden the zygote).
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
    /// Makes copies of the library at `path` for a worker of `units` units (one each, up to
    /// [`COPIES_CAP`]) unless that many copies of its current version were made already. A
    /// file that cannot be copied, or is larger than [`SIZE_CAP`], gets none: its workers copy
    /// it themselves, and report what fails.
    pub(super) fn prepare(&mut self, path: &Path, units: usize) {
        let Some(now) = version(path) else {
            self.copies.remove(path);
            return;
        };
        if self.copies.get(path).is_some_and(|(v, _)| *v != now) {
            self.copies.remove(path);
        }
        let have = self.copies.get(path).map_or(0, |(_, c)| c.len());
        let wanted = units.min(COPIES_CAP);
        if have >= wanted || now.2 > SIZE_CAP {
            return;
        }
        let made: Result<Vec<OwnedFd>, String> = (have..wanted)
            .map(|_| ompd_loader::library::stock::sealed_copy(path))
            .collect();
        let Ok(made) = made else { return };
        if have == 0 && self.copies.len() >= LIBRARIES_CAP {
            self.copies.clear();
        }
        let (_, copies) = self
            .copies
            .entry(path.to_path_buf())
            .or_insert_with(|| (now, Vec::new()));
        copies.extend(made);
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
        stock.prepare(&lib, 2);
        let first = numbers(&stock, &lib);
        assert_eq!(first.len(), 2, "a copy for each unit");
        stock.prepare(&lib, 1);
        assert_eq!(numbers(&stock, &lib), first, "enough copies already");
        stock.prepare(&lib, 3);
        assert_eq!(numbers(&stock, &lib)[..2], first, "one more");
        assert_eq!(numbers(&stock, &lib).len(), 3);
        let first = numbers(&stock, &lib);
        stock.prepare(&lib, 3);
        assert_eq!(
            numbers(&stock, &lib),
            first,
            "the same version is not copied again"
        );
        // A rebuild: a new file at the same path.
        std::fs::remove_file(&lib).unwrap();
        std::fs::write(&lib, b"second").unwrap();
        stock.prepare(&lib, 3);
        let bytes = |fd: &OwnedFd| {
            use std::os::unix::fs::FileExt;
            let mut buf = [0u8; 16];
            let file = std::fs::File::from(fd.try_clone().unwrap());
            let n = file.read_at(&mut buf, 0).unwrap();
            buf[..n].to_vec()
        };
        let remade = &stock.copies[&lib].1;
        assert!(remade.len() == 3 && remade.iter().all(|c| bytes(c) == b"second"));
        stock.prepare(&other, 3);
        stock.prepare(Path::new(""), 3);
        assert_eq!(stock.copies.len(), 2, "no path, no copies");
        assert_eq!(stock.numbers(&lib), numbers(&stock, &lib));
        assert!(stock.numbers(Path::new("/no/such.so")).is_empty());
    }
}
