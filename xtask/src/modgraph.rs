//! The module graph of a crate, from its `crate::` paths, and the cycles in it (for the tidy
//! test that keeps every crate's modules layered).

use std::collections::{BTreeMap, BTreeSet};

/// A crate's top-level modules and the ones each names through `crate::` paths: its files as
/// (path under `src/`, text). The crate root (`lib.rs`, `main.rs`) is no module here: it only
/// declares and re-exports. Comments are ignored.
pub fn graph(files: &[(String, String)]) -> BTreeMap<String, BTreeSet<String>> {
    let top = |path: &str| -> Option<String> {
        let first = path.split('/').next()?;
        let name = first.strip_suffix(".rs").unwrap_or(first);
        (!matches!(name, "lib" | "main")).then(|| name.to_string())
    };
    let modules: BTreeSet<String> = files.iter().filter_map(|(p, _)| top(p)).collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (path, text) in files {
        let Some(me) = top(path) else { continue };
        let uses = g.entry(me.clone()).or_default();
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            for (i, _) in code.match_indices("crate::") {
                let before = code[..i].chars().last();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                    continue;
                }
                let rest = &code[i + "crate::".len()..];
                let names: Vec<&str> = match rest.strip_prefix('{') {
                    Some(group) => group.split('}').next().unwrap_or("").split(',').collect(),
                    None => vec![rest],
                };
                for n in names {
                    let n: String = n
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if n != me && modules.contains(&n) {
                        uses.insert(n);
                    }
                }
            }
        }
    }
    g
}

/// Every cycle a depth-first walk of `g` meets, each as the modules on it, first one repeated.
pub fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    fn visit<'a>(
        g: &'a BTreeMap<String, BTreeSet<String>>,
        m: &'a str,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
        out: &mut Vec<Vec<String>>,
    ) {
        if let Some(at) = path.iter().position(|p| *p == m) {
            let mut c: Vec<String> = path[at..].iter().map(|s| s.to_string()).collect();
            c.push(m.to_string());
            out.push(c);
            return;
        }
        if !done.insert(m) {
            return;
        }
        path.push(m);
        for next in g.get(m).into_iter().flatten() {
            visit(g, next, path, done, out);
        }
        path.pop();
    }
    let mut out = Vec::new();
    let mut done = BTreeSet::new();
    for m in g.keys() {
        visit(g, m, &mut Vec::new(), &mut done, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect()
    }

    #[test]
    fn a_cycle_through_crate_paths_is_found_and_the_root_and_comments_are_not_modules() {
        let g = graph(&files(&[
            ("lib.rs", "pub mod a; pub mod b; use crate::a::X;"),
            ("a.rs", "use crate::{b::Y, Z};\n// crate::c::W in a comment"),
            ("b/mod.rs", "fn f() { crate::a::g() }"),
            ("b/inner.rs", "use crate::b::Y;"),
            ("c.rs", "use crate::a;"),
        ]));
        assert_eq!(g["a"], BTreeSet::from(["b".to_string()]));
        assert_eq!(g["b"], BTreeSet::from(["a".to_string()]));
        assert_eq!(cycles(&g), vec![vec!["a", "b", "a"]]);
    }

    #[test]
    fn a_layered_graph_has_no_cycle() {
        let g = graph(&files(&[
            ("a.rs", "use crate::b::Y; use crate::c::Z;"),
            ("b.rs", "use crate::c::Z;"),
            ("c.rs", "use std::fmt;"),
        ]));
        assert!(cycles(&g).is_empty());
    }
}
