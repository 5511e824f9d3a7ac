//! The timelines as one self-contained HTML page (inline CSS, no script, no external resource),
//! in the matrix's colours: per line, rows are checks, columns are releases oldest first, and
//! each cell shows the check's worst outcome in that release with its number of findings. A
//! cell where a finding appears is marked ▲, one where it is fixed ▼; each row opens
//! (`<details>`) to its appearances, fixes and replay commands. Every piece of text from a
//! report is escaped.
//!
//! Hooks the browser test relies on: a line is `<section class="line" data-line=NAME>`, its
//! columns `<th class="release" data-library=NAME>`, rows `<tr class="check" data-check=ID>`,
//! cells `<td class="cell o-OUTCOME" data-library=NAME data-outcome=OUTCOME data-event=EVENT>`
//! (`appeared`, `fixed` or empty; `absent` cells have outcome `none`), and each cell starts
//! with a swatch (`span.sw`) in the outcome's colour, as in the matrix.

use super::{cell_text, short_name, CheckLine, EventKind, Timeline};
use crate::html::{escape, legend, outcome_css, CSS};
use std::fmt::Write as _;

const HISTORY_CSS: &str = "\
table.timeline{border-collapse:collapse;margin:4px 0 16px}
.timeline th,.timeline td{border:1px solid #d0d7de;padding:2px 8px;vertical-align:top;text-align:left}
.timeline thead th{background:#f6f8fa;position:sticky;top:0;z-index:1}
.timeline th.check{font-weight:normal;min-width:360px;max-width:560px;overflow-wrap:anywhere}
.timeline td.cell{white-space:nowrap}
.timeline td.none{color:#57606a}
.mark{font-weight:700;margin-left:4px}
.events{margin:4px 0 0 0;padding-left:18px;font-size:12px}
";

/// Renders the timelines as one page; `all` shows every check, otherwise the notable ones.
pub fn render(timelines: &[Timeline], all: bool) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<title>OMPD conformance history</title>\n<style>\n");
    out.push_str(CSS);
    out.push_str(HISTORY_CSS);
    outcome_css(&mut out);
    out.push_str("</style>\n</head>\n<body>\n<h1>OMPD conformance history</h1>\n");
    intro(&mut out);
    for t in timelines {
        line(&mut out, t, all);
    }
    out.push_str("</body>\n</html>\n");
    out
}

fn intro(out: &mut String) {
    out.push_str(
        "<p class=\"muted\">Each cell is the worst outcome of a check in one release, over \
         every unit it ran in, followed by how many of its results were findings (fail, warn, \
         crash or timeout). ▲ a finding appears in this release; ▼ it is fixed; – the release \
         has no result of the check. Open a check for its replay commands.</p>\n",
    );
    legend(out);
}

fn line(out: &mut String, t: &Timeline, all: bool) {
    let shown = t.shown(all);
    let _ = writeln!(
        out,
        "<section class=\"line\" data-line=\"{l}\">\n<h2>{l}: {n} releases</h2>\n\
         <p class=\"muted\">{c} checks; {s} shown{rest}.</p>",
        l = escape(&t.line),
        n = t.releases.len(),
        c = t.checks.len(),
        s = shown.len(),
        rest = t.left_out(all)
    );
    out.push_str("<table class=\"timeline\">\n<thead><tr><th class=\"check\">check</th>");
    for r in &t.releases {
        let detail = [r.version.clone(), r.api_version.map(|v| format!("API {v}"))]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", ");
        let _ = write!(
            out,
            "<th class=\"release\" data-library=\"{l}\" title=\"{l}\">{s}<br>\
             <span class=\"req\">{d}</span></th>",
            l = escape(&r.library),
            s = escape(short_name(&t.line, &r.library)),
            d = escape(&detail)
        );
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for c in shown {
        row(out, t, c);
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
}

fn row(out: &mut String, t: &Timeline, c: &CheckLine) {
    let _ = write!(
        out,
        "<tr class=\"check\" data-check=\"{e}\"><th class=\"check\" scope=\"row\">",
        e = escape(&c.check)
    );
    if c.events.is_empty() {
        let _ = write!(out, "<code>{}</code>", escape(&c.check));
    } else {
        let _ = write!(
            out,
            "<details><summary><code>{}</code></summary><ul class=\"events\">",
            escape(&c.check)
        );
        for e in &c.events {
            let name = escape(&t.releases[e.release].library);
            match e.kind {
                EventKind::Appeared => {
                    let _ = write!(
                        out,
                        "<li>appeared in <b>{name}</b>: {}<br>replay: <code>{}</code></li>",
                        escape(e.first.as_deref().unwrap_or("")),
                        escape(e.replay.as_deref().unwrap_or(""))
                    );
                }
                EventKind::Fixed => {
                    let _ = write!(out, "<li>fixed in <b>{name}</b></li>");
                }
            }
        }
        out.push_str("</ul></details>");
    }
    out.push_str("</th>");
    for (i, step) in c.steps.iter().enumerate() {
        let lib = escape(&t.releases[i].library);
        let event = c.events.iter().find(|e| e.release == i).map(|e| e.kind);
        let (ev, mark) = match event {
            Some(EventKind::Appeared) => ("appeared", "<span class=\"mark\">▲</span>"),
            Some(EventKind::Fixed) => ("fixed", "<span class=\"mark\">▼</span>"),
            None => ("", ""),
        };
        match step {
            Some(s) => {
                let _ = write!(
                    out,
                    "<td class=\"cell o-{o}\" data-library=\"{lib}\" data-outcome=\"{o}\" \
                     data-event=\"{ev}\"><span class=\"sw\"></span>{text}{mark}</td>",
                    o = s.worst.as_str(),
                    text = escape(&cell_text(Some(s)))
                );
            }
            None => {
                let _ = write!(
                    out,
                    "<td class=\"cell none\" data-library=\"{lib}\" data-outcome=\"none\" \
                     data-event=\"{ev}\">–</td>"
                );
            }
        }
    }
    out.push_str("</tr>\n");
}
