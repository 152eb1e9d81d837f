//! A campaign's spec and a run's parameters in words, as the pages and the comparison show
//! them.

use super::*;

/// Where a campaign was measured, as the page's spec list shows it.
pub(super) fn provenance_lines(provenance: &Provenance) -> Vec<(String, String)> {
    let mut host = format!("{} · {}", provenance.hostname, provenance.kernel);
    match &provenance.cpu_model {
        Some(model) => host.push_str(&format!(" · {} × {model}", provenance.cpus)),
        None => host.push_str(&format!(" · {} CPUs", provenance.cpus)),
    }
    if let Some(memory) = provenance.memory_bytes {
        host.push_str(&format!(
            " · {:.1} GiB memory",
            memory as f64 / (1u64 << 30) as f64
        ));
    }
    let build = match &provenance.git_commit {
        Some(commit) => format!("backlab {} ({commit})", provenance.backlab_version),
        None => format!("backlab {}", provenance.backlab_version),
    };
    let mut lines = vec![
        ("Measured on".to_string(), host),
        ("Measured with".to_string(), build),
    ];
    for place in &provenance.places {
        let mut storage = vec![match (&place.fs_type, &place.device) {
            (Some(fs_type), _) => fs_type.clone(),
            (None, Some(_)) => "block device".to_string(),
            (None, None) => "unknown file system".to_string(),
        }];
        if let Some(device) = &place.device {
            storage.push(format!("on {device}"));
        }
        if let Some(model) = &place.model {
            storage.push(format!("({model})"));
        }
        if let Some(striped) = place.geometry.as_ref().filter(|g| g.stripe().is_some()) {
            storage.push(format!("· {}", striped.words()));
        }
        if let Some(stripe) = &place.fs_stripe {
            storage.push(format!("· {}", stripe.words()));
        }
        let role = if place.role == "target" {
            "Target storage"
        } else {
            "Source storage"
        };
        lines.push((
            role.to_string(),
            format!("{}: {}", place.path.display(), storage.join(" ")),
        ));
    }
    lines
}

pub(super) fn spec_lines(spec: &CampaignSpec) -> Vec<(String, String)> {
    let mut lines = Vec::new();
    lines.push(("Source".to_string(), source_words(spec)));
    lines.push(("Target".to_string(), target_words(spec)));
    let tests: Vec<&str> = spec
        .tests
        .iter()
        .map(|id| crate::spec::TestKind::from_id(id).map_or(id.as_str(), |test| test.label()))
        .collect();
    lines.push(("Tests".to_string(), tests.join(" · ")));
    let p = &spec.params;
    let mut params = format!(
        "{} buffers × {}, {}, direct {}, cold cache {}, fsync {}",
        p.buffers,
        format_bytes(p.block_size.bytes()),
        p.streams.map_or_else(
            || "default streams".to_string(),
            |s| counted(u64::from(s), "stream", "streams"),
        ),
        yes_no(p.direct),
        yes_no(p.cold_cache),
        yes_no(p.fsync)
    );
    if let Some(size) = &p.size {
        params.push_str(&format!(", at most {} per run", format_bytes(size.bytes())));
    }
    match p.duration_s {
        Some(crate::spec::DurationInput::Seconds(duration)) if p.time_based == Some(true) => {
            params.push_str(&format!(", {duration} s per run (time-based)"))
        }
        Some(crate::spec::DurationInput::Seconds(duration)) => {
            params.push_str(&format!(", at most {duration} s per run"))
        }
        Some(crate::spec::DurationInput::Auto(_)) => {
            params.push_str(", until steady (at most 60 s) per run")
        }
        None => {}
    }
    lines.push(("Parameters".to_string(), params));
    if let Some(matrix) = &spec.matrix {
        let mut parts = Vec::new();
        if let Some(buffers) = &matrix.buffers {
            parts.push(format!("buffers {buffers:?}"));
        }
        if let Some(sizes) = &matrix.block_size {
            let sizes: Vec<String> = sizes.iter().map(|s| format_bytes(s.bytes())).collect();
            parts.push(format!("block size [{}]", sizes.join(", ")));
        }
        if let Some(streams) = &matrix.streams {
            parts.push(format!("streams {streams:?}"));
        }
        if !parts.is_empty() {
            lines.push(("Matrix".to_string(), parts.join(" × ")));
        }
    }
    let tools = spec.tools();
    if !tools.is_empty() {
        let names: Vec<String> = tools.iter().map(crate::spec::ToolRun::label).collect();
        let line = if names.len() > 1 {
            format!("{} (compared, each judged on its own)", names.join(" · "))
        } else {
            names.join("")
        };
        lines.push((
            if names.len() > 1 { "Tools" } else { "Tool" }.to_string(),
            line,
        ));
    }
    if spec.repeat > 1 {
        lines.push(("Repeat".to_string(), format!("{} times", spec.repeat)));
    }
    lines
}

/// What a campaign reads, in a few words: its paths, or generated data, and the agents.
pub fn source_words(spec: &CampaignSpec) -> String {
    let source = match (&spec.source.paths, &spec.source.generated) {
        (Some(paths), _) => paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        (None, Some(generated)) => format!(
            "generated, {} at {}:1",
            format_bytes(generated.size.bytes()),
            generated.compress_ratio
        ),
        (None, None) => "generated data".to_string(),
    };
    match &spec.source.agents {
        Some(agents) => format!("agents {} reading {source}", agents.join(", ")),
        None => source,
    }
}

/// Where a campaign writes, in a few words.
pub fn target_words(spec: &CampaignSpec) -> String {
    spec.target.words()
}

pub(super) fn yes_no(value: bool) -> &'static str {
    if value { "on" } else { "off" }
}

/// The parameters of a run in one short line.
pub fn params_line(params: &RunParams) -> String {
    // A tool test ran the tool with its own parameters: the lab's buffers and streams are
    // not what it ran with.
    if let Some(tool) = &params.tool {
        return tool.label();
    }
    let mut line = match params.clients {
        Some(clients) => format!(
            "{} × {}, {} × {}",
            params.buffers,
            format_bytes(params.block_size),
            counted(u64::from(clients), "client", "clients"),
            counted(u64::from(params.streams), "stream", "streams")
        ),
        None => format!(
            "{} × {}, {}",
            params.buffers,
            format_bytes(params.block_size),
            counted(u64::from(params.streams), "stream", "streams")
        ),
    };
    if let (Some(part_size), Some(concurrency)) = (params.part_size, params.concurrency) {
        line.push_str(&format!(
            ", {} parts × {concurrency} in flight",
            format_bytes(part_size)
        ));
    }
    if let Some(link) = params.link_mb_s {
        line.push_str(&format!(", emulated link {link} MB/s per client"));
    }
    if params.direct {
        line.push_str(", direct");
    }
    if !params.fsync {
        line.push_str(", no fsync");
    }
    if let Some(generation) = params.generation {
        line.push_str(&format!(", generation {generation}"));
    }
    line
}

/// Each setting of a run beyond its buffers, block size, streams, clients, parts and
/// generation, keyed by the setting: what can tell apart two points that read alike.
pub(super) fn param_details(params: &RunParams) -> Vec<(&'static str, String)> {
    let mut details = Vec::new();
    details.push((
        "direct",
        if params.direct {
            "direct I/O"
        } else {
            "buffered I/O"
        }
        .to_string(),
    ));
    details.push((
        "fsync",
        if params.fsync { "fsync" } else { "no fsync" }.to_string(),
    ));
    details.push((
        "link",
        params.link_mb_s.map_or_else(
            || "no emulated link".to_string(),
            |link| format!("emulated link {link} MB/s per client"),
        ),
    ));
    let length = match (params.size, params.duration_s) {
        (_, Some(seconds)) if params.until_steady => {
            format!("until steady, at most {}", format_duration(seconds))
        }
        (_, Some(seconds)) if params.time_based => {
            format!("{} time-based", format_duration(seconds))
        }
        (Some(size), Some(seconds)) => {
            format!("{} or {}", format_size(size), format_duration(seconds))
        }
        (Some(size), None) => format_size(size),
        (None, Some(seconds)) => format_duration(seconds),
        (None, None) => "the whole source".to_string(),
    };
    details.push(("length", length));
    details.push((
        "cache",
        if params.cold_cache {
            "cold cache"
        } else {
            "warm cache"
        }
        .to_string(),
    ));
    details.push((
        "data",
        if params.match_source {
            "data as compressible as the source's".to_string()
        } else {
            format!("{}:1 data", params.compress_ratio)
        },
    ));
    details.push((
        "source rate",
        params.source_rate_mb_s.map_or_else(
            || "source not capped".to_string(),
            |rate| format!("source capped at {rate} MB/s per stream"),
        ),
    ));
    details
}

/// The parameter line of each of `rows` (a test and its parameters), with the settings that
/// tell it apart from another row of the same test whose line would read the same: two rows
/// never look alike unless they are alike.
pub fn distinct_params_lines(rows: &[(TestKind, &RunParams)]) -> Vec<String> {
    rows.iter()
        .zip(telling_details(rows, params_line))
        .map(|((_, params), telling)| {
            let line = params_line(params);
            if telling.is_empty() {
                line
            } else {
                format!("{line}, {}", telling.join(", "))
            }
        })
        .collect()
}

/// For each of `rows`, the settings that differ from another row of the same test whose
/// `shown` words are the same: what tells it apart, empty when nothing needs to.
pub(super) fn telling_details(
    rows: &[(TestKind, &RunParams)],
    shown: fn(&RunParams) -> String,
) -> Vec<Vec<String>> {
    let lines: Vec<String> = rows.iter().map(|(_, params)| shown(params)).collect();
    let details: Vec<Vec<(&'static str, String)>> = rows
        .iter()
        .map(|(_, params)| param_details(params))
        .collect();
    rows.iter()
        .enumerate()
        .map(|(at, (test, _))| {
            let alike: Vec<usize> = (0..rows.len())
                .filter(|other| rows[*other].0 == *test && lines[*other] == lines[at])
                .collect();
            details[at]
                .iter()
                .enumerate()
                .filter(|(key, (_, word))| {
                    alike.iter().any(|other| details[*other][*key].1 != *word)
                })
                .map(|(_, (_, word))| word.clone())
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_that_would_read_alike_say_what_tells_them_apart() {
        let short = RunParams {
            duration_s: Some(30.0),
            ..RunParams::example()
        };
        let long = RunParams {
            duration_s: Some(60.0),
            ..RunParams::example()
        };
        let lines = distinct_params_lines(&[
            (TestKind::FullBackup, &short),
            (TestKind::FullBackup, &long),
            (TestKind::ReadParallel, &short),
        ]);
        assert_eq!(lines[0], "32 × 256 KiB, 4 streams, 30.0 s time-based");
        assert_eq!(lines[1], "32 × 256 KiB, 4 streams, 1m 00s time-based");
        assert_eq!(
            lines[2], "32 × 256 KiB, 4 streams",
            "nothing to tell apart in a test of its own"
        );
        let generations: Vec<RunParams> = (1..=3)
            .map(|generation| RunParams {
                generation: Some(generation),
                ..RunParams::example()
            })
            .collect();
        let lines = distinct_params_lines(
            &generations
                .iter()
                .map(|params| (TestKind::FullBackup, params))
                .collect::<Vec<_>>(),
        );
        assert_eq!(lines[2], "32 × 256 KiB, 4 streams, generation 3");
        assert_eq!(
            lines.iter().collect::<std::collections::HashSet<_>>().len(),
            3
        );
    }
}
