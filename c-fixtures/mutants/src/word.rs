//! Every argument of an entry point as one 64-bit word, and back: the hooks see and change the
//! arguments of any routine through one array.

use ompd_abi::Scope;
use std::ffi::c_int;

/// An argument type that travels as a word.
pub trait Word: Copy {
    /// The argument as a word (a pointer's address, an integer's value).
    fn word(self) -> u64;
    /// The argument back from its word.
    fn from_word(w: u64) -> Self;
}

impl<T> Word for *mut T {
    fn word(self) -> u64 {
        self as usize as u64
    }
    fn from_word(w: u64) -> Self {
        w as usize as *mut T
    }
}

impl<T> Word for *const T {
    fn word(self) -> u64 {
        self as usize as u64
    }
    fn from_word(w: u64) -> Self {
        w as usize as *const T
    }
}

impl Word for u64 {
    fn word(self) -> u64 {
        self
    }
    fn from_word(w: u64) -> Self {
        w
    }
}

impl Word for i64 {
    fn word(self) -> u64 {
        self as u64
    }
    fn from_word(w: u64) -> Self {
        w as i64
    }
}

impl Word for c_int {
    fn word(self) -> u64 {
        self as i64 as u64
    }
    fn from_word(w: u64) -> Self {
        w as i64 as c_int
    }
}

impl Word for Scope {
    fn word(self) -> u64 {
        self.0.word()
    }
    fn from_word(w: u64) -> Self {
        Scope(c_int::from_word(w))
    }
}
