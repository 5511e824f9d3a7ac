//! The tree's top level is the project's card: one directory per role, and at the root only what
//! belongs there. `ARCHITECTURE.md`'s layout block names every crate's directory and package,
//! and nothing else; these tests keep the two in step.

use super::root;
use std::collections::BTreeSet;
use std::process::Command;

/// The role directories, in the order the layout block shows them.
const ROLES: &[&str] = &["sim-target", "conformance", "c-fixtures", "golden", "xtask"];

/// What else may stand at the root: documents, the lock file, CI and cargo's configuration.
const ROOT_FILES: &[&str] = &[
    ".cargo",
    ".ci",
    ".github",
    ".gitignore",
    "ARCHITECTURE.md",
    "Cargo.lock",
    "Cargo.toml",
    "README.md",
    "docs",
];

/// The first path component of every file git tracks.
fn top_level() -> BTreeSet<String> {
    let out = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root())
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git ls-files: {out:?}");
    String::from_utf8(out.stdout)
        .expect("paths are UTF-8")
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(|p| p.split('/').next().unwrap_or(p).to_string())
        .collect()
}

/// Every workspace member as (directory, package name), from the root manifest's `members`
/// and each member's own manifest.
pub(crate) fn members() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(root().join("Cargo.toml")).expect("root manifest");
    let list = text
        .split("members = [")
        .nth(1)
        .and_then(|t| t.split(']').next());
    let dirs = list.expect("a members list").split(',');
    dirs.map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
        .map(|dir| (dir.to_string(), package_name(dir)))
        .collect()
}

fn package_name(dir: &str) -> String {
    let manifest = std::fs::read_to_string(root().join(dir).join("Cargo.toml")).expect(dir);
    let line = manifest.lines().find(|l| l.starts_with("name = "));
    let name = line.unwrap_or_else(|| panic!("{dir}: no package name"));
    name["name = ".len()..].trim_matches('"').to_string()
}

/// The fenced block under `## Layout` in ARCHITECTURE.md.
fn layout_block() -> String {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let section = text
        .split("\n## Layout")
        .nth(1)
        .expect("a ## Layout section");
    let block = section
        .split("```")
        .nth(1)
        .expect("a fenced block in ## Layout");
    block.to_string()
}

#[test]
fn the_top_level_holds_the_role_directories_and_root_files_only() {
    let found = top_level();
    let allowed: BTreeSet<String> = ROLES
        .iter()
        .chain(ROOT_FILES)
        .map(|s| s.to_string())
        .collect();
    let stray: Vec<_> = found.difference(&allowed).collect();
    assert!(
        stray.is_empty(),
        "not a role directory nor a root file: {stray:?}"
    );
    for role in ROLES {
        assert!(
            found.contains(*role),
            "the role directory {role}/ is missing"
        );
    }
}

#[test]
fn every_crate_lives_under_a_role_directory() {
    for (dir, name) in members() {
        let role = dir.split('/').next().unwrap_or(&dir);
        assert!(
            ROLES.contains(&role),
            "{name} ({dir}) is outside the role directories"
        );
    }
}

#[test]
fn the_layout_block_names_every_crate_and_only_crates_that_exist() {
    let block = layout_block();
    let members = members();
    for (dir, name) in &members {
        let line = block
            .lines()
            .find(|l| l.split_whitespace().next() == Some(&format!("{dir}/")));
        let line = line.unwrap_or_else(|| panic!("ARCHITECTURE.md's layout block lacks {dir}/"));
        assert!(
            line.contains(name.as_str()),
            "the line of {dir}/ does not name {name}: {line}"
        );
    }
    for line in block.lines() {
        let Some(first) = line.split_whitespace().next() else {
            continue;
        };
        let Some(dir) = first.strip_suffix('/') else {
            continue;
        };
        let known = ROLES.contains(&dir) || members.iter().any(|(d, _)| d == dir);
        assert!(
            known,
            "ARCHITECTURE.md's layout block names {dir}/, which is no crate or role"
        );
    }
}

/// The top-level modules of a crate: every `.rs` file and every directory directly under `src/`,
/// but the crate root and insta's `snapshots`.
fn modules_in_tree(dir: &str) -> BTreeSet<String> {
    let src = root().join(dir).join("src");
    let entries = std::fs::read_dir(&src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .map(|n| n.trim_end_matches(".rs").to_string())
        .filter(|n| !matches!(n.as_str(), "lib" | "main" | "snapshots"))
        .collect()
}

/// The code map of ARCHITECTURE.md: for each `### DIR (PACKAGE)` heading, the modules its
/// bullets name (`` - `module`: ... ``).
fn code_map() -> Vec<(String, BTreeSet<String>)> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let section = text
        .split("\n## Code map")
        .nth(1)
        .expect("a ## Code map section");
    let section = section.split("\n## ").next().unwrap_or(section);
    let mut map: Vec<(String, BTreeSet<String>)> = Vec::new();
    for line in section.lines() {
        if let Some(heading) = line.strip_prefix("### ") {
            let dir = heading.split_whitespace().next().unwrap_or(heading);
            map.push((dir.to_string(), BTreeSet::new()));
        } else if let Some(module) = line.strip_prefix("- `").and_then(|l| l.split('`').next()) {
            let entry = map.last_mut().expect("a bullet under a crate heading");
            entry.1.insert(module.to_string());
        }
    }
    map
}

#[test]
fn the_code_map_names_every_top_level_module_of_every_crate() {
    let map = code_map();
    for (dir, name) in members() {
        let in_tree = modules_in_tree(&dir);
        let Some((_, mapped)) = map.iter().find(|(d, _)| *d == dir) else {
            assert!(
                in_tree.is_empty(),
                "the code map lacks {dir} ({name}): {in_tree:?}"
            );
            continue;
        };
        let missing: Vec<_> = in_tree.difference(mapped).collect();
        let stale: Vec<_> = mapped.difference(&in_tree).collect();
        assert!(
            missing.is_empty() && stale.is_empty(),
            "the code map of {dir}: missing {missing:?}, no such module {stale:?}"
        );
    }
    for (dir, _) in &map {
        let known = members().iter().any(|(d, _)| d == dir);
        assert!(known, "the code map names {dir}, which is no crate");
    }
}
