//! The early returns every family writes: no address space, an entry point not exported.

/// The address space of a target-stage check, or return the skip verdict naming why there is none.
macro_rules! aspace_or_skip {
    ($ctx:expr) => {
        match $ctx.aspace() {
            Ok(a) => a,
            Err(v) => return v,
        }
    };
}
pub(crate) use aspace_or_skip;

/// A required entry point, or return the skip verdict saying it is not exported (the inventory
/// checks judge what a library exports).
macro_rules! entry_or_skip {
    ($ctx:expr, $ep:expr) => {
        if !$ctx.lib.api.has($ep) {
            return $crate::Verdict::skip(format!("{} is not exported", $ep));
        }
    };
}
pub(crate) use entry_or_skip;
