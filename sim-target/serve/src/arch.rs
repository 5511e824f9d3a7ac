//! Target architecture variants: pointer width and byte order, carried as one small `Copy` value.
//!
//! Nothing in the simulator reads the host's byte order or pointer width: every value that crosses
//! into or out of an image is encoded and decoded here.

use ompd_abi::DeviceTypeSizes;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Byte order of the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Endian {
    /// Little-endian.
    Little,
    /// Big-endian.
    Big,
}

/// One of the four simulated architecture variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Arch {
    /// Pointer (and `long`) size in bytes: 4 or 8.
    pub pointer: u8,
    /// Byte order.
    pub endian: Endian,
}

impl Arch {
    /// 64-bit little-endian (x86-64, aarch64).
    pub const LP64_LE: Arch = Arch {
        pointer: 8,
        endian: Endian::Little,
    };
    /// 64-bit big-endian (s390x, ppc64).
    pub const LP64_BE: Arch = Arch {
        pointer: 8,
        endian: Endian::Big,
    };
    /// 32-bit little-endian (i386, armv7).
    pub const ILP32_LE: Arch = Arch {
        pointer: 4,
        endian: Endian::Little,
    };
    /// 32-bit big-endian (ppc, mips).
    pub const ILP32_BE: Arch = Arch {
        pointer: 4,
        endian: Endian::Big,
    };
    /// All four variants, in report order.
    pub const ALL: [Arch; 4] = [Arch::LP64_LE, Arch::LP64_BE, Arch::ILP32_LE, Arch::ILP32_BE];

    /// The report name: `lp64-le`, `lp64-be`, `ilp32-le` or `ilp32-be`.
    pub fn name(self) -> &'static str {
        match (self.pointer, self.endian) {
            (8, Endian::Little) => "lp64-le",
            (8, Endian::Big) => "lp64-be",
            (4, Endian::Little) => "ilp32-le",
            _ => "ilp32-be",
        }
    }

    /// The primitive sizes reported through `sizeof_type`. `long long` is 8 on every variant,
    /// which the LLVM-family libraries rely on for layout words.
    pub fn type_sizes(self) -> DeviceTypeSizes {
        DeviceTypeSizes {
            sizeof_char: 1,
            sizeof_short: 2,
            sizeof_int: 4,
            sizeof_long: self.pointer,
            sizeof_long_long: 8,
            sizeof_pointer: self.pointer,
        }
    }

    /// Highest usable address + 1 (all 32-bit addresses stay below 4 GiB).
    pub fn address_limit(self) -> u64 {
        if self.pointer == 4 {
            1 << 32
        } else {
            u64::MAX
        }
    }

    /// Encodes the low `width` bytes of `value` in target byte order.
    pub fn encode(self, value: u64, width: usize) -> Vec<u8> {
        assert!(width <= 8, "scalar width {width} > 8");
        let le = value.to_le_bytes();
        let mut out = le[..width].to_vec();
        if self.endian == Endian::Big {
            out.reverse();
        }
        out
    }

    /// Decodes an unsigned target-order scalar of up to 8 bytes.
    pub fn decode(self, bytes: &[u8]) -> u64 {
        assert!(bytes.len() <= 8, "scalar width {} > 8", bytes.len());
        let mut le = [0u8; 8];
        for (i, b) in bytes.iter().enumerate() {
            let pos = match self.endian {
                Endian::Little => i,
                Endian::Big => bytes.len() - 1 - i,
            };
            le[pos] = *b;
        }
        u64::from_le_bytes(le)
    }

    /// Decodes a signed target-order scalar of up to 8 bytes, sign-extending it.
    pub fn decode_signed(self, bytes: &[u8]) -> i64 {
        let raw = self.decode(bytes);
        let bits = bytes.len() * 8;
        if bits == 0 || bits == 64 {
            return raw as i64;
        }
        let shift = 64 - bits;
        ((raw << shift) as i64) >> shift
    }

    /// The pointer member of an `ompt_data_t` union whose 8-byte `value` member holds `value`:
    /// the first pointer-width bytes of the value's target encoding. On a 32-bit target that is
    /// the low half on little-endian and the high half on big-endian.
    pub fn union_pointer(self, value: u64) -> u64 {
        self.decode(&self.encode(value, 8)[..self.pointer as usize])
    }

    /// Converts `count` units of `unit` bytes between target and host order (the job of
    /// `device_to_host`/`host_to_device`). The host is little-endian, so a big-endian target
    /// reverses each unit. `unit == 0` is a no-op, which Intel's library relies on.
    pub fn convert_units(self, data: &mut [u8], unit: usize) {
        if unit <= 1 || self.endian == Endian::Little || cfg!(target_endian = "big") {
            return;
        }
        for chunk in data.chunks_exact_mut(unit) {
            chunk.reverse();
        }
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Arch {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Arch::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| {
                format!("unknown arch `{s}` (expected lp64-le, lp64-be, ilp32-le or ilp32-be)")
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_decode_round_trip_every_width() {
        for arch in Arch::ALL {
            for width in 1..=8 {
                let v = 0x0102_0304_0506_0708u64 & (u64::MAX >> (64 - 8 * width));
                assert_eq!(
                    arch.decode(&arch.encode(v, width)),
                    v,
                    "{arch} width {width}"
                );
            }
        }
    }

    #[test]
    fn big_endian_puts_the_high_byte_first() {
        assert_eq!(
            Arch::ILP32_BE.encode(0x11223344, 4),
            [0x11, 0x22, 0x33, 0x44]
        );
        assert_eq!(
            Arch::ILP32_LE.encode(0x11223344, 4),
            [0x44, 0x33, 0x22, 0x11]
        );
    }

    #[test]
    fn signed_decode_sign_extends() {
        assert_eq!(Arch::LP64_LE.decode_signed(&[0xff, 0xff, 0xff, 0xff]), -1);
        assert_eq!(Arch::LP64_BE.decode_signed(&[0x80, 0x00]), -32768);
        assert_eq!(Arch::LP64_LE.decode_signed(&[0x7f]), 127);
    }

    #[test]
    fn union_pointer_aliases_the_leading_bytes() {
        let v = 0x1122_3344_5566_7788;
        assert_eq!(Arch::LP64_LE.union_pointer(v), v);
        assert_eq!(Arch::LP64_BE.union_pointer(v), v);
        assert_eq!(Arch::ILP32_LE.union_pointer(v), 0x5566_7788);
        assert_eq!(Arch::ILP32_BE.union_pointer(v), 0x1122_3344);
    }

    #[test]
    fn names_parse_back() {
        for arch in Arch::ALL {
            assert_eq!(arch.name().parse::<Arch>().unwrap(), arch);
        }
        assert!("x86".parse::<Arch>().is_err());
    }

    #[test]
    fn unit_conversion_swaps_only_on_big_endian() {
        let mut d = [1, 2, 3, 4, 5, 6, 7, 8];
        Arch::LP64_LE.convert_units(&mut d, 4);
        assert_eq!(d, [1, 2, 3, 4, 5, 6, 7, 8]);
        Arch::LP64_BE.convert_units(&mut d, 4);
        assert_eq!(d, [4, 3, 2, 1, 8, 7, 6, 5]);
        Arch::LP64_BE.convert_units(&mut d, 0);
        assert_eq!(d, [4, 3, 2, 1, 8, 7, 6, 5]);
    }
}
