//! Helpers of the browser tests: finding chromium, running it headless on a page, reading
//! attributes from the DOM it dumps, and finding the outcome swatches in a screenshot.

use ompd_report::Outcome;
use ompd_review::html::{colour, SWATCH_PX};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The browser binary, or None when the test may be skipped (explicitly, outside CI).
pub fn chromium() -> Option<PathBuf> {
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

/// A screenshot of `page`, 1400 pixels wide and `height` tall, written into `dir`: the
/// PNG's bytes.
pub fn screenshot(exe: &Path, profile: &Path, page: &Path, dir: &Path, height: usize) -> Vec<u8> {
    let png_path = dir.join("screenshot.png");
    browse(
        exe,
        profile,
        &[
            format!("--screenshot={}", png_path.display()),
            format!("--window-size=1400,{height}"),
        ],
        page,
    );
    std::fs::read(&png_path).expect("chromium wrote the screenshot")
}

/// Runs chromium headless on `page` with `args`; returns its stdout.
pub fn browse(exe: &Path, profile: &Path, args: &[String], page: &Path) -> Vec<u8> {
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
pub fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let len = tag[start..].find('"')?;
    Some(&tag[start..start + len])
}

/// A swatch found in the screenshot: its top-left corner and outcome.
#[derive(Debug)]
pub struct Swatch {
    /// Left edge.
    pub x: u32,
    /// Top edge.
    pub y: u32,
    /// The outcome whose colour it has.
    pub outcome: Outcome,
}

/// Every solid square of an outcome colour, about [`SWATCH_PX`] on a side, in reading order.
pub fn swatches(png_bytes: &[u8]) -> (u32, u32, Vec<Swatch>) {
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
