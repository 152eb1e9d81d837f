use super::*;

fn spec(json: &str) -> CampaignSpec {
    match parse_json(json) {
        Ok(spec) => spec,
        Err(errors) => panic!("spec did not parse: {errors}"),
    }
}

#[test]
fn sizes_use_binary_multiples() {
    assert_eq!(parse_size("65536"), Ok(65536));
    assert_eq!(parse_size("64K"), Ok(65536));
    assert_eq!(parse_size("64KiB"), Ok(65536));
    assert_eq!(parse_size("64kb"), Ok(64_000), "KB is decimal");
    assert_eq!(parse_size("1M"), Ok(1 << 20));
    assert_eq!(parse_size("1MiB"), Ok(1 << 20));
    assert_eq!(parse_size("2G"), Ok(2 << 30));
    assert!(parse_size("2X").is_err());
    assert!(parse_size("K").is_err());
    assert!(parse_size("").is_err());
    assert!(parse_size("99999999999T").is_err());
    assert_eq!(format_size(256 << 10), "256K");
    assert_eq!(format_size(1536 << 20), "1536M");
}

#[test]
fn defaults_fill_a_minimal_spec() {
    let spec = spec(r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"}}"#);
    let plans = spec.plan().expect("valid");
    assert_eq!(plans.len(), 5);
    let params = &plans[0].params;
    assert_eq!(params.buffers, 32);
    assert_eq!(params.block_size, 256 << 10);
    assert_eq!(params.streams, 4);
    assert!(params.cold_cache && params.fsync && !params.direct);
    assert_eq!(plans[0].test, TestKind::TapeWrite);
    assert_eq!(plans[4].test, TestKind::FullBackup);
}

#[test]
fn a_client_sweep_repeats_only_the_network_runs() {
    let spec = spec(
        r#"{"source": {"generated": {"size": "1G"}}, "target": {"kind": "null"},
            "tests": ["tape_write", "network_backup"],
            "matrix": {"clients": [6, 7, 8], "buffers": [16, 32]}}"#,
    );
    let plans = spec.plan().expect("valid");
    let network: Vec<&RunPlan> = plans
        .iter()
        .filter(|p| p.test == TestKind::NetworkBackup)
        .collect();
    assert_eq!(network.len(), 6, "3 client counts × 2 buffers");
    assert_eq!(
        plans.len() - network.len(),
        2,
        "tape_write once per buffers value"
    );
    assert!(
        network
            .iter()
            .all(|p| p.params.streams == DEFAULT_CLIENT_STREAMS)
    );
    let clients: Vec<u32> = network.iter().filter_map(|p| p.params.clients).collect();
    assert_eq!(clients, [6, 7, 8, 6, 7, 8]);
    assert!(
        plans
            .iter()
            .filter(|p| p.test == TestKind::TapeWrite)
            .all(|p| p.params.clients.is_none())
    );
}

#[test]
fn network_fields_are_checked_by_name() {
    let errors = spec(
        r#"{"source": {"agents": ["a", "a", "bad name"]}, "target": {"kind": "null"},
            "tests": ["read_single", "network_backup"],
            "params": {"clients": 5, "link_mb_s": -1}}"#,
    )
    .plan()
    .expect_err("invalid");
    for field in [
        "source.agents[1]",
        "source.agents[2]",
        "tests[0]",
        "params.clients",
        "params.link_mb_s",
    ] {
        assert!(errors.0.contains_key(field), "{field} in {errors}");
    }
    let local = spec(
        r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"},
            "params": {"clients": 2}, "matrix": {"clients": [1]}}"#,
    )
    .plan()
    .expect_err("clients without a network test");
    assert!(local.0.contains_key("params.clients") && local.0.contains_key("matrix.clients"));
    let wide = spec(
        r#"{"source": {"generated": {"size": "1G"}}, "target": {"kind": "null"},
            "tests": ["network_backup"], "params": {"clients": 64, "streams": 8}}"#,
    )
    .plan()
    .expect_err("too many connections");
    assert!(wide.to_string().contains("512 connections"), "{wide}");
}

#[test]
fn agents_alone_send_generated_data_of_the_campaign_size() {
    let plans = spec(
        r#"{"source": {"agents": ["x", "y"]}, "target": {"kind": "null"},
            "tests": ["network_backup"], "params": {"size": "3G"}}"#,
    )
    .plan()
    .expect("valid");
    assert_eq!(plans[0].agents, ["x", "y"]);
    assert_eq!(plans[0].params.clients, Some(2), "every agent by default");
    assert!(matches!(
        plans[0].source,
        SourcePlan::Generated { size, .. } if size == 3 << 30
    ));
}

#[test]
fn streams_default_to_one_per_path() {
    let spec = spec(
        r#"{"source": {"paths": ["/a", "/b"]}, "target": {"kind": "null"}, "tests": ["read_parallel"]}"#,
    );
    assert_eq!(spec.plan().expect("valid")[0].params.streams, 2);
}

#[test]
fn the_issue_example_expands_its_matrix() {
    let spec = spec(
        r#"{
          "name": "fs1+fs2 to scratch",
          "source": {"paths": ["/srv/fs1", "/srv/fs2"]},
          "target": {"kind": "dir", "path": "/scratch/backlab"},
          "tests": ["tape_write", "read_single", "read_parallel", "null_sink", "full_backup"],
          "params": {"buffers": 32, "block_size": "256K", "streams": 2, "direct": false,
                     "cold_cache": true, "fsync": true, "compress_ratio": 2.0,
                     "size": "1G", "duration_s": 60},
          "matrix": {"buffers": [8, 32], "block_size": ["64K", "256K"], "streams": [1, 2, 4]},
          "repeat": 1
        }"#,
    );
    let plans = spec.plan().expect("valid");
    assert_eq!(plans.len(), 2 * 2 * 3 * 5);
    assert!(plans.iter().any(|plan| plan.params.buffers == 8
        && plan.params.block_size == 64 << 10
        && plan.params.streams == 4));
    assert!(plans.iter().all(|plan| plan.params.size == Some(1 << 30)));
}

#[test]
fn an_auto_duration_runs_time_based_until_steady_within_a_cap() {
    let auto = spec(
        r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"},
            "tests": ["read_single"], "params": {"duration_s": "auto"}}"#,
    );
    let plans = auto.plan().expect("valid");
    let params = &plans[0].params;
    assert!(params.until_steady && params.time_based);
    assert_eq!(params.duration_s, Some(AUTO_MAX_DURATION_S));
    // The source is left to match: no compress_ratio was given.
    assert!(params.match_source);

    let seconds = spec(
        r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"},
            "tests": ["read_single"], "params": {"duration_s": 5, "compress_ratio": 1.5}}"#,
    );
    let params = &seconds.plan().expect("valid")[0].params;
    assert!(!params.until_steady && !params.time_based && !params.match_source);
    assert_eq!(params.duration_s, Some(5.0));
    assert!(
        serde_json::from_str::<CampaignSpec>(
            r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"},
                "params": {"duration_s": "forever"}}"#
        )
        .is_err()
    );
}

#[test]
fn every_bad_field_is_reported() {
    // A size that is not one is refused when the spec is read; the rest is still checked.
    let errors = parse_json(
        r#"{"source": {"paths": []}, "target": {"kind": "dir"},
            "tests": ["tape_write", "fast_test"],
            "params": {"buffers": 0, "block_size": "1000", "direct": true, "size": "1Q",
                       "compress_ratio": 0.5, "duration_s": -1, "streams": "four"},
            "matrix": {"block_size": ["64K", "lots"]},
            "repeat": 0}"#,
    )
    .expect_err("invalid");
    let fields: Vec<&str> = errors.fields().0.keys().map(String::as_str).collect();
    for expected in [
        "source.paths",
        "target.path",
        "tests[1]",
        "params.buffers",
        "params.block_size",
        "params.size",
        "params.streams",
        "params.compress_ratio",
        "params.duration_s",
        "matrix.block_size[1]",
        "repeat",
    ] {
        assert!(
            fields.contains(&expected),
            "{expected} missing from {fields:?}"
        );
    }
}

#[test]
fn direct_needs_aligned_blocks() {
    let spec = spec(
        r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"},
            "params": {"block_size": "6000", "direct": true}}"#,
    );
    let errors = spec.plan().expect_err("invalid");
    assert_eq!(
        errors.0.get("params.block_size").map(String::as_str),
        Some("must be a multiple of 4096 when direct is true (got 6000)")
    );
}

#[test]
fn too_many_runs_and_too_large_rings_are_refused() {
    let spec = spec(
        r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"},
            "params": {"buffers": 1024, "block_size": "64M"},
            "matrix": {"streams": [1,2,3,4,5,6,7,8,9,10]}, "repeat": 100}"#,
    );
    let errors = spec.plan().expect_err("invalid");
    assert!(errors.0["matrix"].contains("5000 runs"));
    assert!(errors.0["params"].contains("at most 4G"));
}

#[test]
fn oversized_lists_are_refused_before_anything_is_built() {
    let ones = vec!["1"; 20_000].join(",");
    let bomb = spec(&format!(
        r#"{{"source": {{"paths": ["/a"]}}, "target": {{"kind": "null"}},
            "matrix": {{"buffers": [{ones}], "streams": [{ones}]}}}}"#
    ));
    let started = std::time::Instant::now();
    let errors = bomb.plan().expect_err("invalid");
    assert!(errors.0["matrix.buffers"].contains("20000 values; at most 64"));
    assert!(errors.0["matrix.streams"].contains("20000 values; at most 64"));
    assert_eq!(errors.0.len(), 2, "{errors}");
    // Arithmetic only: far below what building 400 million points would take.
    assert!(started.elapsed() < std::time::Duration::from_secs(5));

    let paths = vec![r#""demo""#; 10_000].join(",");
    let many = spec(&format!(
        r#"{{"source": {{"paths": [{paths}]}}, "target": {{"kind": "null"}}}}"#
    ));
    let errors = many.check_bounds();
    assert!(errors.0["source.paths"].contains("10000 paths; at most 256"));
}

#[test]
fn the_run_count_is_known_before_the_runs_are_built() {
    let wide = r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"},
        "matrix": {"buffers": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16],
                   "streams": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}}"#;
    let wide = spec(wide);
    assert_eq!(wide.run_count(), 16 * 16 * 5);
    let errors = wide.plan().expect_err("too many runs");
    assert!(errors.0["matrix"].contains("1280 runs"), "{errors}");
    for json in [
        r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"}, "repeat": 3}"#,
        r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"},
            "tests": ["read_single", "network_backup", "null_sink"],
            "matrix": {"buffers": [8, 16], "clients": [2, 3, 2]}, "repeat": 2}"#,
        r#"{"source": {"generated": {"size": "1G"}}, "target": {"kind": "null"},
            "tests": ["network_backup"], "matrix": {"clients": [1, 2, 4]}}"#,
    ] {
        let campaign = spec(json);
        let plans = campaign.plan().expect("valid");
        assert_eq!(campaign.run_count(), plans.len() as u64, "{json}");
    }
}

#[test]
fn a_path_listed_twice_is_named() {
    let errors = spec(r#"{"source": {"paths": ["/a", "/b", "/a"]}, "target": {"kind": "null"}}"#)
        .plan()
        .expect_err("invalid");
    assert!(
        errors.0["source.paths[2]"].contains("source.paths[0]"),
        "{errors}"
    );
}

#[test]
fn a_run_plan_is_rebuilt_from_its_placement() {
    let campaign = spec(
        r#"{"source": {"agents": ["alpha"]}, "target": {"kind": "null"},
            "tests": ["network_backup"], "params": {"clients": 1}}"#,
    );
    let plans = campaign.plan().expect("valid");
    let placement = Placement::of(&plans).expect("runs");
    let json = serde_json::to_string(&placement).expect("encode");
    let placement: Placement = serde_json::from_str(&json).expect("decode");
    for plan in &plans {
        assert_eq!(
            &RunPlan::at(plan.test, plan.params.clone(), &placement),
            plan
        );
    }
}

#[test]
fn unknown_fields_and_bad_types_name_their_path() {
    let errors = parse_json(
        r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"}, "params": {"bufers": 3}}"#,
    )
    .expect_err("unknown field");
    assert!(errors.fields().0.contains_key("params.bufers"), "{errors}");
    let errors = parse_json(
        r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"}, "params": {"buffers": "x"}}"#,
    )
    .expect_err("bad type");
    assert!(errors.fields().0.contains_key("params.buffers"), "{errors}");
    let errors = parse_json(r#"{"source": {"paths": ["/a"]}, "target": {"kind": "floppy"}}"#)
        .expect_err("bad kind");
    assert!(errors.fields().0.contains_key("target.kind"), "{errors}");
}

#[test]
fn tape_targets_take_a_known_model_and_sane_overrides() {
    let plan = |target: &str| {
        let text =
            format!(r#"{{"source": {{"generated": {{"size": "1G"}}}}, "target": {target}}}"#);
        parse_json(&text).expect("parses").plan()
    };
    let plans = plan(r#"{"kind": "tape", "model": "Ultrium-960", "drives": 2, "buffer_mb": 8}"#)
        .expect("valid");
    let Some(config) = plans[0].target.tape() else {
        panic!("not tape");
    };
    assert_eq!((config.model.as_str(), config.drives), ("LTO-3", 2));
    assert_eq!((config.native_mb_s, config.min_mb_s), (80.0, 40.0));
    assert_eq!(config.buffer_bytes, 8_000_000);
    let errors = plan(
        r#"{"kind": "tape", "model": "lto-10", "drives": 0, "path": "/dev/st0",
            "min_mb_s": 500, "max_compression": 20, "capacity": "0"}"#,
    )
    .expect_err("invalid");
    for field in [
        "target.model",
        "target.drives",
        "target.path",
        "target.max_compression",
        "target.capacity",
    ] {
        assert!(errors.0.contains_key(field), "{field}: {errors}");
    }
    let errors = plan(r#"{"kind": "tape", "model": "lto-4", "min_mb_s": 500}"#).expect_err("min");
    assert!(errors.0["target.min_mb_s"].contains("native"), "{errors}");
    let errors = plan(r#"{"kind": "null", "model": "lto-4"}"#).expect_err("model on null");
    assert!(errors.0.contains_key("target.model"), "{errors}");
}

#[test]
fn a_size_is_parsed_once_when_the_spec_is_read_and_written_back_as_given() {
    let spec = parse_json(
        r#"{"source": {"generated": {"size": "1G"}}, "target": {"kind": "null"},
            "params": {"block_size": "64K", "size": 1048576}}"#,
    )
    .expect("parses");
    assert_eq!(spec.params.block_size.bytes(), 64 << 10);
    let written = serde_json::to_value(&spec).expect("serializes");
    assert_eq!(written["params"]["block_size"], "64K");
    assert_eq!(written["params"]["size"], 1_048_576);
    for (size, words) in [
        (r#""12Q""#, "unknown unit 'Q'"),
        ("-4", "not a size"),
        ("1.5", "not a size"),
        (r#""""#, "not a size"),
    ] {
        let text = format!(
            r#"{{"source": {{"paths": ["/a"]}}, "target": {{"kind": "null"}},
                "params": {{"block_size": {size}}}}}"#
        );
        let errors = parse_json(&text).expect_err("not a size");
        assert!(
            errors
                .fields()
                .0
                .get("params.block_size")
                .is_some_and(|m| m.contains(words)),
            "{size}: {errors}"
        );
    }
}

#[test]
fn a_required_field_of_the_wrong_type_is_named_once() {
    let errors = parse_json(
        r#"{"source": {"paths": ["/a"]}, "target": "null", "params": {"buffers": "x"}}"#,
    )
    .expect_err("invalid");
    // Both are named (a missing field is only found at the end of its object), without a
    // third message that the target set aside is missing.
    assert_eq!(
        errors.fields().0.keys().collect::<Vec<_>>(),
        ["params.buffers", "target"],
        "{errors}"
    );
}

#[test]
fn an_adaptive_search_sees_every_swept_list_as_an_axis_of_its_points() {
    let spec = spec(
        r#"{"source": {"generated": {"size": "1G"}}, "target": {"kind": "null"},
            "tests": ["null_sink", "network_backup"], "repeat": 2,
            "matrix": {"streams": [1, 2], "clients": [2, 4, 6],
                       "search": {"strategy": "adaptive", "seed": 7}}}"#,
    );
    let sweep = spec.plan_arms().expect("valid");
    assert_eq!(sweep.arms.len(), 6);
    // Streams on the third list, clients on the sixth: each point where both lie.
    let at: Vec<[usize; 6]> = sweep.arms.iter().map(|arm| arm.at).collect();
    assert!(at.contains(&[0, 0, 1, 0, 0, 2]), "{at:?}");
    // The local test runs at the first client count only, as in the full sweep.
    let runs: Vec<usize> = sweep.arms.iter().map(Arm::runs).collect();
    assert_eq!(runs, vec![2, 1, 1, 2, 1, 1]);
    let search = sweep.search.expect("a search");
    assert_eq!(search.full_runs, sweep.plans.len());
    assert_eq!(search.full_runs, 16);
    assert_eq!(search.budget_runs, 6, "40 % of 16, rounded down");
    assert_eq!((search.seed, search.max_repeats), (7, 2));

    let s3 = spec_with_matrix(
        r#"{"part_size": ["8M", "16M"], "concurrency": [2, 4, 8],
            "search": {"strategy": "adaptive"}}"#,
    );
    let at: Vec<[usize; 6]> = s3.arms.iter().map(|arm| arm.at).collect();
    assert!(at.contains(&[0, 0, 0, 1, 2, 0]), "{at:?}");
}

/// An object store's part-size sweep, planned with the matrix given.
fn spec_with_matrix(matrix: &str) -> SweepPlan {
    let text = format!(
        r#"{{"source": {{"generated": {{"size": "1G"}}}}, "target": {{"kind": "s3",
             "store": "lab"}}, "tests": ["tape_write"], "repeat": 3, "matrix": {matrix}}}"#
    );
    spec(&text).plan_arms().expect("valid")
}

#[test]
fn an_adaptive_search_needs_repeats_two_points_and_a_budget_it_can_spend() {
    let spec = spec(
        r#"{"source": {"generated": {"size": "1G"}}, "target": {"kind": "null"},
            "tests": ["null_sink"],
            "matrix": {"streams": [1], "search": {"strategy": "adaptive", "budget_runs": 1}}}"#,
    );
    let errors = spec.plan().expect_err("refused");
    for field in [
        "matrix.search.strategy",
        "repeat",
        "matrix.search.budget_runs",
    ] {
        assert!(errors.0.contains_key(field), "{field}: {errors}");
    }
}

#[test]
fn an_object_smaller_than_a_part_is_refused_by_its_field() {
    let spec = spec(
        r#"{"source": {"generated": {"size": "1G"}},
            "target": {"kind": "s3", "store": "lab", "part_size": "5M", "object_size": 1},
            "tests": ["tape_write"]}"#,
    );
    let errors = spec.plan().expect_err("refused");
    let said = errors.0.get("target.object_size").expect("named");
    assert!(said.contains("one part (5 MiB)"), "{said}");
    let fits = self::spec(
        r#"{"source": {"generated": {"size": "1G"}},
            "target": {"kind": "s3", "store": "lab", "part_size": "5M", "object_size": "5M"},
            "tests": ["tape_write"]}"#,
    );
    assert!(fits.plan().is_ok());
}

#[test]
fn an_unknown_kind_and_a_bad_size_leave_the_other_rules_checked() {
    let errors = parse_json(
        r#"{"source": {"paths": ["/a"]}, "target": {"kind": "disk", "path": "/t"},
            "tests": ["full_backup", "fast_test"], "params": {"block_size": "lots"}}"#,
    )
    .expect_err("invalid");
    let SpecError::Invalid(errors) = errors else {
        panic!("JSON with bad values is invalid, not unreadable: {errors}");
    };
    assert_eq!(
        errors.0.keys().collect::<Vec<_>>(),
        ["params.block_size", "target.kind", "tests[1]"],
        "{errors}"
    );
    let errors = parse_json(
        r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"}, "params": {"buffers": -4}}"#,
    )
    .expect_err("invalid");
    assert_eq!(
        errors.fields().0["params.buffers"],
        "is -4; it must be a whole number from 1 to 1024"
    );
}

#[test]
fn a_tool_listed_twice_in_a_comparison_is_refused_naming_its_place() {
    let json = r#"{"source": {"paths": ["/srv/a"]}, "target": {"kind": "dir", "path": "/t"},
                   "tests": ["tool_backup"],
                   "matrix": {"tool": [{"name": "restic"}, {"name": "borg"}, {"name": "restic"},
                                       {"name": "restic", "params": {"compression": "max"}}]}}"#;
    let errors = spec(json).plan().expect_err("refused");
    let fields: Vec<&String> = errors.0.keys().collect();
    assert_eq!(fields, ["matrix.tool[2]"], "{errors}");
    assert!(
        errors.to_string().contains("restic is listed twice"),
        "{errors}"
    );
}
