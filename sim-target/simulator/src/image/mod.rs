//! Memory images of a model: the bytes, symbols and thread table an OMPD library reads.
//!
//! [`lower`] turns a [`Model`](crate::model::Model) into an [`Image`] for one architecture and
//! layout policy, following the LLVM-family object graph; [`read`] walks an image the way the
//! libraries do and rebuilds the model, so the two can be round-tripped; [`corrupt`] tears a
//! lowered image the way a wild write or a mid-update core file would; [`serve`] serves an image
//! to the callbacks as an `ompd_serve` source.

pub mod corrupt;
mod index;
mod lower;
mod read;
mod serve;

pub use lower::lower;
pub use read::{read, ReadError};
pub use serve::ServedImage;

use crate::layout::Layout;
use crate::model::NativeId;
use ompd_serve::arch::Arch;
use ompd_serve::memory::Memory;
use std::collections::BTreeMap;

/// The runtime's thread-local gtid variable: the one symbol the libraries look up per thread.
pub const GTID_SYMBOL: &str = "__kmp_gtid";

/// A native thread of the target as the debugger knows it: ids and its TLS `__kmp_gtid` slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NativeThread {
    /// Native ids.
    pub native: NativeId,
    /// Address of this thread's `__kmp_gtid` TLS variable (0: the runtime keeps none, scan mode).
    pub gtid_slot: u64,
    /// The gtid stored there (negative for a thread that never entered OpenMP).
    pub gtid: i32,
}

/// Where the lowering put each model entity (for dumps, the reader's cross-checks and tests).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    /// Address of each thread's `kmp_base_info_t` (the thread handle target), by gtid.
    pub thread: Vec<u64>,
    /// Address of the `kmp_base_team_t` serving each region, by region id.
    pub team: Vec<u64>,
    /// Address of the `kmp_taskdata_t` serving each task, by task id.
    pub task: Vec<u64>,
    /// Address of the `ompt_lw_taskteam_t` record of each outer serialized region kept in an
    /// lwt chain, by region id.
    pub lwt: BTreeMap<usize, u64>,
}

/// A lowered target: memory, symbols, native threads, and the layout that describes it.
#[derive(Clone, Debug)]
pub struct Image {
    /// Architecture.
    pub arch: Arch,
    /// Layout used for every structure.
    pub layout: Layout,
    /// Target memory.
    pub memory: Memory,
    /// Global symbols (name → address). The TLS symbol `__kmp_gtid` is not here: it resolves
    /// per thread through [`Image::threads`].
    pub symbols: BTreeMap<String, u64>,
    /// OpenMP threads (by gtid), then foreign threads.
    pub threads: Vec<NativeThread>,
    /// Entity placement.
    pub placement: Placement,
    /// The threads by id (built when lowered: [`Image::threads`] do not change after).
    pub(crate) index: index::ThreadIndex,
}

impl Image {
    /// The address of a global symbol.
    pub fn symbol(&self, name: &str) -> Option<u64> {
        self.symbols.get(name).copied()
    }

    /// The native thread whose id of `kind` (0 pthread, 1 lwp) equals `id` in target byte order.
    pub fn find_thread(&self, kind: u64, id: &[u8]) -> Option<usize> {
        // The id is decoded once and looked up (the target holds a pthread id truncated to the
        // width of its kmp_thread_t).
        let width = match kind {
            ompd_abi::thread_id_kind::PTHREAD => self.layout.thread_id_size() as usize,
            ompd_abi::thread_id_kind::LWP => 4,
            _ => return None,
        };
        if id.len() != width {
            return None;
        }
        let want = self.arch.decode(id) & index::width_mask(width);
        match kind {
            ompd_abi::thread_id_kind::PTHREAD => self.index.by_pthread(want),
            _ => self.index.by_lwp(want),
        }
    }

    /// The native id bytes (target byte order) of thread `index` for `kind`.
    pub fn thread_id_bytes(&self, index: usize, kind: u64) -> Option<Vec<u8>> {
        let t = self.threads.get(index)?;
        match kind {
            ompd_abi::thread_id_kind::PTHREAD => Some(
                self.arch
                    .encode(t.native.pthread, self.layout.thread_id_size() as usize),
            ),
            ompd_abi::thread_id_kind::LWP => Some(self.arch.encode(t.native.lwp as u64, 4)),
            _ => None,
        }
    }
}
