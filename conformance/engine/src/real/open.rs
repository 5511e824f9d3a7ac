//! Opening a real target: attaching to a live process or reading a core file, and reading the
//! records its fixture left in memory.

use fixture_protocol::truth::{Ompt, Truth};
use ompd_serve::arch::Arch;
use ompd_serve::source::{Source, SymbolError, TargetKind};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;

/// A real target as a unit names it: a live process by pid, or an ELF core file. The worker
/// opens it ([`open`]) into an [`OpenedTarget`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum RealTarget {
    /// A running process, attached by pid.
    Live {
        /// Its pid.
        pid: i32,
    },
    /// An ELF core file.
    Core {
        /// Its path.
        path: PathBuf,
    },
}

impl RealTarget {
    /// The kind reports name.
    pub fn kind(&self) -> TargetKind {
        match self {
            RealTarget::Live { .. } => TargetKind::Live,
            RealTarget::Core { .. } => TargetKind::Core,
        }
    }

    /// The target's arch variant: `live-target` serves x86-64 processes and core files only.
    pub fn arch(&self) -> Arch {
        Arch::LP64_LE
    }
}

/// A real target opened: the attached process (held until the last clone is dropped) or the
/// read core file, shared by the address spaces of one unit (a live process can be attached
/// only once, so a second address space serves the same attachment).
#[derive(Debug, Clone)]
pub struct OpenedTarget(pub Arc<dyn Source>);

impl Source for OpenedTarget {
    fn kind(&self) -> TargetKind {
        self.0.kind()
    }
    fn arch(&self) -> Arch {
        self.0.arch()
    }
    fn read(&self, addr: u64, len: u64) -> Result<Vec<u8>, String> {
        self.0.read(addr, len)
    }
    fn read_cstr(&self, addr: u64, max: u64) -> Result<Vec<u8>, String> {
        self.0.read_cstr(addr, max)
    }
    fn symbol(&self, name: &str, thread: Option<usize>) -> Result<u64, SymbolError> {
        self.0.symbol(name, thread)
    }
    fn is_thread_local(&self, name: &str) -> Option<bool> {
        self.0.is_thread_local(name)
    }
    fn thread_count(&self) -> usize {
        self.0.thread_count()
    }
    fn find_thread(&self, kind: u64, id: &[u8]) -> Option<usize> {
        self.0.find_thread(kind, id)
    }
    fn thread_id_bytes(&self, index: usize, kind: u64) -> Option<Vec<u8>> {
        self.0.thread_id_bytes(index, kind)
    }
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        self.0.as_any()
    }
    fn duplicate(&self) -> Option<Box<dyn Source>> {
        Some(Box::new(self.clone()))
    }
}

/// Opens a real target: attaches to the process (held until the opened target is dropped) or
/// reads the core file.
pub fn open(target: &RealTarget) -> Result<OpenedTarget, String> {
    let source: Arc<dyn Source> = match target {
        RealTarget::Live { pid } => Arc::new(
            live_target::live::LiveTarget::attach(*pid)
                .map_err(|e| format!("cannot attach to pid {pid}: {e}"))?,
        ),
        RealTarget::Core { path } => Arc::new(
            live_target::core::CoreTarget::open(path)
                .map_err(|e| format!("cannot read core file {}: {e}", path.display()))?,
        ),
    };
    Ok(OpenedTarget(source))
}

/// The environment process `pid` started with (`/proc/PID/environ`); empty when unreadable.
pub fn start_environment(pid: i32) -> Vec<(String, String)> {
    std::fs::read(format!("/proc/{pid}/environ"))
        .map(|b| {
            b.split(|c| *c == 0)
                .filter_map(|kv| {
                    let kv = String::from_utf8_lossy(kv);
                    kv.split_once('=')
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Reads a record of `size` bytes at symbol `name`: `Ok(None)` when no module defines it.
fn record(source: &dyn Source, name: &str, size: usize) -> Result<Option<Vec<u8>>, String> {
    match source.symbol(name, None) {
        Ok(addr) => source
            .read(addr, size as u64)
            .map(Some)
            .map_err(|e| format!("reading {name} at {addr:#x}: {e}")),
        Err(SymbolError::NotFound) => Ok(None),
        Err(e) => Err(format!("{name}: {e}")),
    }
}

/// What a real target's fixture recorded: the truth, and the OMPT view when the tool ran.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// The OpenMP API view.
    pub truth: Truth,
    /// The OMPT view.
    pub ompt: Option<Ompt>,
}

/// Reads the fixture's records from the target: `Ok(None)` for a program that is no fixture.
pub fn recorded(source: &dyn Source) -> Result<Option<Recorded>, String> {
    use fixture_protocol::truth as t;
    let Some(bytes) = record(source, t::TRUTH_SYMBOL, t::TRUTH_SIZE)? else {
        return Ok(None);
    };
    let truth = Truth::decode(&bytes).map_err(|e| format!("fixture truth: {e}"))?;
    let ompt = match record(source, t::OMPT_SYMBOL, t::OMPT_SIZE)? {
        Some(b) if truth.ompt => Some(Ompt::decode(&b).map_err(|e| format!("OMPT truth: {e}"))?),
        _ => None,
    };
    Ok(Some(Recorded { truth, ompt }))
}
