//! The early returns every family writes: no address space, an entry point not exported.

/// The address space of a target-stage check, or return the skip verdict naming why there is none;
/// with entry points after the context, then also return a skip verdict for the first of them the
/// library does not export (`aspace_or_skip!(ctx, EntryPoint::GetToolData)`).
macro_rules! aspace_or_skip {
    ($ctx:expr) => {
        match $ctx.aspace() {
            Ok(a) => a,
            Err(v) => return v,
        }
    };
    ($ctx:expr, $($ep:expr),+) => {{
        let ah = $crate::aspace_or_skip!($ctx);
        $($crate::entry_or_skip!($ctx, $ep);)+
        ah
    }};
}
pub(crate) use aspace_or_skip;

/// A required entry point, or return the skip verdict saying it is not exported (the inventory
/// checks judge what a library exports).
macro_rules! entry_or_skip {
    ($ctx:expr, $ep:expr) => {
        if !$ctx.lib.api.serves($ep) {
            return $crate::Verdict::skip(format!("{} is not exported", $ep));
        }
    };
}
pub(crate) use entry_or_skip;
