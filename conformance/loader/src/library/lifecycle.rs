//! The library's lifecycle routines: `ompd_initialize` (with the tool's table, or with none),
//! `ompd_finalize`, and the NULL-argument form of `ompd_get_api_version`. The ledger learns
//! when the library is finalized, to judge any callback after it (OMPD-INIT-033).

use super::{rc_of, Call, Library};
use ompd_abi::{Callbacks, Rc};
use ompd_serve::callbacks;

impl Library {
    /// `ompd_get_api_version(NULL)`: the library must refuse the NULL out-parameter.
    pub fn get_api_version_null(&self) -> Call<()> {
        // SAFETY: a NULL out-parameter is valid input that the library must check.
        let (rc, _g) = unsafe { self.raw().get_api_version(std::ptr::null_mut()) }?;
        rc_of(rc, || Ok(()))
    }

    /// `ompd_initialize(version, NULL)`: the library must refuse the NULL table.
    pub fn initialize_null(&self, version: i64) -> Call<()> {
        // SAFETY: a NULL table is valid input that the library must check.
        let (rc, _g) = unsafe { self.raw().initialize(version, std::ptr::null()) }?;
        rc_of(rc, || Ok(()))
    }

    /// `ompd_initialize` with our callback table.
    pub fn initialize(&self, version: i64) -> Call<()> {
        self.initialize_with(version, callbacks::table())
    }

    /// `ompd_initialize` with the callback table `table` (one of `ompd_serve::callbacks`'s).
    pub fn initialize_with(&self, version: i64, table: &'static Callbacks) -> Call<()> {
        // SAFETY: the table is a `'static` that outlives the library.
        let (rc, _g) = unsafe { self.raw().initialize(version, table) }?;
        if rc == Rc::OK {
            callbacks::ledger().set_finalized(false);
        }
        rc_of(rc, || Ok(()))
    }

    /// `ompd_finalize`; once it answers ok, any callback is recorded as a violation until the
    /// library is initialized again (OMPD-INIT-033).
    pub fn finalize(&self) -> Call<()> {
        // SAFETY: no arguments.
        let (rc, _g) = unsafe { self.raw().finalize() }?;
        if rc == Rc::OK {
            callbacks::ledger().set_finalized(true);
        }
        rc_of(rc, || Ok(()))
    }
}
