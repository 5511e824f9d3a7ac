//! The speed targets `cargo xtask bench` judges (issue 33's), each figure beside the floor
//! measured in the same run: the rate at which the harness starts instances of an OMPD library
//! that does nothing. The targets are this machine's; its speed drifts within a day, and the floor
//! shows by how much.

/// One library's figures that a target judges.
#[derive(Clone, Debug)]
pub struct Figures {
    /// The library.
    pub name: String,
    /// Fresh instances a second through the fork server.
    pub fork: f64,
    /// The floor: fresh instances a second of the empty library, the same way.
    pub floor: f64,
    /// The property phase's wall seconds.
    pub property: f64,
}

/// The slowest library's fork-server rate must be at least this (instances a second).
pub const FORK_RATE: f64 = 2000.0;
/// Every library's property phase must take at most this (wall seconds).
pub const PROPERTY_SECS: f64 = 3.0;
/// The whole default run must take at most this (wall seconds).
pub const WHOLE_SECS: f64 = 120.0;

/// A target's row: what was measured, the target, whether it is met, and the floor beside it.
struct Row {
    figure: &'static str,
    measured: String,
    target: String,
    met: bool,
    floor: String,
}

/// The targets table (Markdown) of the libraries' `figures` and the whole run's `whole` seconds.
pub fn table(figures: &[Figures], whole: f64) -> String {
    let rows: Vec<Row> = [
        fork_row(figures),
        property_row(figures),
        Some(whole_row(figures, whole)),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut md = String::from(
        "| figure | measured | target | met | the floor in the same run |\n|---|---|---|---|---|\n",
    );
    for r in rows {
        let met = if r.met { "yes" } else { "no" };
        md.push_str(&format!(
            "| {} | {} | {} | {met} | {} |\n",
            r.figure, r.measured, r.target, r.floor
        ));
    }
    md
}

/// The slowest library's fork-server rate, and its share of that library's floor.
fn fork_row(figures: &[Figures]) -> Option<Row> {
    let slowest = figures.iter().min_by(|a, b| a.fork.total_cmp(&b.fork))?;
    Some(Row {
        figure: "fresh instances a second through the fork server, slowest library",
        measured: format!("{:.0} ({})", slowest.fork, slowest.name),
        target: format!("{FORK_RATE:.0} or more"),
        met: slowest.fork >= FORK_RATE,
        floor: format!(
            "{:.0} a second: the library's rate is {:.2} of it",
            slowest.floor,
            slowest.fork / slowest.floor
        ),
    })
}

/// The slowest library's property phase, how many libraries meet the target, and its time
/// counted in the floor's instances (how many of them start in as long).
fn property_row(figures: &[Figures]) -> Option<Row> {
    let slowest = figures
        .iter()
        .max_by(|a, b| a.property.total_cmp(&b.property))?;
    let within = figures
        .iter()
        .filter(|f| f.property <= PROPERTY_SECS)
        .count();
    let instances = slowest.property * slowest.floor;
    Some(Row {
        figure: "property phase, slowest library",
        measured: format!(
            "{:.1} s ({}; {within} of {} libraries within the target)",
            slowest.property,
            slowest.name,
            figures.len()
        ),
        target: format!("{PROPERTY_SECS:.0} s or less"),
        met: within == figures.len(),
        floor: format!(
            "{:.0} a second: the phase lasts as long as {instances:.0} of its instances",
            slowest.floor
        ),
    })
}

/// The whole default run, with the range of the floors measured (how fast the machine was).
fn whole_row(figures: &[Figures], whole: f64) -> Row {
    let floors = figures.iter().map(|f| f.floor);
    let low = floors.clone().fold(f64::INFINITY, f64::min);
    let high = floors.fold(0.0, f64::max);
    Row {
        figure: "whole default run, gate included",
        measured: format!("{whole:.1} s"),
        target: format!("{WHOLE_SECS:.0} s or less"),
        met: whole <= WHOLE_SECS,
        floor: if figures.is_empty() {
            "no library measured".into()
        } else {
            format!("{low:.0} to {high:.0} a second")
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lib(name: &str, fork: f64, floor: f64, property: f64) -> Figures {
        Figures {
            name: name.into(),
            fork,
            floor,
            property,
        }
    }

    #[test]
    fn each_target_is_judged_on_its_worst_library_beside_the_floor() {
        let figs = [lib("a", 3000.0, 6000.0, 2.5), lib("b", 1900.0, 5000.0, 3.5)];
        let md = table(&figs, 100.0);
        let rows: Vec<&str> = md.lines().skip(2).collect();
        assert_eq!(rows.len(), 3, "{md}");
        assert!(rows[0].contains("| 1900 (b) |") && rows[0].contains("| no |"));
        assert!(rows[0].contains("0.38 of it"), "{}", rows[0]);
        assert!(
            rows[1].contains("3.5 s (b; 1 of 2 libraries"),
            "{}",
            rows[1]
        );
        assert!(rows[1].contains("| no |") && rows[1].contains("as long as 17500 of its"));
        assert!(rows[2].contains("| 100.0 s |") && rows[2].contains("| yes |"));
        assert!(rows[2].contains("5000 to 6000 a second"), "{}", rows[2]);
        let met = table(&[lib("a", 2500.0, 6000.0, 2.0)], 90.0);
        assert_eq!(met.matches("| yes |").count(), 3, "{met}");
    }

    #[test]
    fn no_library_leaves_only_the_whole_run() {
        let md = table(&[], 100.0);
        assert_eq!(md.lines().count(), 3, "{md}");
        assert!(md.contains("no library measured"));
    }
}
