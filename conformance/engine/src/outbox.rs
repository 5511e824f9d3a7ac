//! The worker's outbox: event lines written but not yet sent, shared by the worker's main
//! thread (which adds them, [`crate::worker`]'s stream), its watchdog (which sends them every
//! tick) and its guards (which send them before their own line, [`crate::watchdog`]).

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};

/// Event lines written but not yet sent, shared by the worker's main thread, its watchdog thread
/// and its guards (the fatal-signal handler, the exit handler). Whoever holds it alone may touch
/// the bytes; a guard that cannot get hold of it soon gives up rather than wait on the thread it
/// interrupted.
pub(crate) struct Outbox {
    held: AtomicBool,
    /// Set when the watchdog could not send: the main thread sends again itself.
    failed: AtomicBool,
    bytes: UnsafeCell<Vec<u8>>,
}

// SAFETY: the bytes are reached only through `Held`, which `held` makes exclusive.
unsafe impl Sync for Outbox {}

/// The worker's outbox.
pub(crate) static OUTBOX: Outbox = Outbox::new();

/// Tries a guard makes to get hold of the outbox before it gives up.
const GUARD_TRIES: u32 = 1 << 20;

impl Outbox {
    /// An empty outbox.
    pub(crate) const fn new() -> Outbox {
        Outbox {
            held: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            bytes: UnsafeCell::new(Vec::new()),
        }
    }

    fn try_hold(&self) -> Option<Held<'_>> {
        self.held
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| Held(self))
    }

    /// Holds the outbox, waiting for the watchdog to finish a send.
    pub(crate) fn hold(&self) -> Held<'_> {
        loop {
            if let Some(h) = self.try_hold() {
                return h;
            }
            std::thread::yield_now();
        }
    }

    /// Holds the outbox within [`GUARD_TRIES`] tries, never yielding (a signal handler's way).
    fn hold_soon(&self) -> Option<Held<'_>> {
        (0..GUARD_TRIES).find_map(|_| {
            std::hint::spin_loop();
            self.try_hold()
        })
    }

    /// Whether the watchdog's last send failed (the main thread then sends itself).
    pub(crate) fn failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }

    /// Forgets a failed send (the main thread sends now).
    pub(crate) fn clear_failed(&self) {
        self.failed.store(false, Ordering::Relaxed);
    }

    /// The watchdog's tick: sends what is pending unless another holds the outbox; a failed
    /// send is left for the main thread, which restores the stream first.
    pub(crate) fn send_pending(&self, fd: std::os::fd::BorrowedFd) {
        let Some(mut h) = self.try_hold() else {
            return;
        };
        if !h.is_empty() && !self.failed() && send(fd, &mut h).is_err() {
            self.failed.store(true, Ordering::Relaxed);
        }
    }

    /// A guard's last word: sends what is pending, without allocating (the worker ends next).
    pub(crate) fn send_before_end(&self, fd: std::os::fd::BorrowedFd) {
        if let Some(mut h) = self.hold_soon() {
            let _ = send(fd, &mut h);
        }
    }
}

/// Writes `bytes` to `fd` and removes what was written; stops at the first error.
fn send(fd: std::os::fd::BorrowedFd, bytes: &mut Vec<u8>) -> std::io::Result<()> {
    send_with(bytes, |b| {
        nix::unistd::write(fd, b).map_err(std::io::Error::from)
    })
}

/// Writes `bytes` with `write` (one write call: the count it wrote) until all are written or a
/// write fails or writes nothing, and removes what was written; an interrupted write is retried.
/// Without allocating, so the guards can send too.
pub(crate) fn send_with(
    bytes: &mut Vec<u8>,
    mut write: impl FnMut(&[u8]) -> std::io::Result<usize>,
) -> std::io::Result<()> {
    let mut from = 0;
    let sent = loop {
        if from == bytes.len() {
            break Ok(());
        }
        match write(&bytes[from..]) {
            Ok(0) => break Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => from += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => break Err(e),
        }
    };
    bytes.drain(..from);
    sent
}

/// The outbox held alone; released when dropped.
pub(crate) struct Held<'a>(&'a Outbox);

impl std::ops::Deref for Held<'_> {
    type Target = Vec<u8>;
    fn deref(&self) -> &Vec<u8> {
        // SAFETY: `held` is ours, so no one else reaches the bytes.
        unsafe { &*self.0.bytes.get() }
    }
}

impl std::ops::DerefMut for Held<'_> {
    fn deref_mut(&mut self) -> &mut Vec<u8> {
        // SAFETY: as for `deref`.
        unsafe { &mut *self.0.bytes.get() }
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.0.held.store(false, Ordering::Release);
    }
}
