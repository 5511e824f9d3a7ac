//! Where lowering puts each object: one heap area, a seeded spread, or the address extremes.
//!
//! The `far` placement puts objects where a library that keeps addresses in an `int`, subtracts
//! them into one, or sign-extends a 32-bit pointer goes wrong, on purpose rather than by the
//! chance of a random spread (issue: address extremes):
//! - on a 64-bit target, three objects in four sit on a lattice of step 2^31 above 2^63, so two
//!   such objects lie a multiple of 2^31 apart (2^31, 2^32, ...): their difference truncated to
//!   32 bits is `0` or `INT_MIN`;
//! - on a 32-bit target, objects sit above 2 GiB, and one in four lies exactly 2^31 below the
//!   object placed before it;
//! - on both, one object in four is stacked down from the very top of the address space (the
//!   first ends at its last byte).

use crate::layout::{Policy, SeedRng};
use ompd_serve::arch::Arch;
use ompd_serve::memory::Memory;

/// The gap kept between neighbours, so that an overrun never lands in the next object.
const GAP: u64 = 64;
/// The step of the 64-bit lattice, and the distance of a 32-bit mirrored object.
const STEP: u64 = 1 << 31;
/// The first lattice address on a 64-bit target (above 2^63, with room for 8,000 slots).
const LATTICE_64: u64 = 0xFFFF_F000_0000_0000;
/// The first address of the ascending lane above 2 GiB on a 32-bit target.
const UPPER_32: u64 = 0x8100_0000;
/// The end of the lane stacked down from the top on a 64-bit target: the last page stays
/// unmapped, since an object's end must be an address.
const TOP_64: u64 = 0xFFFF_FFFF_FFFF_F000;

/// How the objects of one image are placed.
pub(super) enum Placer {
    /// One heap area from `next` upward (natural, packed and preset layouts).
    Heap {
        /// The next free address.
        next: u64,
    },
    /// Addresses drawn from a seed over the whole space below `limit`.
    Spread {
        /// The generator.
        rng: SeedRng,
        /// The end of the address space.
        limit: u64,
    },
    /// The address extremes (see the module docs).
    Far(Far),
}

/// The state of the `far` placement.
pub(super) struct Far {
    /// Target pointer width is 8 bytes.
    wide: bool,
    /// Objects placed so far.
    count: u64,
    /// The lowest address of the lane stacked down from the top (exclusive end of its next object).
    top: u64,
    /// The next free address of the ascending lane (the lattice slot on 64-bit targets).
    upper: u64,
    /// Where the previous object of the ascending lane starts (a 32-bit mirror's reference).
    last_upper: u64,
}

impl Placer {
    /// The placer of `policy` for a target of `arch`: a random layout spreads the objects, the
    /// far one puts them at the extremes, the others pack them into one heap area.
    pub(super) fn new(arch: Arch, policy: Policy) -> Placer {
        match policy {
            Policy::Far => Placer::Far(Far::new(arch)),
            Policy::Random(seed) => Placer::Spread {
                rng: SeedRng::new(seed ^ 0x5EED_AD0D),
                limit: arch.address_limit(),
            },
            Policy::Natural | Policy::Packed | Policy::Intel2026_2 => {
                Placer::Heap { next: 0x1000_0000 }
            }
        }
    }

    /// Maps `size` bytes aligned to `align` (clamped to 8..=64) and returns their address.
    pub(super) fn place(&mut self, mem: &mut Memory, size: u64, align: u64, label: &str) -> u64 {
        let size = size.max(1);
        let align = align.clamp(8, 64);
        let addr = match self {
            Placer::Heap { next } => {
                let addr = next.div_ceil(align) * align;
                *next = addr + size + 16;
                addr
            }
            Placer::Spread { rng, limit } => spread(rng, *limit, mem, size, align),
            Placer::Far(far) => far.next(size, align),
        };
        mem.map(addr, size, label);
        addr
    }
}

fn spread(rng: &mut SeedRng, limit: u64, mem: &Memory, size: u64, align: u64) -> u64 {
    for _ in 0..10_000 {
        let span = limit - 0x10_0000 - size;
        let addr = (0x1_0000 + rng.below(span)) & !(align - 1);
        // Keep a guard gap so that an overrun never lands in a neighbour.
        if addr >= 0x1_0000 && !mem.overlaps(addr.saturating_sub(16), size + 32) {
            return addr;
        }
    }
    panic!("could not place {size} bytes in the address space");
}

impl Far {
    fn new(arch: Arch) -> Far {
        let wide = arch.pointer == 8;
        let upper = if wide { LATTICE_64 } else { UPPER_32 };
        Far {
            wide,
            count: 0,
            top: if wide { TOP_64 } else { 1 << 32 } - 1,
            upper,
            last_upper: upper,
        }
    }

    /// The address of the next object (the lane turns with every object).
    fn next(&mut self, size: u64, align: u64) -> u64 {
        let lane = self.count % 4;
        self.count += 1;
        match lane {
            0 => self.stacked_down(size, align),
            2 if !self.wide => self.mirror(size),
            _ => self.ascending(size),
        }
    }

    /// Stacked down from the top: on a 32-bit target the first object ends at the space's last
    /// byte (for a size that is a multiple of its alignment).
    fn stacked_down(&mut self, size: u64, align: u64) -> u64 {
        let addr = (self.top - size + 1) & !(align - 1);
        self.top = addr - GAP;
        addr
    }

    /// The ascending lane: the next 2^31 lattice slot on a 64-bit target, the next 64-aligned
    /// address above 2 GiB on a 32-bit one.
    fn ascending(&mut self, size: u64) -> u64 {
        let addr = self.upper;
        assert!(
            size < STEP - GAP,
            "a {size}-byte object spans a lattice step"
        );
        assert!(
            addr.checked_add(size + GAP)
                .is_some_and(|end| end <= self.top),
            "the far placement ran out of room"
        );
        self.last_upper = addr;
        self.upper = if self.wide {
            addr.saturating_add(STEP)
        } else {
            (addr + size + GAP).div_ceil(64) * 64
        };
        addr
    }

    /// A 32-bit object exactly 2^31 below the previous ascending one.
    fn mirror(&mut self, size: u64) -> u64 {
        let addr = self.last_upper - STEP;
        // The ascending lane moves past the mirror's image, so two mirrors never overlap.
        self.upper = self.upper.max((addr + STEP + size + GAP).div_ceil(64) * 64);
        addr
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placed(arch: Arch, sizes: &[u64]) -> Vec<u64> {
        let mut mem = Memory::default();
        let mut p = Placer::new(arch, Policy::Far);
        sizes
            .iter()
            .map(|s| p.place(&mut mem, *s, 64, "object"))
            .collect()
    }

    #[test]
    fn wide_targets_get_lattice_pairs_above_the_sign_bit_and_the_top() {
        let a = placed(Arch::LP64_LE, &[64, 200, 48, 4096, 8, 1000, 72, 64]);
        assert_eq!(a[0] + 64, TOP_64, "the first object ends at the last page");
        let lattice: Vec<u64> = [1, 2, 3, 5, 6, 7].iter().map(|i| a[*i]).collect();
        assert!(lattice.iter().all(|x| *x > 1 << 63 && x % STEP == 0));
        assert_eq!(a[2] - a[1], 1 << 31);
        assert_eq!(a[3] - a[1], 1 << 32);
    }

    #[test]
    fn narrow_targets_get_the_top_mirrors_and_the_upper_half() {
        let a = placed(Arch::ILP32_BE, &[64, 200, 4096, 48, 8, 1000, 72, 64, 64]);
        assert_eq!(a[0] + 64, 1 << 32, "the first object ends at the last byte");
        assert_eq!(
            a[1] - a[2],
            1 << 31,
            "a mirror lies 2^31 below its predecessor"
        );
        assert_eq!(a[5] - a[6], 1 << 31);
        for (i, x) in a.iter().enumerate() {
            assert_eq!(*x >= 1 << 31, i % 4 != 2, "object {i} at {x:#x}");
        }
    }
}
