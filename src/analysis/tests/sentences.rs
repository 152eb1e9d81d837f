//! Every verdict sentence the analysis can say, rendered: each finding with each component, in
//! the lab's table and a tool's, conclusive or not, and a comparison of tools. A sentence
//! either names a component as the limit, or says the components slow each other down; never
//! both.

use super::super::findings::{
    Ceiling, Drives, Interference, NetworkFinding, NetworkLimit, OutranCause, Shape, ShoeShine,
    ToolHeldBy, ToolOutcome, ToolUse,
};
use super::super::words;
use super::*;

const COMPONENTS: [Component; 6] = [
    Component::Target,
    Component::Source,
    Component::Pipeline,
    Component::SharedDevice,
    Component::Network,
    Component::Tool,
];

fn ceiling(component: Component) -> Ceiling {
    Ceiling {
        component,
        test: match component {
            Component::Target | Component::Network => TestKind::TapeWrite,
            Component::Source | Component::SharedDevice => TestKind::ReadParallel,
            Component::Pipeline => TestKind::NullSink,
            Component::Tool => TestKind::ToolCeiling,
        },
        mb_per_s: 100.0,
    }
}

/// Every finding the analysis makes, with every component each can name.
fn findings() -> Vec<Finding> {
    let mut all = vec![
        Finding::Incomplete {
            missing: vec![TestKind::TapeWrite, TestKind::FullBackup],
            lives: false,
            probed: false,
        },
        Finding::Incomplete {
            missing: vec![TestKind::TapeWrite, TestKind::ReadParallel],
            lives: true,
            probed: false,
        },
        Finding::Incomplete {
            missing: vec![TestKind::TapeWrite, TestKind::ReadParallel],
            lives: false,
            probed: true,
        },
    ];
    for component in COMPONENTS {
        let ceiling = ceiling(component);
        all.push(Finding::Limits {
            ceiling,
            full_mb_s: 95.0,
            above: Vec::new(),
        });
        all.push(Finding::Limits {
            ceiling,
            full_mb_s: 101.5,
            above: vec![AboveCeiling::Unrepeated],
        });
        all.push(Finding::FullOutranCeiling {
            ceiling,
            full_mb_s: 130.0,
            causes: vec![OutranCause::Unexplained {
                emulated_target: false,
            }],
        });
        for evidence in [
            Interference::SharedDevice,
            Interference::Stages {
                side: Side::Target,
                wait_pct: 80.0,
            },
            Interference::Stages {
                side: Side::Source,
                wait_pct: 80.0,
            },
            Interference::LowestCeiling,
        ] {
            all.push(Finding::Interference {
                component,
                lowest: ceiling,
                full_mb_s: 50.0,
                evidence,
            });
        }
        all.push(Finding::LowestCeiling { ceiling });
    }
    all.push(Finding::ShoeShine(ShoeShine {
        drives: Drives {
            model: "LTO-5".to_string(),
            count: 2,
        },
        backhitches: 40,
        repositioning_pct: 35.0,
        feed_mb_s: 60.0,
        needed_mb_s: 160.0,
        min_step_mb_s: 40.0,
        compression: 2.0,
        per_stream_mb_s: 15.0,
        streams_needed: 11,
    }));
    let shape = Shape {
        clients: 4,
        streams: 2,
    };
    for limit in [
        NetworkLimit::Undetermined {
            reader_wait_pct: 10.0,
            writer_wait_pct: 10.0,
        },
        NetworkLimit::Target {
            ceiling_mb_s: Some(100.0),
            from: Some(super::super::findings::TargetCeilingFrom::TapeWriteTest),
            reader_wait_pct: 80.0,
        },
        NetworkLimit::Links {
            per_client_mb_s: 10.0,
            total_mb_s: 40.0,
        },
        NetworkLimit::BelowTarget {
            ceiling_mb_s: 300.0,
            from: super::super::findings::TargetCeilingFrom::EmulatedDrives,
        },
        NetworkLimit::Starved,
    ] {
        all.push(Finding::Network(NetworkFinding {
            shape,
            mb_per_s: 40.0,
            limit,
            writer_wait_pct: 70.0,
            failed_clients: Vec::new(),
        }));
    }
    let mut outcomes = Vec::new();
    for component in COMPONENTS {
        for (conclusive, interference) in [(true, false), (true, true), (false, false)] {
            outcomes.push(ToolOutcome {
                tool: format!("tool-{}", outcomes.len()),
                backup_mb_s: Some(50.0),
                component: Some(component),
                conclusive,
                interference,
            });
        }
    }
    all.push(Finding::ToolsCompared { tools: outcomes });
    all
}

/// How a tool used the machine, each way it can have.
fn tool_uses() -> Vec<ToolUse> {
    [
        ToolHeldBy::AllCores,
        ToolHeldBy::OneThread,
        ToolHeldBy::OtherWork,
        ToolHeldBy::Neither,
    ]
    .into_iter()
    .map(|held_by| ToolUse {
        name: "restic".to_string(),
        version: "restic 0.16.4".to_string(),
        cores_used: 1.0,
        cores: 2,
        busiest_thread_pct: 60.0,
        files_per_s: 400.0,
        held_by,
    })
    .collect()
}

/// Whether `clause` names a component as the backup's limit.
fn names_a_limit(clause: &str) -> bool {
    let lower = clause.to_lowercase();
    (lower.contains(" limits the backup") && !lower.contains("no one component limits"))
        || lower.contains("is limited by")
        || lower.contains("limits it")
}

/// Whether `clause` says the components slow each other down.
fn says_they_interfere(clause: &str) -> bool {
    let lower = clause.to_lowercase();
    lower.contains("slow each other down")
        || lower.contains("interfere")
        || lower.contains("components together")
}

/// Every sentence: the finding's, alone and with how a limiting tool used the machine, in
/// the lab's table and a tool's, conclusive, inconclusive and to be redone, with and without
/// a target named.
fn every_sentence() -> Vec<String> {
    let mut sentences = Vec::new();
    for finding in findings() {
        for tool in [None, Some("restic")] {
            for (conclusive, redo) in [(true, false), (false, false), (false, true)] {
                for target in [None, Some("2 × LTO-5, emulated")] {
                    let sentence = words::finding(&finding, conclusive, redo, target, tool);
                    if tool.is_some() && finding.component() == Some(Component::Tool) {
                        for tool_use in tool_uses() {
                            sentences.push(format!(
                                "{sentence}. {}",
                                capitalize(&words::tool_use(&tool_use))
                            ));
                        }
                    }
                    sentences.push(sentence);
                }
            }
        }
    }
    sentences
}

#[test]
fn no_verdict_names_a_limiting_component_and_says_the_components_interfere() {
    let sentences = every_sentence();
    assert!(sentences.len() > 500, "{} sentences", sentences.len());
    let mut contradictions = Vec::new();
    for sentence in &sentences {
        // A comparison of tools says one clause per tool: each is its own answer.
        for clause in sentence.split("; ") {
            if names_a_limit(clause) && says_they_interfere(clause) {
                contradictions.push(clause.to_string());
            }
        }
    }
    assert!(
        contradictions.is_empty(),
        "{} sentence(s) name a limit and say the components interfere, e.g.:\n{}",
        contradictions.len(),
        contradictions
            .iter()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The checks themselves catch what they are for: the sentence an interference finding once
/// rendered is caught.
#[test]
fn the_check_catches_a_limit_said_beside_interference() {
    let old = "The target limits the backup: the components slow each other down when \
               combined. Restic's backup ran at 14.7 MB/s";
    assert!(names_a_limit(old) && says_they_interfere(old));
    let now = "No one component limits the backup: the components slow each other down when \
               combined";
    assert!(!names_a_limit(now) && says_they_interfere(now));
}

/// A tool that limits is never said to have waited on its reads and writes: its ceiling
/// was measured with both in memory.
#[test]
fn a_limiting_tool_is_not_said_to_wait_on_its_disks() {
    for tool_use in tool_uses() {
        let words = words::tool_use(&tool_use);
        assert!(!words.contains("reads and writes"), "{words}");
    }
}
