//! The worker's side of a batch ([`crate::batch`]): the units of [`Unit::then`] in turn, each
//! against a library instance no earlier unit used, until one leaves the process changed.

use super::{probes, run_unit, Emit, Event, HarnessFailure, Unit};

/// Runs `unit`, then each unit of its batch ([`Unit::then_units`]) in turn. A unit that did not
/// end with [`Event::Done`] (its library did not load, or the result stream is gone), or whose
/// library changed the process (a signal, a descriptor, a thread: [`probes::process_changed`]),
/// ends the batch: the worker exits 0 without an event of the next unit, and the supervisor
/// starts what is left in a fresh worker.
pub(super) fn run_batch(unit: Unit, emit: &mut dyn Emit) -> Result<(), HarnessFailure> {
    let _ = probes::process_changed();
    for u in unit.then_units() {
        let mut stream = Ended { emit, done: false };
        run_unit(&u, &mut stream)?;
        if !stream.done || probes::process_changed() {
            break;
        }
    }
    Ok(())
}

/// The worker's stream, noting whether the unit's last event was [`Event::Done`].
struct Ended<'e> {
    emit: &'e mut dyn Emit,
    done: bool,
}

impl Emit for Ended<'_> {
    fn emit(&mut self, e: &Event) -> bool {
        self.done = matches!(e, Event::Done);
        self.emit.emit(e)
    }

    fn emit_soon(&mut self, e: &Event) -> bool {
        self.done = false;
        self.emit.emit_soon(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::{Contract, Scenario, Target};
    use ompd_checks::Stage;
    use ompd_serve::arch::Arch;
    use sim_target::layout::Policy;

    /// A batch of three units against the test library built from `source` (linked
    /// `-z nodelete`): the events the worker streams.
    fn batch_of_three(file: &str, source: &str) -> Vec<Event> {
        let root = tempfile::tempdir().unwrap();
        let path = crate::cshared::build(
            root.path(),
            file,
            source,
            &["-Wl,-z,nodelete"],
            "the batch test's library",
        )
        .unwrap();
        let target = |arch| Target::Simulated {
            scenario: Scenario::built_in("serial").unwrap(),
            arch,
            layout: Policy::Natural,
        };
        let unit = Unit {
            library: "used-once".into(),
            path,
            preload: Vec::new(),
            needs_cxx_runtime: false,
            stage: Stage::Target,
            snapshot: false,
            target: target(Arch::LP64_LE),
            checks: Vec::new(),
            carried: Contract::default(),
            call_deadline_ms: None,
            quarantined: Vec::new(),
            timing: None,
            fresh_everywhere: false,
            then: Vec::new(),
        };
        let unit = Unit {
            then: [Arch::ILP32_LE, Arch::LP64_BE]
                .map(|a| Unit {
                    target: target(a),
                    ..unit.clone()
                })
                .to_vec(),
            ..unit.clone()
        };
        let mut events = Vec::new();
        run_batch(unit, &mut |e: &Event| {
            events.push(e.clone());
            true
        })
        .unwrap();
        events
    }

    /// The version strings the batch's units saw when their library loaded.
    fn loaded_versions(events: &[Event]) -> Vec<&str> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Loaded { version_string, .. } => version_string.as_deref(),
                _ => None,
            })
            .collect()
    }

    /// The bench's empty library (`c/empty_ompd.c`), saying in its version string whether
    /// `ompd_initialize` ran in this instance, and running `on_initialize` there too.
    fn used_once(on_initialize: &str) -> String {
        format!(
            "static int initialized;\n\
             #define VERSION_STRING (initialized ? \"initialized\" : \"never initialized\")\n\
             #define ON_INITIALIZE initialized = 1; {on_initialize}\n{}",
            include_str!("../../c/empty_ompd.c")
        )
    }

    /// Set in the process that runs [`in_a_process_of_its_own`]'s body.
    const ALONE: &str = "OMPD_BATCH_TEST_ALONE";

    /// The test binary run again for this test alone: the batch's probes read the whole process,
    /// and the other tests of the binary start threads and open descriptors around them.
    #[test]
    fn in_a_process_of_its_own() {
        if std::env::var_os(ALONE).is_some() {
            return each_unit_of_a_batch_gets_a_fresh_instance_and_a_process_change_ends_the_batch(
            );
        }
        let name = "worker::batch::tests::in_a_process_of_its_own";
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([name, "--exact", "--test-threads=1", "--nocapture"])
            .env(ALONE, "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{text}");
        assert!(text.contains("1 passed"), "the test ran: {text}");
    }

    /// One body, so that the library that changes the process runs after the other. Linked
    /// `-z nodelete`, each library stays loaded after its unit, as Debian's LLVM builds do.
    fn each_unit_of_a_batch_gets_a_fresh_instance_and_a_process_change_ends_the_batch() {
        let events = batch_of_three("libompd_used_once.so", &used_once(""));
        assert_eq!(
            loaded_versions(&events),
            ["never initialized"; 3],
            "{events:?}"
        );
        let done = events.iter().filter(|e| **e == Event::Done).count();
        assert_eq!(done, 3, "one Done per unit");

        // A SIGUSR2 handler installed at initialization: a change of the process.
        let changing = format!(
            "#include <signal.h>\nstatic void on_usr2(int sig) {{ (void)sig; }}\n{}",
            used_once("signal(SIGUSR2, on_usr2);")
        );
        let events = batch_of_three("libompd_changes_signals.so", &changing);
        assert_eq!(
            loaded_versions(&events),
            ["never initialized"],
            "{events:?}"
        );
        assert_eq!(events.last(), Some(&Event::Done), "the unit ran to its end");
    }
}
