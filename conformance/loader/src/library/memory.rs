//! Reading memory the library handed back, without trusting it: bounded by the readable mapping
//! or the live tool block that holds it ([`Residence`]), and tool-owned strings kept alive until
//! dropped ([`ToolString`]).

use super::{objects, out_ptr, Call, Fail};
use ompd_serve::callbacks;
use std::ffi::{c_char, c_void};

/// The readable mapping of this process that contains `addr`: how many bytes from `addr` to its
/// end, and its path (empty for anonymous memory).
fn mapped_extent(addr: usize) -> Result<(usize, String), String> {
    let maps = std::fs::read_to_string("/proc/self/maps")
        .map_err(|e| format!("reading /proc/self/maps: {e}"))?;
    for line in maps.lines() {
        let mut parts = line.split_whitespace();
        let (Some(range), Some(perms)) = (parts.next(), parts.next()) else {
            continue;
        };
        let Some((lo, hi)) = range.split_once('-') else {
            continue;
        };
        let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
        else {
            continue;
        };
        if addr < lo || addr >= hi {
            continue;
        }
        if !perms.starts_with('r') {
            return Err(format!("{addr:#x} lies in an unreadable mapping"));
        }
        return Ok((hi - addr, parts.nth(3).unwrap_or("").to_string()));
    }
    Err(format!(
        "{addr:#x} is not inside any mapping of the process"
    ))
}

/// Reads up to `max` bytes at `addr`, bounded by the readable mapping that contains it. Returns
/// the bytes and the path of the mapping (to tell static from heap memory). An address in a
/// loaded shared object is found through the loader's tables ([`objects`]); only any other
/// address costs a read of the kernel's map.
fn read_mapped(addr: usize, max: usize) -> Result<(Vec<u8>, String), String> {
    if let Some(read) = objects::read_in_object(addr, max) {
        return read;
    }
    let (extent, path) = mapped_extent(addr)?;
    let len = extent.min(max);
    let mut bytes = vec![0u8; len];
    // SAFETY: `[addr, addr+len)` lies inside a readable mapping of this process. A memmove, not
    // a slice copy: in the C heap the range read may hold the fresh buffer itself (past the end
    // of the library's string), which a non-overlapping copy must never see.
    unsafe { std::ptr::copy(addr as *const u8, bytes.as_mut_ptr(), len) };
    Ok((bytes, path))
}

/// The bytes before the first NUL, or why there is none.
pub(super) fn until_nul(bytes: &[u8], at: usize) -> Result<Vec<u8>, String> {
    match bytes.iter().position(|b| *b == 0) {
        Some(n) => Ok(bytes[..n].to_vec()),
        None => Err(format!("no NUL within {} bytes at {at:#x}", bytes.len())),
    }
}

/// Reads a NUL-terminated string the library says it owns, bounded by the readable mapping that
/// contains it. Returns the bytes and the path of the mapping (to tell static from heap memory).
pub(super) fn read_mapped_cstr(ptr: *const c_char) -> Result<(Vec<u8>, String), String> {
    let (bytes, path) = read_mapped(ptr as usize, 64 * 1024)?;
    Ok((until_nul(&bytes, ptr as usize)?, path))
}

/// Where memory the library handed back lies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Residence {
    /// Inside a live `alloc_memory` block, `offset` bytes from its start.
    Block {
        /// Address of the block.
        start: usize,
        /// Offset of the pointer inside the block.
        offset: usize,
    },
    /// In a readable mapping that holds no tool block, named by its path (`[heap]`, or empty
    /// for anonymous memory, when it is not static data of a loaded object).
    Mapping(String),
}

impl Residence {
    /// True for memory the library may hand the tool: an `alloc_memory` block or static data of
    /// a loaded object (a file-backed mapping).
    pub fn is_tool_block_or_static(&self) -> bool {
        match self {
            Residence::Block { .. } => true,
            Residence::Mapping(path) => path.starts_with('/'),
        }
    }
}

/// Reads up to `max` bytes at `addr`, from inside a live tool block when one holds it (bounded
/// by the block) or else from the readable mapping holding it, and says which.
pub(super) fn read_returned(addr: usize, max: usize) -> Result<(Vec<u8>, Residence), String> {
    let block = callbacks::ledger().containing(addr).map(|a| a.ptr);
    match block {
        Some(start) => Ok((
            callbacks::read_inside_block(addr, max)?,
            Residence::Block {
                start,
                offset: addr - start,
            },
        )),
        None => read_mapped(addr, max).map(|(b, path)| (b, Residence::Mapping(path))),
    }
}

/// A string the library returned, with where it lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaticString {
    /// The text (lossy UTF-8).
    pub text: String,
    /// Path of the mapping holding it (the library file for static data).
    pub mapping: String,
    /// Whether the pointer is a live `alloc_memory` block (it should not be, for static strings).
    pub is_tool_block: bool,
}

/// A tool-owned string block the library returned, kept alive (not freed) until dropped, so
/// that ownership rules across calls can be checked.
#[derive(Debug)]
pub struct ToolString {
    ptr: *const c_char,
    what: String,
    /// The text when it was returned.
    pub text: String,
}

impl ToolString {
    /// The block's address.
    pub fn addr(&self) -> usize {
        self.ptr as usize
    }

    /// Reads the block again now (it must still be a live `alloc_memory` block).
    pub fn reread(&self) -> Result<String, String> {
        callbacks::read_block_cstr(self.ptr).map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    /// Frees the block as the tool would and returns the text; a failed free is invalid output.
    pub fn into_text(mut self) -> Call<String> {
        // Taking the pointer leaves nothing for `drop` to free.
        let ptr = std::mem::replace(&mut self.ptr, std::ptr::null());
        callbacks::tool_free(ptr as *const c_void)
            .map_err(|rc| Fail::Invalid(format!("freeing {}: {rc}", self.what)))?;
        Ok(std::mem::take(&mut self.text))
    }
}

impl Drop for ToolString {
    fn drop(&mut self) {
        // A failure to free was already impossible: the block was verified live when returned
        // and only this value frees it.
        if !self.ptr.is_null() {
            let _ = callbacks::tool_free(self.ptr as *const c_void);
        }
    }
}

/// Takes a tool-owned string the library returned: checks it is a live `alloc_memory` block and
/// reads it; the block is freed when the result is dropped or turned into text.
pub(super) fn kept_string(p: *const c_char, what: &str) -> Call<ToolString> {
    let p = out_ptr(p as *mut c_char, what)?;
    let bytes = callbacks::read_block_cstr(p).map_err(|e| Fail::Invalid(format!("{what}: {e}")))?;
    Ok(ToolString {
        ptr: p,
        what: what.to_string(),
        text: String::from_utf8_lossy(&bytes).into_owned(),
    })
}
