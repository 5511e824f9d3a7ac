//! Sparse target memory: mapped regions with bounds-checked reads and writes.

use std::collections::BTreeMap;

/// A failed memory access.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MemError {
    /// Some byte of `[addr, addr+len)` is not mapped (or the range crosses two regions).
    #[error("unmapped access of {len} bytes at {addr:#x}")]
    Unmapped {
        /// Start address.
        addr: u64,
        /// Length.
        len: u64,
    },
    /// No NUL byte within the limit.
    #[error("no NUL within {max} bytes at {addr:#x}")]
    Unterminated {
        /// Start address.
        addr: u64,
        /// Limit.
        max: u64,
    },
}

/// One mapped region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemRegion {
    /// Contents.
    pub bytes: Vec<u8>,
    /// What the region holds (for dumps and traces).
    pub label: String,
}

/// Reads as a target served them: (address, the bytes read), in the order served.
pub type Reads = Vec<(u64, Vec<u8>)>;

/// A target address space.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    regions: BTreeMap<u64, MemRegion>,
}

impl Memory {
    /// Maps `size` zero bytes at `base`. Panics if the range overlaps a mapped region, which would
    /// be a bug in the placement code.
    pub fn map(&mut self, base: u64, size: u64, label: impl Into<String>) {
        assert!(
            size > 0 && base.checked_add(size).is_some(),
            "bad region {base:#x}+{size}"
        );
        assert!(
            !self.overlaps(base, size),
            "region {base:#x}+{size} overlaps"
        );
        self.regions.insert(
            base,
            MemRegion {
                bytes: vec![0; size as usize],
                label: label.into(),
            },
        );
    }

    /// True when `[base, base+size)` touches a mapped byte.
    pub fn overlaps(&self, base: u64, size: u64) -> bool {
        let end = base.saturating_add(size);
        if let Some((b, r)) = self.regions.range(..end).next_back() {
            return b + r.bytes.len() as u64 > base;
        }
        false
    }

    fn locate(&self, addr: u64, len: u64) -> Result<(u64, &MemRegion), MemError> {
        let (base, r) = self
            .regions
            .range(..=addr)
            .next_back()
            .ok_or(MemError::Unmapped { addr, len })?;
        let off = addr - base;
        if off
            .checked_add(len)
            .is_none_or(|end| end > r.bytes.len() as u64)
        {
            return Err(MemError::Unmapped { addr, len });
        }
        Ok((off, r))
    }

    /// Reads `len` bytes at `addr`; the whole range must lie in one region.
    pub fn read(&self, addr: u64, len: u64) -> Result<&[u8], MemError> {
        if len == 0 {
            return Ok(&[]);
        }
        let (off, r) = self.locate(addr, len)?;
        Ok(&r.bytes[off as usize..(off + len) as usize])
    }

    /// Writes `data` at `addr`; the whole range must lie in one region.
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemError> {
        if data.is_empty() {
            return Ok(());
        }
        let len = data.len() as u64;
        let (off, _) = self.locate(addr, len)?;
        let base = addr - off;
        let r = self.regions.get_mut(&base).expect("located region exists");
        r.bytes[off as usize..(off + len) as usize].copy_from_slice(data);
        Ok(())
    }

    /// Reads a NUL-terminated string of at most `max` bytes including the NUL; returns the bytes
    /// without the NUL.
    pub fn read_cstr(&self, addr: u64, max: u64) -> Result<&[u8], MemError> {
        let (off, r) = self.locate(addr, 1)?;
        let avail = &r.bytes[off as usize..];
        let limit = avail.len().min(max as usize);
        match avail[..limit].iter().position(|b| *b == 0) {
            Some(n) => Ok(&avail[..n]),
            None if limit < max as usize => Err(MemError::Unmapped { addr, len: max }),
            None => Err(MemError::Unterminated { addr, max }),
        }
    }

    /// The memory `reads` saw (address, bytes, as [`crate::callbacks::Target::record_reads`]
    /// gives them): each byte read, at its address, in regions merged where reads touch or
    /// overlap (a later read of the same byte wins); nothing else is mapped.
    pub fn from_reads(reads: &[(u64, Vec<u8>)]) -> Memory {
        let mut spans: Vec<(u64, u64)> = reads
            .iter()
            .filter(|(a, b)| !b.is_empty() && a.checked_add(b.len() as u64).is_some())
            .map(|(a, b)| (*a, a + b.len() as u64))
            .collect();
        spans.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::new();
        for (start, end) in spans {
            match merged.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        let mut m = Memory::default();
        for (start, end) in merged {
            m.map(start, end - start, "recorded reads");
        }
        for (addr, bytes) in reads {
            let _ = m.write(*addr, bytes);
        }
        m
    }

    /// Every mapped region, by base address.
    pub fn regions(&self) -> impl Iterator<Item = (u64, &MemRegion)> {
        self.regions.iter().map(|(b, r)| (*b, r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_reads_are_served_again_and_nothing_else() {
        let reads = vec![
            (0x1000, vec![1, 2, 3, 4]),
            (0x1004, vec![5, 6]),
            (0x1002, vec![9, 9]),
            (0x2000, vec![7]),
        ];
        let m = Memory::from_reads(&reads);
        assert_eq!(m.read(0x1000, 6).unwrap(), &[1, 2, 9, 9, 5, 6]);
        assert_eq!(m.read(0x2000, 1).unwrap(), &[7]);
        assert!(m.read(0x1006, 1).is_err());
        assert!(m.read(0x1fff, 2).is_err());
        assert_eq!(m.regions().count(), 2);
    }

    #[test]
    fn reads_are_bounded_by_their_region() {
        let mut m = Memory::default();
        m.map(0x1000, 16, "a");
        m.map(0x1010, 16, "b");
        m.write(0x1000, &[1, 2, 3]).unwrap();
        assert_eq!(m.read(0x1000, 3).unwrap(), &[1, 2, 3]);
        assert!(
            m.read(0x100c, 8).is_err(),
            "crossing two regions is refused"
        );
        assert!(m.read(0x0fff, 1).is_err());
        assert!(m.read(0x2000, 1).is_err());
        assert!(m.read(u64::MAX, 2).is_err());
        assert_eq!(m.read(0xdead, 0).unwrap(), &[] as &[u8]);
    }

    #[test]
    fn strings_need_a_terminator() {
        let mut m = Memory::default();
        m.map(0x10, 8, "s");
        m.write(0x10, b"abc\0").unwrap();
        assert_eq!(m.read_cstr(0x10, 512).unwrap(), b"abc");
        m.write(0x10, b"abcdefgh").unwrap();
        assert!(matches!(
            m.read_cstr(0x10, 512),
            Err(MemError::Unmapped { .. })
        ));
        assert!(matches!(
            m.read_cstr(0x10, 4),
            Err(MemError::Unterminated { .. })
        ));
    }

    #[test]
    fn overlapping_maps_are_detected() {
        let mut m = Memory::default();
        m.map(0x100, 0x10, "a");
        assert!(m.overlaps(0xf8, 0x9));
        assert!(!m.overlaps(0xf0, 0x10));
        assert!(!m.overlaps(0x110, 0x10));
    }
}
