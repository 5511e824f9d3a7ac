//! The reference OMPD library built for OpenMP 5.2: `ompd_get_api_version` reports 202111, and
//! every one of the generation's 37 routines is exported.

ompd_reference::export!(ompd_reference::Build {
    generation: ompd_reference::abi::Generation::V5_2,
    version_string: b"ompd-conformance reference OMPD library 0.1.0 (OpenMP 5.2, API 202111) for LLVM- and Intel-family runtimes\0",
});
