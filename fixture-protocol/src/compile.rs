//! Compiling the OpenMP fixture program and the OMPT truth tool at run time, on first need.
//!
//! The C sources are embedded in this crate. [`build`] compiles them into
//! `ROOT/<key>/` (the runner uses `target/ompd-fixtures`), where `key` hashes the sources,
//! the `omp-tools.h` used and the `--version` of every compiler; an existing directory of the
//! same key is reused, so only the first run after a change pays for the compilation. A
//! directory is filled under a temporary name and renamed into place, so concurrent runs never
//! see half of one.
//!
//! - `c/omp_fixture.c` is built once per [`Compiler`] (`-fopenmp -O1 -g`, no RPATH). A compiler
//!   that is not installed, or fails to build the program (clang-19 without `omp.h`), is not an
//!   error: the build is listed in [`Built::missing`] with the reason and the Debian packages.
//! - `c/ompt_truth.c` (`libompt_truth.so`) is built with the host's C compiler (`$CC`, else
//!   `cc`) against `omp-tools.h` ([`find_header`]). Every fixture run loads it, so its absence
//!   is a [`CompileError`]: one line naming the header or compiler and its Debian package.
//! - `c/bp_stop.c` (`libbp_stop.so`, the breakpoint-stop shim a breakpoint tour preloads) is
//!   built with the same compiler; it needs no header beyond libc's.
//!
//! Why `std::process::Command` and not the `cc` crate: the program is built with named
//! compilers (one per OpenMP ABI) and the tool with the host compiler, and both run on this
//! host. What `cc` adds, target-triple logic for cross builds driven by cargo's build-script
//! environment (`TARGET`, `HOST`, `OPT_LEVEL`), does not apply at run time and would have to
//! be faked.

use crate::{Compiler, Program};
use sha2::{Digest, Sha256};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use thiserror::Error;

/// The embedded sources, written into every build directory under these names.
const SOURCES: [(&str, &str); 4] = [
    ("omp_fixture.c", include_str!("../c/omp_fixture.c")),
    ("ompt_truth.c", include_str!("../c/ompt_truth.c")),
    ("bp_stop.c", include_str!("../c/bp_stop.c")),
    ("fixture_truth.h", include_str!("../c/fixture_truth.h")),
];

/// The `libomp-19-dev` location of `omp-tools.h`, relative to a filesystem root (the system's,
/// or the vendor cache's `llvm-19` directory, where the fetched package is unpacked).
pub const LLVM19_HEADER: &str = "usr/lib/llvm-19/lib/clang/19/include/omp-tools.h";

/// The environment variable naming the `omp-tools.h` to use (a file path).
pub const HEADER_ENV: &str = "OMP_TOOLS_H";

/// The flags of every compilation.
const COMMON: [&str; 6] = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-g"];

/// Why the fixtures cannot be built: each renders as one line saying what is missing.
#[derive(Debug, Error)]
pub enum CompileError {
    /// No `omp-tools.h` where [`find_header`] looks.
    #[error(
        "omp-tools.h not found (looked at {looked}): install Debian's libomp-19-dev \
         (apt-get install libomp-19-dev), fetch the llvm-19 vendor library, or set OMP_TOOLS_H"
    )]
    NoHeader {
        /// The places looked at, in order.
        looked: String,
    },
    /// `OMP_TOOLS_H` names something that is not a file.
    #[error(
        "OMP_TOOLS_H={0} is not a file (set it to omp-tools.h, or unset it to use Debian's \
         libomp-19-dev)"
    )]
    BadHeaderEnv(PathBuf),
    /// The host C compiler does not run.
    #[error("no C compiler `{0}` to build the OMPT truth tool: install Debian's gcc, or set CC")]
    NoCompiler(String),
    /// The OMPT truth tool does not compile.
    #[error("compiling the OMPT truth tool c/ompt_truth.c or the shim c/bp_stop.c with {compiler} failed: {detail}")]
    Tool {
        /// The compiler.
        compiler: String,
        /// Its first error line.
        detail: String,
    },
    /// The build directory could not be written.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

/// The fixtures of one build directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Built {
    /// The build directory (`ROOT/<key>`).
    pub dir: PathBuf,
    /// The program builds that exist, in [`Compiler::ALL`] order.
    pub programs: Vec<Program>,
    /// The builds that do not, each with the reason (`clang-19 not found (Debian: ...)`).
    pub missing: Vec<(Compiler, String)>,
    /// The OMPT truth tool `libompt_truth.so` (for `OMP_TOOL_LIBRARIES`).
    pub ompt_tool: PathBuf,
    /// The breakpoint-stop shim `libbp_stop.so` (for `LD_PRELOAD` in a breakpoint tour).
    pub bp_stop: PathBuf,
    /// The `omp-tools.h` the tool was compiled against.
    pub header: PathBuf,
}

/// The `omp-tools.h` to compile against, in this order: `$OMP_TOOLS_H` (an error when it is
/// set and names no file), [`LLVM19_HEADER`] on the system (Debian `libomp-19-dev`), then the
/// same path under `vendor_cache/llvm-19` (the fetched `libomp-19-dev` package).
pub fn find_header(vendor_cache: &Path) -> Result<PathBuf, CompileError> {
    if let Some(explicit) = std::env::var_os(HEADER_ENV).filter(|v| !v.is_empty()) {
        let explicit = PathBuf::from(explicit);
        return match explicit.is_file() {
            true => Ok(explicit),
            false => Err(CompileError::BadHeaderEnv(explicit)),
        };
    }
    let candidates = [
        Path::new("/").join(LLVM19_HEADER),
        vendor_cache.join("llvm-19").join(LLVM19_HEADER),
    ];
    match candidates.iter().find(|c| c.is_file()) {
        Some(found) => Ok(found.clone()),
        None => Err(CompileError::NoHeader {
            looked: candidates
                .iter()
                .map(|c| c.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// The host C compiler the tool is built with: `$CC`, else `cc`.
fn host_compiler() -> String {
    std::env::var("CC")
        .ok()
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "cc".into())
}

/// `compiler --version`, or `None` when it cannot run.
fn version(compiler: &str) -> Option<String> {
    let out = Command::new(compiler).arg("--version").output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Builds (or reuses) the fixtures under `root` (see the module docs); `vendor_cache` is one
/// place [`find_header`] looks.
pub fn build(root: &Path, vendor_cache: &Path) -> Result<Built, CompileError> {
    let header = find_header(vendor_cache)?;
    let host = host_compiler();
    let host_version = version(&host).ok_or_else(|| CompileError::NoCompiler(host.clone()))?;
    let header_bytes = fs::read(&header).map_err(io_error("read", &header))?;
    let mut key = Sha256::new();
    for (name, text) in SOURCES {
        key.update(format!("{name}\n{}\n{text}\n", text.len()));
    }
    key.update(&header_bytes);
    key.update(format!("{host}\n{host_version}\n"));
    let versions: Vec<Option<String>> = Compiler::ALL
        .iter()
        .map(|c| version(c.executable()))
        .collect();
    for (c, v) in Compiler::ALL.iter().zip(&versions) {
        key.update(format!("{c:?}\n{v:?}\n"));
    }
    let key: String = key.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let dir = root.join(&key);
    if !dir.join(STATUS).is_file() {
        fill(root, &dir, &header_bytes, &host, &versions)?;
    }
    let status = fs::read_to_string(dir.join(STATUS)).map_err(io_error("read", &dir))?;
    Ok(read_status(&dir, &status, header))
}

/// The file of a complete build directory: one `<compiler executable>\t<reason>` line per
/// compiler, the reason empty for a build that exists.
const STATUS: &str = "status";

/// Compiles everything into a temporary sibling of `dir` and renames it into place.
fn fill(
    root: &Path,
    dir: &Path,
    header: &[u8],
    host: &str,
    versions: &[Option<String>],
) -> Result<(), CompileError> {
    let tmp = root.join(format!(
        "{}.tmp{}",
        dir.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    let _ = fs::remove_dir_all(&tmp);
    let include = tmp.join("include");
    fs::create_dir_all(&include).map_err(io_error("create", &include))?;
    for (name, text) in SOURCES {
        let path = tmp.join(name);
        fs::write(&path, text).map_err(io_error("write", &path))?;
    }
    // A private copy: the header's own directory holds clang's builtin headers, which break gcc.
    let copy = include.join("omp-tools.h");
    fs::write(&copy, header).map_err(io_error("write", &copy))?;

    let mut tool = Command::new(host);
    tool.args(COMMON)
        .args(["-shared", "-fPIC", "-isystem"])
        .arg(&include)
        .arg("-I")
        .arg(&tmp)
        .arg(tmp.join("ompt_truth.c"))
        .arg("-o")
        .arg(tmp.join("libompt_truth.so"))
        .arg("-ldl");
    let mut stops = Command::new(host);
    stops
        .args(COMMON)
        .args(["-shared", "-fPIC"])
        .arg(tmp.join("bp_stop.c"))
        .arg("-o")
        .arg(tmp.join("libbp_stop.so"))
        .arg("-ldl");
    if let Err(detail) = compile(tool).and_then(|()| compile(stops)) {
        let _ = fs::remove_dir_all(&tmp);
        return Err(CompileError::Tool {
            compiler: host.to_string(),
            detail,
        });
    }
    let mut status = String::new();
    for (c, v) in Compiler::ALL.iter().zip(versions) {
        let reason = match v {
            None => format!("{} not found", c.executable()),
            Some(_) => compile(program_command(*c, &tmp, &tmp.join(program_file(*c))))
                .err()
                .map(|e| format!("compiling with {} failed: {e}", c.executable()))
                .unwrap_or_default(),
        };
        let reason = match reason.is_empty() {
            true => reason,
            false => format!("{reason} (Debian: apt-get install {})", c.packages()),
        };
        status.push_str(&format!("{}\t{reason}\n", c.executable()));
    }
    let path = tmp.join(STATUS);
    fs::write(&path, status).map_err(io_error("write", &path))?;
    if fs::rename(&tmp, dir).is_err() && dir.join(STATUS).is_file() {
        // Another run filled the same directory first: use its build.
        let _ = fs::remove_dir_all(&tmp);
    }
    match dir.join(STATUS).is_file() {
        true => Ok(()),
        false => Err(CompileError::Io {
            action: "create",
            path: dir.to_path_buf(),
            source: io::Error::other("renaming the build directory failed"),
        }),
    }
}

/// The file name of `compiler`'s build of the program.
fn program_file(compiler: Compiler) -> String {
    format!("omp_fixture_{compiler:?}").to_lowercase()
}

/// The command that builds the program from the sources in `src` with `compiler`.
fn program_command(compiler: Compiler, src: &Path, output: &Path) -> Command {
    let mut cmd = Command::new(compiler.executable());
    cmd.args(COMMON)
        .arg("-fopenmp")
        .arg("-I")
        .arg(src)
        .arg(src.join("omp_fixture.c"))
        .arg("-o")
        .arg(output)
        .args(["-lpthread", "-ldl"])
        .arg("-Wl,--export-dynamic-symbol=ompd_fixture_truth");
    cmd
}

/// Runs a compilation; the error is its first error line.
fn compile(mut cmd: Command) -> Result<(), String> {
    match cmd.output() {
        Err(e) => Err(format!("cannot run {}: {e}", cmd.get_program().display())),
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(first_error(&out)),
    }
}

/// The first line of a failed compilation's output that names an error (else its first line).
fn first_error(out: &Output) -> String {
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    let lines = || text.lines().map(str::trim).filter(|l| !l.is_empty());
    lines()
        .find(|l| l.contains("error"))
        .or_else(|| lines().next())
        .map_or_else(|| format!("exit {}", out.status), str::to_string)
}

/// The [`Built`] a complete directory's status file describes.
fn read_status(dir: &Path, status: &str, header: PathBuf) -> Built {
    let mut built = Built {
        dir: dir.to_path_buf(),
        programs: Vec::new(),
        missing: Vec::new(),
        ompt_tool: dir.join("libompt_truth.so"),
        bp_stop: dir.join("libbp_stop.so"),
        header,
    };
    for c in Compiler::ALL {
        let reason = status
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .find(|(exe, _)| *exe == c.executable())
            .map_or("not in the build's status file", |(_, r)| r);
        match reason.is_empty() {
            true => built.programs.push(Program {
                compiler: c,
                path: dir.join(program_file(c)),
                needed_runtime_soname: c.needed_runtime_soname(),
            }),
            false => built.missing.push((c, reason.to_string())),
        }
    }
    built
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> CompileError {
    let path = path.to_path_buf();
    move |source| CompileError::Io {
        action,
        path,
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_file_lists_every_compiler_as_built_or_missing() {
        let dir = Path::new("/fixtures/k");
        let built = read_status(dir, "gcc\t\nclang-19\tclang-19 not found\n", "h".into());
        assert_eq!(built.programs.len(), 1);
        assert_eq!(built.programs[0].compiler, Compiler::Gcc);
        assert_eq!(built.programs[0].path, dir.join("omp_fixture_gcc"));
        assert_eq!(built.programs[0].needed_runtime_soname, "libgomp.so.1");
        assert_eq!(
            built.missing,
            [(Compiler::Clang19, "clang-19 not found".to_string())]
        );
        assert_eq!(built.ompt_tool, dir.join("libompt_truth.so"));
        let unknown = read_status(dir, "", "h".into());
        assert!(unknown.programs.is_empty() && unknown.missing.len() == 2);
    }

    #[test]
    fn a_failed_compilation_is_named_by_its_first_error_line() {
        let out = Command::new("sh")
            .args([
                "-c",
                "echo 'x.c: In function f:' >&2; echo 'x.c:3: error: no omp.h' >&2; exit 1",
            ])
            .output()
            .expect("sh");
        assert_eq!(first_error(&out), "x.c:3: error: no omp.h");
    }

    #[test]
    fn every_error_is_one_line_naming_what_is_missing() {
        let errors = [
            CompileError::NoHeader {
                looked: "/a, /b".into(),
            },
            CompileError::BadHeaderEnv("/nowhere".into()),
            CompileError::NoCompiler("cc".into()),
        ];
        for (e, names) in errors.iter().zip(["libomp-19-dev", "OMP_TOOLS_H", "gcc"]) {
            let line = e.to_string();
            assert!(!line.contains('\n') && line.contains(names), "{line}");
        }
    }
}
