//! Rendering the bench's figures: the scaling plot (SVG, one panel per probe, one line per
//! library, both axes logarithmic), the scaling table and the per-entry-point traffic table
//! (Markdown). Where a library's own work grows with the target (its target-access callbacks
//! exceed those at the smallest size), the plot marks the point with a triangle and the table
//! its cell with `↑`: the simulated target answers in constant time, so that growth is the
//! library's.

use super::scaling::{Point, SIZES};
use super::traffic::Spread;
use super::Figures;
use crate::timing::Probe;
use plotters::prelude::*;

/// Each library's figures, by name.
pub type Measured = [(String, Figures)];

/// The title and x-axis label of a probe's panel.
fn describe(probe: Probe) -> (&'static str, &'static str) {
    match probe {
        Probe::Threads => ("thread handle by id", "threads in the team"),
        Probe::Nesting => ("enclosing-parallel walk", "nesting depth"),
        Probe::Tasks => ("current task, generator, region", "tasks in the chain"),
    }
}

/// True when `f`'s callbacks for `probe` at `size` exceed those at the probe's smallest
/// measured size: the library does more work for a larger target.
fn grows(f: &Figures, probe: Probe, size: usize) -> bool {
    let callbacks = |p: &Point| p.callbacks.filter(|_| p.probe == probe);
    let first = f.scaling.iter().find_map(callbacks);
    let here = f
        .scaling
        .iter()
        .filter(|p| p.size == size)
        .find_map(callbacks);
    matches!((first, here), (Some(a), Some(b)) if b > a)
}

/// The scaling plot as an SVG document.
pub fn scaling_svg(libs: &Measured) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1500, 460)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let panels = root.split_evenly((1, SIZES.len()));
        for ((probe, sizes), area) in SIZES.iter().zip(&panels) {
            panel(area, *probe, sizes, libs).map_err(|e| e.to_string())?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

fn panel<'a>(
    area: &Area<'a>,
    probe: Probe,
    sizes: &[usize],
    libs: &Measured,
) -> Result<(), Box<dyn std::error::Error + 'a>> {
    let points = |f: &Figures| -> Vec<(f64, f64)> {
        f.scaling
            .iter()
            .filter(|p| p.probe == probe)
            .filter_map(|p| Some((p.size as f64, p.us?)))
            .collect()
    };
    let ys: Vec<f64> = libs
        .iter()
        .flat_map(|(_, f)| points(f))
        .map(|p| p.1)
        .collect();
    let top = ys.iter().cloned().fold(1.0, f64::max) * 2.0;
    let bottom = ys.iter().cloned().fold(top, f64::min).max(1e-3) / 2.0;
    let right = *sizes.last().unwrap_or(&1) as f64 * 1.5;
    let (title, x_desc) = describe(probe);
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("{title} (▲: the library's callbacks grow)"),
            ("sans-serif", 16),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((0.8f64..right).log_scale(), (bottom..top).log_scale())?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("µs per query set (median)")
        .draw()?;
    for (i, (name, f)) in libs.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let line = points(f);
        chart
            .draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
        let growing: Vec<(f64, f64)> = line
            .iter()
            .copied()
            .filter(|&(size, _)| grows(f, probe, size as usize))
            .collect();
        chart.draw_series(line.into_iter().map(|p| Circle::new(p, 3, color.filled())))?;
        chart.draw_series(
            growing
                .into_iter()
                .map(|p| TriangleMarker::new(p, 7, color.filled())),
        )?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    Ok(())
}

/// The scaling table: one row per library and probe, the median microseconds (and callbacks)
/// at each size.
pub fn scaling_table(libs: &Measured) -> String {
    let mut out = String::new();
    for (probe, sizes) in SIZES {
        let (title, x_desc) = describe(probe);
        out.push_str(&format!(
            "\n{title} (µs per query set, callbacks; by {x_desc}; ↑: the library's callbacks \
             grow)\n\n"
        ));
        out.push_str("| library |");
        for n in sizes {
            out.push_str(&format!(" {n} |"));
        }
        out.push_str("\n|---|");
        out.push_str(&"---:|".repeat(sizes.len()));
        out.push('\n');
        for (name, f) in libs {
            out.push_str(&format!("| {name} |"));
            for n in sizes {
                let p = f.scaling.iter().find(|p| p.probe == probe && p.size == *n);
                let mark = if grows(f, probe, *n) { " ↑" } else { "" };
                out.push_str(&format!(" {}{mark} |", cell(p)));
            }
            out.push('\n');
        }
    }
    out
}

fn cell(p: Option<&Point>) -> String {
    match p {
        Some(Point {
            us: Some(us),
            callbacks,
            ..
        }) => format!(
            "{us:.1} ({})",
            callbacks.map_or("?".into(), |c| c.to_string())
        ),
        Some(Point { error: Some(e), .. }) => format!("— ({})", e.replace('|', "/")),
        _ => "—".into(),
    }
}

/// The traffic table: per library and entry point, calls measured and min/median/max of the
/// lookups, reads, bytes read and conversions of one call.
pub fn traffic_table(libs: &Measured) -> String {
    let mut out = String::from(
        "| library | entry point | calls | lookups | reads | bytes read | conversions |\n\
         |---|---|---:|---:|---:|---:|---:|\n",
    );
    let s = |x: &Spread| format!("{}/{}/{}", x.min, x.median, x.max);
    for (name, f) in libs {
        for t in &f.traffic {
            out.push_str(&format!(
                "| {name} | {} | {} | {} | {} | {} | {} |\n",
                t.entry_point,
                t.calls,
                s(&t.lookups),
                s(&t.reads),
                s(&t.bytes),
                s(&t.conversions)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(callbacks: &[(usize, u64)]) -> Figures {
        let scaling = callbacks
            .iter()
            .map(|&(size, c)| Point {
                probe: Probe::Nesting,
                size,
                us: Some(c as f64 / 10.0),
                callbacks: Some(c),
                error: None,
            })
            .collect();
        Figures {
            jobs: 2,
            exec_instances_per_s: 0.0,
            fork_instances_per_s: 0.0,
            floor_instances_per_s: 0.0,
            checks: 0,
            reps: 0,
            isolated_checks_per_s: 0.0,
            in_process_checks_per_s: 0.0,
            traffic: Vec::new(),
            scaling,
        }
    }

    #[test]
    fn a_point_where_the_library_makes_more_callbacks_is_marked() {
        let libs = [
            ("walks".to_string(), figures(&[(1, 50), (2, 54), (4, 62)])),
            ("flat".to_string(), figures(&[(1, 40), (2, 40), (4, 40)])),
        ];
        assert!(!grows(&libs[0].1, Probe::Nesting, 1));
        assert!(grows(&libs[0].1, Probe::Nesting, 2));
        assert!(!grows(&libs[1].1, Probe::Nesting, 4));
        assert!(
            !grows(&libs[0].1, Probe::Threads, 2),
            "another probe's points"
        );
        let table = scaling_table(&libs);
        assert!(
            table.contains("| walks | 5.0 (50) | 5.4 (54) ↑ |"),
            "{table}"
        );
        assert!(!table.contains("(40) ↑"), "{table}");
        let svg = scaling_svg(&libs).unwrap();
        assert!(svg.contains("callbacks grow"));
    }
}
