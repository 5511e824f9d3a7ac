//! Reading the target through the callbacks: scalars of any width in either byte order,
//! pointers, layout words (cached per address space) and fields.
//!
//! Every read is bounded: a scalar is at most 8 bytes, and an address that would leave the
//! target's address space (past 2^32 on a 32-bit target) is an error before any callback.

use crate::cb::Tool;
use crate::handles::{Aspace, Traits};
use crate::layout::{self, Field, Mask, Size};
use ompd_abi::{Address, AddressSpaceContext, DeviceTypeSizes, Rc, ThreadContext, SEGMENT_NONE};

/// One address space, as an entry point reads it.
pub struct Target<'a> {
    /// The tool.
    pub tool: Tool,
    ctx: *mut AddressSpaceContext,
    /// The target's primitive sizes.
    pub sizes: DeviceTypeSizes,
    /// What the runtime's self-description has.
    pub traits: Traits,
    cache: &'a mut layout::Cache,
}

impl<'a> Target<'a> {
    /// The target of an address-space handle.
    pub fn new(tool: Tool, ah: &'a mut Aspace) -> Target<'a> {
        Target {
            tool,
            ctx: ah.ctx,
            sizes: ah.sizes,
            traits: ah.traits,
            cache: &mut ah.cache,
        }
    }

    /// The tool's context of this address space.
    pub fn ctx(&self) -> *mut AddressSpaceContext {
        self.ctx
    }

    /// The width of a target pointer.
    pub fn pointer(&self) -> u64 {
        u64::from(self.sizes.sizeof_pointer)
    }

    /// `base + off`, or `error` when it leaves the target's address space.
    pub fn add(&self, base: u64, off: u64) -> Result<u64, Rc> {
        let a = base.checked_add(off).ok_or(Rc::ERROR)?;
        if self.pointer() < 8 && a >> (8 * self.pointer()) != 0 {
            return Err(Rc::ERROR);
        }
        Ok(a)
    }

    /// Reads `buf.len()` raw bytes (target order) at `addr`, from `tctx`'s view when non-NULL.
    pub fn raw(&self, addr: Address, tctx: *mut ThreadContext, buf: &mut [u8]) -> Result<(), Rc> {
        self.tool.read(self.ctx, tctx, addr, buf)
    }

    /// Reads a `width`-byte scalar (1, 2, 4 or 8) at `addr` and converts it to host order;
    /// sign-extended when `signed`.
    pub fn scalar(
        &self,
        addr: Address,
        tctx: *mut ThreadContext,
        width: u64,
        signed: bool,
    ) -> Result<i64, Rc> {
        let n = match width {
            1 | 2 | 4 | 8 => width as usize,
            _ => return Err(Rc::INCOMPATIBLE),
        };
        let mut raw = [0u8; 8];
        let mut host = [0u8; 8];
        let (raw, host) = (&mut raw[..n], &mut host[..n]);
        self.raw(addr, tctx, raw)?;
        self.tool.device_to_host(self.ctx, raw, width, host)?;
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(host);
        let negative = signed && host.last().is_some_and(|x| x & 0x80 != 0);
        if negative {
            b[n..].fill(0xff);
        }
        Ok(i64::from_ne_bytes(b))
    }

    /// A scalar at a plain address (segment none).
    pub fn word(&self, addr: u64, width: u64, signed: bool) -> Result<i64, Rc> {
        self.scalar(at(addr), std::ptr::null_mut(), width, signed)
    }

    /// A target pointer at `addr`.
    pub fn ptr(&self, addr: u64) -> Result<u64, Rc> {
        Ok(self.word(addr, self.pointer(), false)? as u64)
    }

    /// The value of a layout word, read once per address space.
    fn layout(&mut self, slot: (usize, &'static [u8])) -> Result<u64, Rc> {
        self.layout_or(slot, None)
    }

    /// The value of a layout word, read once per address space; `absent` when the runtime does
    /// not define the word (the lookup finds nothing), which is not cached: only the runtime's
    /// own words are.
    fn layout_or(
        &mut self,
        (slot, name): (usize, &'static [u8]),
        absent: Option<u64>,
    ) -> Result<u64, Rc> {
        if let (Some(true), Some(v)) = (self.cache.known.get(slot), self.cache.value.get(slot)) {
            return Ok(*v);
        }
        let a = match (
            self.tool.lookup(self.ctx, std::ptr::null_mut(), name),
            absent,
        ) {
            (Err(Rc::ERROR), Some(v)) => return Ok(v),
            (a, _) => a?,
        };
        let v = self.scalar(a, std::ptr::null_mut(), 8, false)? as u64;
        if let (Some(k), Some(s)) = (
            self.cache.known.get_mut(slot),
            self.cache.value.get_mut(slot),
        ) {
            *k = true;
            *s = v;
        }
        Ok(v)
    }

    /// A type's or global's size: the runtime's size word, or, where the runtime defines none,
    /// the width of the C type it declares the object with ([`layout::c_type`]).
    pub fn size(&mut self, s: Size) -> Result<u64, Rc> {
        let absent = layout::c_type(s).map(|c| c.width(&self.sizes));
        self.layout_or(layout::size_slot(s), absent)
    }

    /// True when the runtime defines the global `name` ([`Tool::defines`]).
    pub fn defines(&self, name: &[u8]) -> Result<bool, Rc> {
        self.tool.defines(self.ctx, name)
    }

    /// The cached set of ICVs the runtime describes, or `None` before it is probed.
    pub fn described_icvs(&self) -> Option<u64> {
        self.cache.icvs
    }

    /// Caches the set of ICVs the runtime describes.
    pub fn set_described_icvs(&mut self, set: u64) {
        self.cache.icvs = Some(set);
    }

    /// A bitfield mask.
    pub fn mask(&mut self, m: Mask) -> Result<u64, Rc> {
        self.layout(layout::mask_slot(m))
    }

    /// The address of field `f` of the object at `base`.
    pub fn at(&mut self, base: u64, f: Field) -> Result<u64, Rc> {
        let off = self.layout(layout::field_slot(f, false))?;
        self.add(base, off)
    }

    /// The scalar field `f` of the object at `base`, read at the field's own size.
    pub fn field(&mut self, base: u64, f: Field, signed: bool) -> Result<i64, Rc> {
        let a = self.at(base, f)?;
        let width = self.layout(layout::field_slot(f, true))?;
        self.word(a, width, signed)
    }

    /// The pointer field `f` of the object at `base`.
    pub fn field_ptr(&mut self, base: u64, f: Field) -> Result<u64, Rc> {
        let a = self.at(base, f)?;
        self.ptr(a)
    }

    /// The address of a global symbol.
    pub fn global(&self, name: &[u8]) -> Result<Address, Rc> {
        self.tool.lookup(self.ctx, std::ptr::null_mut(), name)
    }

    /// A global scalar whose width is the layout size `s`.
    pub fn global_sized(&mut self, name: &[u8], s: Size, signed: bool) -> Result<i64, Rc> {
        let width = self.size(s)?;
        let a = self.global(name)?;
        self.scalar(a, std::ptr::null_mut(), width, signed)
    }

    /// A global `int`.
    pub fn global_int(&self, name: &[u8]) -> Result<i64, Rc> {
        let a = self.global(name)?;
        self.scalar(
            a,
            std::ptr::null_mut(),
            u64::from(self.sizes.sizeof_int),
            true,
        )
    }

    /// A global pointer.
    pub fn global_ptr(&self, name: &[u8]) -> Result<u64, Rc> {
        let a = self.global(name)?;
        Ok(self.scalar(a, std::ptr::null_mut(), self.pointer(), false)? as u64)
    }

    /// The NUL-terminated string at `addr`, into `buf`; its length.
    pub fn string(&self, addr: u64, buf: &mut [u8]) -> Result<usize, Rc> {
        self.tool.read_string(self.ctx, at(addr), buf)
    }
}

/// A target address in no particular segment.
pub fn at(address: u64) -> Address {
    Address {
        segment: SEGMENT_NONE,
        address,
    }
}
