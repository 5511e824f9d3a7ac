//! `ompd-conform`: the conformance runner.
fn main() {}
