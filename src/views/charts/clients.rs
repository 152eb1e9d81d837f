//! The clients chart: what each client of a network backup delivered over time, stacked.

use super::*;

/// The network run whose clients the contribution chart shows: the fastest finished one.
pub fn clients_run<'r, 'a>(runs: &'r [RunView<'a>]) -> Option<&'r RunView<'a>> {
    runs.iter()
        .filter(|run| {
            run.result
                .is_some_and(|result| result.clients.as_ref().is_some_and(|c| !c.is_empty()))
        })
        .max_by(|a, b| {
            let rate = |run: &RunView<'_>| run.result.map_or(0.0, |r| r.mb_per_s);
            rate(a).total_cmp(&rate(b))
        })
}

/// A network run's throughput over time, stacked by client: each band is what one client
/// delivered, and the top edge is the run's total at that moment.
pub fn clients_chart(runs: &[RunView<'_>], width: Width) -> Result<String, ChartError> {
    let run = clients_run(runs);
    let clients = run
        .and_then(|run| run.result)
        .and_then(|result| result.clients.clone())
        .unwrap_or_default();
    svg("clients", width, 340, |root| {
        let Some(run) = run.filter(|_| clients.iter().any(|c| !c.samples.is_empty())) else {
            empty_note(
                root,
                width,
                "No per-client samples: the network run was shorter than a sample (250 ms).",
            )?;
            return Ok(());
        };
        let (plot, legend) = root.split_horizontally(width.px() - LEGEND_WIDTH);
        let steps = clients.iter().map(|c| c.samples.len()).max().unwrap_or(0);
        // Cumulative tops, client by client, at each sample instant.
        let mut below = vec![0.0f64; steps];
        let mut bands = Vec::new();
        for client in &clients {
            let mut band = Vec::with_capacity(steps);
            for (index, base) in below.iter_mut().enumerate() {
                let sample = client.samples.get(index);
                let t = sample.map_or(0.0, |s| s.t);
                let top = *base + sample.map_or(0.0, |s| s.mb_per_s);
                band.push((t, *base, top));
                *base = top;
            }
            bands.push(band);
        }
        let t_max = bands
            .iter()
            .flat_map(|band| band.iter().map(|p| p.0))
            .fold(0.25f64, f64::max);
        let y_max = below.iter().copied().fold(0.0f64, f64::max);
        let caption = format!(
            "run #{}: {}, stacked",
            run.number,
            crate::analysis::counted(clients.len() as u64, "client", "clients")
        );
        let mut chart = time_axes(&plot, width, caption, t_max, y_max)?;
        for (index, band) in bands.iter().enumerate() {
            let color = Palette99::pick(index).to_rgba();
            let mut outline: Vec<(f64, f64)> = band.iter().map(|&(t, _, top)| (t, top)).collect();
            outline.extend(band.iter().rev().map(|&(t, base, _)| (t, base)));
            chart.draw_series(std::iter::once(Polygon::new(
                outline,
                color.mix(0.55).filled(),
            )))?;
            chart.draw_series(LineSeries::new(
                band.iter().map(|&(t, _, top)| (t, top)),
                color.stroke_width(1),
            ))?;
        }
        for (index, client) in clients.iter().enumerate() {
            let color = Palette99::pick(index).to_rgba();
            let y = 40 + 16 * index as i32;
            legend.draw(&Rectangle::new(
                [(6, y - 5), (20, y + 5)],
                color.mix(0.55).filled(),
            ))?;
            let failed = if client.status == crate::engine::result::ClientStatus::Failed {
                " ✖"
            } else {
                ""
            };
            legend.draw(&Text::new(
                format!("{}{failed}", client.name),
                (26, y - 6),
                (FONT, width.font(12)).into_font().color(&INK),
            ))?;
        }
        Ok(())
    })
}
