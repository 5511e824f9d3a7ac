//! The HTML conformance matrix of every vendor library, loaded in a real headless browser
//! (Debian `chromium`): the DOM the browser built has one row per check and one column per
//! library, each cell carrying the worst outcome the JSON report gives; and a screenshot of the
//! page, decoded with the `png` crate, shows the legend's swatches followed by one swatch per
//! cell, in reading order, each in its outcome's colour; and a cell opened lists, from the page's
//! data, exactly the units the report has for it. The same run's `history` page (both
//! vendor lines) is checked the same way: per line the releases in release order, the notable
//! checks with each cell's worst outcome and event (appeared, fixed) as computed from the JSON
//! report, and every cell's swatch in its colour.
//!
//! Chromium is required: CI installs it (`.ci/run`). Locally, and only outside CI,
//! `OMPD_SKIP_BROWSER_TEST=1` skips this test with a message on stderr.

mod browser;

use browser::{attr, browse, chromium, screenshot, swatches};
use ompd_report::{Outcome, Report};
use ompd_vendors as vendors;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::sync::OnceLock;

/// The matrix as the browser's DOM has it: column labels, and per row the check id with its
/// cells' (library, outcome), in document order.
type Matrix = (Vec<String>, Vec<(String, Vec<(String, String)>)>);

fn matrix_from_dom(dom: &str) -> Matrix {
    // The matrix follows the summary table, which has a body of its own.
    let dom = &dom[dom
        .find("<table class=\"matrix\"")
        .expect("the page has a matrix")..];
    // The unit tables nested in the cells have (implicit) bodies of their own: the matrix ends
    // where the library headers start.
    let tbody_end = dom
        .find("<h2>Libraries</h2>")
        .expect("the page has library headers");
    let head = &dom[..dom.find("<tbody").expect("the matrix has a body")];
    let libs: Vec<String> = head
        .split("<th class=\"lib\"")
        .skip(1)
        .map(|t| attr(t, "data-library").expect("column label").to_string())
        .collect();
    let body = &dom[..tbody_end];
    let mut rows = Vec::new();
    for seg in body.split("<tr class=\"check\"").skip(1) {
        // A row ends where the next row (or family header) starts; cells hold nested tables.
        let seg = seg.split("<tr class=\"family\"").next().unwrap_or(seg);
        let id = attr(seg, "data-check")
            .expect("row id")
            .replace("&amp;", "&");
        let cells = seg
            .split("<td class=\"cell")
            .skip(1)
            .map(|t| {
                let tag = &t[..t.find('>').expect("tag end")];
                (
                    attr(tag, "data-library").expect("cell library").to_string(),
                    attr(tag, "data-outcome").expect("cell outcome").to_string(),
                )
            })
            .collect();
        rows.push((id, cells));
    }
    (libs, rows)
}

/// One run of every known vendor library (`--cases 0`), shared by the tests: its directory
/// (holding `report.json` and `matrix.html`) and its report. The directory is under cargo's
/// `CARGO_TARGET_TMPDIR`, written afresh by each run: a temporary directory held by a static
/// is never dropped, so it would be left behind (229 MB) after every run.
fn every_vendor() -> &'static (std::path::PathBuf, Report) {
    static RUN: OnceLock<(std::path::PathBuf, Report)> = OnceLock::new();
    RUN.get_or_init(|| {
        vendors::fetch(&vendors::default_cache_dir(), &[], false, &mut |_| {})
            .expect("vendor libraries fetch");
        let names: Vec<&str> = vendors::known().iter().map(|v| v.name).collect();
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("html_browser");
        std::fs::create_dir_all(&dir).unwrap();
        let json = dir.join("report.json");
        let status = Command::new(env!("CARGO_BIN_EXE_ompd-conform"))
            .arg("run")
            .args(&names)
            .args(["--cases", "0", "--quiet", "--format", "json", "--output"])
            .arg(&json)
            .arg("--html")
            .arg(dir.join("matrix.html"))
            .stdout(std::process::Stdio::null())
            .status()
            .expect("ompd-conform starts");
        assert!(matches!(status.code(), Some(0 | 100)), "exit {status}");
        let report = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        (dir, report)
    })
}

#[test]
fn the_matrix_of_every_vendor_library_renders_in_a_real_browser() {
    let Some(exe) = chromium() else { return };
    let (run, report) = every_vendor();
    let names: Vec<&str> = vendors::known()
        .iter()
        .map(|v| v.name)
        .chain([ompd_report::runtime_row::ROW])
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let html = run.join("matrix.html");

    // The truth: the worst outcome of each check on each library.
    let mut worst: BTreeMap<(&str, &str), Outcome> = BTreeMap::new();
    for r in &report.results {
        let w = worst
            .entry((r.library.as_str(), r.check.as_str()))
            .or_insert(r.outcome);
        *w = (*w).max(r.outcome);
    }
    let checks: BTreeSet<&str> = report.results.iter().map(|r| r.check.as_str()).collect();
    assert!(checks.len() > 100, "the run covers the catalogue");

    // The DOM the browser built: one row per check, one column per library, worst outcomes.
    let profile = tempfile::tempdir().unwrap();
    let dom = String::from_utf8(browse(&exe, profile.path(), &["--dump-dom".into()], &html))
        .expect("the DOM is UTF-8");
    let (libs, rows) = matrix_from_dom(&dom);
    assert_eq!(libs, names, "one column per library, in run order");
    let row_ids: Vec<&str> = rows.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        row_ids.iter().copied().collect::<BTreeSet<_>>(),
        checks,
        "one row per check"
    );
    assert_eq!(row_ids.len(), checks.len(), "no check has two rows");
    let mut expected_cells = Vec::new();
    for (id, cells) in &rows {
        let got_libs: Vec<&str> = cells.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(got_libs, names, "row {id}: one cell per library");
        for (lib, outcome) in cells {
            // A library's check has no result in the runtime row, nor a runtime's in a library's.
            let Some(&want) = worst.get(&(lib.as_str(), id.as_str())) else {
                let runtime = lib == ompd_report::runtime_row::ROW;
                assert_ne!(
                    runtime,
                    ompd_report::runtime_row::is_runtime_check(id),
                    "{lib} × {id}"
                );
                assert_eq!(outcome, "none", "cell {lib} × {id}");
                continue;
            };
            assert_eq!(outcome, want.as_str(), "cell {lib} × {id}");
            expected_cells.push(want);
        }
    }
    let families: BTreeSet<&str> = checks
        .iter()
        .map(|c| ompd_review::html::family(c))
        .collect();
    assert_eq!(
        dom.matches("<tr class=\"family\"").count(),
        families.len(),
        "one header row per family"
    );

    // The screenshot: tall enough for the whole matrix; the legend's swatches, then one swatch
    // per cell in reading order, each in the colour of the cell's outcome.
    let height = 800 + 64 * (rows.len() + families.len());
    let bytes = screenshot(&exe, profile.path(), &html, dir.path(), height);
    let (w, h, found) = swatches(&bytes);
    assert_eq!((w as usize, h as usize), (1400, height), "screenshot size");
    let mut want: Vec<Outcome> = Outcome::ALL.to_vec();
    want.extend(expected_cells.iter().copied());
    let got: Vec<Outcome> = found.iter().map(|s| s.outcome).collect();
    if got != want {
        let first = got
            .iter()
            .zip(&want)
            .position(|(g, w)| g != w)
            .unwrap_or(got.len().min(want.len()));
        panic!(
            "the screenshot shows {} swatches, the page has {}; first difference at #{first}: \
             got {:?} at {:?}, want {:?}",
            got.len(),
            want.len(),
            got.get(first),
            found.get(first).map(|s| (s.x, s.y)),
            want.get(first)
        );
    }
    // Both ends of the scale are really on the page: passes and failures of the real libraries.
    let count = |o: Outcome| expected_cells.iter().filter(|x| **x == o).count();
    assert!(count(Outcome::Pass) > 0 && count(Outcome::Fail) > 0);
    // The last row really is drawn: its swatches sit below the first row's.
    let cells = &found[Outcome::ALL.len()..];
    assert!(cells.last().unwrap().y > cells[0].y + 20 * rows.len() as u32);
}

/// The first failing cell of `page`: its library, check and unit-data number.
fn first_failing_cell(page: &str) -> (&str, &str, &str) {
    let at = page
        .find("data-outcome=\"fail\" data-u=")
        .expect("a failing cell");
    let tag = &page[page[..at].rfind("<td ").unwrap()..at + page[at..].find('>').unwrap()];
    let row = &page[page[..at].rfind("<tr class=\"check\"").unwrap()..];
    (
        attr(tag, "data-library").unwrap(),
        attr(row, "data-check").unwrap(),
        attr(tag, "data-u").unwrap(),
    )
}

#[test]
fn an_opened_cell_lists_its_units_from_the_pages_data_in_a_real_browser() {
    let Some(exe) = chromium() else { return };
    let (run, report) = every_vendor();
    let page = std::fs::read_to_string(run.join("matrix.html")).unwrap();
    let (lib, check, u) = first_failing_cell(&page);
    // The cell opened, as a reader opens it; the page builds its unit list from its data.
    let at = page.find(&format!("data-u=\"{u}\"")).unwrap();
    let details = at + page[at..].find("<details>").unwrap();
    let opened = format!(
        "{}<details open>{}",
        &page[..details],
        &page[details + "<details>".len()..]
    );
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("opened.html");
    std::fs::write(&html, opened).unwrap();
    let dom = String::from_utf8(browse(&exe, dir.path(), &["--dump-dom".into()], &html)).unwrap();
    let cell = &dom[dom.find(&format!("data-u=\"{u}\"")).unwrap()..];
    let list = &cell[..cell.find("</details>").unwrap()];
    assert!(list.contains("class=\"unit-list\""), "{list}");
    // Its rows: each unit that did not pass, with its outcome and place, as the report has
    // them; then the count of those that passed.
    let mut got: Vec<(String, String)> = list
        .split("<tr class=\"o-")
        .skip(1)
        .map(|r| {
            let outcome = r[..r.find('"').unwrap()].to_string();
            let code = &r[r.find("<code>").unwrap() + 6..];
            (outcome, code[..code.find("</code>").unwrap()].to_string())
        })
        .collect();
    let results: Vec<_> = report
        .results
        .iter()
        .filter(|r| r.library == lib && r.check == check)
        .collect();
    let mut want: Vec<(String, String)> = results
        .iter()
        .filter(|r| r.outcome != Outcome::Pass)
        .take(ompd_review::html::MAX_UNITS_SHOWN)
        .map(|r| (r.outcome.as_str().to_string(), r.place()))
        .collect();
    got.sort();
    want.sort();
    assert_eq!(got, want, "{lib} × {check}");
    let passed = results
        .iter()
        .filter(|r| r.outcome == Outcome::Pass)
        .count();
    if passed > 0 {
        assert!(list.contains(&format!("{passed} unit(s) pass")), "{list}");
    }
}

/// A timeline page as the browser's DOM has it: per line, its release columns and its rows
/// (check id, cells of (library, outcome, event)).
type Lines = Vec<(String, Vec<String>, Vec<Row>)>;

/// A timeline row: check id and its cells (library, outcome, event).
type Row = (String, Vec<[String; 3]>);

fn timelines_from_dom(dom: &str) -> Lines {
    let mut lines = Vec::new();
    for sec in dom.split("<section class=\"line\"").skip(1) {
        let sec = &sec[..sec.find("</section>").expect("section ends")];
        let name = attr(sec, "data-line").expect("line name").to_string();
        let releases = sec
            .split("<th class=\"release\"")
            .skip(1)
            .map(|t| attr(t, "data-library").expect("release").to_string())
            .collect();
        let rows = sec
            .split("<tr class=\"check\"")
            .skip(1)
            .map(|row| {
                let id = attr(row, "data-check")
                    .expect("row id")
                    .replace("&amp;", "&");
                let cells = row
                    .split("<td class=\"cell")
                    .skip(1)
                    .map(|t| {
                        let tag = &t[..t.find('>').expect("tag end")];
                        ["data-library", "data-outcome", "data-event"]
                            .map(|a| attr(tag, a).expect("cell attribute").to_string())
                    })
                    .collect();
                (id, cells)
            })
            .collect();
        lines.push((name, releases, rows));
    }
    lines
}

/// The truth of one line from the report alone: releases in numeric order, and for each check
/// that changes or has a finding its cells (library, worst outcome or `none`, event).
fn expected_line(report: &Report, line: &str) -> (Vec<String>, Vec<Row>) {
    let finding = |o: Outcome| o == Outcome::Warn || (o.is_failure() && o != Outcome::HarnessError);
    let mut releases: Vec<(Vec<u64>, String)> = report
        .libraries
        .iter()
        .filter_map(|l| {
            let (prefix, numbers) = ompd_review::history::line_of(&l.name);
            (prefix == line).then(|| (numbers, l.name.clone()))
        })
        .collect();
    releases.sort();
    let mut steps: BTreeMap<&str, Vec<Option<(Outcome, bool)>>> = BTreeMap::new();
    for r in &report.results {
        let Some(i) = releases.iter().position(|(_, n)| *n == r.library) else {
            continue;
        };
        let s = &mut steps
            .entry(&r.check)
            .or_insert_with(|| vec![None; releases.len()])[i];
        let (w, bad) = s.unwrap_or((r.outcome, false));
        *s = Some((w.max(r.outcome), bad || finding(r.outcome)));
    }
    let mut rows = Vec::new();
    for (check, st) in steps {
        let worst: Vec<Option<Outcome>> = st.iter().map(|s| s.map(|s| s.0)).collect();
        let bad: Vec<bool> = st.iter().map(|s| s.is_some_and(|s| s.1)).collect();
        if !bad.iter().any(|b| *b) && worst.iter().all(|w| *w == worst[0]) {
            continue;
        }
        let mut before = false;
        let cells = st
            .iter()
            .zip(&releases)
            .map(|(s, (_, lib))| {
                let event = match s {
                    Some((_, true)) if !before => "appeared",
                    Some((_, false)) if before => "fixed",
                    _ => "",
                };
                if let Some((_, b)) = s {
                    before = *b;
                }
                let outcome = s.map_or("none", |s| s.0.as_str());
                [lib.clone(), outcome.to_string(), event.to_string()]
            })
            .collect();
        rows.push((check.to_string(), cells));
    }
    (releases.into_iter().map(|(_, n)| n).collect(), rows)
}

#[test]
fn the_history_of_both_vendor_lines_renders_in_a_real_browser() {
    let Some(exe) = chromium() else { return };
    let (run, report) = every_vendor();
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("history.html");
    let out = Command::new(env!("CARGO_BIN_EXE_ompd-conform"))
        .arg("history")
        .arg(run.join("report.json"))
        .arg("--html")
        .arg(&html)
        .output()
        .expect("ompd-conform starts");
    assert!(
        out.status.success(),
        "history: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("intel line: 6 releases"), "{text}");
    assert!(text.contains("llvm line: 6 releases"), "{text}");

    let profile = tempfile::tempdir().unwrap();
    let dom = String::from_utf8(browse(&exe, profile.path(), &["--dump-dom".into()], &html))
        .expect("the DOM is UTF-8");
    let lines = timelines_from_dom(&dom);
    let names: Vec<&str> = lines.iter().map(|l| l.0.as_str()).collect();
    assert_eq!(names, ["intel", "llvm"], "one section per vendor line");
    let mut want_swatches: Vec<Outcome> = Outcome::ALL.to_vec();
    let mut rows_total = 0;
    for (line, releases, rows) in &lines {
        let (want_releases, want_rows) = expected_line(report, line);
        assert_eq!(
            releases, &want_releases,
            "{line}: releases in release order"
        );
        assert_eq!(
            rows, &want_rows,
            "{line}: the notable checks, their cells and events"
        );
        assert!(rows.iter().flat_map(|r| &r.1).any(|c| c[2] == "appeared"));
        rows_total += rows.len();
        for (_, cells) in rows {
            want_swatches.extend(
                cells
                    .iter()
                    .filter_map(|c| Outcome::ALL.into_iter().find(|o| o.as_str() == c[1])),
            );
        }
    }

    // The screenshot: the legend, then one swatch per present cell, in reading order.
    let height = 800 + 48 * (rows_total + 4 * lines.len());
    let (_, _, found) = swatches(&screenshot(&exe, profile.path(), &html, dir.path(), height));
    let got: Vec<Outcome> = found.iter().map(|s| s.outcome).collect();
    assert_eq!(got.len(), want_swatches.len(), "swatches on the page");
    assert_eq!(
        got, want_swatches,
        "each cell's swatch in its outcome's colour"
    );
}
