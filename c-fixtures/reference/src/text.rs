//! Text without the heap: a fixed buffer that formats like a `String` and fails instead of
//! growing, so every string the library builds is bounded before it reaches `alloc_memory`.

use std::fmt;

/// A bounded text buffer.
pub struct Buf<const N: usize> {
    bytes: [u8; N],
    len: usize,
    overflow: bool,
}

impl<const N: usize> Buf<N> {
    /// An empty buffer.
    pub fn new() -> Self {
        Buf {
            bytes: [0; N],
            len: 0,
            overflow: false,
        }
    }

    /// The text so far; `None` when something did not fit.
    pub fn bytes(&self) -> Option<&[u8]> {
        if self.overflow {
            None
        } else {
            self.bytes.get(..self.len)
        }
    }

    /// Appends raw bytes.
    pub fn push(&mut self, b: &[u8]) {
        match self
            .bytes
            .get_mut(self.len..self.len.saturating_add(b.len()))
        {
            Some(dst) => {
                dst.copy_from_slice(b);
                self.len += b.len();
            }
            None => self.overflow = true,
        }
    }
}

impl<const N: usize> Default for Buf<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> fmt::Write for Buf<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push(s.as_bytes());
        if self.overflow {
            Err(fmt::Error)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write as _;

    #[test]
    fn formats_within_bounds_and_refuses_past_them() {
        let mut b = Buf::<8>::new();
        write!(b, "{},{}", 12, -3).unwrap();
        assert_eq!(b.bytes(), Some(&b"12,-3"[..]));
        assert!(write!(b, "{}", 12345).is_err());
        assert_eq!(b.bytes(), None);
    }
}
