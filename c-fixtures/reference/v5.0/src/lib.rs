//! The reference OMPD library built for OpenMP 5.0: `ompd_get_api_version` reports 201811, and
//! every one of the generation's 35 routines is exported.

ompd_reference::export_5_0!(ompd_reference::Build {
    generation: ompd_reference::abi::Generation::V5_0,
    version_string: b"ompd-conformance reference OMPD library 0.1.0 (OpenMP 5.0, API 201811) for LLVM- and Intel-family runtimes\0",
});
