//! The `ompd-conform` command line: runs the conformance suite ([`ompd_engine`]) and reviews its
//! reports ([`ompd_review`]).
//!
//! - [`cli`]: the `ompd-conform` command line and its exit codes.

pub mod cli;
