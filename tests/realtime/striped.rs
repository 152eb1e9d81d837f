//! The emulated striped volume in real time, through `backlab run`: the seed's statements about
//! transfer size, stripe units and controllers, measured as runs of 1.5 s (the volume's pace is
//! the model's from its first request; no ramp to wait out).

use serde_json::{Value, json};

use crate::support::{Turn, scratch};

/// The target write's MB/s and the volume's own figures for one block size on one volume.
fn write(turn: &Turn, target: Value, block_size: &str) -> (f64, Value) {
    let dir = scratch();
    let path = dir.path().join("spec.json");
    let spec = json!({
        "source": {"generated": {"size": "2G"}},
        "target": target,
        "tests": ["tape_write"],
        "params": {"block_size": block_size, "streams": 1, "buffers": 8, "duration_s": 1.5}
    });
    std::fs::write(&path, spec.to_string()).expect("write spec");
    let report: Value = crate::support::run(turn, &path, &[]);
    let run = report["runs"]
        .as_array()
        .and_then(|runs| runs.first())
        .cloned()
        .unwrap_or_else(|| panic!("no run in {report}"));
    assert_eq!(run["status"], "done", "{run}");
    let rate = run["mb_per_s"].as_f64().expect("rate");
    (rate, run["striped"].clone())
}

fn within(value: f64, expected: f64, pct: f64) -> bool {
    (value - expected).abs() <= expected * pct / 100.0
}

#[test]
fn ten_disks_of_64k_need_640k_transfers_and_320k_halves_the_rate() {
    let turn = Turn::shared();
    let volume = json!({"kind": "striped", "disks": 10, "disk_mb_s": 5, "stripe_unit": "64K",
                        "controllers": 10});
    let (full, figures) = write(&turn, volume.clone(), "640K");
    assert_eq!(figures["disks_per_request"], 10.0, "{figures}");
    assert_eq!(figures["emulated"], true);
    let (half, figures) = write(&turn, volume, "320K");
    assert_eq!(figures["disks_per_request"], 5.0, "{figures}");
    // One-track units write at half the 50 MB/s the ten disks read: 25 MB/s.
    assert!(within(full, 25.0, 5.0), "640K: {full} MB/s");
    assert!(within(half / full, 0.5, 5.0), "320K: {half} of {full} MB/s");
}

#[test]
fn k_track_stripe_units_write_at_k_over_k_plus_one_of_the_read_rate() {
    let turn = Turn::shared();
    // Table 2-1: four disks with 100 KB tracks, requests of one stripe width.
    for (tracks, expected) in [(1u64, 1.0 / 2.0), (2, 2.0 / 3.0), (4, 4.0 / 5.0)] {
        let unit = 100 * tracks;
        let volume = json!({"kind": "striped", "disks": 4, "disk_mb_s": 5, "track": "100K",
                            "stripe_unit": format!("{unit}K"), "controllers": 4});
        let (written, figures) = write(&turn, volume, &format!("{}K", 4 * unit));
        let read = figures["read_mb_s"].as_f64().expect("read rate");
        assert!(within(read, 20.0, 1.0), "{tracks} tracks: reads at {read}");
        assert!(
            within(written / read, expected, 5.0),
            "{tracks} tracks: writes {written} of {read} MB/s, not {expected:.3}"
        );
    }
}

#[test]
fn four_five_mb_disks_fill_one_twenty_mb_controller() {
    let turn = Turn::shared();
    // Reads do not pay the rotational delay; a write without it shows the controller alone.
    let volume = |disks: u32, controllers: u32| {
        json!({"kind": "striped", "disks": disks, "disk_mb_s": 5, "stripe_unit": "64K",
               "controllers": controllers, "controller_mb_s": 20, "rotational_delay_ms": 0})
    };
    let (four, _) = write(&turn, volume(4, 1), "256K");
    let (five, figures) = write(&turn, volume(5, 1), "320K");
    let (five_on_two, _) = write(&turn, volume(5, 2), "320K");
    assert!(within(four, 20.0, 5.0), "four disks: {four} MB/s");
    assert!(
        within(five, 20.0, 5.0),
        "a fifth disk on the controller: {five} MB/s"
    );
    assert_eq!(figures["controller_bound_pct"], 100.0, "{figures}");
    assert!(
        within(five_on_two, 25.0, 5.0),
        "two controllers: {five_on_two} MB/s"
    );
}
