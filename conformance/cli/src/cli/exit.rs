//! The one table of `ompd-conform`'s exit codes: every command returns one of these, `--help`
//! prints the table, and a test holds the README's table to it.

/// One exit code and what it means.
#[derive(Debug, Clone, Copy)]
pub struct Exit {
    /// The process exit status.
    pub code: i32,
    /// What the status says, in one line.
    pub meaning: &'static str,
}

/// Every result matched the expectations (expected failures included).
pub const OK: Exit = Exit {
    code: 0,
    meaning: "every result matched the expectations (expected failures included)",
};
/// The harness could not do its job.
pub const HARNESS: Exit = Exit {
    code: 1,
    meaning: "harness error: a library did not load, a file could not be read or written, a \
              fetch failed, fixtures could not be compiled",
};
/// Bad usage.
pub const USAGE: Exit = Exit {
    code: 2,
    meaning: "usage error: an unknown option, scenario, arch, layout or check, a bad replay or \
              expectations file",
};
/// The gate failed, a snapshot differs, or `compare` found regressions.
pub const FINDINGS: Exit = Exit {
    code: 100,
    meaning: "the gate failed (a regression, flaky crash, silenced check, new warning, \
              unexpected pass or stale entry), a --golden snapshot differs, or compare found \
              regressions",
};
/// The run was stopped early; the report written is marked incomplete.
pub const INTERRUPTED: Exit = Exit {
    code: 130,
    meaning: "the run was stopped (Ctrl-C, SIGTERM or --run-timeout); the report written is \
              marked incomplete",
};

/// Every exit code, in order.
pub const TABLE: [Exit; 5] = [OK, HARNESS, USAGE, FINDINGS, INTERRUPTED];

/// The table as `--help` prints it.
pub fn help() -> String {
    let rows = TABLE
        .iter()
        .map(|e| format!("  {:>3}  {}", e.code, e.meaning));
    std::iter::once("Exit codes:".to_string())
        .chain(rows)
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_readme_lists_exactly_these_exit_codes() {
        let root = ompd_vendors::workspace_root();
        let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
        let section = readme
            .split("\n## Exit codes")
            .nth(1)
            .expect("## Exit codes");
        let section = section.split("\n## ").next().unwrap_or(section);
        let codes: Vec<i32> = section
            .lines()
            .filter_map(|l| l.strip_prefix("| "))
            .filter_map(|l| l.split(' ').next()?.parse().ok())
            .collect();
        let ours: Vec<i32> = TABLE.iter().map(|e| e.code).collect();
        assert_eq!(codes, ours, "README's exit-code table");
    }

    #[test]
    fn help_names_every_code() {
        let text = help();
        for e in TABLE {
            assert!(text.contains(&format!("{:>3}  {}", e.code, e.meaning)));
        }
    }
}
