//! Every chart renders for an empty, a one-run and a 500-run campaign, and is well-formed SVG.

use backlab::analysis;
use backlab::engine::result::{
    CpuFigures, LatencyFigures, RunResult, RunStatus, Sample, StageFigures,
};
use backlab::lab::{run_entries, run_views};
use backlab::matrix;
use backlab::spec::{RunParams, TestKind};
use backlab::store::{RunRecord, RunState};
use backlab::views::charts::{self, Width};

use crate::support::fixtures::run_params;

fn run(position: usize, test: TestKind, buffers: u32, block: u64, streams: u32) -> RunRecord {
    let params = RunParams {
        buffers,
        block_size: block,
        streams,
        cold_cache: true,
        duration_s: Some(10.0),
        ..run_params()
    };
    let mb_per_s = 100.0 + (position % 37) as f64 * 3.5 + streams as f64 * 10.0;
    RunRecord {
        id: position as i64 + 1,
        position: position as i64,
        number: position as i64 + 1,
        test,
        params: params.clone(),
        status: RunState::Done,
        attempts: 1,
        started_ms: Some(0),
        finished_ms: Some(10_000),
        host: None,
        samples: Vec::new(),
        result: Some(RunResult {
            test,
            params,
            status: RunStatus::Done,
            bytes: (mb_per_s * 10e6) as u64,
            files: 10,
            seconds: 10.0,
            mb_per_s,
            cpu: CpuFigures {
                process_pct: 12.0,
                system_pct: 20.0,
            },
            stages: StageFigures {
                reader_busy_pct: 60.0,
                reader_wait_pct: 30.0,
                reader_waits: 100,
                writer_busy_pct: 80.0,
                writer_wait_pct: 15.0,
                writer_waits: 40,
            },
            latency_us: Some(LatencyFigures {
                p50: 100,
                p99: 900,
                max: 4000,
            }),
            latency_of: Some("sink_write".into()),
            cache_resident_pct: Some(0.0),
            samples: (1..=40)
                .map(|i| Sample {
                    t: i as f64 * 0.25,
                    mb_per_s: mb_per_s + (i % 5) as f64,
                })
                .collect(),
            warnings: Vec::new(),
            error: None,
            tape: None,
            striped: None,
            s3: None,
            dedup: None,
            restore: None,
            tool: None,
            clients: None,
            partial: false,
            steady: None,
            validity: None,
            lock: None,
            data_compress_ratio: None,
            generated_dedup: None,
        }),
    }
}

/// 500 runs: five tests × buffers 8/16/32/64/128 × block sizes × streams 1–4 × repeats.
fn many_runs() -> Vec<RunRecord> {
    let mut runs = Vec::new();
    'outer: for repeat in 0..10 {
        for test in TestKind::ALL {
            for buffers in [8, 16] {
                for block in [64 << 10, 256 << 10] {
                    for streams in [1, 2, 4, 8, 16] {
                        if runs.len() == 500 {
                            break 'outer;
                        }
                        let _ = repeat;
                        runs.push(run(runs.len(), test, buffers, block, streams));
                    }
                }
            }
        }
    }
    assert_eq!(runs.len(), 500);
    runs
}

/// Every chart of `runs`, wide and narrow (`NAME.narrow`).
fn all_charts(runs: &[RunRecord]) -> Vec<(String, String)> {
    let mut charts = charts_at(runs, Width::Wide);
    charts.extend(
        charts_at(runs, Width::Narrow)
            .into_iter()
            .map(|(name, svg)| (format!("{name}.narrow"), svg)),
    );
    charts
}

fn charts_at(runs: &[RunRecord], width: Width) -> Vec<(String, String)> {
    let entries = run_entries(runs);
    let points = analysis::points::points(&entries);
    let verdict = analysis::judge(&points, &entries, None);
    let compare_rows: Vec<(String, Option<f64>, Option<f64>)> = points
        .iter()
        .map(|p| {
            (
                p.combination(),
                Some(matrix::mb(p)),
                p.figure.as_ref().map(|f| f.max),
            )
        })
        .collect();
    vec![
        (
            "tests".into(),
            charts::tests_chart(&verdict, &points, width).expect("tests chart"),
        ),
        (
            "throughput".into(),
            charts::throughput_chart(&run_views(runs), width).expect("throughput chart"),
        ),
        (
            "stages".into(),
            charts::stages_chart(&run_views(runs), &points, width).expect("stages chart"),
        ),
        (
            "matrix".into(),
            charts::matrix_chart(&points, matrix::headline_test(&points), width)
                .expect("matrix chart"),
        ),
        (
            "compare".into(),
            charts::compare_chart(&compare_rows, width).expect("compare chart"),
        ),
        (
            "heatmap".into(),
            charts::heatmap_chart(&points, matrix::headline_test(&points), &[], width)
                .expect("heatmap chart"),
        ),
    ]
}

fn check_svg<'a>(name: &str, svg: &'a str) -> roxmltree::Document<'a> {
    let doc =
        roxmltree::Document::parse(svg).unwrap_or_else(|error| panic!("{name}: not XML ({error})"));
    assert_eq!(doc.root_element().tag_name().name(), "svg", "{name}");
    doc
}

#[test]
fn charts_of_an_empty_campaign_say_so() {
    for (name, svg) in all_charts(&[]) {
        let doc = check_svg(&name, &svg);
        let text: String = doc.descendants().filter_map(|n| n.text()).collect();
        assert!(
            !text.trim().is_empty(),
            "{name}: an empty chart explains itself"
        );
    }
}

#[test]
fn charts_of_one_run_draw_it() {
    let runs = vec![run(0, TestKind::FullBackup, 32, 256 << 10, 4)];
    for (name, svg) in all_charts(&runs) {
        let doc = check_svg(&name, &svg);
        let shapes = doc
            .descendants()
            .filter(|n| matches!(n.tag_name().name(), "rect" | "polyline" | "circle" | "path"))
            .count();
        assert!(shapes > 1, "{name}: draws something");
    }
}

#[test]
fn charts_of_500_runs_render_and_mark_the_sweep() {
    let runs = many_runs();
    let charts = all_charts(&runs);
    for (name, svg) in &charts {
        check_svg(name, svg);
    }
    let (_, matrix_svg) = charts
        .iter()
        .find(|(name, _)| name == "matrix")
        .expect("matrix");
    let doc = check_svg("matrix", matrix_svg);
    let lines = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "polyline")
        .count();
    assert!(
        lines >= 4,
        "one line per buffers × block combination: {lines}"
    );
    let text: String = doc
        .descendants()
        .filter_map(|n| n.text())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        text.contains("16 × 256 KiB"),
        "legend names the combinations: {text}"
    );
    let points = analysis::points::points(&run_entries(&runs));
    assert!(matrix::is_sweep(&points));
    // A probe's answer is no point: it has none.
    for test in TestKind::ALL {
        assert_eq!(
            points.iter().filter(|p| p.test == test && p.best).count(),
            usize::from(test.measures_rate()),
            "one best point per test that measures a rate"
        );
    }
}

/// A sweep of block size alone (seed 001's transfer-size curve) runs along block size, on a
/// log scale with the sizes as ticks, one line for the one setting of the rest.
#[test]
fn a_block_size_sweep_is_drawn_by_block_size() {
    let runs: Vec<RunRecord> = [64u64, 128, 256, 320, 512, 640, 1280]
        .iter()
        .enumerate()
        .map(|(index, kib)| run(index, TestKind::TapeWrite, 8, kib << 10, 1))
        .collect();
    let points = analysis::points::points(&run_entries(&runs));
    assert!(matrix::is_sweep(&points));
    let svg = charts::matrix_chart(&points, Some(TestKind::TapeWrite), Width::Wide)
        .expect("matrix chart");
    let doc = check_svg("matrix", &svg);
    let text: Vec<&str> = doc
        .descendants()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .map(str::trim)
        .collect();
    let all = text.join(" | ");
    assert!(all.contains("by block size"), "{all}");
    for tick in ["64 KiB", "256 KiB", "1 MiB"] {
        assert!(text.contains(&tick), "tick {tick}: {all}");
    }
    assert_eq!(
        text.iter().filter(|t| t.ends_with(" stream")).count(),
        1,
        "one line in the legend, for the one setting besides block size: {all}"
    );
    assert!(all.contains("8 buffers, 1 stream"), "{all}");
}

/// The sweep's heat map: a panel per stream count, a cell per buffers × block size with its
/// median written in it, the fastest cell outlined in red when (and only when) it beats the
/// runner-up by more than noise.
#[test]
fn the_heat_map_has_a_panel_per_stream_count_and_outlines_the_best_cell() {
    let runs = many_runs();
    let points = analysis::points::points(&run_entries(&runs));
    let test = matrix::headline_test(&points);
    let svg = charts::heatmap_chart(&points, test, &[], Width::Wide).expect("heat map");
    let doc = check_svg("heatmap", &svg);
    let texts: Vec<&str> = doc
        .descendants()
        .filter_map(|n| n.text())
        .map(str::trim)
        .collect();
    for panel in [
        "1 stream",
        "2 streams",
        "4 streams",
        "8 streams",
        "16 streams",
    ] {
        assert!(texts.contains(&panel), "panel {panel}: {texts:?}");
    }
    assert!(texts.contains(&"64 KiB") && texts.contains(&"256 KiB"));
    assert!(texts.contains(&"8 buf") && texts.contains(&"16 buf"));
    let outlined = |svg: &str| {
        check_svg("heatmap", svg)
            .descendants()
            .filter(|n| n.tag_name().name() == "rect")
            .filter(|n| {
                n.attribute("stroke")
                    .is_some_and(|s| s.eq_ignore_ascii_case("#C0392B"))
            })
            .count()
    };
    let stands_out = points
        .iter()
        .any(|p| Some(p.test) == test && p.best && p.stands_out);
    assert_eq!(
        outlined(&svg),
        usize::from(stands_out),
        "outlined only beyond noise"
    );
    // Within noise: nothing outlined; beyond it, the best cell alone.
    let with = |beyond: bool| {
        let mut points = points.clone();
        for point in &mut points {
            point.stands_out = beyond && point.best;
        }
        charts::heatmap_chart(&points, test, &[], Width::Wide).expect("heat map")
    };
    assert_eq!(outlined(&with(false)), 0, "no cell outlined within noise");
    assert_eq!(outlined(&with(true)), 1, "exactly one best cell");
    let best = points
        .iter()
        .filter(|p| Some(p.test) == test)
        .max_by(|a, b| matrix::mb(a).total_cmp(&matrix::mb(b)))
        .expect("a best point");
    let figure = format!("{:.1}", matrix::mb(best));
    assert!(
        texts
            .iter()
            .any(|t| *t == figure || t.starts_with(&format!("{figure} "))),
        "the best cell shows {figure}: {texts:?}"
    );
}

/// A sweep of an object store's uploads: the heat map's rows are parts in flight and its
/// columns part sizes, one cell per pair (not every pair piled into one buffers × block cell),
/// and the tuning chart runs along the part size with a line per parts in flight.
#[test]
fn an_upload_sweep_maps_parts_in_flight_by_part_size() {
    let mut runs = Vec::new();
    for repeat in 0..2 {
        for (part_size, concurrency) in [
            (8u64 << 20, 4u32),
            (8 << 20, 16),
            (32 << 20, 4),
            (32 << 20, 16),
        ] {
            let mut record = run(runs.len(), TestKind::FullBackup, 32, 256 << 10, 4);
            let figure =
                (part_size >> 20) as f64 * 10.0 + f64::from(concurrency) + 2.0 * f64::from(repeat);
            record.params.part_size = Some(part_size);
            record.params.concurrency = Some(concurrency);
            if let Some(result) = record.result.as_mut() {
                result.params = record.params.clone();
                result.mb_per_s = figure;
                result.bytes = (figure * 10e6) as u64;
            }
            runs.push(record);
        }
    }
    let points = analysis::points::points(&run_entries(&runs));
    assert_eq!(points.len(), 4, "a point per pair");
    let test = matrix::headline_test(&points);
    let svg = charts::heatmap_chart(&points, test, &[], Width::Wide).expect("heat map");
    let doc = check_svg("heatmap", &svg);
    let texts: Vec<&str> = doc
        .descendants()
        .filter_map(|n| n.text())
        .map(str::trim)
        .collect();
    assert!(
        texts
            .iter()
            .any(|t| t.contains("rows are parts in flight, columns part sizes")),
        "{texts:?}"
    );
    for label in ["8 MiB", "32 MiB", "4 fly", "16 fly", "4 streams"] {
        assert!(texts.contains(&label), "{label}: {texts:?}");
    }
    // Each pair's median in a cell of its own: 85, 97, 325 and 337 MB/s, to one decimal.
    for figure in ["85.0", "97.0", "325.0", "337.0"] {
        assert!(texts.contains(&figure), "cell {figure}: {texts:?}");
    }

    let svg = charts::matrix_chart(&points, test, Width::Wide).expect("tuning chart");
    let doc = check_svg("matrix", &svg);
    let texts: Vec<&str> = doc
        .descendants()
        .filter_map(|n| n.text())
        .map(str::trim)
        .collect();
    assert!(
        texts.iter().any(|t| t.contains("by part size")),
        "{texts:?}"
    );
    for line in ["4 in flight, 4 streams", "16 in flight, 4 streams"] {
        assert!(texts.contains(&line), "{line}: {texts:?}");
    }
}

/// The throughput chart gives each run a panel of its own, titled with its figure, its steady
/// window shaded; a run cut by a cancel says so in its title.
#[test]
fn throughput_panels_shade_the_steady_window_and_name_cut_runs() {
    let mut steady = run(0, TestKind::FullBackup, 32, 256 << 10, 4);
    if let Some(result) = steady.result.as_mut() {
        result.steady = Some(backlab::engine::steady::SteadyFigures {
            mb_per_s: 402.0,
            from_s: 2.0,
            to_s: 10.0,
            cv_pct: Some(1.0),
            steady: true,
            flush_s: 0.0,
        });
    }
    let mut cut = run(1, TestKind::ReadParallel, 32, 256 << 10, 4);
    cut.status = RunState::Cancelled;
    let svg =
        charts::throughput_chart(&run_views(&[steady, cut]), Width::Wide).expect("throughput");
    let doc = check_svg("throughput", &svg);
    let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).collect();
    assert!(
        texts
            .iter()
            .any(|t| t.contains("#1 Full backup, parallel · 402.0 MB/s steady")),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.contains("#2 Read, parallel · cancelled, not a result")),
        "{texts:?}"
    );
    let shaded = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "rect")
        .filter(|n| {
            n.attribute("fill")
                .is_some_and(|f| f.eq_ignore_ascii_case("#3C8A45"))
        })
        .count();
    assert_eq!(shaded, 1, "one steady window");
}

/// Every chart, for a desk and for a phone, labels in 11 px or larger, and one drawn for a
/// phone is no wider than the card of a 400 px screen, so no label is shown smaller than
/// drawn; the throughput chart gives every run a panel of its own, the backup's first.
#[test]
fn charts_label_in_11_px_or_more_and_draw_every_run() {
    let runs = many_runs();
    for (name, svg) in all_charts(&runs) {
        let doc = check_svg(&name, &svg);
        let width: f64 = doc
            .root_element()
            .attribute("width")
            .and_then(|w| w.parse().ok())
            .expect("a width");
        if name.ends_with(".narrow") {
            assert!(width <= 360.0, "{name}: {width} px");
        }
        for text in doc.descendants().filter(|n| n.tag_name().name() == "text") {
            let size: f64 = text
                .attribute("font-size")
                .and_then(|size| size.trim_end_matches("px").parse().ok())
                .unwrap_or_else(|| panic!("{name}: a text without its size"));
            assert!(
                size >= 11.0,
                "{name}: {:?} in {size} px",
                text.text().unwrap_or_default()
            );
        }
    }
    let mut mixed = vec![run(0, TestKind::TapeWrite, 8, 64 << 10, 1)];
    mixed.extend((1..15).map(|i| run(i, TestKind::ReadParallel, 8, 64 << 10, 1)));
    mixed.push(run(15, TestKind::FullBackup, 8, 64 << 10, 1));
    for width in [Width::Wide, Width::Narrow] {
        let svg = charts::throughput_chart(&run_views(&mixed), width).expect("throughput");
        let doc = check_svg("throughput", &svg);
        // A caption is a text node inside its text element: each title once.
        let mut titles: Vec<&str> = doc
            .descendants()
            .filter(|n| n.tag_name().name() == "text")
            .filter_map(|n| n.text())
            .map(str::trim)
            .filter(|t| t.starts_with('#'))
            .collect();
        titles.dedup();
        assert_eq!(titles.len(), 16, "every run has a panel: {titles:?}");
        assert!(titles[0].starts_with("#16 Full backup"), "{titles:?}");
    }
}

/// The shades of the heat map's cells, by the figure written in each: the share of the way
/// from the pale end of the scale to the deep one.
fn cell_shades(svg: &str) -> Vec<f64> {
    let doc = check_svg("heatmap", svg);
    doc.descendants()
        .filter(|n| n.tag_name().name() == "rect")
        .filter(|n| {
            n.attribute("height")
                .and_then(|h| h.parse::<f64>().ok())
                .is_some_and(|h| h >= 30.0)
        })
        .filter_map(|n| {
            let fill = n.attribute("fill")?.trim_start_matches('#');
            let red = u8::from_str_radix(fill.get(0..2)?, 16).ok()?;
            // The shade runs from rgb(236, 242, 248) to rgb(31, 79, 130).
            (fill.len() == 6 && red <= 236).then(|| (236.0 - f64::from(red)) / 205.0)
        })
        .collect()
}

/// A sweep whose four points lie within 1 % of each other (237.0 to 239.4 MB/s) is drawn in
/// nearly one shade, each cell showing its figure to one decimal as the tables do; a sweep
/// that spreads 30 % still spans the whole scale.
#[test]
fn the_heat_map_shades_noise_alike_and_writes_one_decimal() {
    let sweep = |figures: [f64; 4]| {
        let mut runs = Vec::new();
        for repeat in 0..2 {
            for (index, (buffers, block)) in [
                (8, 64u64 << 10),
                (8, 256 << 10),
                (16, 64 << 10),
                (16, 256 << 10),
            ]
            .into_iter()
            .enumerate()
            {
                let mut record = run(runs.len(), TestKind::FullBackup, buffers, block, 4);
                let _ = repeat;
                if let Some(result) = record.result.as_mut() {
                    result.mb_per_s = figures[index];
                    result.bytes = (figures[index] * 10e6) as u64;
                }
                runs.push(record);
            }
        }
        let points = analysis::points::points(&run_entries(&runs));
        let test = matrix::headline_test(&points);
        charts::heatmap_chart(&points, test, &[], Width::Wide).expect("heat map")
    };
    let close = sweep([237.0, 237.8, 238.6, 239.4]);
    let shades = cell_shades(&close);
    assert_eq!(shades.len(), 4, "{shades:?}");
    let spread = |shades: &[f64]| {
        shades.iter().copied().fold(f64::MIN, f64::max)
            - shades.iter().copied().fold(f64::MAX, f64::min)
    };
    assert!(
        spread(&shades) < 0.2,
        "cells within noise look alike: {shades:?}"
    );
    let texts: Vec<String> = check_svg("heatmap", &close)
        .descendants()
        .filter_map(|n| n.text())
        .map(|t| t.trim().to_string())
        .collect();
    for figure in ["237.0", "237.8", "238.6", "239.4"] {
        assert!(texts.iter().any(|t| t == figure), "{figure}: {texts:?}");
    }
    let apart = cell_shades(&sweep([200.0, 230.0, 260.0, 290.0]));
    assert!(spread(&apart) > 0.95, "{apart:?}");
}

/// A series line of `n` campaigns at about 200 MB/s, the third not valid.
fn series_line(n: usize) -> charts::SeriesLine {
    charts::SeriesLine {
        label: "Full backup, parallel".into(),
        campaigns: n,
        points: (1..=n)
            .map(|number| {
                let mb_per_s = if number > n / 2 { 140.0 } else { 200.0 } + number as f64;
                charts::SeriesMark {
                    number,
                    campaign: format!("c{number}"),
                    mb_per_s,
                    min: mb_per_s - 5.0,
                    max: mb_per_s + 5.0,
                    runs: 3,
                    valid: number != 3,
                }
            })
            .collect(),
        changes: vec![charts::ChangeMark {
            first_number: n / 2 + 1,
            first_campaign: format!("c{}", n / 2 + 1),
            slower: true,
            words: "30 % slower from campaign 6".into(),
        }],
        references: vec![charts::ReferenceMark {
            number: 2,
            campaign: "c2".into(),
            tool: "fio".into(),
            job: "fio-<seq> & \"write\"".into(),
            mb_per_s: 250.0,
            conditions: vec!["bs 1M".into()],
        }],
    }
}

/// The series chart is drawn with plotters like the others: every point a link to its
/// campaign, hollow and classed `invalid` when not valid, higher on the chart when faster;
/// the change a dashed line linked to where it begins; another tool's figure a diamond whose
/// name (whatever it holds) stays text.
#[test]
fn the_series_chart_links_each_point_and_marks_changes_and_references() {
    let line = series_line(10);
    let svg = charts::series_chart(&line).expect("series chart");
    let doc = check_svg("series", &svg);
    assert_eq!(
        doc.root_element().attribute("class"),
        Some("series-chart"),
        "{svg}"
    );
    let links: Vec<roxmltree::Node<'_, '_>> = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "a")
        .collect();
    let href = |n: &roxmltree::Node<'_, '_>| n.attribute("href").unwrap_or_default().to_string();
    for number in 1..=10 {
        assert!(
            links
                .iter()
                .any(|a| href(a) == format!("/campaigns/c{number}")),
            "campaign {number} linked"
        );
    }
    let dots: Vec<roxmltree::Node<'_, '_>> = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "circle" && n.attribute("class").is_some())
        .collect();
    assert_eq!(dots.len(), 10, "a dot per campaign");
    let invalid: Vec<_> = dots
        .iter()
        .filter(|n| n.attribute("class") == Some("invalid"))
        .collect();
    assert_eq!(invalid.len(), 1, "the third is not valid");
    let y = |n: &roxmltree::Node<'_, '_>| {
        n.attribute("cy")
            .and_then(|y| y.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    let x = |n: &roxmltree::Node<'_, '_>| {
        n.attribute("cx")
            .and_then(|x| x.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    // Campaigns left to right; the slower second half lower on the chart.
    assert!(dots.windows(2).all(|pair| x(&pair[0]) < x(&pair[1])));
    assert!(y(&dots[9]) > y(&dots[0]), "140 MB/s below 200 MB/s");
    // The hollow dot plotters drew: white inside, at the invalid point's place.
    let hollow = doc.descendants().any(|n| {
        n.tag_name().name() == "circle"
            && n.attribute("fill") == Some("#FFFFFF")
            && n.attribute("cx").and_then(|v| v.parse::<f64>().ok()) == Some(x(invalid[0]))
    });
    assert!(hollow, "the invalid point drawn hollow: {svg}");
    let change = doc
        .descendants()
        .find(|n| {
            n.attribute("class")
                .is_some_and(|c| c.starts_with("change-mark"))
        })
        .expect("the change on the chart");
    assert_eq!(change.attribute("class"), Some("change-mark slower"));
    assert!(
        x(&dots[4])
            < change
                .attribute("x1")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0.0)
            && change
                .attribute("x1")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0.0)
                < x(&dots[5]),
        "the change between campaigns 5 and 6"
    );
    let reference = doc
        .descendants()
        .find(|n| n.attribute("class") == Some("reference-mark"))
        .expect("the diamond");
    let title: String = reference.descendants().filter_map(|n| n.text()).collect();
    assert!(
        title.contains("fio-<seq> & \"write\"") && title.contains("250.0 MB/s"),
        "{title}"
    );
    // The axes: MB/s up from 0, campaigns 1 to 10 along.
    let text: Vec<&str> = doc
        .descendants()
        .filter_map(|n| n.text())
        .map(str::trim)
        .collect();
    for label in ["MB/s", "0", "200", "1", "10"] {
        assert!(text.contains(&label), "{label} on an axis: {text:?}");
    }
    std::fs::write(
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("series-chart.svg"),
        &svg,
    )
    .expect("the chart kept for a look");
}
