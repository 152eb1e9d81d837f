//! The object-lock probe: whether a bucket would keep a backup from someone who holds the
//! credentials the lab was given. It reads the bucket's versioning and object-lock settings,
//! writes a small object of its own, tries on it what such a person would try (an overwrite, a
//! delete, a shorter retention, a delete of its first version) as those credentials can, and
//! keeps each step's answer. It never touches an object it did not write, and removes its own
//! where the store lets it; what a lock keeps is said with its size and until when.

use std::sync::atomic::AtomicBool;

use rusty_s3::Method;
use serde::{Deserialize, Serialize};

use super::client::{Answer, Request, S3Client, first_text as xml_text};
use super::operations::RequestCounts;

/// Bytes of the probe object: enough to be an object, small enough that a lock keeping it
/// for years costs nothing.
const PROBE_BYTES: usize = 1024;
/// Where the probe's objects go under the campaign's prefix; the sweeps of the lab's run
/// objects never look here (a locked probe would only collect delete markers).
const PROBE_KEY_START: &str = "backlab-lock-probe-";
/// The header a request sends to lift a governance-mode retention, as credentials allowed to
/// bypass it would: the probe tries what such credentials could do.
const BYPASS: (&str, &str) = ("x-amz-bypass-governance-retention", "true");

/// What the probe concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LockVerdict {
    /// The probe's data could not be removed nor its lock shortened with these credentials.
    Immutable,
    /// The probe's data was removed or replaced, or its lock shortened.
    NotImmutable,
    /// The store refused or failed a call the answer rests on, for a reason not a lock.
    CannotTell,
}

impl LockVerdict {
    /// The verdict as an id, as the JSON and the CSV give it: `not_immutable`.
    pub fn id(self) -> &'static str {
        match self {
            LockVerdict::Immutable => "immutable",
            LockVerdict::NotImmutable => "not_immutable",
            LockVerdict::CannotTell => "cannot_tell",
        }
    }

    /// The verdict as the answer's first words.
    pub fn word(self) -> &'static str {
        match self {
            LockVerdict::Immutable => "immutable",
            LockVerdict::NotImmutable => "NOT immutable",
            LockVerdict::CannotTell => "cannot tell",
        }
    }
}

/// A bucket's default retention, as its object-lock configuration gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DefaultRetention {
    /// `COMPLIANCE` or `GOVERNANCE`.
    pub mode: String,
    pub days: Option<u32>,
    pub years: Option<u32>,
}

impl DefaultRetention {
    /// `30 days (compliance)`.
    pub fn words(&self) -> String {
        let span = match (self.years, self.days) {
            (Some(years), _) if years > 0 => plural(u64::from(years), "year", "years"),
            (_, Some(days)) => plural(u64::from(days), "day", "days"),
            _ => "no period".to_string(),
        };
        format!("{span} ({})", self.mode.to_lowercase())
    }
}

/// One thing the probe tried, and what the store answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LockStep {
    /// What was tried, in words: `a delete of the probe's first version`.
    pub tried: String,
    /// The request, without its signature: `DELETE backlab/probe?versionId=…`.
    pub request: String,
    /// The answer's status and S3 code (`403 AccessDenied`), or why there was none.
    pub answer: String,
    /// Whether the store did it; `None` when it did not answer.
    pub accepted: Option<bool>,
    /// What the answer means for the probe: `refused: the version is kept`.
    pub meaning: String,
}

/// An object of the probe's that the store keeps: a lock holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct KeptObject {
    pub key: String,
    pub version: Option<String>,
    pub bytes: u64,
    /// When its retention ends, as the store gave it (RFC 3339); `None` when not known.
    pub until: Option<String>,
}

/// What the object-lock probe found of a bucket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LockFigures {
    /// The store and bucket, in words.
    pub store: String,
    /// The bucket's versioning: `Enabled`, `Suspended`, `off`, or `unknown` when not read.
    pub versioning: String,
    /// Whether the bucket has object lock; `None` when the store would not say.
    pub lock_enabled: Option<bool>,
    /// The bucket's default retention, when it has one.
    pub default_retention: Option<DefaultRetention>,
    /// The probe object's own retention when written: its mode and until when.
    pub probe_retention: Option<(String, String)>,
    pub steps: Vec<LockStep>,
    pub verdict: LockVerdict,
    /// The answer in a sentence: `immutable: a delete of its version was refused, retention
    /// 30 days (compliance)`.
    pub answer: String,
    /// The probe's objects the store keeps.
    pub kept: Vec<KeptObject>,
    /// Bytes of the probe's writes the store took.
    #[serde(default)]
    pub written_bytes: u64,
    /// Every attempt the probe sent, by S3 operation, for its bill; `None` when it sent none
    /// (or was kept before the probe's requests were counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<RequestCounts>,
}

/// What each step found, for the verdict.
#[derive(Debug, Default, Clone, PartialEq)]
struct Found {
    /// The probe was written; `Err` with the answer when it was not.
    written: Option<Result<(), String>>,
    /// The bucket's versioning as it said it (`Enabled`, `Suspended`, `off`).
    versioning: Option<String>,
    lock_enabled: Option<bool>,
    default_retention: Option<DefaultRetention>,
    /// The first version's retention ends in the future.
    retained: Option<(String, String)>,
    overwrite: Option<bool>,
    delete: Option<bool>,
    /// The retention was shortened: from, to.
    shortened: Option<(String, String)>,
    /// The shorter retention was refused.
    shorten_refused: bool,
    /// A delete of the first version: accepted, refused, or not answered.
    delete_version: Option<Result<bool, String>>,
    /// Bytes of the writes the store took.
    written_bytes: u64,
}

/// Probes the bucket of `client` with objects under `prefix`, named with `tag`.
pub fn probe(client: &S3Client, prefix: &str, tag: &str, give_up: &AtomicBool) -> LockFigures {
    let mut prober = Prober {
        client,
        key: format!("{prefix}{PROBE_KEY_START}{tag}"),
        give_up,
        steps: Vec::new(),
    };
    let mut found = Found::default();
    prober.read_bucket(&mut found);
    let first = probe_body(tag, 1);
    let version = prober.write(&first, &mut found);
    if found.written != Some(Ok(())) {
        return prober.conclude(&found, Vec::new());
    }
    let mut versions: Vec<(String, u64)> = Vec::new();
    if let Some(version) = &version {
        versions.push((version.clone(), first.len() as u64));
    }
    found.retained = prober
        .read_retention(version.as_deref())
        .filter(|(_, until)| in_future(until));

    // What someone holding these credentials would try.
    let second = probe_body(tag, 2);
    if let Some(newer) = prober.overwrite(&second, &mut found) {
        versions.push((newer, second.len() as u64));
    }
    let marker = prober.delete(&mut found);
    if let (Some(version), Some((mode, until))) = (&version, found.retained.clone()) {
        prober.shorten(version, &mode, &until, &mut found);
    }
    if let Some(version) = &version {
        let deleted = prober.delete_version(version);
        if deleted == Ok(true) {
            versions.retain(|(have, _)| have != version);
        }
        found.delete_version = Some(deleted);
    }

    // What is left of the probe is removed where the store allows it.
    let unversioned_left = version.is_none() && found.delete != Some(true);
    let kept = prober.clean_up(
        &versions,
        marker.as_deref(),
        unversioned_left.then_some(second.len() as u64),
    );
    prober.conclude(&found, kept)
}

/// The probe under way: the client, the probe's key, and each step with its answer.
struct Prober<'c> {
    client: &'c S3Client,
    key: String,
    give_up: &'c AtomicBool,
    steps: Vec<LockStep>,
}

impl Prober<'_> {
    /// Sends `request` and keeps it as a step: what was tried, the answer, and what it means.
    fn ask(
        &mut self,
        tried: &str,
        request: &Request<'_>,
        meaning: impl Fn(&Answer) -> String,
    ) -> Result<Answer, String> {
        let shown = shown_request(request);
        let answer = self.client.ask(request, self.give_up);
        self.steps.push(match &answer {
            Ok(answer) => LockStep {
                tried: tried.to_string(),
                request: shown,
                answer: answer.words(),
                accepted: Some(answer.accepted()),
                meaning: meaning(answer),
            },
            Err(failure) => LockStep {
                tried: tried.to_string(),
                request: shown,
                answer: failure.message.clone(),
                accepted: None,
                meaning: "no answer".to_string(),
            },
        });
        answer.map_err(|failure| failure.message)
    }

    /// The bucket's versioning and object-lock configuration.
    fn read_bucket(&mut self, found: &mut Found) {
        let versioning = self.ask(
            "read the bucket's versioning",
            &bucket_request("GetBucketVersioning", &[("versioning", "")]),
            |answer| match (answer.accepted(), xml_text(&answer.body, "Status")) {
                (true, Some(status)) => format!("versioning {status}"),
                (true, None) => "versioning never enabled".to_string(),
                (false, _) => "the store would not say".to_string(),
            },
        );
        if let Ok(answer) = versioning
            && answer.accepted()
        {
            let status = xml_text(&answer.body, "Status");
            found.versioning = Some(status.unwrap_or_else(|| "off".to_string()));
        }
        let lock = self.ask(
            "read the bucket's object-lock configuration",
            &bucket_request("GetObjectLockConfiguration", &[("object-lock", "")]),
            |answer| {
                if answer.accepted() {
                    match default_retention(&answer.body) {
                        Some(retention) => format!("object lock, default {}", retention.words()),
                        None => "object lock, no default retention".to_string(),
                    }
                } else if no_lock(answer) {
                    "no object lock".to_string()
                } else {
                    "the store would not say".to_string()
                }
            },
        );
        if let Ok(answer) = lock {
            if answer.accepted() {
                found.lock_enabled = Some(xml_text(&answer.body, "ObjectLockEnabled").is_some());
                found.default_retention = default_retention(&answer.body);
            } else if no_lock(&answer) {
                found.lock_enabled = Some(false);
            }
        }
    }

    /// Writes the probe object as a backup tool writes one; its version, when the bucket
    /// keeps versions.
    fn write(&mut self, body: &[u8], found: &mut Found) -> Option<String> {
        let key = self.key.clone();
        let written = self.ask(
            "write the probe object",
            &object_request("PutObject", Method::Put, &key, &[], &[], body),
            |answer| {
                if answer.accepted() {
                    match version_of(answer) {
                        Some(version) => format!("written, version {version}"),
                        None => "written".to_string(),
                    }
                } else {
                    "refused: nothing was written".to_string()
                }
            },
        );
        match written {
            Ok(answer) if answer.accepted() => {
                found.written = Some(Ok(()));
                found.written_bytes += body.len() as u64;
                version_of(&answer)
            }
            Ok(answer) => {
                found.written = Some(Err(answer.words()));
                None
            }
            Err(why) => {
                found.written = Some(Err(why));
                None
            }
        }
    }

    /// The mode and end of the retention the store gave the probe's `version`.
    fn read_retention(&mut self, version: Option<&str>) -> Option<(String, String)> {
        let key = self.key.clone();
        let query: Vec<(&str, &str)> = version.map(|v| ("versionId", v)).into_iter().collect();
        let answer = self.ask(
            "read the probe's retention",
            &object_request("HeadObject", Method::Head, &key, &query, &[], &[]),
            |answer| match retention_of(answer) {
                Some((mode, until)) => {
                    format!("retained until {until} ({})", mode.to_lowercase())
                }
                None if answer.accepted() => "no retention".to_string(),
                None => "the store would not say".to_string(),
            },
        );
        answer.ok().as_ref().and_then(retention_of)
    }

    /// Writes the probe again; the new version, when the bucket keeps versions.
    fn overwrite(&mut self, body: &[u8], found: &mut Found) -> Option<String> {
        let key = self.key.clone();
        let answer = self
            .ask(
                "overwrite the probe object",
                &object_request("PutObject", Method::Put, &key, &[], &[], body),
                |answer| match (answer.accepted(), version_of(answer)) {
                    (true, Some(_)) => "accepted: a new version; the first is kept".to_string(),
                    (true, None) => "accepted: the probe's content was replaced".to_string(),
                    (false, _) => "refused".to_string(),
                },
            )
            .ok()?;
        found.overwrite = Some(answer.accepted());
        if answer.accepted() {
            found.written_bytes += body.len() as u64;
        }
        version_of(&answer)
    }

    /// Deletes the probe as a plain delete does; the delete marker's version, when the
    /// bucket left one.
    fn delete(&mut self, found: &mut Found) -> Option<String> {
        let key = self.key.clone();
        let answer = self
            .ask(
                "delete the probe object",
                &object_request("DeleteObject", Method::Delete, &key, &[], &[], &[]),
                |answer| match (answer.accepted(), answer.header("x-amz-delete-marker")) {
                    (true, Some("true")) => {
                        "accepted: a delete marker; the versions are kept".to_string()
                    }
                    (true, _) => "accepted: the object is gone".to_string(),
                    (false, _) => "refused".to_string(),
                },
            )
            .ok()?;
        found.delete = Some(answer.accepted());
        (answer.header("x-amz-delete-marker") == Some("true"))
            .then(|| version_of(&answer))
            .flatten()
    }

    /// Asks for a shorter retention of the first version, bypassing governance as
    /// credentials allowed to would.
    fn shorten(&mut self, version: &str, mode: &str, until: &str, found: &mut Found) {
        let key = self.key.clone();
        let shorter = shorter_than(until);
        let body = retention_xml(mode, &shorter);
        let query = [("retention", ""), ("versionId", version)];
        let answer = self.ask(
            "shorten the first version's retention",
            &object_request(
                "PutObjectRetention",
                Method::Put,
                &key,
                &query,
                &[BYPASS],
                body.as_bytes(),
            ),
            |answer| {
                if answer.accepted() {
                    format!("accepted: retained until {shorter} (was {until})")
                } else {
                    "refused: the retention stands".to_string()
                }
            },
        );
        match answer {
            Ok(answer) if answer.accepted() => {
                found.shortened = Some((until.to_string(), shorter.clone()));
            }
            Ok(_) => found.shorten_refused = true,
            Err(_) => {}
        }
    }

    /// Deletes the first version, bypassing governance as credentials allowed to would:
    /// whether the store did, or why it did not answer.
    fn delete_version(&mut self, version: &str) -> Result<bool, String> {
        let key = self.key.clone();
        let query = [("versionId", version)];
        self.ask(
            "delete the probe's first version",
            &object_request("DeleteObject", Method::Delete, &key, &query, &[BYPASS], &[]),
            |answer| {
                if answer.accepted() {
                    "accepted: the version is gone".to_string()
                } else {
                    "refused: the version is kept".to_string()
                }
            },
        )
        .map(|answer| answer.accepted())
    }

    /// Removes the probe's `versions`, its delete `marker`, and an unversioned probe still
    /// there (of `unversioned` bytes); what the store keeps, with until when.
    fn clean_up(
        &self,
        versions: &[(String, u64)],
        marker: Option<&str>,
        unversioned: Option<u64>,
    ) -> Vec<KeptObject> {
        let cleanup = self.client.cleanup();
        let key = self.key.as_str();
        let mut kept = Vec::new();
        if let Some(bytes) = unversioned
            && cleanup.delete(key, self.give_up).is_err()
        {
            kept.push(KeptObject {
                key: key.to_string(),
                version: None,
                bytes,
                until: None,
            });
        }
        for (version, bytes) in versions {
            let query = [("versionId", version.as_str())];
            let removed = cleanup.ask(
                &object_request("DeleteObject", Method::Delete, key, &query, &[BYPASS], &[]),
                self.give_up,
            );
            if !removed.as_ref().is_ok_and(Answer::accepted) {
                let until = cleanup
                    .ask(
                        &object_request("HeadObject", Method::Head, key, &query, &[], &[]),
                        self.give_up,
                    )
                    .ok()
                    .as_ref()
                    .and_then(retention_of)
                    .map(|(_, until)| until);
                kept.push(KeptObject {
                    key: key.to_string(),
                    version: Some(version.clone()),
                    bytes: *bytes,
                    until,
                });
            }
        }
        if let Some(marker) = marker {
            let query = [("versionId", marker)];
            let _ = cleanup.ask(
                &object_request("DeleteObject", Method::Delete, key, &query, &[], &[]),
                self.give_up,
            );
        }
        kept
    }

    /// The figures of the probe: what it found, each step, the verdict in a sentence, what
    /// the lock keeps, and every request sent (the probe's client's tally is its own).
    fn conclude(self, found: &Found, kept: Vec<KeptObject>) -> LockFigures {
        let (verdict, why) = verdict(found);
        LockFigures {
            store: self.client.store().words(),
            versioning: found
                .versioning
                .clone()
                .unwrap_or_else(|| "unknown".to_string()),
            lock_enabled: found.lock_enabled,
            default_retention: found.default_retention.clone(),
            probe_retention: found.retained.clone(),
            steps: self.steps,
            verdict,
            answer: format!("{}: {why}", verdict.word()),
            kept,
            written_bytes: found.written_bytes,
            requests: self.client.tally().counts(),
        }
    }
}

/// The version id an answer gives, unless the bucket keeps no versions (`null`).
fn version_of(answer: &Answer) -> Option<String> {
    answer
        .header("x-amz-version-id")
        .filter(|version| *version != "null")
        .map(str::to_string)
}

/// The retention mode and end an answer's headers give.
fn retention_of(answer: &Answer) -> Option<(String, String)> {
    Some((
        answer.header("x-amz-object-lock-mode")?.to_string(),
        answer
            .header("x-amz-object-lock-retain-until-date")?
            .to_string(),
    ))
}

/// The verdict from what the steps found, and the sentence that says why.
fn verdict(found: &Found) -> (LockVerdict, String) {
    let retention = || {
        found
            .default_retention
            .as_ref()
            .map(|retention| format!("retention {}", retention.words()))
            .or_else(|| {
                found.retained.as_ref().map(|(mode, until)| {
                    format!("retained until {until} ({})", mode.to_lowercase())
                })
            })
            .unwrap_or_default()
    };
    let no_default = if found.lock_enabled == Some(true) && found.default_retention.is_none() {
        " (the bucket has object lock but no default retention: an object is locked only when \
         its writer asks)"
    } else {
        ""
    };
    let unwritten = match &found.written {
        Some(Ok(())) => None,
        Some(Err(why)) => Some(why.as_str()),
        None => Some("not tried"),
    };
    if let Some(why) = unwritten {
        let words = if why.contains("NoSuchBucket") {
            format!("the bucket does not exist ({why})")
        } else if why.starts_with("403") || why.starts_with("401") {
            format!("the credentials may not write an object here ({why})")
        } else {
            format!("the store did not take the probe's write ({why})")
        };
        return (LockVerdict::CannotTell, words);
    }
    let Some(deleted_version) = &found.delete_version else {
        // No versions: a delete or an overwrite is the end of the data.
        return match (found.delete, found.overwrite) {
            (Some(true), _) => (
                LockVerdict::NotImmutable,
                format!("the probe object was deleted{no_default}"),
            ),
            (_, Some(true)) => (
                LockVerdict::NotImmutable,
                format!("the probe object was overwritten{no_default}"),
            ),
            (Some(false), _) => (
                LockVerdict::CannotTell,
                "a delete was refused, but the bucket keeps no versions of the probe: the \
                 credentials may not delete objects here (a policy, not a lock)"
                    .to_string(),
            ),
            _ => (
                LockVerdict::CannotTell,
                "the store did not answer the probe's delete".to_string(),
            ),
        };
    };
    match deleted_version {
        Ok(true) => (
            LockVerdict::NotImmutable,
            format!(
                "the probe object was deleted (a delete of its version went through){no_default}"
            ),
        ),
        Err(why) => (
            LockVerdict::CannotTell,
            format!("the store did not answer a delete of the probe's version ({why})"),
        ),
        Ok(false) => match (&found.shortened, &found.retained) {
            (Some((from, to)), _) => (
                LockVerdict::NotImmutable,
                format!(
                    "the probe's retention was shortened from {from} to {to} with these \
                     credentials; a delete of its version goes through once it ends"
                ),
            ),
            (None, Some((mode, _))) if found.shorten_refused => {
                let governance = if mode.eq_ignore_ascii_case("GOVERNANCE") {
                    "; governance mode: credentials allowed to bypass it could still delete"
                } else {
                    ""
                };
                (
                    LockVerdict::Immutable,
                    format!(
                        "a delete of its version was refused and its retention could not be \
                         shortened; {}{governance}",
                        retention()
                    ),
                )
            }
            (None, Some(_)) => (
                LockVerdict::CannotTell,
                "a delete of its version was refused, but the store did not answer a shorter \
                 retention"
                    .to_string(),
            ),
            (None, None) => (
                LockVerdict::CannotTell,
                "a delete of its version was refused, but the probe has no retention: the \
                 credentials may not delete versions (a policy, not a lock)"
                    .to_string(),
            ),
        },
    }
}

/// Whether a refused `GET ?object-lock` says the bucket has no object lock (not that the
/// bucket is missing, nor that the credentials may not ask).
fn no_lock(answer: &Answer) -> bool {
    answer.status == 404
        && answer
            .code
            .as_deref()
            .is_none_or(|code| code == "ObjectLockConfigurationNotFoundError")
}

/// A request of the bucket's own.
fn bucket_request<'r>(operation: &'r str, query: &'r [(&'r str, &'r str)]) -> Request<'r> {
    Request {
        operation,
        method: Method::Get,
        key: None,
        query,
        headers: &[],
        body: &[],
    }
}

/// A request of an object.
fn object_request<'r>(
    operation: &'r str,
    method: Method,
    key: &'r str,
    query: &'r [(&'r str, &'r str)],
    headers: &'r [(&'r str, &'r str)],
    body: &'r [u8],
) -> Request<'r> {
    Request {
        operation,
        method,
        key: Some(key),
        query,
        headers,
        body,
    }
}

/// A request as a step shows it: method, key and query, never a signature.
fn shown_request(request: &Request<'_>) -> String {
    let query: Vec<String> = request
        .query
        .iter()
        .map(|(name, value)| {
            if value.is_empty() {
                (*name).to_string()
            } else {
                format!("{name}={value}")
            }
        })
        .collect();
    let mut shown = format!(
        "{} {}",
        request.method.to_str(),
        request.key.unwrap_or("(bucket)")
    );
    if !query.is_empty() {
        shown.push('?');
        shown.push_str(&query.join("&"));
    }
    if request.headers.contains(&BYPASS) {
        shown.push_str(" (bypassing governance)");
    }
    shown
}

/// The probe's content: its own name and which write it is, padded to [`PROBE_BYTES`].
fn probe_body(tag: &str, write: u32) -> Vec<u8> {
    let mut body = format!(
        "backlab object-lock probe {tag}, write {write}: an object of the lab's own, never a \
         backup\n"
    )
    .into_bytes();
    body.resize(PROBE_BYTES, b'.');
    body
}

/// The default retention of an object-lock configuration.
fn default_retention(body: &str) -> Option<DefaultRetention> {
    let mode = xml_text(body, "Mode")?;
    let number = |name| {
        xml_text(body, name)
            .and_then(|value| value.parse::<u32>().ok())
            .filter(|value| *value > 0)
    };
    Some(DefaultRetention {
        mode,
        days: number("Days"),
        years: number("Years"),
    })
}

/// A `PutObjectRetention` body.
fn retention_xml(mode: &str, until: &str) -> String {
    format!(
        "<Retention xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Mode>{mode}</Mode>\
         <RetainUntilDate>{until}</RetainUntilDate></Retention>"
    )
}

/// Whether an RFC 3339 time is later than now.
fn in_future(until: &str) -> bool {
    until
        .parse::<jiff::Timestamp>()
        .is_ok_and(|until| until > jiff::Timestamp::now())
}

/// A retention end shorter than `until`: a day from now, or halfway to `until` when that is
/// sooner.
fn shorter_than(until: &str) -> String {
    let now = jiff::Timestamp::now();
    let day = now + jiff::SignedDuration::from_hours(24);
    let shorter = match until.parse::<jiff::Timestamp>() {
        Ok(until) if until > day + jiff::SignedDuration::from_hours(1) => day,
        Ok(until) => {
            let half = until.duration_since(now) / 2;
            now + half
        }
        Err(_) => day,
    };
    shorter
        .round(jiff::Unit::Second)
        .map_or_else(|_| shorter.to_string(), |rounded| rounded.to_string())
}

fn plural(count: u64, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a versioned bucket with a default retention answers: the write, an overwrite and
    /// a delete accepted (new versions, a delete marker); `shorten` and `delete_version` as
    /// given.
    fn versioned(mode: &str, shorten_refused: bool, delete_version: bool) -> Found {
        Found {
            written: Some(Ok(())),
            versioning: Some("Enabled".to_string()),
            lock_enabled: Some(true),
            default_retention: Some(DefaultRetention {
                mode: mode.to_string(),
                days: Some(30),
                years: None,
            }),
            retained: Some((mode.to_string(), "2027-01-06T00:00:00Z".to_string())),
            overwrite: Some(true),
            delete: Some(true),
            shortened: (!shorten_refused).then(|| {
                (
                    "2027-01-06T00:00:00Z".to_string(),
                    "2026-12-08T00:00:00Z".to_string(),
                )
            }),
            shorten_refused,
            delete_version: Some(Ok(delete_version)),
            written_bytes: 2048,
        }
    }

    /// S3 in compliance mode refuses both the shorter retention and the delete of the
    /// version: immutable, with the retention said.
    #[test]
    fn a_compliance_bucket_that_refuses_both_is_immutable() {
        assert_eq!(
            verdict(&versioned("COMPLIANCE", true, false)),
            (
                LockVerdict::Immutable,
                "a delete of its version was refused and its retention could not be \
                 shortened; retention 30 days (compliance)"
                    .to_string()
            )
        );
    }

    /// Governance mode that these credentials may not bypass holds against them, and the
    /// answer says who could still delete.
    #[test]
    fn a_governance_bucket_is_immutable_only_to_credentials_that_may_not_bypass_it() {
        let (held, why) = verdict(&versioned("GOVERNANCE", true, false));
        assert_eq!(held, LockVerdict::Immutable);
        assert!(
            why.ends_with("credentials allowed to bypass it could still delete"),
            "{why}"
        );
        let (bypassed, why) = verdict(&versioned("GOVERNANCE", false, true));
        assert_eq!(bypassed, LockVerdict::NotImmutable);
        assert!(why.starts_with("the probe object was deleted"), "{why}");
    }

    /// A retention that could be shortened is no lock, even while the version's delete is
    /// still refused.
    #[test]
    fn a_retention_that_could_be_shortened_is_not_immutable() {
        let (shortened, why) = verdict(&versioned("COMPLIANCE", false, false));
        assert_eq!(shortened, LockVerdict::NotImmutable);
        assert_eq!(
            why,
            "the probe's retention was shortened from 2027-01-06T00:00:00Z to \
             2026-12-08T00:00:00Z with these credentials; a delete of its version goes \
             through once it ends"
        );
    }

    /// A plain bucket: the delete is the end of the probe. One whose delete is refused and
    /// keeps no versions is a policy, not a lock: cannot tell.
    #[test]
    fn a_plain_bucket_loses_the_probe_and_a_refusal_without_a_lock_cannot_tell() {
        let plain = Found {
            written: Some(Ok(())),
            lock_enabled: Some(false),
            overwrite: Some(true),
            delete: Some(true),
            ..Found::default()
        };
        assert_eq!(
            verdict(&plain),
            (
                LockVerdict::NotImmutable,
                "the probe object was deleted".to_string()
            )
        );
        let refused = Found {
            delete: Some(false),
            overwrite: Some(false),
            ..plain.clone()
        };
        let (verdict_of, why) = verdict(&refused);
        assert_eq!(verdict_of, LockVerdict::CannotTell);
        assert!(why.contains("a policy, not a lock"), "{why}");
        let unwritten = Found {
            written: Some(Err("403 AccessDenied".to_string())),
            ..Found::default()
        };
        assert_eq!(
            verdict(&unwritten),
            (
                LockVerdict::CannotTell,
                "the credentials may not write an object here (403 AccessDenied)".to_string()
            )
        );
    }

    /// Object lock without a default retention locks nothing a writer does not ask for: the
    /// answer says so beside the deleted probe.
    #[test]
    fn a_lock_without_a_default_retention_is_said() {
        let found = Found {
            written: Some(Ok(())),
            versioning: Some("Enabled".to_string()),
            lock_enabled: Some(true),
            overwrite: Some(true),
            delete: Some(true),
            delete_version: Some(Ok(true)),
            ..Found::default()
        };
        let (verdict_of, why) = verdict(&found);
        assert_eq!(verdict_of, LockVerdict::NotImmutable);
        assert!(why.contains("no default retention"), "{why}");
    }

    /// A step shows the request's method, key and subresources, never a signature.
    #[test]
    fn a_request_is_shown_without_its_signature() {
        let query = [("retention", ""), ("versionId", "v1")];
        let request = object_request(
            "PutObjectRetention",
            Method::Put,
            "backlab/probe",
            &query,
            &[BYPASS],
            b"x",
        );
        assert_eq!(
            shown_request(&request),
            "PUT backlab/probe?retention&versionId=v1 (bypassing governance)"
        );
    }

    /// A bucket's lock configuration gives its mode and period; a shorter end is before the
    /// one given.
    #[test]
    fn a_default_retention_is_read_and_a_shorter_end_is_sooner() {
        let body = "<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled>\
                    <Rule><DefaultRetention><Mode>COMPLIANCE</Mode><Years>1</Years>\
                    </DefaultRetention></Rule></ObjectLockConfiguration>";
        let retention = default_retention(body).expect("a retention");
        assert_eq!(retention.words(), "1 year (compliance)");
        let until = jiff::Timestamp::now() + jiff::SignedDuration::from_hours(24 * 30);
        let shorter: jiff::Timestamp = shorter_than(&until.to_string()).parse().expect("a time");
        assert!(shorter < until && shorter > jiff::Timestamp::now());
        let soon = jiff::Timestamp::now() + jiff::SignedDuration::from_hours(2);
        let sooner: jiff::Timestamp = shorter_than(&soon.to_string()).parse().expect("a time");
        assert!(sooner < soon, "{sooner} before {soon}");
    }
}
