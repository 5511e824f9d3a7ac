//! The native threads of an image by id ([`ThreadIndex`]): the simulated target answers a
//! thread lookup (`get_thread_context_for_thread_id`, the thread-local `__kmp_gtid`) in constant
//! time, so that the bench's scaling curves show the library's own work as threads grow, not
//! the simulator's.

use super::NativeThread;
use std::collections::HashMap;

/// The native threads by id, built once when the image is lowered (its threads do not change).
#[derive(Clone, Debug, Default)]
pub struct ThreadIndex {
    /// pthread id, truncated to the target's `kmp_thread_t` width → the first thread with it.
    pthread: HashMap<u64, usize>,
    /// lwp → the first thread with it.
    lwp: HashMap<u64, usize>,
    /// Whether any thread has a thread-local `__kmp_gtid` (a runtime in scan mode has none).
    tls: bool,
}

impl ThreadIndex {
    /// The index of `threads`, whose pthread ids the target holds `pthread_width` bytes wide.
    pub(super) fn of(threads: &[NativeThread], pthread_width: usize) -> ThreadIndex {
        let mask = width_mask(pthread_width);
        let mut index = ThreadIndex {
            tls: threads.iter().any(|t| t.gtid_slot != 0),
            ..ThreadIndex::default()
        };
        for (i, t) in threads.iter().enumerate() {
            index.pthread.entry(t.native.pthread & mask).or_insert(i);
            index.lwp.entry(u64::from(t.native.lwp)).or_insert(i);
        }
        index
    }

    /// The first thread whose pthread id (as the target holds it) is `id`.
    pub(super) fn by_pthread(&self, id: u64) -> Option<usize> {
        self.pthread.get(&id).copied()
    }

    /// The first thread whose lwp is `id`.
    pub(super) fn by_lwp(&self, id: u64) -> Option<usize> {
        self.lwp.get(&id).copied()
    }

    /// Whether any thread has a thread-local `__kmp_gtid`.
    pub(super) fn thread_local_gtid(&self) -> bool {
        self.tls
    }
}

/// The mask of an id `width` bytes wide.
pub(super) fn width_mask(width: usize) -> u64 {
    u64::MAX >> (64 - 8 * width.clamp(1, 8) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::NativeId;

    fn thread(pthread: u64, lwp: u32, gtid_slot: u64) -> NativeThread {
        NativeThread {
            native: NativeId { pthread, lwp },
            gtid_slot,
            gtid: 0,
        }
    }

    #[test]
    fn a_lookup_finds_the_first_thread_with_the_id_as_the_target_holds_it() {
        let threads = [
            thread(0x1_0000_7000, 11, 0),
            thread(0x7000, 12, 0),
            thread(0x7100, 11, 0),
        ];
        let wide = ThreadIndex::of(&threads, 8);
        assert_eq!(wide.by_pthread(0x1_0000_7000), Some(0));
        assert_eq!(wide.by_pthread(0x7000), Some(1));
        assert_eq!(wide.by_lwp(11), Some(0), "the first of two");
        assert_eq!(wide.by_lwp(13), None);
        assert!(!wide.thread_local_gtid(), "scan mode: no slot");
        // A 4-byte kmp_thread_t holds both first ids as 0x7000: the first thread has it.
        let narrow = ThreadIndex::of(&threads, 4);
        assert_eq!(narrow.by_pthread(0x7000), Some(0));
        assert_eq!(narrow.by_pthread(0x1_0000_7000), None);
        assert!(ThreadIndex::of(&[thread(1, 1, 0x40)], 8).thread_local_gtid());
        assert_eq!(width_mask(4), 0xffff_ffff);
        assert_eq!(width_mask(8), u64::MAX);
    }
}
