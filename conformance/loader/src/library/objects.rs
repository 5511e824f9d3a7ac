//! Which loaded ELF object holds an address the library handed back, found in the dynamic
//! linker's list of loaded objects (`dl_iterate_phdr`: no system call, no text to parse), and
//! copying bytes from it without trusting it (`process_vm_readv` on this process: a page the
//! library unmapped or protected ends the copy short instead of crashing the worker).
//!
//! This serves the common case, a string in a library's own static data, at a fraction of the
//! cost of reading `/proc/self/maps` (which the caller still uses for every other address).

use nix::libc;
use std::ffi::{c_int, c_void, CStr};

/// The loaded object holding an address: the end of the `PT_LOAD` segment holding it (`None`
/// when that segment is not readable), the path of the object's file as the loader knows it
/// (empty for the main program), and the span of its executable segments.
struct Object {
    end: Option<usize>,
    name: String,
    text: Option<(usize, usize)>,
}

/// The search's state, shared with the callback.
struct Search {
    addr: usize,
    found: Option<Object>,
}

/// `dl_iterate_phdr`'s callback: describes the object with a `PT_LOAD` segment holding the
/// address, and stops there. It only reads the loader's own tables, so it cannot fault, and it
/// never unwinds.
extern "C" fn visit(
    info: *mut libc::dl_phdr_info,
    _size: libc::size_t,
    data: *mut c_void,
) -> c_int {
    // SAFETY: the loader passes a valid info for the duration of the call; `data` is the
    // `Search` that `object_of` lent.
    let (info, search) = unsafe { (&*info, &mut *(data as *mut Search)) };
    if info.dlpi_phdr.is_null() {
        return 0;
    }
    // SAFETY: `dlpi_phdr` points at `dlpi_phnum` program headers of this object.
    let headers = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum.into()) };
    let span = |h: &libc::Elf64_Phdr| {
        let start = (info.dlpi_addr as usize).wrapping_add(h.p_vaddr as usize);
        (start, start.wrapping_add(h.p_memsz as usize))
    };
    let loads = || headers.iter().filter(|h| h.p_type == libc::PT_LOAD);
    let Some(holding) = loads().find(|h| {
        let (start, end) = span(h);
        (start..end).contains(&search.addr)
    }) else {
        return 0;
    };
    let name = if info.dlpi_name.is_null() {
        String::new()
    } else {
        // SAFETY: the loader's names are NUL-terminated strings it keeps alive.
        unsafe { CStr::from_ptr(info.dlpi_name) }
            .to_string_lossy()
            .into_owned()
    };
    let text = loads()
        .filter(|h| h.p_flags & libc::PF_X != 0)
        .map(span)
        .fold(None, |acc, (s, e)| match acc {
            None => Some((s, e)),
            Some((lo, hi)) => Some((lo.min(s), hi.max(e))),
        });
    search.found = Some(Object {
        end: (holding.p_flags & libc::PF_R != 0).then(|| span(holding).1),
        name,
        text,
    });
    1
}

/// The loaded object holding `addr`, if any.
fn object_of(addr: usize) -> Option<Object> {
    let mut search = Search { addr, found: None };
    // SAFETY: `visit` matches the callback type and only uses `search` while the call runs.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut search as *mut Search as *mut c_void) };
    search.found
}

/// Up to `max` bytes at `addr` when a readable segment of a loaded shared object holds it
/// (bounded by the segment's end), with the canonical path of the object's file, the path the
/// kernel's map shows. `None` for any other address (the main program, the heap, anonymous
/// memory, nothing at all): the caller then asks the kernel's map.
pub(super) fn read_in_object(addr: usize, max: usize) -> Option<Result<(Vec<u8>, String), String>> {
    let obj = object_of(addr)?;
    let end = obj.end?;
    let path = kernel_path(&obj.name)?;
    let len = (end - addr).min(max);
    Some(copy_own(addr, len).map(|bytes| (bytes, path.to_string_lossy().into_owned())))
}

/// The path the kernel's map shows for the file the loader knows as `name`: its canonical path,
/// or, for a name whose links end in a file no directory holds (a fresh instance's copy in a
/// memfd, `/memfd:… (deleted)`), the last link's target. `None` when neither is known (the
/// main program's empty name).
fn kernel_path(name: &str) -> Option<std::path::PathBuf> {
    if let Ok(p) = std::fs::canonicalize(name) {
        return Some(p);
    }
    let mut p = std::path::PathBuf::from(name);
    let mut followed = false;
    for _ in 0..8 {
        let Ok(target) = std::fs::read_link(&p) else {
            break;
        };
        p = match p.parent() {
            Some(dir) if target.is_relative() => dir.join(target),
            _ => target,
        };
        followed = true;
    }
    followed.then_some(p)
}

/// The span (start, end) of the executable segments of the loaded object holding `addr`.
pub(super) fn text_of(addr: usize) -> Option<(usize, usize)> {
    object_of(addr)?.text
}

/// Copies `len` bytes at `addr` of this process, or as many as are readable from `addr` on.
fn copy_own(addr: usize, len: usize) -> Result<Vec<u8>, String> {
    use nix::sys::uio::{process_vm_readv, RemoteIoVec};
    let mut buf = vec![0u8; len];
    let remote = [RemoteIoVec { base: addr, len }];
    let n = process_vm_readv(
        nix::unistd::getpid(),
        &mut [std::io::IoSliceMut::new(&mut buf)],
        &remote,
    )
    .map_err(|e| format!("{addr:#x} lies in a loaded object but cannot be read: {e}"))?;
    buf.truncate(n);
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_in_libc_is_found_in_libc_and_read_whole() {
        // SAFETY: gnu_get_libc_version returns a static string of libc.
        let p = unsafe { libc::gnu_get_libc_version() } as usize;
        let (bytes, path) = read_in_object(p, 64).expect("in a loaded object").unwrap();
        assert!(path.contains("libc.so"), "{path}");
        assert!(bytes.starts_with(b"2."), "{bytes:?}");
    }

    #[test]
    fn memory_outside_every_loaded_object_is_left_to_the_map() {
        let heap = Box::new([7u8; 16]);
        assert!(read_in_object(heap.as_ptr() as usize, 16).is_none());
        assert!(read_in_object(8, 16).is_none());
    }

    #[test]
    fn the_text_of_libc_holds_its_functions() {
        let f = libc::getpid as *const () as usize;
        let (lo, hi) = text_of(f).expect("libc is loaded");
        assert!(lo <= f && f < hi, "{lo:#x}..{hi:#x} {f:#x}");
        assert!(text_of(8).is_none());
    }

    #[test]
    fn a_link_to_a_memfd_names_it_as_the_kernel_map_does() {
        let fd = nix::sys::memfd::memfd_create(c"objects-test", nix::sys::memfd::MFdFlags::empty())
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("lib.so");
        let slot = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&fd));
        std::os::unix::fs::symlink(&slot, &link).unwrap();
        let path = kernel_path(link.to_str().unwrap()).expect("the links are followed");
        assert_eq!(path, std::path::Path::new("/memfd:objects-test (deleted)"));
        assert!(kernel_path("").is_none(), "the main program's empty name");
    }

    #[test]
    fn the_main_program_is_left_to_the_map() {
        static HERE: [u8; 4] = *b"main";
        assert!(read_in_object(HERE.as_ptr() as usize, 4).is_none());
    }
}
