//! Library-wide routines: initialization, versions, finalization (OMPD-INIT-*).

use super::rc;
use crate::{cb, handles, Build};
use ompd_abi::{Callbacks, Generation, Rc};
use std::ffi::c_char;

/// `ompd_initialize`: copies the tool's table. Every API version from 5.0 to the build's own is
/// provided, with that version's semantics ([`Build::semantics`]); others are `unsupported`.
pub fn initialize(b: &Build, version: i64, table: *const Callbacks) -> Rc {
    if table.is_null() {
        return Rc::BAD_INPUT;
    }
    let asked = Generation::from_api_version(version);
    let Some(g) = asked.filter(|g| (Generation::V5_0..=b.generation).contains(g)) else {
        return Rc::UNSUPPORTED;
    };
    rc(handles::read_table(table).and_then(|t| cb::install(t, g)))
}

/// `ompd_get_api_version`: the build's API version; no callback.
pub fn get_api_version(b: &Build, version: *mut i64) -> Rc {
    rc(handles::put(version, b.api_version()))
}

/// `ompd_get_version_string`: a static string in the library's image; no callback.
pub fn get_version_string(b: &Build, string: *mut *const c_char) -> Rc {
    if b.version_string.last() != Some(&0) {
        return Rc::ERROR;
    }
    rc(handles::put(string, b.version_string.as_ptr().cast()))
}

/// `ompd_finalize`: drops the table; `unsupported` when the library was not initialized.
pub fn finalize(_: &Build) -> Rc {
    if cb::clear() {
        Rc::OK
    } else {
        Rc::UNSUPPORTED
    }
}
