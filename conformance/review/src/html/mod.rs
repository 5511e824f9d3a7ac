//! The HTML conformance matrix: one self-contained page (inline CSS and script, no external
//! resource) showing several libraries side by side. It opens on the run's summary (the table
//! the run ends with: one row per library and the runtime row). Rows of the matrix are checks
//! grouped by family, columns are libraries (the runtime rows of several reports share one
//! column); each cell is coloured by the worst outcome of the check on that library and expands
//! (`<details>`) to the per-unit results, built from the page's data only when it is opened
//! ([`units`]). Each library's header (version, sha256, API version, diagnostics) follows the
//! matrix. Every piece of text from a report is escaped.
//!
//! The page carries machine-readable hooks the browser test relies on: matrix rows are
//! `<tr class="check" data-check=ID>`, columns `<th class="lib" data-library=NAME>`, cells
//! `<td class="cell o-OUTCOME" data-library=NAME data-outcome=OUTCOME>`, and each cell's summary
//! starts with a square swatch (`span.sw`, [`SWATCH_PX`] pixels) in the outcome's [`colour`].

use ompd_report::{LibraryInfo, Outcome, Report, ResultRecord};
use std::collections::BTreeMap;
use std::fmt::Write as _;

mod units;

/// Side of the square swatch in each cell and legend entry, in CSS pixels.
pub const SWATCH_PX: u32 = 14;

/// Per cell, at most this many non-passing units are shown in full; the rest are counted.
pub const MAX_UNITS_SHOWN: usize = 100;

/// The swatch colour of an outcome, as RGB. The colours are distinct from each other, from the
/// cell tints and from the page's text and border colours, so a screenshot can be read back.
pub fn colour(o: Outcome) -> [u8; 3] {
    match o {
        Outcome::Pass => [0x2d, 0xa4, 0x4e],
        Outcome::Warn => [0xd4, 0xa7, 0x2c],
        Outcome::NotSupported => [0x54, 0xae, 0xff],
        Outcome::Skip => [0x8c, 0x95, 0x9f],
        Outcome::Fail => [0xcf, 0x22, 0x2e],
        Outcome::Crash => [0x82, 0x50, 0xdf],
        Outcome::Timeout => [0xfb, 0x6f, 0x14],
        Outcome::HarnessError => [0xbf, 0x39, 0x89],
    }
}

/// The light background tint of a cell with this worst outcome (the colour mixed with white).
fn tint(o: Outcome) -> [u8; 3] {
    colour(o).map(|c| (u16::from(c) + 3 * 255).div_ceil(4) as u8)
}

fn hex(c: [u8; 3]) -> String {
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

/// One line describing each outcome, for the legend.
fn meaning(o: Outcome) -> &'static str {
    match o {
        Outcome::Pass => "the requirement holds",
        Outcome::Warn => "a SHOULD-level miss or a spec-allowed alternative",
        Outcome::NotSupported => "a spec-allowed ompd_rc_unsupported",
        Outcome::Skip => "the check does not apply (reason given)",
        Outcome::Fail => "a MUST-level requirement is violated",
        Outcome::Crash => "the library killed its worker",
        Outcome::Timeout => "the check did not finish in time",
        Outcome::HarnessError => "the harness failed; says nothing about the library",
    }
}

/// Escapes text for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The family of a check: its id up to the first dot.
pub fn family(check: &str) -> &str {
    check.split('.').next().unwrap_or(check)
}

/// One column of the matrix: a library of one of the reports.
struct Column<'a> {
    /// The label shown (the library name, made unique across reports).
    label: String,
    /// Whether it is a report's runtime row ([`ompd_report::runtime_row::ROW`]).
    runtime_row: bool,
    /// The library's header, when the report has one.
    info: Option<&'a LibraryInfo>,
    /// Results by check id.
    by_check: BTreeMap<&'a str, Vec<&'a ResultRecord>>,
    /// Count per outcome.
    totals: BTreeMap<Outcome, usize>,
    /// Whether its report was cut short.
    incomplete: bool,
}

/// Builds the columns: every library of every report, in report order, labels made unique.
fn columns(reports: &[Report]) -> Vec<Column<'_>> {
    let mut cols: Vec<Column<'_>> = Vec::new();
    for (i, rep) in reports.iter().enumerate() {
        let mut names: Vec<&str> = rep.libraries.iter().map(|l| l.name.as_str()).collect();
        for r in &rep.results {
            if !names.contains(&r.library.as_str()) {
                names.push(&r.library);
            }
        }
        for name in names {
            let runtime_row = name == ompd_report::runtime_row::ROW;
            // The runtime rows of every report share one column.
            let shared = cols.iter().position(|c| c.runtime_row && runtime_row);
            let col = match shared {
                Some(k) => &mut cols[k],
                None => {
                    let mut label = name.to_string();
                    if cols.iter().any(|c| c.label == label) {
                        label = format!("{name} (report {})", i + 1);
                    }
                    cols.push(Column {
                        label,
                        runtime_row,
                        info: rep.libraries.iter().find(|l| l.name == name),
                        by_check: BTreeMap::new(),
                        totals: BTreeMap::new(),
                        incomplete: false,
                    });
                    cols.last_mut().expect("just pushed")
                }
            };
            col.incomplete |= rep.incomplete;
            for r in rep.results.iter().filter(|r| r.library == name) {
                col.by_check.entry(r.check.as_str()).or_default().push(r);
                *col.totals.entry(r.outcome).or_insert(0) += 1;
            }
        }
    }
    cols
}

/// Every check id seen, in registry order (checks the registry does not know come last, sorted),
/// grouped by family in the order of each family's first check.
fn rows<'a>(cols: &[Column<'a>]) -> Vec<(&'a str, Vec<&'a str>)> {
    let registry = ompd_checks::registry();
    let mut ids: Vec<&'a str> = Vec::new();
    for c in cols {
        for id in c.by_check.keys() {
            if !ids.contains(id) {
                ids.push(id);
            }
        }
    }
    let rank = |id: &str| {
        registry
            .iter()
            .position(|c| c.id == id)
            .unwrap_or(usize::MAX)
    };
    ids.sort_by(|a, b| rank(a).cmp(&rank(b)).then(a.cmp(b)));
    let mut families: Vec<(&'a str, Vec<&'a str>)> = Vec::new();
    for id in ids {
        let f = family(id);
        match families.iter_mut().find(|(name, _)| *name == f) {
            Some((_, list)) => list.push(id),
            None => families.push((f, vec![id])),
        }
    }
    families
}

pub(crate) const CSS: &str = "\
body{font:14px/1.4 system-ui,sans-serif;color:#1f2328;background:#ffffff;margin:16px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:24px 0 8px}
.banner{background:#fff0c2;border:1px solid #c7a000;padding:6px 10px;margin:8px 0}
.legend{display:flex;flex-wrap:wrap;gap:4px 18px;margin:8px 0 12px;padding:0;list-style:none}
.legend li{display:flex;align-items:center;gap:6px}
.sw{display:inline-block;flex:none;width:14px;height:14px;vertical-align:middle;margin-right:6px}
table.matrix{border-collapse:collapse;table-layout:fixed;width:100%}
.matrix th,.matrix td{border:1px solid #d0d7de;padding:2px 6px;vertical-align:top;text-align:left}
.matrix thead th{background:#f6f8fa;position:sticky;top:0;z-index:1}
.matrix th.check{font-weight:normal;width:360px;overflow-wrap:anywhere}
.matrix th.lib{overflow-wrap:anywhere}
.matrix tr.family th{background:#eaeef2;font-weight:600}
.matrix td.cell{position:relative;overflow:visible}
.matrix td.none{color:#57606a}
.req{color:#57606a;font-size:12px}
summary{cursor:pointer;white-space:nowrap;display:flex;align-items:center}
.unit-list{position:absolute;z-index:2;top:100%;left:0;width:min(900px,80vw);max-height:60vh;overflow:auto;background:#ffffff;border:1px solid #8c959f;box-shadow:0 4px 12px rgba(0,0,0,.25);padding:6px}
td.late .unit-list{left:auto;right:0}
.units{border-collapse:collapse;margin:4px 0;font-size:12px;background:#ffffff}
.units td,.units th{border:1px solid #d0d7de;padding:1px 4px}
code{font-family:ui-monospace,monospace;font-size:12px}
.lib-info dt{font-weight:600;float:left;clear:left;width:150px}
.lib-info dd{margin-left:160px;overflow-wrap:anywhere}
.muted{color:#57606a}
table.summary{border-collapse:collapse;margin:8px 0 16px}
.summary th,.summary td{border:1px solid #d0d7de;padding:2px 8px;text-align:right}
.summary th:first-child,.summary td:nth-child(2){text-align:left}
.summary thead th{background:#f6f8fa}
";

/// The CSS rules colouring each outcome's swatches and cell backgrounds.
pub(crate) fn outcome_css(out: &mut String) {
    for o in Outcome::ALL {
        let _ = writeln!(
            out,
            ".o-{n} .sw,.sw.o-{n}{{background:{c}}}td.o-{n}{{background:{t}}}",
            n = o.as_str(),
            c = hex(colour(o)),
            t = hex(tint(o))
        );
    }
}

/// The legend: one swatch per outcome, with what it means.
pub(crate) fn legend(out: &mut String) {
    out.push_str("<ul class=\"legend\">\n");
    for o in Outcome::ALL {
        let _ = writeln!(
            out,
            "<li class=\"o-{n}\" data-outcome=\"{n}\"><span class=\"sw\"></span><b>{n}</b> \
             <span class=\"muted\">{m}</span></li>",
            n = o.as_str(),
            m = escape(meaning(o))
        );
    }
    out.push_str("</ul>\n");
}

/// Renders reports (of one run, or of several runs to compare) as one HTML page; its summary
/// counts each result by the gate class the run marked it with (stale entries unknown: `—`).
pub fn render(reports: &[Report]) -> String {
    page(reports, &|_| None)
}

/// Renders one run's report as one HTML page, its summary the run's own (the stale entries of
/// each library from `ev`, the evaluation that marked the report).
pub fn render_judged(report: &Report, ev: &crate::gate::Evaluation) -> String {
    let stale = |lib: &str| {
        ev.libraries
            .iter()
            .find(|l| l.library == lib)
            .map(|l| l.stale.len())
    };
    page(std::slice::from_ref(report), &stale)
}

/// The page of `reports`, with each column's stale entries as `stale` knows them.
fn page(reports: &[Report], stale: &dyn Fn(&str) -> Option<usize>) -> String {
    let cols = columns(reports);
    let families = rows(&cols);
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<title>OMPD conformance matrix</title>\n<style>\n");
    out.push_str(CSS);
    outcome_css(&mut out);
    out.push_str("</style>\n</head>\n<body>\n<h1>OMPD conformance matrix</h1>\n");
    summary(&mut out, &cols, stale);
    intro(&mut out, reports, &cols, &families);
    let mut units = units::Units::default();
    matrix(&mut out, &cols, &families, &mut units);
    // Library headers.
    out.push_str("<h2>Libraries</h2>\n");
    for (i, c) in cols.iter().enumerate() {
        library_header(&mut out, i, c);
    }
    out.push_str(&units.script());
    out.push_str("</body>\n</html>\n");
    out
}

/// The run's summary: one row per column, in the columns of the table a run ends with
/// ([`crate::summary::COLUMNS`]).
fn summary(out: &mut String, cols: &[Column<'_>], stale: &dyn Fn(&str) -> Option<usize>) {
    out.push_str("<table class=\"summary\"><thead><tr><th>library</th>");
    for c in crate::summary::COLUMNS {
        let _ = write!(out, "<th>{}</th>", escape(c));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for c in cols {
        let profile = c.info.and_then(|i| i.profile).map_or("—", |p| p.name());
        let results = c.by_check.values().flatten().map(|r| (r.outcome, r.gate));
        let _ = write!(out, "<tr><th>{}</th>", escape(&c.label));
        for v in crate::summary::cells(profile, results, stale(&c.label)) {
            let _ = write!(out, "<td>{}</td>", escape(&v));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
}

/// What the page shows, banners for cut-short runs, and the legend of outcomes.
fn intro(
    out: &mut String,
    reports: &[Report],
    cols: &[Column<'_>],
    families: &[(&str, Vec<&str>)],
) {
    let checks: usize = families.iter().map(|(_, ids)| ids.len()).sum();
    let results: usize = reports.iter().map(|r| r.results.len()).sum();
    let _ = writeln!(
        out,
        "<p class=\"muted\">{checks} checks × {} libraries, {results} results from {} report(s) \
         (schema {}). Each cell shows the worst outcome of the check on that library over every \
         unit (scenario × arch × layout, or a real target's scenario × arch × runtime/build and \
         kind); open it for the units.</p>",
        cols.len(),
        reports.len(),
        escape(ompd_report::SCHEMA)
    );
    for c in cols.iter().filter(|c| c.incomplete) {
        let _ = writeln!(
            out,
            "<p class=\"banner\">The run of {} was cut short: its results are incomplete.</p>",
            escape(&c.label)
        );
    }
    legend(out);
}

/// The matrix: a header row of libraries, then per family its rows of checks.
fn matrix(
    out: &mut String,
    cols: &[Column<'_>],
    families: &[(&str, Vec<&str>)],
    units: &mut units::Units,
) {
    out.push_str("<table class=\"matrix\">\n<thead><tr><th class=\"check\">check</th>");
    for c in cols {
        let version = c
            .info
            .and_then(|i| {
                i.package_version
                    .clone()
                    .or_else(|| i.version_string.clone())
            })
            .unwrap_or_default();
        let _ = write!(
            out,
            "<th class=\"lib\" data-library=\"{l}\"><a href=\"#lib-{i}\">{l}</a><br>\
             <span class=\"req\">{v}</span></th>",
            l = escape(&c.label),
            i = cols.iter().position(|x| std::ptr::eq(x, c)).unwrap_or(0),
            v = escape(&version)
        );
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for (fam, ids) in families {
        let _ = writeln!(
            out,
            "<tr class=\"family\" data-family=\"{f}\"><th colspan=\"{n}\">{f} \
             <span class=\"muted\">({k} checks)</span></th></tr>",
            f = escape(fam),
            n = cols.len() + 1,
            k = ids.len()
        );
        for id in ids {
            row(out, id, cols, units);
        }
    }
    out.push_str("</tbody>\n</table>\n");
}

/// One matrix row: the check, then one cell per library.
fn row(out: &mut String, id: &str, cols: &[Column<'_>], units: &mut units::Units) {
    let check = ompd_checks::registry().iter().find(|c| c.id == id);
    let mut reqs: Vec<&str> = Vec::new();
    for c in cols {
        for r in c.by_check.get(id).into_iter().flatten() {
            for q in &r.requirements {
                if !reqs.contains(&q.as_str()) {
                    reqs.push(q);
                }
            }
        }
    }
    let _ = write!(
        out,
        "<tr class=\"check\" data-check=\"{e}\"><th class=\"check\" scope=\"row\"{t}><code>{e}</code>\
         <div class=\"req\">{r}</div></th>",
        e = escape(id),
        t = check
            .map(|c| format!(" title=\"{}\"", escape(c.summary)))
            .unwrap_or_default(),
        r = escape(&reqs.join(", "))
    );
    for (i, c) in cols.iter().enumerate() {
        cell(out, id, (i, cols.len()), c, units);
    }
    out.push_str("</tr>\n");
}

/// One cell: the worst outcome of check `id` on column `c` (the `i`th of `n`), opening to the
/// units that did not pass and those that did (their data goes to `units`).
fn cell(
    out: &mut String,
    id: &str,
    (i, n_cols): (usize, usize),
    c: &Column<'_>,
    units: &mut units::Units,
) {
    let lib = escape(&c.label);
    // Cells in the right half open their unit list leftwards, so it stays on the page.
    let late = if i > 0 && 2 * i >= n_cols {
        " late"
    } else {
        ""
    };
    let Some(rs) = c.by_check.get(id) else {
        // A library's check in the runtime row, or a runtime's in a library's, is elsewhere.
        let text = match c.runtime_row != ompd_report::runtime_row::is_runtime_check(id) {
            true => "—",
            false => "not run",
        };
        let _ = write!(
            out,
            "<td class=\"cell none\" data-library=\"{lib}\" data-outcome=\"none\">{text}</td>"
        );
        return;
    };
    let worst = rs.iter().map(|r| r.outcome).max().unwrap_or(Outcome::Pass);
    let bad = rs.iter().filter(|r| r.outcome != Outcome::Pass).count();
    let n = worst.as_str();
    let _ = write!(
        out,
        "<td class=\"cell o-{n}{late}\" data-library=\"{lib}\" data-outcome=\"{n}\" \
         data-u=\"{u}\"><details><summary><span class=\"sw\"></span>{n}&nbsp;\
         <span class=\"req\">{bad}/{}</span></summary></details></td>",
        rs.len(),
        u = units.add(rs),
    );
}

/// A library's header: name, versions, sha256, API version and profile, ELF facts, diagnostics,
/// outcome totals.
fn library_header(out: &mut String, i: usize, c: &Column<'_>) {
    let _ = writeln!(
        out,
        "<section class=\"lib-info\" id=\"lib-{i}\" data-library=\"{l}\"><h3>{l}</h3><dl>",
        l = escape(&c.label)
    );
    let mut item = |k: &str, v: &str| {
        let _ = writeln!(out, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(v));
    };
    match c.info {
        Some(info) => {
            item("path", &info.path);
            if let Some(v) = &info.package_version {
                item("package version", v);
            }
            item(
                "version string",
                info.version_string.as_deref().unwrap_or("(no answer)"),
            );
            item(
                "API version",
                &info
                    .api_version
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "(no answer)".into()),
            );
            item("profile", info.profile.map(|p| p.name()).unwrap_or("?"));
            item("sha256", &info.sha256);
            item("ELF", &info.elf);
            item("SONAME", info.soname.as_deref().unwrap_or("(none)"));
            item(
                "DT_NEEDED",
                &if info.needed.is_empty() {
                    "(none)".to_string()
                } else {
                    info.needed.join(", ")
                },
            );
            item(
                "entry points",
                &format!("{} exported", info.entry_points.len()),
            );
            if info.diagnostics.is_empty() {
                item("diagnostics", "(none)");
            } else {
                for d in &info.diagnostics {
                    item("diagnostic", d);
                }
            }
        }
        None => item("header", "the report has no header for this library"),
    }
    let totals: Vec<String> = Outcome::ALL
        .iter()
        .filter_map(|o| c.totals.get(o).map(|n| format!("{n} {}", o.as_str())))
        .collect();
    item("results", &totals.join(", "));
    out.push_str("</dl></section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(lib: &str, check: &str, outcome: Outcome, detail: &str) -> ResultRecord {
        ResultRecord {
            library: lib.into(),
            check: check.into(),
            requirements: vec!["OMPD-X-001".into()],
            scenario: "serial".into(),
            arch: "lp64-le".into(),
            layout: Some("natural".into()),
            outcome,
            expected: "e".into(),
            actual: "a".into(),
            detail: detail.into(),
            flaky: false,
            target: "sim".into(),
            real: None,
            gate: None,
            replay: None,
        }
    }

    fn report(lib: &str, recs: Vec<ResultRecord>) -> Report {
        let mut r = Report::new();
        r.libraries.push(LibraryInfo {
            name: lib.into(),
            sha256: "abc123".into(),
            api_version: Some(201811),
            diagnostics: vec!["preloaded <libstdc++>".into()],
            ..LibraryInfo::default()
        });
        for x in recs {
            r.push(x);
        }
        r
    }

    #[test]
    fn escapes_every_special_character() {
        assert_eq!(
            escape(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn text_from_the_report_cannot_inject_markup() {
        let r = report(
            "lib<script>",
            vec![rec(
                "lib<script>",
                "icv.x",
                Outcome::Fail,
                "<script>alert(1)</script>",
            )],
        );
        let html = render(&[r]);
        // The page's own two scripts, and none of the report's.
        assert_eq!(html.matches("<script").count(), 2, "{html}");
        assert!(!html.contains("<script>alert"), "{html}");
        assert!(!html.contains("</script>alert"), "{html}");
        // In the page's text, escaped; in its data island, `<` written as an escape.
        assert!(html.contains("lib&lt;script&gt;"));
        assert!(html.contains("\\u003cscript>alert(1)\\u003c/script>"));
        assert!(html.contains("&lt;libstdc++&gt;"));
    }

    #[test]
    fn cells_show_the_worst_outcome_and_rows_group_by_family() {
        let r = report(
            "l1",
            vec![
                rec("l1", "icv.a", Outcome::Pass, ""),
                rec("l1", "icv.a", Outcome::Crash, ""),
                rec("l1", "icv.a", Outcome::Warn, ""),
                rec("l1", "lib.b", Outcome::Pass, ""),
            ],
        );
        let html = render(&[r]);
        assert!(html.contains(
            "<td class=\"cell o-crash\" data-library=\"l1\" data-outcome=\"crash\" data-u=\"0\">"
        ));
        assert!(html.contains("data-outcome=\"pass\""));
        assert_eq!(html.matches("<tr class=\"check\"").count(), 2);
        assert_eq!(html.matches("<tr class=\"family\"").count(), 2);
        // Two of three units do not pass; both are in the cell's data (two groups: they
        // reported differently), the pass by its place.
        assert!(html.contains("2/3"));
        let data = island(&html);
        assert_eq!(data["c"][0][1].as_array().unwrap().len(), 2);
        let passed = data["c"][0][3].as_u64().unwrap() as usize;
        assert_eq!(data["l"][passed].as_array().unwrap().len(), 1);
    }

    #[test]
    fn several_reports_become_columns_side_by_side() {
        let a = report("llvm-19", vec![rec("llvm-19", "icv.a", Outcome::Pass, "")]);
        let b = report("llvm-19", vec![rec("llvm-19", "icv.b", Outcome::Fail, "")]);
        let html = render(&[a, b]);
        assert_eq!(html.matches("<th class=\"lib\"").count(), 2);
        assert!(html.contains("data-library=\"llvm-19 (report 2)\""));
        // Each library ran one of the two checks: the other cell says so.
        assert_eq!(html.matches("data-outcome=\"none\"").count(), 2);
    }

    #[test]
    fn a_check_of_the_other_side_is_a_dash_in_every_report_not_a_check_left_unrun() {
        let row = ompd_report::runtime_row::ROW;
        let one = || {
            report(
                "l",
                vec![
                    rec("l", "icv.a", Outcome::Pass, ""),
                    rec(row, "runtime.breakpoints.defined", Outcome::Fail, ""),
                ],
            )
        };
        let html = render(&[one(), one()]);
        // The runtime rows of both reports share one column: per library column its
        // runtime-check cell, and the runtime column's library-check cell.
        assert_eq!(html.matches("<th class=\"lib\"").count(), 3);
        assert_eq!(html.matches("data-outcome=\"none\">—</td>").count(), 3);
        assert!(!html.contains("runtime (report 2)"));
        assert!(!html.contains("not run"));
    }

    #[test]
    fn the_page_is_self_contained() {
        let r = report("l", vec![rec("l", "icv.a", Outcome::Fail, "http://x")]);
        let html = render(&[r]);
        for banned in [
            "<script src",
            "<link",
            "src=",
            "url(",
            "@import",
            "href=\"http",
        ] {
            assert!(!html.contains(banned), "{banned}");
        }
    }

    #[test]
    fn outcome_colours_are_distinct_and_differ_from_tints() {
        let mut seen = std::collections::BTreeSet::new();
        for o in Outcome::ALL {
            assert!(seen.insert(colour(o)), "{o:?}");
        }
        for o in Outcome::ALL {
            assert!(seen.insert(tint(o)), "tint of {o:?}");
        }
    }

    #[test]
    fn long_cells_are_capped() {
        let recs = (0..MAX_UNITS_SHOWN + 5)
            .map(|_| rec("l", "icv.a", Outcome::Fail, ""))
            .collect();
        let html = render(&[report("l", recs)]);
        let data = island(&html);
        // Every unit reported alike: one group of the first MAX_UNITS_SHOWN places.
        assert_eq!(data["c"][0][1].as_array().unwrap().len(), 1);
        let places = data["c"][0][1][0][5].as_u64().unwrap() as usize;
        assert_eq!(data["l"][places].as_array().unwrap().len(), MAX_UNITS_SHOWN);
        assert_eq!(data["c"][0][2], 5);
        // A string the cells repeat is stored once.
        assert_eq!(
            data["s"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|x| *x == "fail")
                .count(),
            1
        );
    }

    /// The page's data island.
    fn island(html: &str) -> serde_json::Value {
        let start = html.find("id=\"units\">").unwrap() + "id=\"units\">".len();
        let end = start + html[start..].find("</script>").unwrap();
        serde_json::from_str(&html[start..end]).unwrap()
    }

    #[test]
    fn the_page_opens_on_the_summary_of_every_column() {
        let mut r = report(
            "l",
            vec![
                rec("l", "icv.a", Outcome::Pass, ""),
                rec("l", "icv.a", Outcome::Fail, ""),
                rec("l", "icv.b", Outcome::Skip, ""),
            ],
        );
        r.results[1].gate = Some(ompd_report::Gate::ExpectedFail);
        let html = render(&[r]);
        let summary = html.find("<table class=\"summary\">").unwrap();
        assert!(summary < html.find("<table class=\"matrix\">").unwrap());
        // profile, judged, pass, warn, fail, expected, regress, new-warn, silenced,
        // unexp-pass, stale (unknown from a report alone).
        let row = "<tr><th>l</th><td>—</td><td>2</td><td>1</td><td>0</td><td>1</td><td>1</td>\
                   <td>0</td><td>0</td><td>0</td><td>0</td><td>—</td></tr>";
        assert!(html.contains(row), "{html}");
    }
}
