//! The reference OMPD library built for OpenMP 6.0: `ompd_get_api_version` reports 202411, a
//! handle of the wrong kind or address space is `ompd_rc_incompatible_handle`.

ompd_reference::export!(ompd_reference::Build {
    generation: ompd_reference::abi::Generation::V6_0,
    version_string: b"ompd-conformance reference OMPD library 0.1.0 (OpenMP 6.0, API 202411) for LLVM- and Intel-family runtimes\0",
});
