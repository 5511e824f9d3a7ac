//! `ompd-conform`: the conformance runner (see `ompd-conform --help`).

fn main() {
    std::process::exit(ompd_conform::cli::main());
}
