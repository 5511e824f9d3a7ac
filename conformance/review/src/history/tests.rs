//! Tests of the timelines: lines and release order, appearances and fixes, the terminal table
//! and the page.

use super::*;
use crate::regression::tests::report;
use Outcome::*;

/// Three releases of `intel` (given out of order) and one of `llvm`, in one report list.
fn reports() -> Vec<Report> {
    vec![
        report(
            "intel-2024.2",
            &[
                ("a.crash", "serial", Crash),
                ("a.crash", "nested", Pass),
                ("a.steady", "serial", Pass),
                ("a.always", "serial", Fail),
            ],
        ),
        report(
            "intel-2020.0",
            &[
                ("a.crash", "serial", Pass),
                ("a.steady", "serial", Pass),
                ("a.always", "serial", Fail),
                ("a.old_only", "serial", Skip),
            ],
        ),
        report(
            "intel-2026.2",
            &[
                ("a.crash", "serial", Pass),
                ("a.steady", "serial", Pass),
                ("a.always", "serial", Fail),
                ("a.always", "nested", Warn),
            ],
        ),
        report("llvm-19", &[("a.steady", "serial", Pass)]),
    ]
}

#[test]
fn lines_and_release_numbers_come_from_the_vendor_name() {
    assert_eq!(line_of("intel-2020.0"), ("intel", vec![2020, 0]));
    assert_eq!(line_of("llvm-22"), ("llvm", vec![22]));
    assert_eq!(line_of("libompd"), ("libompd", vec![]));
    assert_eq!(line_of("my-lib"), ("my-lib", vec![]));
    assert_eq!(short_name("intel", "intel-2024.2"), "2024.2");
    assert_eq!(short_name("libompd", "libompd"), "libompd");
}

#[test]
fn releases_are_ordered_and_findings_appear_and_are_fixed() {
    let t = timelines(&reports()).unwrap();
    assert_eq!(t.len(), 2, "one timeline per line");
    let intel = &t[0];
    assert_eq!(intel.line, "intel");
    let names: Vec<&str> = intel.releases.iter().map(|r| r.library.as_str()).collect();
    assert_eq!(names, ["intel-2020.0", "intel-2024.2", "intel-2026.2"]);
    let check = |id: &str| intel.checks.iter().find(|c| c.check == id).unwrap();

    let crash = check("a.crash");
    let worst: Vec<_> = crash
        .steps
        .iter()
        .map(|s| s.as_ref().unwrap().worst)
        .collect();
    assert_eq!(worst, [Pass, Crash, Pass]);
    assert_eq!(crash.steps[1].as_ref().unwrap().findings, 1);
    let kinds: Vec<_> = crash.events.iter().map(|e| (e.kind, e.release)).collect();
    assert_eq!(kinds, [(EventKind::Appeared, 1), (EventKind::Fixed, 2)]);
    let replay = crash.events[0].replay.as_deref().unwrap();
    assert!(
        replay.contains("intel-2024.2") && replay.contains("a.crash"),
        "{replay}"
    );

    let always = check("a.always");
    assert_eq!(always.events.len(), 1, "one streak from the first release");
    assert_eq!(always.events[0].release, 0);
    assert_eq!(always.steps[2].as_ref().unwrap().findings, 2);
    assert!(always.notable());

    assert!(!check("a.steady").notable());
    let old_only = check("a.old_only");
    assert!(old_only.steps[1].is_none() && old_only.notable());
}

#[test]
fn the_terminal_table_shows_notable_checks_and_their_events() {
    let t = timelines(&reports()).unwrap();
    let text = render(&t[0], false);
    assert!(text.starts_with("intel line: 3 releases"), "{text}");
    assert!(text.contains("1 with the same outcome"), "{text}");
    assert!(!text.contains("a.steady"), "{text}");
    let row = text.lines().find(|l| l.starts_with("a.crash")).unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells, ["a.crash", "pass", "crash", "1", "pass"]);
    assert!(text.contains("appeared in intel-2024.2: crash"), "{text}");
    assert!(text.contains("fixed in intel-2026.2"), "{text}");
    assert!(render(&t[0], true).contains("a.steady"));
}

#[test]
fn one_release_claimed_twice_is_an_error() {
    let mut r = reports();
    r.push(report("intel-2020.00", &[]));
    let e = timelines(&r).unwrap_err();
    assert!(
        e.contains("intel-2020.0") && e.contains("intel-2020.00"),
        "{e}"
    );
}

#[test]
fn the_page_escapes_text_and_marks_events() {
    let mut r = reports();
    r.push(report("evil-1", &[("<b>x", "serial", Fail)]));
    let page = html::render(&timelines(&r).unwrap(), false);
    assert!(page.contains("&lt;b&gt;x") && !page.contains("<b>x"));
    assert!(page.contains("data-event=\"appeared\""));
    assert!(page.contains("data-event=\"fixed\""));
    assert!(page.contains("data-outcome=\"none\""));
    assert_eq!(page.matches("<section class=\"line\"").count(), 3);
}
