//! Typed calls of the OpenMP 5.2 device routines: `ompd_get_device_thread_id_kinds` (two
//! tool-owned arrays, read bounded by their blocks and freed here) and
//! `ompd_get_device_from_thread` (a handle the library promises to be the thread's own address
//! space handle, so it is returned as an address and never released).

use super::{rc_of, AspaceH, Call, Fail, Library, ThreadH, POISON_PTR};
use ompd_abi::{AddressSpaceHandle, OmpdSize, OmpdThreadIdKind};
use ompd_serve::callbacks::{block_size, read_inside_block, tool_free};
use std::ffi::c_int;

/// A count no library writes, set before the call.
const POISON_COUNT: c_int = 0x5A5A_5A5A;

/// `count` words of the tool-owned block `p` the library returned as `what`; `Err` when `p` is
/// not the start of a live block holding them. The block is freed.
pub(super) fn tool_words(p: *mut u64, count: usize, what: &str) -> Call<Vec<u64>> {
    if p as usize == POISON_PTR {
        return Err(Fail::Invalid(format!("{what} was not written")));
    }
    let want = count * std::mem::size_of::<u64>();
    let size = block_size(p.cast()).ok_or_else(|| {
        Fail::Invalid(format!(
            "{what} {p:p} is not a live block from alloc_memory"
        ))
    })?;
    if size < want as u64 {
        return Err(Fail::Invalid(format!(
            "{what}: a {size}-byte block cannot hold {count} entries"
        )));
    }
    let bytes =
        read_inside_block(p as usize, want).map_err(|e| Fail::Invalid(format!("{what}: {e}")))?;
    let out = bytes
        .chunks_exact(8)
        .map(|c| u64::from_ne_bytes(c.try_into().unwrap_or([0; 8])))
        .collect::<Vec<_>>();
    if out.len() != count {
        return Err(Fail::Invalid(format!(
            "{what}: the block holds {} of {count} entries",
            out.len()
        )));
    }
    tool_free(p.cast())
        .map_err(|rc| Fail::Invalid(format!("{what}: free_memory refused it ({rc})")))?;
    Ok(out)
}

impl Library {
    /// `ompd_get_device_thread_id_kinds` (5.2): the (kind, size) pairs of the device's native
    /// thread ids. Both arrays must be separate live tool blocks of `count` entries (OMPD-PROC-020).
    pub fn get_device_thread_id_kinds(&self, ah: &AspaceH) -> Call<Vec<(u64, u64)>> {
        let mut kinds = POISON_PTR as *mut OmpdThreadIdKind;
        let mut sizes = POISON_PTR as *mut OmpdSize;
        let mut count = POISON_COUNT;
        // SAFETY: live handle; valid out-parameters.
        let (rc, _g) = unsafe {
            self.raw()
                .get_device_thread_id_kinds(ah.ptr, &mut kinds, &mut sizes, &mut count)
        }?;
        rc_of(rc, || {
            if count == POISON_COUNT {
                return Err(Fail::Invalid("count was not written".into()));
            }
            let n = usize::try_from(count)
                .map_err(|_| Fail::Invalid(format!("count {count} is negative")))?;
            if kinds == sizes && n > 0 {
                return Err(Fail::Invalid(
                    "kinds and thread_id_sizes are one block".into(),
                ));
            }
            let k = tool_words(kinds, n, "kinds")?;
            let s = tool_words(sizes, n, "thread_id_sizes")?;
            Ok(k.into_iter().zip(s).collect())
        })
    }

    /// `ompd_get_device_from_thread` (5.2): the address of the address-space handle the library
    /// answers (not released: the specification makes it the handle the tool already holds).
    pub fn get_device_from_thread(&self, th: &ThreadH) -> Call<usize> {
        let mut h = POISON_PTR as *mut AddressSpaceHandle;
        // SAFETY: live handle; valid out-parameter.
        let (rc, _g) = unsafe { self.raw().get_device_from_thread(th.ptr, &mut h) }?;
        rc_of(rc, || {
            if h as usize == POISON_PTR {
                Err(Fail::Invalid("device was not written".into()))
            } else {
                Ok(h as usize)
            }
        })
    }
}
