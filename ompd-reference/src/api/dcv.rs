//! Display control variables: the runtime's `NAME=value` block as a vector (OMPD-DCV-*).
//!
//! The vector the tool receives is one block from `alloc_memory`: the entries, a NULL, then the
//! text block's address, so the release finds the text even when there are no entries.

use super::{rc, target};
use crate::handles::{self, Aspace};
use crate::Build;
use ompd_abi::{AddressSpaceHandle, Rc};
use std::ffi::c_char;

/// The largest block the library copies.
const MAX_BLOCK: u64 = 1 << 20;

/// `ompd_get_display_control_vars`: one entry per line of the runtime's block, the last line
/// kept even without a final newline.
pub fn get_display_control_vars(
    b: &Build,
    h: *mut AddressSpaceHandle,
    out: *mut *const *const c_char,
) -> Rc {
    rc((|| {
        let t = target(b, h.cast::<Aspace>())?;
        handles::need(out)?;
        let block = t.global_ptr(b"ompd_env_block\0")?;
        let a = t.global(b"ompd_env_block_size\0")?;
        let size = t.scalar(a, std::ptr::null_mut(), 8, false)? as u64;
        if size > MAX_BLOCK || (block == 0 && size != 0) {
            return Err(Rc::ERROR);
        }
        let text = t.tool.alloc(size + 1)?;
        let filled = handles::fill_block(text, size as usize, |buf| {
            t.raw(crate::target::at(block), std::ptr::null_mut(), buf)
        });
        let lines = match filled {
            Ok(lines) => lines,
            Err(e) => {
                t.tool.free(text);
                return Err(e);
            }
        };
        match handles::line_vector(&t.tool, text, size as usize, lines) {
            Ok(v) => handles::put(out, v),
            Err(e) => {
                t.tool.free(text);
                Err(e)
            }
        }
    })())
}

/// `ompd_rel_display_control_vars`: frees the text block and the vector.
pub fn rel_display_control_vars(_: &Build, vars: *mut *const *const c_char) -> Rc {
    rc((|| {
        let tool = super::tool()?;
        let v = handles::take(vars)?;
        let text = handles::vector_block(v);
        tool.free(text);
        tool.free(v.cast_mut().cast());
        Ok(())
    })())
}
