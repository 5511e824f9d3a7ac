//! The one glob matcher of the suite: check ids in `--check`, expectation entries (check, library,
//! scenario, arch, layout, version, profile, target globs), bless filters, the real-target
//! table and the mutation kit's targets all match through [`glob`].

/// Whether `text` matches `pattern`, where `*` stands for any run of characters (none
/// included) and every other character stands for itself. A pattern without `*` matches only
/// the same text; `icv.*` matches every id starting `icv.`; `compare.*.stable` matches
/// `compare.thread.stable`.
pub fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = match parts.as_slice() {
        [only] => return *only == text,
        [first, .., last] => (*first, *last),
        [] => return false,
    };
    if text.len() < first.len() + last.len() || !text.starts_with(first) || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
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
    fn matches(#[case] pattern: &str, #[case] text: &str, #[case] expected: bool) {
        assert_eq!(glob(pattern, text), expected, "glob({pattern:?}, {text:?})");
    }
}
