//! The HTML conformance matrix of every vendor library, loaded in a real headless browser
//! (Debian `chromium`): the DOM the browser built has one row per check and one column per
//! library, each cell carrying the worst outcome the JSON report gives; and a screenshot of the
//! page, decoded with the `png` crate, shows the legend's swatches followed by one swatch per
//! cell, in reading order, each in its outcome's colour.
//!
//! Chromium is required: CI installs it (`.ci/run`). Locally, and only outside CI,
//! `OMPD_SKIP_BROWSER_TEST=1` skips this test with a message on stderr.

use ompd_report::{Outcome, Report};
use ompd_review::html::{colour, SWATCH_PX};
use ompd_vendors as vendors;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The browser binary, or None when the test may be skipped (explicitly, outside CI).
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser"] {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    let in_ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false");
    let skip = std::env::var("OMPD_SKIP_BROWSER_TEST").is_ok_and(|v| v == "1");
    if skip && !in_ci {
        eprintln!(
            "html_browser: SKIPPED: chromium is not installed and OMPD_SKIP_BROWSER_TEST=1 \
             (install it with `apt-get install chromium`)"
        );
        return None;
    }
    panic!(
        "chromium is not installed: the HTML matrix must be checked in a real browser. Install it \
         with `apt-get install -y chromium` (.ci/run does), set CHROMIUM=/path/to/chromium, or \
         (locally, outside CI) set OMPD_SKIP_BROWSER_TEST=1 to skip this test"
    );
}

/// Runs chromium headless on `page` with `args`; returns its stdout.
fn browse(exe: &Path, profile: &Path, args: &[String], page: &Path) -> Vec<u8> {
    let out = Command::new(exe)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium starts");
    assert!(
        out.status.success(),
        "chromium {args:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The value of attribute `name` in the tag text `tag`.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let len = tag[start..].find('"')?;
    Some(&tag[start..start + len])
}

/// The matrix as the browser's DOM has it: column labels, and per row the check id with its
/// cells' (library, outcome), in document order.
type Matrix = (Vec<String>, Vec<(String, Vec<(String, String)>)>);

fn matrix_from_dom(dom: &str) -> Matrix {
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

/// A swatch found in the screenshot: its top-left corner and outcome.
#[derive(Debug)]
struct Swatch {
    x: u32,
    y: u32,
    outcome: Outcome,
}

/// Every solid square of an outcome colour, about [`SWATCH_PX`] on a side, in reading order.
fn swatches(png_bytes: &[u8]) -> (u32, u32, Vec<Swatch>) {
    let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut reader = decoder.read_info().expect("screenshot is a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("image size fits")];
    let info = reader.next_frame(&mut buf).expect("screenshot decodes");
    let (w, h) = (info.width, info.height);
    let channels = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("unexpected screenshot colour type {other:?}"),
    };
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let pixel = |x: u32, y: u32| {
        let i = (y as usize * w as usize + x as usize) * channels;
        [buf[i], buf[i + 1], buf[i + 2]]
    };
    let close = |a: [u8; 3], b: [u8; 3]| a.iter().zip(b).all(|(p, q)| p.abs_diff(q) <= 3);
    // Label each pixel with the outcome whose colour it has, if any.
    let mut label: Vec<Option<u8>> = vec![None; (w * h) as usize];
    for y in 0..h {
        for x in 0..w {
            let p = pixel(x, y);
            label[(y * w + x) as usize] = Outcome::ALL
                .iter()
                .position(|o| close(p, colour(*o)))
                .map(|i| i as u8);
        }
    }
    // Connected components of one label; keep the solid squares of swatch size.
    let mut seen = vec![false; label.len()];
    let mut found = Vec::new();
    for start in 0..label.len() {
        let Some(l) = label[start] else { continue };
        if seen[start] {
            continue;
        }
        seen[start] = true;
        let mut stack = vec![start];
        let (mut x0, mut y0, mut x1, mut y1, mut n) = (u32::MAX, u32::MAX, 0, 0, 0u32);
        while let Some(i) = stack.pop() {
            let (x, y) = (i as u32 % w, i as u32 / w);
            (x0, y0, x1, y1, n) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y), n + 1);
            let mut visit = |nx: u32, ny: u32| {
                let j = (ny * w + nx) as usize;
                if !seen[j] && label[j] == Some(l) {
                    seen[j] = true;
                    stack.push(j);
                }
            };
            if x > 0 {
                visit(x - 1, y);
            }
            if x + 1 < w {
                visit(x + 1, y);
            }
            if y > 0 {
                visit(x, y - 1);
            }
            if y + 1 < h {
                visit(x, y + 1);
            }
        }
        let (bw, bh) = (x1 - x0 + 1, y1 - y0 + 1);
        let fits = |d: u32| d + 2 >= SWATCH_PX && d <= SWATCH_PX + 1;
        if fits(bw) && fits(bh) && n * 10 >= bw * bh * 9 {
            found.push(Swatch {
                x: x0,
                y: y0,
                outcome: Outcome::ALL[l as usize],
            });
        }
    }
    // Reading order: lines of swatches (tops within 3 px), left to right.
    found.sort_by_key(|s| (s.y, s.x));
    let mut lines: Vec<Vec<Swatch>> = Vec::new();
    for s in found {
        match lines.last_mut() {
            Some(line) if s.y <= line[0].y + 3 => line.push(s),
            _ => lines.push(vec![s]),
        }
    }
    let ordered = lines
        .into_iter()
        .flat_map(|mut l| {
            l.sort_by_key(|s| s.x);
            l
        })
        .collect();
    (w, h, ordered)
}

#[test]
fn the_matrix_of_every_vendor_library_renders_in_a_real_browser() {
    let Some(exe) = chromium() else { return };
    vendors::fetch(&vendors::default_cache_dir(), &[], false, &mut |_| {})
        .expect("vendor libraries fetch");
    let names: Vec<&str> = vendors::known().iter().map(|v| v.name).collect();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let html = dir.path().join("matrix.html");
    let status = Command::new(env!("CARGO_BIN_EXE_ompd-conform"))
        .arg("run")
        .args(&names)
        .args(["--cases", "0", "--quiet", "--format", "json", "--output"])
        .arg(&json)
        .arg("--html")
        .arg(&html)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("ompd-conform starts");
    assert!(matches!(status.code(), Some(0 | 100)), "exit {status}");
    let report: Report = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();

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
            let want = worst[&(lib.as_str(), id.as_str())];
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
    let png_path = dir.path().join("matrix.png");
    browse(
        &exe,
        profile.path(),
        &[
            format!("--screenshot={}", png_path.display()),
            format!("--window-size=1400,{height}"),
        ],
        &html,
    );
    let bytes = std::fs::read(&png_path).expect("chromium wrote the screenshot");
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
