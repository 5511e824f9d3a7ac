//! What the callback table serves a library from: one interface for every kind of target.
//!
//! A simulated image, a stopped live process and an ELF core file all
//! answer the same questions: the architecture, a bounded read of memory, the address of a
//! symbol (per thread for thread-local ones), and the native threads by their ids. The callbacks
//! in [`crate::callbacks`] know nothing else about a target, so every check that makes sense on
//! a real process runs unchanged on all three kinds.

use crate::arch::Arch;
use crate::memory::{MemError, Memory};
use serde::{Deserialize, Serialize};

/// The kind of a target, as reports name it (`"target": "sim|live|core"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    /// A simulated image lowered from a model.
    Sim,
    /// A live process, stopped under ptrace.
    Live,
    /// An ELF core file.
    Core,
}

impl TargetKind {
    /// The name reports use.
    pub fn name(self) -> &'static str {
        match self {
            TargetKind::Sim => "sim",
            TargetKind::Live => "live",
            TargetKind::Core => "core",
        }
    }
}

/// Why a symbol has no address.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SymbolError {
    /// No module of the target defines it.
    #[error("symbol not found")]
    NotFound,
    /// It exists but has no address for this thread (a thread-local symbol looked up without a
    /// thread, or whose block the thread has not allocated).
    #[error("symbol unavailable: {0}")]
    Unavailable(String),
}

/// A target's memory, symbols and native threads.
///
/// Implementations never panic on any input (the callbacks run inside `catch_unwind` anyway) and
/// bound every read by `len`.
pub trait Source: Send + Sync + std::fmt::Debug {
    /// The kind of target.
    fn kind(&self) -> TargetKind;

    /// Pointer width and byte order (and so the `sizeof_type` answer).
    fn arch(&self) -> Arch;

    /// The width of the target's native pthread ids: the pointer width unless the source
    /// knows its runtime's ids are another.
    fn pthread_size(&self) -> u64 {
        self.arch().pointer as u64
    }

    /// Exactly `len` bytes at `addr`, or why they cannot be read.
    fn read(&self, addr: u64, len: u64) -> Result<Vec<u8>, String>;

    /// Hands the `len` bytes at `addr` to `take` (without copying them when the source holds
    /// them in memory), or says why they cannot be read; `take` is not called then.
    fn read_with(&self, addr: u64, len: u64, take: &mut dyn FnMut(&[u8])) -> Result<(), String> {
        take(&self.read(addr, len)?);
        Ok(())
    }

    /// The bytes at `addr` up to and including the first NUL, reading at most `max` bytes; when
    /// no NUL comes within `max`, the `max` bytes read. The default reads in small pieces so a
    /// string near the end of a mapping is still found.
    fn read_cstr(&self, addr: u64, max: u64) -> Result<Vec<u8>, String> {
        const PIECE: u64 = 64;
        let mut out = Vec::new();
        while (out.len() as u64) < max {
            let at = addr.saturating_add(out.len() as u64);
            let want = PIECE.min(max - out.len() as u64);
            // Never read across the next PIECE boundary: a mapping ends on one.
            let to_boundary = PIECE - at % PIECE;
            let n = want.min(to_boundary);
            let bytes = self.read(at, n)?;
            if let Some(nul) = bytes.iter().position(|&b| b == 0) {
                out.extend_from_slice(&bytes[..=nul]);
                return Ok(out);
            }
            out.extend_from_slice(&bytes);
        }
        Ok(out)
    }

    /// The address of symbol `name`; for a thread-local symbol, of native thread `thread`'s
    /// instance (a thread-local symbol without a thread is [`SymbolError::Unavailable`]).
    fn symbol(&self, name: &str, thread: Option<usize>) -> Result<u64, SymbolError>;

    /// Whether symbol `name` is thread-local (`None`: unknown, or no such symbol). A thread
    /// context passed for a symbol that is not is a contract violation (OMPD-CB-006).
    fn is_thread_local(&self, _name: &str) -> Option<bool> {
        None
    }

    /// How many native threads the target has (thread contexts are indexed `0..count`).
    fn thread_count(&self) -> usize;

    /// The native thread whose id of `kind` (0 pthread, 1 lwp) is `id` in target byte order.
    fn find_thread(&self, kind: u64, id: &[u8]) -> Option<usize>;

    /// The id bytes (target byte order) of native thread `index` for `kind`.
    fn thread_id_bytes(&self, index: usize, kind: u64) -> Option<Vec<u8>>;

    /// The concrete source behind this one, for its owner to downcast (sim-target finds its
    /// simulated image this way); a wrapper answers with what it wraps.
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }

    /// Another source serving the same target in the same state (a second process or device
    /// context for the library), if this kind of source can give one.
    fn duplicate(&self) -> Option<Box<dyn Source>> {
        None
    }
}

/// [`Source::read_cstr`] over a [`Memory`]: the string with its NUL, the `max` bytes when no
/// NUL comes within them, or an error when the string runs off its mapping first.
pub fn memory_cstr(memory: &Memory, addr: u64, max: u64) -> Result<Vec<u8>, String> {
    match memory.read_cstr(addr, max) {
        Ok(s) => {
            let mut v = s.to_vec();
            v.push(0);
            Ok(v)
        }
        Err(MemError::Unterminated { .. }) => memory
            .read(addr, max)
            .map(<[u8]>::to_vec)
            .map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    }
}
