//! The `ompd-conform` command line: runs the conformance suite ([`ompd_engine`]) and reviews its
//! reports ([`ompd_review`]).
//!
//! - [`cli`]: the `ompd-conform` command line and its exit codes.
//!
//! The modules of the layers below are imported at the crate root under their own names, so
//! `cli` names them as `crate::gate`, `crate::real_runs` and so on.

pub mod cli;

use ompd_checks as checks;
use ompd_engine::{bench, collect, property, real, real_runs, run, snapshot, supervisor, worker};
use ompd_report as report;
use ompd_review::{bless, coverage, expectations, gate, html, output, regression};
use ompd_vendors as vendors;
