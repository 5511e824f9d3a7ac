//! Function and file lengths, measured with `syn` (for the tidy test that keeps functions short
//! and files small). Test code (`#[cfg(test)]` modules, `#[test]` functions) is not counted.

use proc_macro2::Span;
use syn::visit::Visit;

/// The longest a function may be, in lines from its `fn` to its closing brace.
pub const MAX_FN_LINES: usize = 80;
/// The longest a file may be, in lines outside its `#[cfg(test)]` modules.
pub const MAX_FILE_LINES: usize = 800;

/// Data tables that may be longer than [`MAX_FN_LINES`]: (file, function, reason).
pub const LONG_FUNCTIONS: &[(&str, &str, &str)] = &[(
    "sim-target/simulator/src/layout.rs",
    "intel_type",
    "a data table: the field order of every struct of the intel-2026.2 layout",
)];

/// A function of a file: its name (with the file, it identifies the function in the allow-lists),
/// its first line and its length in lines.
#[derive(Debug, PartialEq, Eq)]
pub struct Function {
    /// The function's name.
    pub name: String,
    /// The line of its `fn` keyword (1-based).
    pub line: usize,
    /// Lines from its `fn` keyword to its closing brace.
    pub lines: usize,
}

/// What a file holds outside its test code.
#[derive(Debug, Default)]
pub struct Measure {
    /// Every function outside test code (free functions, methods, trait defaults, nested ones).
    pub functions: Vec<Function>,
    /// The file's lines minus those of its `#[cfg(test)]` modules.
    pub lines: usize,
}

/// Measures a Rust source file.
pub fn measure(text: &str) -> Result<Measure, syn::Error> {
    let file = syn::parse_file(text)?;
    let mut v = Visitor::default();
    v.visit_file(&file);
    let lines = text.lines().count().saturating_sub(v.test_lines);
    Ok(Measure {
        functions: v.functions,
        lines,
    })
}

#[derive(Default)]
struct Visitor {
    functions: Vec<Function>,
    test_lines: usize,
}

fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("test")
            || (a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test"))
    })
}

fn span_lines(from: Span, to: Span) -> (usize, usize) {
    let first = from.start().line;
    (first, to.end().line + 1 - first)
}

impl Visitor {
    fn record(&mut self, name: &syn::Ident, fn_token: Span, body: &syn::Block) {
        let (line, lines) = span_lines(fn_token, body.brace_token.span.close());
        self.functions.push(Function {
            name: name.to_string(),
            line,
            lines,
        });
    }
}

impl<'a> Visit<'a> for Visitor {
    fn visit_item_mod(&mut self, m: &'a syn::ItemMod) {
        if is_test(&m.attrs) {
            if let Some((brace, _)) = &m.content {
                self.test_lines += span_lines(m.mod_token.span, brace.span.close()).1;
            }
            return;
        }
        syn::visit::visit_item_mod(self, m);
    }

    fn visit_item_fn(&mut self, f: &'a syn::ItemFn) {
        if is_test(&f.attrs) {
            return;
        }
        self.record(&f.sig.ident, f.sig.fn_token.span, &f.block);
        syn::visit::visit_item_fn(self, f);
    }

    fn visit_impl_item_fn(&mut self, f: &'a syn::ImplItemFn) {
        self.record(&f.sig.ident, f.sig.fn_token.span, &f.block);
        syn::visit::visit_impl_item_fn(self, f);
    }

    fn visit_trait_item_fn(&mut self, f: &'a syn::TraitItemFn) {
        if let Some(body) = &f.default {
            self.record(&f.sig.ident, f.sig.fn_token.span, body);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn long_fn(name: &str, body_lines: usize) -> String {
        format!(
            "fn {name}() {{\n{}}}\n",
            "    let _ = 1;\n".repeat(body_lines)
        )
    }

    #[test]
    fn a_function_is_measured_from_fn_to_its_closing_brace() {
        let text = format!("/// doc\n{}", long_fn("f", 3));
        let m = measure(&text).unwrap();
        assert_eq!(
            m.functions,
            vec![Function {
                name: "f".into(),
                line: 2,
                lines: 5
            }]
        );
        assert_eq!(m.lines, 6);
    }

    #[test]
    fn methods_and_nested_functions_are_measured_and_tests_are_not() {
        let text = format!(
            "struct S;\nimpl S {{\n    {}}}\n#[cfg(test)]\nmod tests {{\n{}}}\n#[test]\n{}",
            long_fn("m", 1),
            long_fn("in_tests", 90),
            long_fn("a_test", 90),
        );
        let m = measure(&text).unwrap();
        let names: Vec<&str> = m.functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["m"]);
        assert_eq!(m.lines, text.lines().count() - 94);
    }

    #[test]
    fn a_function_over_the_limit_is_seen() {
        let m = measure(&long_fn("too_long", MAX_FN_LINES)).unwrap();
        assert!(m.functions[0].lines > MAX_FN_LINES);
    }
}
