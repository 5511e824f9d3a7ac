//! The library's handles: blocks from the tool's `alloc_memory`, each starting with a magic word
//! that names its kind, so a NULL or released handle is `stale_handle` and a handle of the wrong
//! kind is told apart. Every read and write of handle memory is here.

use crate::cb::Tool;
use crate::layout::Cache;
use ompd_abi::{AddressSpaceContext, DeviceTypeSizes, Rc, ThreadContext};
use std::ffi::c_void;

/// An address-space handle: the tool's context, the target's type sizes, the layout cache.
#[repr(C)]
pub struct Aspace {
    magic: u64,
    /// The tool's context, passed to every callback for this address space.
    pub ctx: *mut AddressSpaceContext,
    /// The target's primitive sizes, from `sizeof_type` at `ompd_process_initialize`.
    pub sizes: DeviceTypeSizes,
    /// The layout words read so far.
    pub cache: Cache,
    /// What the runtime's self-description has.
    pub traits: Traits,
}

/// What a runtime's self-description has, probed once, at `ompd_process_initialize`: Intel's
/// runtimes up to 2023.2 publish an older one.
#[derive(Clone, Copy, Debug)]
pub struct Traits {
    /// The runtime supports OMPT: its layout describes the tool data of threads, regions and
    /// tasks.
    pub ompt: bool,
    /// The runtime has the `ompd_state` switch that turns its state tracking on and off.
    pub state_switch: bool,
    /// The runtime publishes the length of its display-control block (`ompd_env_block_size`);
    /// without it the block is a NUL-terminated string.
    pub env_size: bool,
}

/// A thread handle: the `kmp_base_info_t` of the thread.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Thread {
    magic: u64,
    /// Its address space.
    pub ah: *mut Aspace,
    /// The tool's context of the thread when the handle came from a native id (else NULL).
    pub tctx: *mut ThreadContext,
    /// Address of the thread's `kmp_base_info_t`.
    pub th: u64,
}

/// A parallel handle: a team, and which region of the team's serialized run it names.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Parallel {
    magic: u64,
    /// Its address space.
    pub ah: *mut Aspace,
    /// Address of the team's `kmp_base_team_t`.
    pub t: u64,
    /// 0 for the team's own (innermost) region, else the `ompt_lw_taskteam_t` of an outer
    /// serialized region of the run.
    pub lwt: u64,
}

/// A task handle: a `kmp_taskdata_t`, and which level of a serialized run it names.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Task {
    magic: u64,
    /// Its address space.
    pub ah: *mut Aspace,
    /// Address of the task's `kmp_taskdata_t`.
    pub td: u64,
    /// 0 for the task itself, else the `ompt_lw_taskteam_t` of the outer serialized region whose
    /// implicit task this handle names.
    pub lwt: u64,
}

/// Where the handle blocks keep the words that name their entity, by byte offset in the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyOffsets {
    /// A thread handle's `kmp_base_info_t` address.
    pub thread: usize,
    /// A parallel handle's team address, then its lwt word.
    pub parallel: (usize, usize),
    /// A task handle's `kmp_taskdata_t` address, then its lwt word.
    pub task: (usize, usize),
}

/// The offsets of this library's handle blocks. The mutation kit reads them to emulate a
/// library that orders handles by a truncated address difference.
pub const KEY_OFFSETS: KeyOffsets = KeyOffsets {
    thread: std::mem::offset_of!(Thread, th),
    parallel: (
        std::mem::offset_of!(Parallel, t),
        std::mem::offset_of!(Parallel, lwt),
    ),
    task: (
        std::mem::offset_of!(Task, td),
        std::mem::offset_of!(Task, lwt),
    ),
};

/// The kinds of handle, by their magic word.
pub trait Kind: Sized {
    /// The first word of every live handle of the kind.
    const MAGIC: u64;
}

impl Kind for Aspace {
    const MAGIC: u64 = u64::from_le_bytes(*b"ompdREFa");
}
impl Kind for Thread {
    const MAGIC: u64 = u64::from_le_bytes(*b"ompdREFt");
}
impl Kind for Parallel {
    const MAGIC: u64 = u64::from_le_bytes(*b"ompdREFp");
}
impl Kind for Task {
    const MAGIC: u64 = u64::from_le_bytes(*b"ompdREFk");
}

impl Aspace {
    /// A fresh address-space handle value.
    pub fn new(ctx: *mut AddressSpaceContext, sizes: DeviceTypeSizes, traits: Traits) -> Aspace {
        Aspace {
            magic: Aspace::MAGIC,
            ctx,
            sizes,
            cache: Cache::EMPTY,
            traits,
        }
    }
}

impl Thread {
    /// A thread handle value.
    pub fn new(ah: *mut Aspace, tctx: *mut ThreadContext, th: u64) -> Thread {
        Thread {
            magic: Thread::MAGIC,
            ah,
            tctx,
            th,
        }
    }
}

impl Parallel {
    /// A parallel handle value.
    pub fn new(ah: *mut Aspace, t: u64, lwt: u64) -> Parallel {
        Parallel {
            magic: Parallel::MAGIC,
            ah,
            t,
            lwt,
        }
    }
}

impl Task {
    /// A task handle value.
    pub fn new(ah: *mut Aspace, td: u64, lwt: u64) -> Task {
        Task {
            magic: Task::MAGIC,
            ah,
            td,
            lwt,
        }
    }
}

/// Places `value` in a new block from the tool and returns it as the handle.
pub fn make<T: Kind>(tool: &Tool, value: T) -> Result<*mut T, Rc> {
    let p = tool.alloc(std::mem::size_of::<T>() as u64)?.cast::<T>();
    // SAFETY: a fresh, 8-byte aligned block of the handle's size.
    unsafe { p.write(value) };
    Ok(p)
}

/// True when `p` is a live handle of kind `T` (false for NULL).
pub fn is<T: Kind>(p: *const c_void) -> bool {
    // SAFETY: a non-NULL pointer the tool passes as a handle is one this library returned
    // (OMPD-RC-009), so its first word is readable.
    !p.is_null() && unsafe { p.cast::<u64>().read_unaligned() } == T::MAGIC
}

/// The live handle `p` of kind `T`: `stale_handle` for NULL or a released handle, and `wrong`
/// for a live handle of another kind.
pub fn get<'a, T: Kind>(p: *mut T, wrong: Rc) -> Result<&'a mut T, Rc> {
    if p.is_null() {
        return Err(Rc::STALE_HANDLE);
    }
    if !is::<T>(p.cast()) {
        let live = is::<Aspace>(p.cast())
            || is::<Thread>(p.cast())
            || is::<Parallel>(p.cast())
            || is::<Task>(p.cast());
        return Err(if live { wrong } else { Rc::STALE_HANDLE });
    }
    // SAFETY: a live handle of this kind: a block this library wrote a `T` into.
    Ok(unsafe { &mut *p })
}

/// Releases handle `p` of kind `T`: clears its magic and returns the block to the tool.
pub fn release<T: Kind>(tool: &Tool, p: *mut T, wrong: Rc) -> Result<(), Rc> {
    get(p, wrong)?;
    // SAFETY: a live handle of this kind; its first word is its magic.
    unsafe { p.cast::<u64>().write(0) };
    tool.free(p.cast());
    Ok(())
}

/// Writes `value` to the tool's out-parameter `out`; `bad_input` when it is NULL.
pub fn put<T>(out: *mut T, value: T) -> Result<(), Rc> {
    if out.is_null() {
        return Err(Rc::BAD_INPUT);
    }
    // SAFETY: a non-NULL out-parameter the tool passed for a value of this type.
    unsafe { out.write_unaligned(value) };
    Ok(())
}

/// `bad_input` when the out-parameter `out` is NULL (checked before any work is done).
pub fn need<T>(out: *const T) -> Result<(), Rc> {
    if out.is_null() {
        Err(Rc::BAD_INPUT)
    } else {
        Ok(())
    }
}

/// Copies `n` bytes the tool passed at `p` (a native thread id) into `buf`; `bad_input` when
/// `p` is NULL or `n` does not fit.
pub fn copy_in(p: *const c_void, n: u64, buf: &mut [u8]) -> Result<&[u8], Rc> {
    let n = usize::try_from(n).map_err(|_| Rc::BAD_INPUT)?;
    let dst = buf.get_mut(..n).ok_or(Rc::BAD_INPUT)?;
    if p.is_null() {
        return Err(Rc::BAD_INPUT);
    }
    // SAFETY: the tool passes `n` readable bytes at `p`; `dst` holds exactly `n`.
    let src = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), n) };
    dst.copy_from_slice(src);
    Ok(dst)
}

/// Copies `bytes` into the tool's buffer `p` of `n` bytes (exactly `n` must be given).
pub fn copy_out(p: *mut c_void, n: u64, bytes: &[u8]) -> Result<(), Rc> {
    if p.is_null() || n != bytes.len() as u64 {
        return Err(Rc::BAD_INPUT);
    }
    // SAFETY: the tool's buffer holds `n` bytes, which is `bytes.len()`.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p.cast::<u8>(), bytes.len()) };
    Ok(())
}

/// A new tool-owned block holding `bytes` and a NUL.
pub fn c_string(tool: &Tool, bytes: &[u8]) -> Result<*const std::ffi::c_char, Rc> {
    let p = tool.alloc(bytes.len() as u64 + 1)?;
    // SAFETY: a fresh block of `bytes.len() + 1` bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len());
        p.add(bytes.len()).write(0);
    }
    Ok(p.cast())
}

/// A new tool-owned block holding `words` (host pointers or integers of the host's width).
pub fn words<T: Copy>(tool: &Tool, words: &[T]) -> Result<*mut T, Rc> {
    let p = tool.alloc(std::mem::size_of_val(words) as u64)?.cast::<T>();
    // SAFETY: a fresh, aligned block of exactly this many `T`.
    unsafe { std::ptr::copy_nonoverlapping(words.as_ptr(), p, words.len()) };
    Ok(p)
}

/// A copy of the callback table (5.x or TR 2.001) the tool passed to `ompd_initialize`;
/// `bad_input` for NULL.
pub fn read_table<T: Copy>(p: *const T) -> Result<T, Rc> {
    if p.is_null() {
        return Err(Rc::BAD_INPUT);
    }
    // SAFETY: a non-NULL table the tool passed to `ompd_initialize`.
    Ok(unsafe { p.read_unaligned() })
}

/// A fresh tool block of `n` bytes, as bytes (the caller frees it with `Tool::free`).
pub fn fresh_bytes<'a>(tool: &Tool, n: u64) -> Result<&'a mut [u8], Rc> {
    let p = tool.alloc(n)?;
    // SAFETY: a fresh block of `n` bytes from the tool, the caller's alone until it frees it.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n as usize) })
}

/// Fills the first `size` bytes of the fresh block `text` (of `size + 1` bytes) with `read`,
/// terminates it, and cuts it into lines at each newline; the number of non-empty lines.
pub fn fill_block(
    text: *mut u8,
    size: usize,
    read: impl FnOnce(&mut [u8]) -> Result<(), Rc>,
) -> Result<usize, Rc> {
    // SAFETY: a fresh block of `size + 1` bytes from the tool.
    let all = unsafe { std::slice::from_raw_parts_mut(text, size + 1) };
    let (body, nul) = all.split_at_mut(size);
    nul.fill(0);
    read(body)?;
    let mut lines = 0;
    for line in body.split_mut(|b| *b == b'\n') {
        if let Some(end) = line.iter().position(|b| *b == 0) {
            line[end..].fill(0);
        }
        if line.first().is_some_and(|b| *b != 0) {
            lines += 1;
        }
    }
    for b in body.iter_mut() {
        if *b == b'\n' {
            *b = 0;
        }
    }
    Ok(lines)
}

/// The vector of the `lines` non-empty lines of the cut block `text`: their addresses, a NULL,
/// then `text` itself (so the release finds it).
pub fn line_vector(
    tool: &Tool,
    text: *mut u8,
    size: usize,
    lines: usize,
) -> Result<*const *const std::ffi::c_char, Rc> {
    let slots = lines + 2;
    let v = tool
        .alloc((slots * std::mem::size_of::<usize>()) as u64)?
        .cast::<*const std::ffi::c_char>();
    // SAFETY: `text` holds `size + 1` bytes; `v` holds `slots` pointers, and at most `lines`
    // line starts are written before the NULL and the block's address.
    unsafe {
        let body = std::slice::from_raw_parts(text, size);
        let mut k = 0;
        let mut start = true;
        for (i, b) in body.iter().enumerate() {
            if start && *b != 0 && k < lines {
                v.add(k).write(text.add(i).cast());
                k += 1;
            }
            start = *b == 0;
        }
        v.add(k).write(std::ptr::null());
        v.add(k + 1).write(text.cast());
    }
    Ok(v)
}

/// The vector the tool passes back to `ompd_rel_display_control_vars`.
pub fn take(
    vars: *mut *const *const std::ffi::c_char,
) -> Result<*const *const std::ffi::c_char, Rc> {
    if vars.is_null() {
        return Err(Rc::BAD_INPUT);
    }
    // SAFETY: a non-NULL pointer to the tool's vector variable.
    let v = unsafe { vars.read_unaligned() };
    if v.is_null() {
        return Err(Rc::BAD_INPUT);
    }
    Ok(v)
}

/// The text block of a vector made by [`line_vector`]: the slot after its NULL.
pub fn vector_block(v: *const *const std::ffi::c_char) -> *mut u8 {
    let mut i = 0;
    // SAFETY: a vector made by `line_vector`: entries, a NULL, then the block.
    unsafe {
        while !v.add(i).read().is_null() {
            i += 1;
        }
        v.add(i + 1).read().cast_mut().cast()
    }
}

/// A tool-owned vector of `n` handle pointers, each made by `make(i, &mut slot)`; on a failure
/// the handles made so far are released with `release` and the vector is freed.
pub fn handle_vector<T>(
    tool: &Tool,
    n: usize,
    mut make: impl FnMut(usize, *mut *mut T) -> Rc,
    release: impl Fn(*mut T),
) -> Result<*mut *mut T, Rc> {
    let v = tool
        .alloc((n.max(1) * std::mem::size_of::<usize>()) as u64)?
        .cast::<*mut T>();
    for i in 0..n {
        let mut h: *mut T = std::ptr::null_mut();
        let rc = make(i, &mut h);
        if !rc.is_ok() {
            for k in 0..i {
                // SAFETY: slots 0..i were written below.
                release(unsafe { v.add(k).read() });
            }
            tool.free(v.cast());
            return Err(rc);
        }
        // SAFETY: `v` holds `n` pointers; `i < n`.
        unsafe { v.add(i).write(h) };
    }
    Ok(v)
}
