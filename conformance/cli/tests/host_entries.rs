//! `ompd-conform` honours the engine's host contract (`ompd_engine::host`): each hidden entry,
//! given as the first argument of the built binary, starts that entry and speaks its protocol,
//! never the binary's own command line (which would refuse it as a usage error).

use ompd_engine::host::Entry;
use ompd_engine::worker::{Event, HarnessFailure};
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::process::{Command, Output, Stdio};

/// Runs the binary as `entry` with `stdin` and gives its output.
fn started(entry: Entry, stdin: Stdio, input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ompd-conform"))
        .arg(entry.arg())
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    if let Some(mut s) = child.stdin.take() {
        s.write_all(input).expect("the input is sent");
    }
    child.wait_with_output().expect("the binary ends")
}

/// The usage-error exit of the binary's own command line, which an unrouted entry would meet.
fn usage_error() -> i32 {
    ompd_conform::cli::exit::USAGE.code
}

#[test]
fn a_worker_start_reads_a_unit_and_reports_a_malformed_one_as_its_event() {
    let out = started(Entry::Worker, Stdio::piped(), b"not a unit\n");
    assert_ne!(out.status.code(), Some(usage_error()));
    let last = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .map(|l| serde_json::from_str::<Event>(l).expect("an event"));
    assert!(
        matches!(
            last,
            Some(Event::HarnessFailed {
                failure: HarnessFailure::MalformedUnit(_)
            })
        ),
        "{last:?}"
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_zygote_start_serves_its_control_socket_until_it_closes() {
    let (ours, theirs) = UnixStream::pair().expect("a socket pair");
    drop(ours);
    let out = started(
        Entry::Zygote,
        Stdio::from(std::os::fd::OwnedFd::from(theirs)),
        b"",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "a zygote whose control socket is closed ends cleanly: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Without a control socket it names itself, where the command line would print its usage.
    let out = started(Entry::Zygote, Stdio::null(), b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("zygote: "), "{err}");
    assert_ne!(out.status.code(), Some(usage_error()));
}

#[test]
fn every_entry_is_tested_here() {
    // A new entry must get its own test above: this list names the ones that have one.
    assert_eq!(Entry::ALL, [Entry::Worker, Entry::Zygote]);
}
