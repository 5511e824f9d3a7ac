//! The inner library (the correct one the forwarder wraps) and this build's mutant, both found
//! in the forwarder's own directory: `libompd_inner.so` and a file `mutant` holding the name
//! (no environment variable: workers may run with a scrubbed environment).

use crate::table::{self, Mutant};
use ompd_abi::EntryPoint;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The inner library's file name, beside the forwarder.
pub const INNER_FILE: &str = "libompd_inner.so";
/// The file naming the mutant, beside the forwarder.
pub const MUTANT_FILE: &str = "mutant";

/// The forwarder's own directory, by `dladdr` on one of its functions.
fn own_directory() -> Option<PathBuf> {
    let mut info = std::mem::MaybeUninit::<nix::libc::Dl_info>::zeroed();
    let addr = own_directory as *const () as *const nix::libc::c_void;
    // SAFETY: dladdr writes `info` and reads nothing else; the address is this function's.
    let found = unsafe { nix::libc::dladdr(addr, info.as_mut_ptr()) };
    if found == 0 {
        return None;
    }
    // SAFETY: dladdr succeeded, so `info` is written.
    let info = unsafe { info.assume_init() };
    if info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname is a NUL-terminated path owned by the dynamic loader.
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    let path = PathBuf::from(std::ffi::OsStr::new(
        std::str::from_utf8(name.to_bytes()).ok()?,
    ));
    path.parent().map(PathBuf::from)
}

/// This build's mutant (`None`: the clean forwarding baseline, or no readable name).
pub(crate) fn mutant() -> Option<&'static Mutant> {
    static M: OnceLock<Option<&'static Mutant>> = OnceLock::new();
    *M.get_or_init(|| {
        let text = std::fs::read_to_string(own_directory()?.join(MUTANT_FILE)).ok()?;
        table::find(text.trim())
    })
}

/// The inner library, loaded once (`None` when it cannot be).
fn library() -> Option<&'static libloading::Library> {
    static L: OnceLock<Option<libloading::Library>> = OnceLock::new();
    L.get_or_init(|| {
        let dir = own_directory()?;
        let path = dir.join(INNER_FILE);
        if !loaded(&path) {
            // SAFETY: the inner library is an OMPD library the kit staged; loading runs its
            // initializers, as loading it directly would.
            return unsafe { libloading::Library::new(path) }.ok();
        }
        let copy = private_copy(&dir, &path)?;
        // SAFETY: as above, for a copy of the same file.
        let lib = unsafe { libloading::Library::new(&copy) }.ok();
        // The instance keeps its mapping; no later load finds the name.
        let _ = std::fs::remove_file(&copy);
        lib
    })
    .as_ref()
}

/// True when the process already holds the library at `path` (another instance of the
/// forwarder loaded it: the dynamic linker knows a file by its device and inode, so the same
/// file by another name or link is the same instance).
fn loaded(path: &std::path::Path) -> bool {
    use libloading::os::unix::{Library, RTLD_NOW};
    // SAFETY: with RTLD_NOLOAD nothing is loaded and no initializer runs.
    unsafe { Library::open(Some(path), RTLD_NOW | nix::libc::RTLD_NOLOAD) }.is_ok()
}

/// A copy of the inner library beside this forwarder, for a fresh instance of the forwarder
/// (`ompd_loader::Library::load_fresh`): its inner library must be fresh too, or the inner
/// state the staged forwarder built (its caches, and the callback table this copy hands it,
/// which dies with the copy) would be shared.
///
/// Each copy has a name no earlier one of the process had (a process that loads the forwarder
/// again, a worker judging a batch of cases, must not get an earlier copy's instance back: the
/// dynamic linker knows a loaded file by its path), and is removed once loaded.
fn private_copy(dir: &std::path::Path, inner: &std::path::Path) -> Option<PathBuf> {
    let bytes = std::fs::read(inner).ok()?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    (0..1024).find_map(|n| {
        let name = format!("libompd_inner.{}.{now}.{n}.so", std::process::id());
        let copy = dir.join(name);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&copy)
            .ok()?;
        std::io::Write::write_all(&mut f, &bytes).ok()?;
        Some(copy)
    })
}

/// The inner library's routine `e`, as the function-pointer type `F` of `ompd_abi::entry`.
pub fn routine<F: Copy>(e: EntryPoint) -> Option<F> {
    let lib = library()?;
    // The name NUL-terminated on the stack: libloading copies a name without one to the heap.
    let mut name = [0u8; 64];
    let bytes = e.name().as_bytes();
    name.get_mut(..bytes.len())?.copy_from_slice(bytes);
    // SAFETY: `F` is the entry's type in `ompd_abi::entry` (the export macro pairs them); the
    // library stays loaded for the process's life.
    unsafe { lib.get::<F>(&name[..=bytes.len()]) }
        .ok()
        .map(|s| *s)
}

/// Reads the mutant's name and loads the inner library (the forwarder's constructor does,
/// before any entry point runs).
pub(crate) fn prepare() {
    let _ = mutant();
    let _ = library();
}
