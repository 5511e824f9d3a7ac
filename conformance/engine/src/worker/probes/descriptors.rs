//! The tool's file descriptors (OMPD-THR-003): each descriptor open when the worker first
//! probes (its stdin, stdout, stderr, its event stream, its backups, a real target's files),
//! by identity (device and inode), so that a library which closes, replaces or reuses one it
//! did not open is seen. Descriptors the library opens itself are its own and are not judged.
//!
//! The worker survives such a library: its vital descriptors (the event stream and the capture
//! of stdout and stderr) each have a backup at a high number, and a vital descriptor found
//! closed or replaced after a check is restored from its backup before anything is written.

use nix::libc;
use std::os::fd::RawFd;
use std::sync::Mutex;

/// Where the backups of the vital descriptors start: far above what a worker opens itself.
const BACKUP_FROM: RawFd = 700;

/// A descriptor's identity: device and inode of what it refers to.
type Identity = (u64, u64);

/// The identity of `fd`, or `None` when it is not open.
fn identity(fd: RawFd) -> Option<Identity> {
    // SAFETY: fstat writes into a zeroed stat; a closed number answers EBADF.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let rc = unsafe { libc::fstat(fd, &mut st) };
    (rc == 0).then_some((st.st_dev, st.st_ino))
}

/// What `fd` refers to, in words (`/proc/self/fd`'s link).
fn describe(fd: RawFd) -> String {
    std::fs::read_link(format!("/proc/self/fd/{fd}"))
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "?".into())
}

/// The tool's descriptors at one moment, with what each referred to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Descriptors(Vec<(RawFd, Identity, String)>);

impl Descriptors {
    /// Every descriptor open now (read from `/proc/self/fd`; the listing's own descriptor is
    /// closed before the others are read, so it is not among them).
    pub(super) fn take() -> Descriptors {
        let numbers: Vec<RawFd> = std::fs::read_dir("/proc/self/fd")
            .map(|d| {
                d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        Descriptors(
            numbers
                .into_iter()
                .filter_map(|fd| Some((fd, identity(fd)?, describe(fd))))
                .collect(),
        )
    }

    /// The changes since the reading ([`Descriptors::changes`]), after which the worker's vital
    /// descriptors are restored ([`restore`]) and those still changed are no longer watched, so
    /// each change is reported once, during the check that made it.
    pub(super) fn take_changes(&mut self) -> Vec<String> {
        let changes = self.changes();
        if changes.is_empty() {
            // Nothing to restore or to stop watching (one fstat per descriptor, around every
            // check).
            return changes;
        }
        restore();
        self.0.retain(|(fd, was, _)| identity(*fd) == Some(*was));
        changes
    }

    /// Each of these descriptors that is closed or refers to something else now, one line each.
    pub(super) fn changes(&self) -> Vec<String> {
        self.0
            .iter()
            .filter_map(|(fd, was, what)| match identity(*fd) {
                Some(now) if now == *was => None,
                Some(_) => Some(format!(
                    "descriptor {fd} ({what}) was replaced: it refers to {} now",
                    describe(*fd)
                )),
                None => Some(format!("descriptor {fd} ({what}) was closed")),
            })
            .collect()
    }
}

/// The vital descriptors and their backups.
static VITAL: Mutex<Vec<(RawFd, RawFd)>> = Mutex::new(Vec::new());

/// Keeps a backup of each of `fds` (the worker's event stream and its capture), at numbers
/// from [`BACKUP_FROM`] up, for [`restore`].
pub(crate) fn keep_backups(fds: &[RawFd]) {
    let mut vital = VITAL.lock().unwrap_or_else(|e| e.into_inner());
    for &fd in fds {
        // SAFETY: F_DUPFD_CLOEXEC takes an integer; the new descriptor is owned by this table.
        let backup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, BACKUP_FROM) };
        if backup >= 0 {
            vital.push((fd, backup));
        }
    }
}

/// Restores each vital descriptor that no longer refers to what its backup does (a library
/// closed or replaced it), and renews a backup that was lost while its descriptor was not.
pub(super) fn restore() {
    let mut vital = VITAL.lock().unwrap_or_else(|e| e.into_inner());
    for (fd, backup) in vital.iter_mut() {
        match (identity(*fd), identity(*backup)) {
            (now, Some(kept)) if now != Some(kept) => {
                // SAFETY: dup2 onto the vital number; what a library put there is not ours.
                unsafe { libc::dup2(*backup, *fd) };
            }
            (Some(_), None) => {
                // SAFETY: as in keep_backups.
                *backup = unsafe { libc::fcntl(*fd, libc::F_DUPFD_CLOEXEC, BACKUP_FROM) };
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_or_replaced_descriptor_is_seen_and_a_vital_one_restored() {
        let file = tempfile::tempfile().unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
        let other = tempfile::tempfile().unwrap();
        keep_backups(&[fd]);
        let before = Descriptors::take();
        // Other tests open and close descriptors meanwhile: only this one is looked at.
        let mine = || -> Vec<String> {
            let prefix = format!("descriptor {fd} (");
            before
                .changes()
                .into_iter()
                .filter(|c| c.starts_with(&prefix))
                .collect()
        };
        assert!(mine().is_empty());
        // SAFETY: replaces the test's own temporary file's descriptor.
        unsafe { libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&other), fd) };
        let changes = mine();
        assert!(
            changes.len() == 1 && changes[0].contains("was replaced"),
            "{changes:?}"
        );
        restore();
        assert!(mine().is_empty(), "restored: {:?}", mine());
    }

    #[test]
    fn a_change_is_reported_once() {
        let file = tempfile::tempfile().unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
        let other = tempfile::tempfile().unwrap();
        let mut watched = Descriptors::take();
        let prefix = format!("descriptor {fd} (");
        let mine = |d: &mut Descriptors| -> usize {
            d.take_changes()
                .iter()
                .filter(|c| c.starts_with(&prefix))
                .count()
        };
        // SAFETY: replaces the test's own temporary file's descriptor (kept by no backup).
        unsafe { libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&other), fd) };
        assert_eq!(mine(&mut watched), 1);
        assert_eq!(mine(&mut watched), 0, "reported again");
    }
}
