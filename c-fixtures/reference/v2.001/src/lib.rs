//! The reference OMPD library built for OMPD Technical Report 2.001: the TR's routines, types
//! and callback table, string ids included; `ompd_get_version` reports 201607 (the TR names no
//! number; this is its date).

ompd_reference::export_tr!(ompd_reference::Build {
    generation: ompd_reference::abi::Generation::Tr2,
    version_string: b"ompd-conformance reference OMPD library 0.1.0 (OMPD TR 2.001) for LLVM- and Intel-family runtimes\0",
});
