//! Keeping system runtime libraries loaded before any vendor library is (what a zygote does
//! before it forks workers).

use super::dlopen;
use libloading::os::unix::RTLD_LOCAL;
use std::path::Path;

/// Loads the system libraries `names` (sonames) with `RTLD_LOCAL` and keeps them loaded for the
/// life of the process: a zygote does this before it forks workers, so that a worker's load of
/// a library that needs them finds them in place. Local loading leaves symbol resolution as it
/// was: a library that uses one without declaring it still fails to load. Returns what could
/// not be loaded.
pub fn keep_loaded(names: &[&str]) -> Vec<String> {
    let mut failed = Vec::new();
    for n in names {
        match dlopen(Path::new(n), RTLD_LOCAL) {
            Ok(lib) => std::mem::forget(lib),
            Err(e) => failed.push(format!("{n}: {e}")),
        }
    }
    failed
}

/// Initializes the C++ runtime's standard streams (`std::ios_base::Init`, which the first
/// C++ library to load runs in its static constructors, building the locale): done once in a
/// zygote, every forked worker finds them ready, as a process whose C++ code already ran would.
/// Nothing when libstdc++ is not loaded.
pub fn init_cxx_streams() -> bool {
    let Ok(lib) = dlopen(Path::new("libstdc++.so.6"), RTLD_LOCAL) else {
        return false;
    };
    // SAFETY: the symbol is libstdc++'s `std::ios_base::Init::Init()` constructor, which takes
    // only `this`; the object is one byte, never destroyed (the streams stay initialized).
    unsafe {
        let Ok(ctor) = lib.get::<unsafe extern "C" fn(*mut u8)>(b"_ZNSt8ios_base4InitC1Ev\0")
        else {
            return false;
        };
        let object = Box::leak(Box::new(0u8));
        ctor(object);
    }
    std::mem::forget(lib);
    true
}
