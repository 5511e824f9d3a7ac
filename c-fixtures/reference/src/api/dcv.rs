//! Display control variables: the runtime's `NAME=value` block as a vector (OMPD-DCV-*).
//!
//! The vector the tool receives is one block from `alloc_memory`: the entries, a NULL, then the
//! text block's address, so the release finds the text even when there are no entries.

use super::{rc, target};
use crate::handles::{self, Aspace};
use crate::target::Target;
use crate::Build;
use ompd_abi::{AddressSpaceHandle, Rc};
use std::ffi::c_char;

/// The largest block the library copies.
const MAX_BLOCK: u64 = 1 << 20;

/// The longest block read as a string (a runtime that publishes no length).
const MAX_STRING: u64 = 1 << 16;

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
        let size = block_size(&t, block)?;
        let text = t.tool.alloc(size as u64 + 1)?;
        let filled = handles::fill_block(text, size, |buf| read_block(&t, block, buf));
        let lines = match filled {
            Ok(lines) => lines,
            Err(e) => {
                t.tool.free(text);
                return Err(e);
            }
        };
        match handles::line_vector(&t.tool, text, size, lines) {
            Ok(v) => handles::put(out, v),
            Err(e) => {
                t.tool.free(text);
                Err(e)
            }
        }
    })())
}

/// How many bytes of the runtime's block to copy: `ompd_env_block_size` where the runtime
/// publishes the length, else room for the NUL-terminated string (at most [`MAX_STRING`]).
fn block_size(t: &Target, block: u64) -> Result<usize, Rc> {
    let size = if t.traits.env_size {
        let a = t.global(b"ompd_env_block_size\0")?;
        t.scalar(a, std::ptr::null_mut(), 8, false)? as u64
    } else if block == 0 {
        0
    } else {
        MAX_STRING
    };
    if size > MAX_BLOCK || (block == 0 && size != 0) {
        return Err(Rc::ERROR);
    }
    Ok(size as usize)
}

/// Reads the runtime's block into `buf` (sized by [`block_size`]; zeros past a string's end).
fn read_block(t: &Target, block: u64, buf: &mut [u8]) -> Result<(), Rc> {
    if block == 0 {
        Ok(())
    } else if t.traits.env_size {
        t.raw(crate::target::at(block), std::ptr::null_mut(), buf)
    } else {
        t.string(block, buf).map(|_| ())
    }
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
