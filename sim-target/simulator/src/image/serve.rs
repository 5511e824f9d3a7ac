//! An image served to the callbacks: the `ompd_serve` [`Source`] of a simulated target.
//!
//! The one target-specific answer is the runtime's thread-local gtid variable ([`GTID_SYMBOL`]),
//! which resolves per thread through the image's native thread table.

use super::{Image, GTID_SYMBOL};
use ompd_serve::arch::Arch;
use ompd_serve::callbacks::Target;
use ompd_serve::source::{memory_cstr, Source, SymbolError, TargetKind};
use std::any::Any;

impl Source for Image {
    fn kind(&self) -> TargetKind {
        TargetKind::Sim
    }

    fn arch(&self) -> Arch {
        self.arch
    }

    fn pthread_size(&self) -> u64 {
        self.layout.thread_id_size()
    }

    fn read(&self, addr: u64, len: u64) -> Result<Vec<u8>, String> {
        self.memory
            .read(addr, len)
            .map(<[u8]>::to_vec)
            .map_err(|e| e.to_string())
    }

    fn read_with(&self, addr: u64, len: u64, take: &mut dyn FnMut(&[u8])) -> Result<(), String> {
        take(self.memory.read(addr, len).map_err(|e| e.to_string())?);
        Ok(())
    }

    fn read_cstr(&self, addr: u64, max: u64) -> Result<Vec<u8>, String> {
        memory_cstr(&self.memory, addr, max)
    }

    fn symbol(&self, name: &str, thread: Option<usize>) -> Result<u64, SymbolError> {
        if name == GTID_SYMBOL {
            let Some(i) = thread else {
                return Err(SymbolError::Unavailable(format!(
                    "{name} is thread-local and was looked up without a thread context"
                )));
            };
            // A runtime in scan mode has no thread-local gtid (slot 0).
            return self
                .threads
                .get(i)
                .map(|t| t.gtid_slot)
                .filter(|slot| *slot != 0)
                .ok_or(SymbolError::NotFound);
        }
        Image::symbol(self, name).ok_or(SymbolError::NotFound)
    }

    fn is_thread_local(&self, name: &str) -> Option<bool> {
        let tls = name == GTID_SYMBOL && self.index.thread_local_gtid();
        (tls || Image::symbol(self, name).is_some()).then_some(tls)
    }

    fn thread_count(&self) -> usize {
        self.threads.len()
    }

    fn find_thread(&self, kind: u64, id: &[u8]) -> Option<usize> {
        Image::find_thread(self, kind, id)
    }

    fn thread_id_bytes(&self, index: usize, kind: u64) -> Option<Vec<u8>> {
        Image::thread_id_bytes(self, index, kind)
    }

    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }

    fn duplicate(&self) -> Option<Box<dyn Source>> {
        Some(Box::new(self.clone()))
    }
}

/// The simulated image behind a served [`Target`].
pub trait ServedImage {
    /// The simulated image served, for a simulated target (its memory is replaced while a
    /// [`Substitution`](ompd_serve::callbacks::Substitution) lives).
    fn image(&self) -> Option<&Image>;
}

impl ServedImage for Target {
    fn image(&self) -> Option<&Image> {
        self.source().as_any()?.downcast_ref()
    }
}
