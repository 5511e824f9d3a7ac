//! The reference OMPD library built for OpenMP 5.1: `ompd_get_api_version` reports 202011, and
//! every one of the generation's 35 routines is exported.

ompd_reference::export_5_0!(ompd_reference::Build {
    generation: ompd_reference::abi::Generation::V5_1,
    version_string: b"ompd-conformance reference OMPD library 0.1.0 (OpenMP 5.1, API 202011) for LLVM- and Intel-family runtimes\0",
});
