//! The one reader of the suite's line-based data files (expectation ledgers, judged baselines,
//! the requirement table, answer snapshots): their data lines, numbered.

/// The lines of `text` that carry data, each with its line number (from 1): blank lines and
/// lines starting with `#` are skipped.
pub fn data_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty())
        .map(|(i, l)| (i + 1, l))
}

#[cfg(test)]
mod tests {
    #[test]
    fn comments_and_blank_lines_are_skipped_and_numbers_kept() {
        let got: Vec<_> = super::data_lines("# head\na\n\n  \nb\t1\n").collect();
        assert_eq!(got, [(2, "a"), (5, "b\t1")]);
    }
}
