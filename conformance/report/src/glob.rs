//! The one glob matcher of the suite: check ids in `--check`, expectation entries (check, library,
//! scenario, arch, layout, version, profile, target globs), bless filters, the real-target
//! table and the mutation kit's targets all match through [`glob`].

/// Whether `text` matches `pattern`, where `*` stands for any run of characters (none
/// included) and every other character stands for itself. A pattern without `*` matches only
/// the same text; `icv.*` matches every id starting `icv.`; `compare.*.stable` matches
/// `compare.thread.stable`.
pub fn glob(pattern: &str, text: &str) -> bool {
    // No allocation: the gate matches every result against every expectation entry.
    let Some((first, after)) = pattern.split_once('*') else {
        return pattern == text;
    };
    let (middle, last) = after.rsplit_once('*').unwrap_or(("", after));
    if text.len() < first.len() + last.len() || !text.starts_with(first) || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for p in middle.split('*') {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::glob;
    use rstest::rstest;

    #[rstest]
    #[case("*", "anything", true)]
    #[case("*", "", true)]
    #[case("", "", true)]
    #[case("", "x", false)]
    #[case("llvm-*", "llvm-19", true)]
    #[case("llvm-*", "intel-2026.2", false)]
    #[case("ilp32-*", "ilp32-be", true)]
    #[case("random:*", "random:1", true)]
    #[case("icv.*", "icv.value.dyn-var", true)]
    #[case("icv.*", "icv.", true)]
    #[case("icv.*", "icv", false)]
    #[case("icv.*", "xicv.value", false)]
    #[case("icv.*.nthreads-var", "icv.value.nthreads-var", true)]
    #[case("icv.*.nthreads-var", "icv.value.dyn-var", false)]
    #[case("icv.value.dyn-var", "icv.value.dyn-var", true)]
    #[case("icv.value.dyn-var", "icv.value.dyn-var2", false)]
    #[case("icv.value.dyn", "icv.value.dyn-var", false)]
    #[case("task.frame.flags_*", "task.frame.flags_exit", true)]
    #[case("a*a", "a", false)]
    #[case("a*a", "aa", true)]
    #[case("*.stable", "compare.task.stable", true)]
    #[case("*.*.stable", "compare.stable", false)]
    #[case("lib.api_version.stable", "lib.api_version.stable", true)]
    #[case("**", "x", true)]
    #[case("a*b*c", "abc", true)]
    #[case("a*b*c", "axxbyyc", true)]
    #[case("a*b*c", "acb", false)]
    #[case("a*bc*bc", "abc", false)]
    #[case("*b*", "abc", true)]
    fn matches(#[case] pattern: &str, #[case] text: &str, #[case] expected: bool) {
        assert_eq!(glob(pattern, text), expected, "glob({pattern:?}, {text:?})");
    }
}
