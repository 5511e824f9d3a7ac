//! The check families, one module each, named after the first component of their checks' ids
//! (`thread.*` in `thread.rs`, `icv.*` in `icv/`). The registry lists their tables in run order.

pub(crate) mod alike;
pub(crate) mod aspace;
pub(crate) mod bp;
pub(crate) mod bp_kept;
pub(crate) mod callbacks;
pub(crate) mod compare;
pub(crate) mod corrupt;
pub(crate) mod dcv;
pub(crate) mod device;
pub(crate) mod fault;
pub(crate) mod icv;
pub(crate) mod layout;
pub(crate) mod lib;
pub(crate) mod lifecycle;
pub(crate) mod null;
pub(crate) mod own;
pub(crate) mod parallel;
pub(crate) mod route;
pub(crate) mod runtime;
pub(crate) mod runtime_state;
pub(crate) mod state;
pub(crate) mod r#static;
pub(crate) mod task;
pub(crate) mod teams;
pub(crate) mod thread;
pub(crate) mod tool_data;
pub(crate) mod tr;
