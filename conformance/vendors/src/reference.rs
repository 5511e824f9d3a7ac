//! The suite's own reference OMPD library builds (`c-fixtures/reference/`): built from source beside
//! the runner, never fetched. A reference is named like a vendor (`reference-5.2`) and resolves
//! to the `cdylib` in the runner's own directory (`target/release` for `cargo xtask`,
//! `target/debug` for the tests), or in `$OMPD_REFERENCE_DIR`.

use crate::{Resolved, VendorError};
use std::path::PathBuf;

/// Environment variable naming the directory of the built reference libraries.
pub const REFERENCE_DIR_ENV: &str = "OMPD_REFERENCE_DIR";

/// One build of the reference library.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reference {
    /// The name on the command line and in reports.
    pub name: &'static str,
    /// The cargo package that builds it.
    pub package: &'static str,
    /// The file cargo writes.
    pub file: &'static str,
}

/// The 5.2 build, the one a replay of a runtime check loads.
pub const REFERENCE_5_2: Reference = REFERENCES[2];

/// Every reference build.
pub const REFERENCES: [Reference; 5] = [
    Reference {
        name: "reference-5.0",
        package: "ompd-reference-50",
        file: "libompd_reference_50.so",
    },
    Reference {
        name: "reference-5.1",
        package: "ompd-reference-51",
        file: "libompd_reference_51.so",
    },
    Reference {
        name: "reference-5.2",
        package: "ompd-reference-52",
        file: "libompd_reference_52.so",
    },
    Reference {
        name: "reference-6.0",
        package: "ompd-reference-60",
        file: "libompd_reference_60.so",
    },
    Reference {
        name: "reference-tr2.001",
        package: "ompd-reference-tr2",
        file: "libompd_reference_tr2.so",
    },
];

/// The reference build called `name`, if any.
pub fn reference(name: &str) -> Option<&'static Reference> {
    REFERENCES.iter().find(|r| r.name == name)
}

/// Where the reference libraries are: `$OMPD_REFERENCE_DIR`, else the running program's
/// directory.
pub fn reference_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os(REFERENCE_DIR_ENV).filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    let exe = std::env::current_exe().ok()?;
    exe.parent().map(|p| p.to_path_buf())
}

impl Reference {
    /// The built library file, if it exists.
    pub fn path(&self) -> Option<PathBuf> {
        let p = reference_dir()?.join(self.file);
        p.is_file().then_some(p)
    }

    /// The library resolved for loading; [`VendorError::NotBuilt`] when it is not built.
    pub fn resolve(&self) -> Result<Resolved, VendorError> {
        let path = self.path().ok_or_else(|| VendorError::NotBuilt {
            name: self.name.to_string(),
            package: self.package.to_string(),
        })?;
        let path = path.canonicalize().map_err(|source| VendorError::Io {
            action: "resolve",
            path: path.clone(),
            source,
        })?;
        Ok(Resolved {
            name: self.name.to_string(),
            path,
            preload: Vec::new(),
            needs_cxx_runtime: false,
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reference_names_its_package_and_file() {
        for r in REFERENCES {
            assert!(r.name.starts_with("reference-"));
            let stem = r.package.replace('-', "_");
            assert_eq!(r.file, format!("lib{stem}.so"));
            assert_eq!(reference(r.name), Some(&r));
        }
        assert_eq!(reference("llvm-19"), None);
        assert_eq!(REFERENCE_5_2.name, "reference-5.2");
    }
}
