//! A series' campaigns turned into one line per test, and the changes found in each line.
//!
//! Every figure is the one the campaign's own report shows for the test (its best point, from
//! the judgement kept when the campaign finished), so a point reads the same here as there.
//! Only valid figures are tested for changes; invalid ones are drawn, marked, and skipped.
//!
//! A change is reported when two rules agree: E-divisive means with a t-test on the two sides
//! ([`crate::change_points`], as Apache Otava finds them) places it, and the rule `/compare`
//! highlights a change with ([`crate::noise::stands_out`]) finds the campaigns after it differ
//! from those before it by more than their noise. A change therefore needs a few campaigns on
//! each side: one slow night is an outlier, not a change. Nor is a shift smaller than
//! [`MIN_CHANGE_PCT`], however certain: a throttled or emulated path repeats its figure so
//! closely that a drift of a few tenths of a percent would otherwise test as real.

use serde::Serialize;

use crate::analysis::Component;
use crate::analysis::Judgement;
use crate::analysis::points::{Figure, Point, best_per_test};
use crate::change_points::Detector;
use crate::noise::{FAMILY_ALPHA, Side, stands_out};
use crate::reference::Reference;
use crate::spec::TestKind;

use super::requests::{RequestChange, RequestLine, request_lines};

/// The smallest change a series reports, in percent of the figure before it.
pub const MIN_CHANGE_PCT: f64 = 5.0;

pub use super::MIN_CAMPAIGNS_EACH_SIDE;

/// One finished campaign of a series, as the store keeps it.
#[derive(Debug, Clone)]
pub struct Entry {
    pub id: String,
    pub name: String,
    pub created_ms: i64,
    pub judgement: Judgement,
}

/// A series as every view shows it: its campaigns, one line per test, the changes found.
#[derive(Debug, Clone)]
pub struct History {
    pub key: String,
    pub campaigns: Vec<CampaignMark>,
    pub lines: Vec<Line>,
    /// Each tool's requests to its bucket per GiB backed up, and their changes.
    pub requests: Vec<RequestLine>,
}

/// What a campaign brought to light in its series: changes in the figures, and in a tool's
/// requests to its bucket.
#[derive(Debug, Clone, Default)]
pub struct FoundChanges {
    pub changes: Vec<Change>,
    pub request_changes: Vec<RequestChange>,
}

impl FoundChanges {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty() && self.request_changes.is_empty()
    }

    /// Each change in a sentence: the figures' first.
    pub fn words(&self) -> Vec<String> {
        self.changes
            .iter()
            .map(Change::words)
            .chain(self.request_changes.iter().map(RequestChange::words))
            .collect()
    }
}

/// A campaign of the series: where its points link to, and what its verdict named.
#[derive(Debug, Clone)]
pub struct CampaignMark {
    pub id: String,
    pub name: String,
    pub created_ms: i64,
    /// The component the campaign's verdict names (its leading candidate when inconclusive).
    pub component: Option<Component>,
    pub conclusive: bool,
    /// The version of the backup tool its verdict rests on (what the tool printed), for a
    /// campaign that ran one: a change after an upgrade names the version that changed.
    pub tool_version: Option<String>,
    /// When the campaign compared several tools: each one's label, version and the component
    /// its own verdict names, for the lines that follow one of them.
    pub tools: Vec<ToolMark>,
}

/// One tool of a campaign that compared several, as a series marks it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolMark {
    pub label: String,
    pub version: Option<String>,
    pub component: Option<Component>,
}

impl CampaignMark {
    /// The tool of a line, when the campaign compared several tools and this is one of them.
    fn tool(&self, label: Option<&str>) -> Option<&ToolMark> {
        self.tools
            .iter()
            .find(|mark| Some(mark.label.as_str()) == label)
    }

    /// What the campaign's verdict named for the line of `tool`: that tool's own verdict's
    /// component in a comparison, else the campaign's.
    fn component_for(&self, tool: Option<&str>) -> Option<Component> {
        match self.tool(tool) {
            Some(mark) => mark.component,
            None => self.component,
        }
    }

    /// The version of the tool a line follows.
    fn version_for(&self, tool: Option<&str>) -> Option<String> {
        match self.tool(tool) {
            Some(mark) => mark.version.clone(),
            None => self.tool_version.clone(),
        }
    }
}

/// One test's figure over the series' campaigns.
#[derive(Debug, Clone)]
pub struct Line {
    pub test: TestKind,
    /// The backup tool a tool test's line follows, with its parameters: each tool compared
    /// has a line of its own.
    pub tool: Option<String>,
    pub points: Vec<SeriesPoint>,
    /// Changes found in the valid points, oldest first.
    pub changes: Vec<Change>,
    /// Other tools' figures imported into the series' campaigns that measure what this
    /// test does, drawn beside its points; never tested for changes.
    pub references: Vec<ReferenceMark>,
}

/// Another tool's figure, placed at the campaign it was imported into.
#[derive(Debug, Clone)]
pub struct ReferenceMark {
    pub campaign: String,
    /// The campaign's place in the series, from 1.
    pub number: usize,
    pub reference: Reference,
}

/// A campaign's figure for one test: its best point's median, range and validity.
#[derive(Debug, Clone)]
pub struct SeriesPoint {
    pub campaign: String,
    /// The campaign's place in the series, from 1.
    pub number: usize,
    pub created_ms: i64,
    pub mb_per_s: f64,
    /// Whether the figure is steady-state or whole-run MB/s.
    pub basis: crate::analysis::points::Basis,
    pub min: f64,
    pub max: f64,
    pub spread_pct: Option<f64>,
    /// Runs the figure rests on.
    pub runs: usize,
    pub valid: bool,
    /// Tested for changes: valid, or not valid only by flags that can have lowered it alone
    /// (other work on the machine) while it stands at the cap its runs were given (a source
    /// rate, a link), which such work cannot move it from.
    pub tested: bool,
    /// The point's setting in words (buffers, block, streams …).
    pub setting: String,
    noise: Side,
}

/// Share of a cap a figure must reach to be set by it.
const AT_CAP: f64 = 0.95;

/// Whether a point can be tested for a change: valid, or held at a cap its runs were given
/// with only flags that can lower a figure on it. Other work on the machine slows the lab's
/// side; a figure at its cap was not slowed, so the flag cannot overturn it (the rule a
/// verdict uses, `FlagCode::bias`).
pub fn testable(point: &Point, figure: &Figure) -> bool {
    if figure.valid {
        return true;
    }
    let only_lowered = !figure.flags.is_empty()
        && figure
            .flags
            .iter()
            .all(|flag| flag.bias() == crate::engine::validity::Bias::Lowered);
    only_lowered && cap_mb_s(point).is_some_and(|cap| figure.mb_per_s >= AT_CAP * cap)
}

/// The most a point's runs could move, by the caps they were given: each stream's source
/// rate (for tests that read the source) and each client's link.
fn cap_mb_s(point: &Point) -> Option<f64> {
    let params = &point.params;
    let clients = f64::from(params.clients.unwrap_or(1).max(1));
    let streams = match point.test {
        TestKind::ReadSingle => 1.0,
        TestKind::NetworkBackup => f64::from(params.streams.max(1)) * clients,
        _ => f64::from(params.streams.max(1)),
    };
    let source = params
        .source_rate_mb_s
        .filter(|_| point.test.reads_source())
        .map(|rate| rate * streams);
    let link = params
        .link_mb_s
        .filter(|_| point.test == TestKind::NetworkBackup)
        .map(|rate| rate * clients);
    match (source, link) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A line's name: its test, and the tool it follows (`Tool backup (restic)`).
pub fn line_label(test: TestKind, tool: Option<&str>) -> String {
    match tool {
        Some(tool) => format!("{} ({tool})", test.label()),
        None => test.label().to_string(),
    }
}

impl Line {
    /// The line's name, as pages and alerts give it.
    pub fn label(&self) -> String {
        line_label(self.test, self.tool.as_deref())
    }
}

/// Each test that ran, in table order, and for a tool test each tool (in the campaign's
/// order), with its best point: a series keeps a line for each.
pub fn best_per_line(points: &[Point]) -> Vec<(TestKind, Option<String>, Option<&Point>)> {
    let mut lines = Vec::new();
    for (test, best) in best_per_test(points) {
        let tools = crate::analysis::tools::tools_of(points);
        if !test.runs_tool() || tools.len() < 2 {
            lines.push((test, best.and_then(Point::tool_label), best));
            continue;
        }
        for tool in tools {
            let own =
                |point: &&Point| point.test == test && point.params.tool.as_ref() == Some(tool);
            let best = points
                .iter()
                .filter(own)
                .find(|point| point.best)
                .or_else(|| points.iter().find(own));
            lines.push((test, Some(tool.label()), best));
        }
    }
    lines
}

/// A change in one test's figure that stands out of its noise.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub test: TestKind,
    /// The tool of the line it was found in, when the line follows one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The first campaign after the change, and its place in the series (from 1).
    pub first_campaign: String,
    pub first_number: usize,
    /// Medians of the valid figures before (since the previous change) and after (up to the
    /// next), MB/s.
    pub before_mb_s: f64,
    pub after_mb_s: f64,
    pub change_pct: f64,
    /// Welch's p of the two sides, as `/compare` computes it.
    pub p_value: f64,
    /// Campaigns on each side.
    pub campaigns_before: usize,
    pub campaigns_after: usize,
    /// What the verdicts named most often on each side.
    pub component_before: Option<Component>,
    pub component_after: Option<Component>,
    /// The backup tool's version in the last campaign before the change and the first after,
    /// for a series of campaigns that run one.
    pub tool_before: Option<String>,
    pub tool_after: Option<String>,
}

impl Change {
    /// "slower" or "faster".
    pub fn direction(&self) -> &'static str {
        if self.after_mb_s < self.before_mb_s {
            "slower"
        } else {
            "faster"
        }
    }

    /// The tool's versions on the two sides, when they differ: the upgrade that came with
    /// the change.
    pub fn upgrade(&self) -> Option<(&str, &str)> {
        match (&self.tool_before, &self.tool_after) {
            (Some(before), Some(after)) if before != after => Some((before, after)),
            _ => None,
        }
    }

    /// The change in one sentence.
    pub fn words(&self) -> String {
        let component = |c: Option<Component>| c.map_or("nothing", crate::analysis::component_word);
        let upgrade = self.upgrade().map_or(String::new(), |(before, after)| {
            format!("; the tool changed with it, from {before} to {after}")
        });
        format!(
            "{} became {:.0} % {} from campaign {} on: {:.1} → {:.1} MB/s (p = {:.2e}, {} \
             campaigns before, {} after); the verdicts named the {} before and the {} after{}",
            line_label(self.test, self.tool.as_deref()),
            self.change_pct.abs(),
            self.direction(),
            self.first_number,
            self.before_mb_s,
            self.after_mb_s,
            self.p_value,
            self.campaigns_before,
            self.campaigns_after,
            component(self.component_before),
            component(self.component_after),
            upgrade,
        )
    }
}

impl History {
    /// The series of `entries`, oldest first.
    pub fn of(key: &str, entries: &[Entry]) -> Self {
        let campaigns: Vec<CampaignMark> = entries
            .iter()
            .map(|entry| CampaignMark {
                id: entry.id.clone(),
                name: entry.name.clone(),
                created_ms: entry.created_ms,
                component: entry.judgement.verdict.component,
                conclusive: entry.judgement.verdict.conclusive,
                tool_version: entry
                    .judgement
                    .verdict
                    .tool
                    .as_ref()
                    .map(|tool| tool.version.clone()),
                tools: if entry.judgement.verdict.by_tool.is_empty() {
                    Vec::new()
                } else {
                    entry
                        .judgement
                        .verdict
                        .tools
                        .iter()
                        .map(|line| ToolMark {
                            label: line.label.clone(),
                            version: line.version.clone(),
                            component: line.component,
                        })
                        .collect()
                },
            })
            .collect();
        let mut lines: Vec<Line> = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            for (test, tool, best) in best_per_line(&entry.judgement.points) {
                let Some(point) = best else { continue };
                let Some(figure) = &point.figure else {
                    continue;
                };
                let at = match lines
                    .iter()
                    .position(|line| line.test == test && line.tool == tool)
                {
                    Some(at) => at,
                    None => {
                        lines.push(Line {
                            test,
                            tool,
                            points: Vec::new(),
                            changes: Vec::new(),
                            references: Vec::new(),
                        });
                        lines.len() - 1
                    }
                };
                lines[at].points.push(SeriesPoint {
                    campaign: entry.id.clone(),
                    number: index + 1,
                    created_ms: entry.created_ms,
                    mb_per_s: figure.mb_per_s,
                    basis: figure.basis,
                    min: figure.min,
                    max: figure.max,
                    spread_pct: figure.spread_pct,
                    runs: figure.n,
                    valid: figure.valid,
                    tested: testable(point, figure),
                    setting: point.setting(),
                    noise: figure.noise,
                });
            }
        }
        lines.sort_by_key(|line| TestKind::ALL.iter().position(|t| *t == line.test));
        let alpha = FAMILY_ALPHA / lines.len().max(1) as f64;
        for line in &mut lines {
            line.changes = changes(line, &campaigns, alpha);
        }
        Self {
            key: key.to_string(),
            campaigns,
            lines,
            requests: request_lines(
                entries
                    .iter()
                    .map(|entry| (entry.id.as_str(), entry.judgement.verdict.tools.as_slice())),
            ),
        }
    }

    /// Places other tools' figures, each with the campaign it was imported into, on the
    /// line of the closest test that measures the same thing; a figure of a campaign outside
    /// the history, or of a workload no line measures, is left out.
    pub fn with_references(mut self, references: Vec<(String, Reference)>) -> Self {
        for (campaign, reference) in references {
            let Some(number) = self
                .campaigns
                .iter()
                .position(|mark| mark.id == campaign)
                .map(|at| at + 1)
            else {
                continue;
            };
            let at = reference
                .workload
                .tests()
                .iter()
                .find_map(|test| self.lines.iter().position(|line| line.test == *test));
            if let Some(at) = at {
                self.lines[at].references.push(ReferenceMark {
                    campaign,
                    number,
                    reference,
                });
            }
        }
        self
    }

    /// Every change found, by test then age.
    pub fn changes(&self) -> impl Iterator<Item = &Change> {
        self.lines.iter().flat_map(|line| line.changes.iter())
    }

    /// The changes that campaign `id` brought to light: found in the series up to it and not
    /// in the series up to the campaign before it. These are what an alert tells of, once.
    pub fn found_by(key: &str, entries: &[Entry], id: &str) -> FoundChanges {
        let Some(at) = entries.iter().position(|entry| entry.id == id) else {
            return FoundChanges::default();
        };
        let before = Self::of(key, &entries[..at]);
        let now = Self::of(key, &entries[..=at]);
        let changes = now
            .changes()
            .filter(|change| {
                !before.changes().any(|old| {
                    old.test == change.test
                        && old.tool == change.tool
                        && old.first_campaign == change.first_campaign
                })
            })
            .cloned()
            .collect();
        let request_changes = now
            .request_changes()
            .filter(|change| {
                !before.request_changes().any(|old| {
                    old.tool == change.tool && old.first_campaign == change.first_campaign
                })
            })
            .cloned()
            .collect();
        FoundChanges {
            changes,
            request_changes,
        }
    }

    /// Every change in a tool's requests, by tool then age.
    pub fn request_changes(&self) -> impl Iterator<Item = &RequestChange> {
        self.requests.iter().flat_map(|line| line.changes.iter())
    }
}

/// The changes in a line's tested points (`SeriesPoint::tested`).
fn changes(line: &Line, campaigns: &[CampaignMark], alpha: f64) -> Vec<Change> {
    let valid: Vec<&SeriesPoint> = line.points.iter().filter(|p| p.tested).collect();
    let values: Vec<f64> = valid.iter().map(|p| p.mb_per_s).collect();
    let detector = Detector {
        min_change_pct: MIN_CHANGE_PCT,
        min_segment: MIN_CAMPAIGNS_EACH_SIDE,
        ..Detector::default()
    };
    let found = detector.find(&values);
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(found.iter().map(|c| c.index))
        .chain(std::iter::once(valid.len()))
        .collect();
    let mut changes = Vec::new();
    for (i, point) in found.iter().enumerate() {
        let before = &valid[bounds[i]..point.index];
        let after = &valid[point.index..bounds[i + 2]];
        let side = |points: &[&SeriesPoint]| {
            Side::of(
                points
                    .iter()
                    .map(|p| (p.mb_per_s, p.noise.variance))
                    .collect(),
                true,
            )
        };
        let (a, b) = (side(before), side(after));
        let (higher, lower) = if b.stat.median < a.stat.median {
            (&a, &b)
        } else {
            (&b, &a)
        };
        if !stands_out(higher, lower, alpha) {
            continue;
        }
        let first = valid[point.index];
        let most_named = |points: &[&SeriesPoint]| {
            let named: Vec<Component> = points
                .iter()
                .filter_map(|p| {
                    campaigns
                        .get(p.number - 1)?
                        .component_for(line.tool.as_deref())
                })
                .collect();
            named
                .iter()
                .copied()
                .max_by_key(|c| named.iter().filter(|n| *n == c).count())
        };
        // A line that follows one tool of several is told that tool's version.
        let version = |point: Option<&&SeriesPoint>| {
            point.and_then(|p| {
                campaigns
                    .get(p.number - 1)?
                    .version_for(line.tool.as_deref())
            })
        };
        changes.push(Change {
            test: line.test,
            tool: line.tool.clone(),
            first_campaign: first.campaign.clone(),
            first_number: first.number,
            before_mb_s: a.stat.median,
            after_mb_s: b.stat.median,
            change_pct: (b.stat.median - a.stat.median) / a.stat.median * 100.0,
            p_value: crate::noise::welch_p(&a, &b).unwrap_or(1.0),
            campaigns_before: before.len(),
            campaigns_after: after.len(),
            component_before: most_named(before),
            component_after: most_named(after),
            tool_before: version(before.last()),
            tool_after: version(after.first()),
        });
    }
    changes
}

/// One row of a series' CSV: a campaign's figure for one test.
#[derive(Serialize)]
struct CsvRow<'a> {
    series: &'a str,
    test: &'a str,
    /// The tool a tool test's line follows.
    tool: Option<&'a str>,
    number: usize,
    campaign: &'a str,
    created: String,
    mb_per_s: f64,
    min: f64,
    max: f64,
    spread_pct: Option<f64>,
    runs: usize,
    valid: bool,
    setting: &'a str,
    /// The backup tool's version, for a campaign that ran one.
    tool_version: Option<&'a str>,
    /// The change that starts at this campaign, in percent, when one does.
    change_pct: Option<f64>,
}

impl History {
    /// The series as CSV: one row per campaign and test, oldest first.
    pub fn to_csv(&self) -> Result<String, csv::Error> {
        let mut writer = csv::Writer::from_writer(Vec::new());
        for line in &self.lines {
            for point in &line.points {
                let change = line
                    .changes
                    .iter()
                    .find(|change| change.first_campaign == point.campaign);
                writer.serialize(CsvRow {
                    series: &self.key,
                    test: line.test.id(),
                    tool: line.tool.as_deref(),
                    number: point.number,
                    campaign: &point.campaign,
                    created: crate::clock::format_ms(point.created_ms),
                    mb_per_s: point.mb_per_s,
                    min: point.min,
                    max: point.max,
                    spread_pct: point.spread_pct,
                    runs: point.runs,
                    valid: point.valid,
                    setting: &point.setting,
                    tool_version: self
                        .campaigns
                        .get(point.number - 1)
                        .and_then(|mark| mark.tool_version.as_deref()),
                    change_pct: change.map(|change| change.change_pct),
                })?;
            }
        }
        let bytes = writer
            .into_inner()
            .map_err(|error| csv::Error::from(error.into_error()))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use rand_distr::{Distribution, Normal};

    /// A line of campaigns at `steps` of (level, count), each campaign the median of three
    /// runs with 3 % Gaussian noise between them, as a campaign with `repeat: 3` measures it.
    fn line(seed: u64, steps: &[(f64, usize)]) -> (Line, Vec<CampaignMark>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut points = Vec::new();
        for &(level, count) in steps {
            let noise = Normal::new(level, level * 0.03).expect("a distribution");
            for _ in 0..count {
                let runs: Vec<f64> = (0..3).map(|_| noise.sample(&mut rng)).collect();
                let side = Side::of(runs.iter().map(|v| (*v, 0.0)).collect(), true);
                let number = points.len() + 1;
                points.push(SeriesPoint {
                    campaign: format!("c{number}"),
                    number,
                    created_ms: number as i64,
                    mb_per_s: side.stat.median,
                    basis: Default::default(),
                    min: side.stat.min,
                    max: side.stat.max,
                    spread_pct: Some(side.stat.spread_pct()),
                    runs: 3,
                    valid: true,
                    tested: true,
                    setting: String::new(),
                    noise: side,
                });
            }
        }
        let campaigns = points
            .iter()
            .map(|p| CampaignMark {
                id: p.campaign.clone(),
                name: String::new(),
                created_ms: p.created_ms,
                component: None,
                conclusive: false,
                tool_version: None,
                tools: Vec::new(),
            })
            .collect();
        let line = Line {
            test: TestKind::FullBackup,
            tool: None,
            points,
            changes: Vec::new(),
            references: Vec::new(),
        };
        (line, campaigns)
    }

    #[test]
    fn a_step_after_the_twentieth_campaign_is_found_at_the_twenty_first_with_its_size() {
        for seed in 0..20 {
            let (line, campaigns) = line(seed, &[(300.0, 20), (200.0, 10)]);
            let found = changes(&line, &campaigns, FAMILY_ALPHA);
            assert_eq!(found.len(), 1, "seed {seed}: {found:?}");
            assert_eq!(found[0].first_number, 21, "seed {seed}: {found:?}");
            assert!(
                (found[0].change_pct + 33.3).abs() < 3.0,
                "seed {seed}: {found:?}"
            );
        }
    }

    #[test]
    fn thirty_identical_campaigns_report_no_change_in_at_least_95_percent_of_series() {
        let series = 1000;
        let alarms = (0..series)
            .filter(|&seed| {
                let (line, campaigns) = line(seed, &[(300.0, 30)]);
                !changes(&line, &campaigns, FAMILY_ALPHA).is_empty()
            })
            .count();
        let rate = alarms as f64 / series as f64;
        println!(
            "series of 30 identical campaigns with a change reported: {alarms} of {series} ({:.1} %)",
            rate * 100.0
        );
        assert!(rate <= 0.05, "false-alarm rate {rate}");
    }

    #[test]
    fn a_change_that_came_with_a_tool_upgrade_names_both_versions() {
        let (line, mut campaigns) = line(7, &[(300.0, 10), (200.0, 10)]);
        for (at, mark) in campaigns.iter_mut().enumerate() {
            mark.tool_version = Some(
                if at < 10 {
                    "restic 0.14.0"
                } else {
                    "restic 0.16.4"
                }
                .to_string(),
            );
        }
        let found = changes(&line, &campaigns, FAMILY_ALPHA);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].upgrade(), Some(("restic 0.14.0", "restic 0.16.4")));
        assert!(
            found[0]
                .words()
                .ends_with("; the tool changed with it, from restic 0.14.0 to restic 0.16.4"),
            "{}",
            found[0].words()
        );
        // The same versions on both sides: nothing said of the tool.
        for mark in &mut campaigns {
            mark.tool_version = Some("restic 0.16.4".to_string());
        }
        let found = changes(&line, &campaigns, FAMILY_ALPHA);
        assert_eq!(found[0].upgrade(), None);
        assert!(
            !found[0].words().contains("the tool changed"),
            "{}",
            found[0].words()
        );
    }
}
