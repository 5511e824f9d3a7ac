//! The tool's signal configuration (OMPD-THR-002): every signal's full `sigaction` record
//! (handler, flags, mask) and the calling thread's signal mask, read with the system calls
//! themselves, so that a library which replaces a handler the tool installed is seen even when
//! the set of caught signals stays the same.

use nix::libc;
use nix::sys::signal::{SigSet, Signal};

/// The highest signal number Linux defines.
const MAX_SIGNAL: i32 = 64;

/// One signal's disposition: the handler's address (`SIG_DFL` 0, `SIG_IGN` 1), the flags and
/// the signals blocked while it runs (bit n-1 is signal n).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Action {
    handler: usize,
    flags: i32,
    mask: u64,
}

/// The signal configuration at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Signals {
    /// Each signal's action (`None` where the C library refuses to show it: SIGKILL, SIGSTOP
    /// and the two it reserves for itself).
    actions: Vec<(i32, Option<Action>)>,
    /// The calling thread's blocked signals (bit n-1 is signal n).
    blocked: u64,
}

/// The signals of a set as a bit mask (bit n-1 is signal n): the set's first 64 bits, which on
/// Linux hold signals 1 to 64 in that order (one copy, where asking `sigismember` of each
/// signal cost 64 calls per set, 4,160 per reading).
fn bits(set: &libc::sigset_t) -> u64 {
    const _: () = assert!(std::mem::size_of::<libc::sigset_t>() >= 8);
    // SAFETY: a sigset_t is at least 8 bytes (asserted above) of plain data.
    let first: [u8; 8] = unsafe { std::ptr::read_unaligned(set as *const _ as *const [u8; 8]) };
    u64::from_ne_bytes(first)
}

/// The action of `sig`, read without changing it.
fn action(sig: i32) -> Option<Action> {
    // SAFETY: a zeroed sigaction is a valid out-parameter; a NULL new action reads only.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let rc = unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) };
    (rc == 0).then(|| Action {
        handler: old.sa_sigaction,
        flags: old.sa_flags,
        mask: bits(&old.sa_mask),
    })
}

impl Signals {
    /// Reads every signal's action and the calling thread's mask.
    pub(super) fn take() -> Signals {
        let blocked = SigSet::thread_get_mask()
            .map(|s| bits(s.as_ref()))
            .unwrap_or(0);
        Signals {
            actions: (1..=MAX_SIGNAL).map(|s| (s, action(s))).collect(),
            blocked,
        }
    }

    /// Every difference from `before`, one line each (empty when nothing changed).
    pub(super) fn changes_since(&self, before: &Signals) -> Vec<String> {
        let mut out = Vec::new();
        if self.blocked != before.blocked {
            out.push(format!(
                "the thread's signal mask changed: now {:#x}, was {:#x} (signals {})",
                self.blocked,
                before.blocked,
                numbers(self.blocked ^ before.blocked)
            ));
        }
        for ((sig, now), (_, was)) in self.actions.iter().zip(&before.actions) {
            if now != was {
                out.push(format!("{}: {}", name(*sig), action_change(now, was)));
            }
        }
        out
    }
}

/// The signal numbers of a mask, comma-separated.
pub(super) fn numbers(mask: u64) -> String {
    let list: Vec<String> = (0..64)
        .filter(|b| mask & (1u64 << b) != 0)
        .map(|b| (b + 1).to_string())
        .collect();
    list.join(",")
}

/// A signal's name (`SIGSEGV`), or its number for a real-time one.
fn name(sig: i32) -> String {
    Signal::try_from(sig).map_or_else(|_| format!("signal {sig}"), |s| s.as_str().to_string())
}

/// A handler in words.
fn handler(h: usize) -> String {
    match h {
        0 => "the default action".into(),
        1 => "ignored".into(),
        h => format!("handler {h:#x}"),
    }
}

/// What changed in one signal's action.
fn action_change(now: &Option<Action>, was: &Option<Action>) -> String {
    let (Some(now), Some(was)) = (now, was) else {
        return format!(
            "its action became {}",
            if now.is_some() {
                "readable"
            } else {
                "unreadable"
            }
        );
    };
    let mut parts = Vec::new();
    if now.handler != was.handler {
        parts.push(format!(
            "{} replaced {}",
            handler(now.handler),
            handler(was.handler)
        ));
    }
    if now.flags != was.flags {
        parts.push(format!("flags {:#x}, were {:#x}", now.flags, was.flags));
    }
    if now.mask != was.mask {
        parts.push(format!(
            "blocks {} while it runs, blocked {}",
            numbers(now.mask),
            numbers(was.mask)
        ));
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler};

    // Bodies that differ, storing to a static that is read: an optimized build folds identical
    // functions into one address (and drops stores to a static nothing reads).
    static RAN: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
    extern "C" fn first(_: i32) {
        RAN.store(1, std::sync::atomic::Ordering::Relaxed);
    }
    extern "C" fn second(_: i32) {
        RAN.store(2, std::sync::atomic::Ordering::Relaxed);
    }

    #[test]
    fn a_replaced_handler_is_seen_though_the_signal_stays_caught() {
        let install = |h| {
            let a = SigAction::new(SigHandler::Handler(h), SaFlags::empty(), SigSet::empty());
            // SAFETY: handlers that do nothing, for a signal nothing sends in this test.
            unsafe { sigaction(Signal::SIGURG, &a) }.unwrap()
        };
        let old = install(first);
        let before = Signals::take();
        assert_eq!(Signals::take(), before, "a reading is stable");
        install(second);
        let changes = Signals::take().changes_since(&before);
        // SAFETY: restores the action read above.
        unsafe { sigaction(Signal::SIGURG, &old) }.unwrap();
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert!(changes[0].starts_with("SIGURG: handler 0x"), "{changes:?}");
        assert_eq!(numbers(0b101), "1,3");
        assert_eq!(
            RAN.load(std::sync::atomic::Ordering::Relaxed),
            0,
            "no handler ran"
        );
    }

    #[test]
    fn a_mask_reads_as_sigismember_says() {
        let mut set = SigSet::empty();
        for s in [
            Signal::SIGHUP,
            Signal::SIGSEGV,
            Signal::SIGURG,
            Signal::SIGSYS,
        ] {
            set.add(s);
        }
        let raw: &libc::sigset_t = set.as_ref();
        // SAFETY: sigismember reads a valid set.
        let member = |s: i32| unsafe { libc::sigismember(raw, s) } == 1;
        let want = (1..=MAX_SIGNAL)
            .filter(|&s| member(s))
            .fold(0u64, |m, s| m | 1 << (s - 1));
        assert_eq!(bits(raw), want);
        assert_eq!(numbers(want), "1,11,23,31");
    }
}
