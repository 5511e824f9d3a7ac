//! The build system: see `cargo xtask help`.
fn main() {}
