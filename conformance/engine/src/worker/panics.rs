//! A panic of the suite's own check code: caught where the check runs and reported as the
//! check's harness error, never as a crash of the library (the worker would otherwise exit with
//! code 101, which reads as the library ending the process). While a check runs, the panic hook
//! keeps the message instead of printing it, so that it never counts as the library's output;
//! elsewhere the default hook prints it as usual.

use ompd_checks::Verdict;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// True while a check's own code runs.
static IN_CHECK: AtomicBool = AtomicBool::new(false);
/// The message and place of the last panic caught inside a check.
static CAUGHT: Mutex<Option<String>> = Mutex::new(None);

/// Installs the hook (the worker's `main` does, once).
pub(super) fn install_hook() {
    let default = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if IN_CHECK.load(Ordering::Acquire) {
            let place = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()))
                .unwrap_or_default();
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
                .unwrap_or("a panic without a message");
            *CAUGHT.lock().unwrap_or_else(|p| p.into_inner()) = Some(format!("{message}{place}"));
        } else {
            default(info);
        }
    }));
}

/// Runs a check's code; a panic becomes its harness error.
pub(super) fn caught(run: impl FnOnce() -> Verdict) -> Verdict {
    IN_CHECK.store(true, Ordering::Release);
    let result = panic::catch_unwind(AssertUnwindSafe(run));
    IN_CHECK.store(false, Ordering::Release);
    result.unwrap_or_else(|_| {
        let what = CAUGHT
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .unwrap_or_else(|| "a panic".into());
        Verdict::harness_error(format!("the suite's own check code panicked: {what}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ompd_report::Outcome;

    #[test]
    fn a_panicking_check_is_a_harness_error_with_its_message() {
        install_hook();
        let v = caught(|| panic!("index out of bounds"));
        assert_eq!(v.outcome, Outcome::HarnessError);
        assert!(v.detail.contains("index out of bounds"), "{}", v.detail);
        assert!(v.detail.contains("panics.rs"), "{}", v.detail);
        let fine = caught(|| Verdict::skip("nothing"));
        assert_eq!(fine.outcome, Outcome::Skip);
    }
}
