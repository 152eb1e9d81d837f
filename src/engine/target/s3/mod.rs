//! An object store as a backup target: each stream writes objects of `object_size` as
//! multipart uploads of `part_size` parts, with up to `concurrency` parts in flight, and a
//! restore reads them back with ranged GETs in parallel. The store is one the lab's operator
//! named at start (`stores`); a spec names it and gives the prefix under which the lab's
//! objects go. Every object and upload a run makes is removed when it ends, however it ends,
//! and those a crashed lab left are swept at start (`sweep`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{
    Capabilities, FieldInput, Kind, Opening, Settings, SettingsText, SettingsType, Sink, Target,
    TypedField, no_path, read_settings, settings_of,
};
use crate::engine::EngineSettings;
use crate::engine::error::EngineError;
use crate::engine::params::RunParams;
use crate::engine::target::TargetPlan;
use crate::engine::target::image::{ImageRequest, RestoreImage};
use crate::field_errors::FieldErrors;
use crate::size::{ByteSize, format_bytes};

pub mod client;
pub mod figures;
mod image;
pub mod journal;
pub mod lock;
pub mod operations;
pub mod relay;
mod sink;
pub mod stores;
pub mod sweep;

pub use figures::S3Figures;
pub use stores::{CredentialSources, ObjectStore, ObjectStores};

use crate::engine::target::{KindFacts, ToolRepository, Writes};
use client::S3Client;
use figures::RequestTally;

/// The smallest part S3 takes (all but an object's last part).
pub const MIN_PART: u64 = 5 << 20;
/// The largest part S3 takes.
pub const MAX_PART: u64 = 5 << 30;
/// Parts one upload may have.
pub const MAX_PARTS: u64 = 10_000;
/// Most parts one stream keeps in flight.
pub const MAX_CONCURRENCY: u32 = 256;
/// Longest the lab waits for a store's answer to the check at submission.
const CHECK_TIMEOUT: Duration = Duration::from_secs(5);

/// Settings of a spec's object-store target that would name an endpoint or a credential:
/// refused, since stores are the lab's.
const NOT_FROM_A_SPEC: [&str; 9] = [
    "endpoint",
    "url",
    "bucket",
    "region",
    "host",
    "access_key",
    "access_key_id",
    "secret_key",
    "secret_access_key",
];

/// An object-store target's settings as a spec gives them. Each field's comment and bounds
/// are what the OpenAPI document says of it.
#[derive(Debug, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct S3Settings {
    /// Object store: the name of a store the lab was started with (`--s3-store NAME=URL`);
    /// required with `s3`. A spec names a store, never an endpoint, bucket or credential.
    pub store: Option<String>,
    /// Object store: where the lab's objects go in the bucket (default `backlab/`).
    pub prefix: Option<String>,
    /// Object store: bytes in one part of a multipart upload, 5M to 5G (default 16M).
    pub part_size: Option<ByteSize>,
    /// Object store: parts each stream keeps in flight (default 8).
    #[schema(minimum = 1, maximum = 256)]
    pub concurrency: Option<u32>,
    /// Object store: bytes in one object, at least one part (default 1G).
    pub object_size: Option<ByteSize>,
}

/// A validated object-store target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct S3Config {
    pub store: String,
    pub prefix: String,
    pub part_size: u64,
    /// Parts each stream keeps in flight.
    pub concurrency: u32,
    pub object_size: u64,
}

impl S3Config {
    /// The part size and concurrency of one run: the run's own when a sweep sets them.
    pub fn at(&self, params: &RunParams) -> S3Config {
        S3Config {
            part_size: params.part_size.unwrap_or(self.part_size),
            concurrency: params.concurrency.unwrap_or(self.concurrency),
            ..self.clone()
        }
    }

    /// Memory a run's streams hold in parts: each fills one while `concurrency` are sent.
    pub fn part_memory(&self, streams: u32) -> u64 {
        u64::from(streams)
            .saturating_mul(u64::from(self.concurrency) + 1)
            .saturating_mul(self.part_size)
    }
}

/// Checks a part size against S3's limits; `None` with the problem in `errors` under `field`.
pub fn check_part_size(bytes: u64, field: &str, errors: &mut FieldErrors) -> Option<u64> {
    if (MIN_PART..=MAX_PART).contains(&bytes) {
        Some(bytes)
    } else {
        errors.add(
            field,
            format!(
                "must be between {} and {} (S3's limits on a part)",
                format_bytes(MIN_PART),
                format_bytes(MAX_PART)
            ),
        );
        None
    }
}

/// Checks a concurrency; `None` with the problem in `errors` under `field`.
pub fn check_concurrency(value: u32, field: &str, errors: &mut FieldErrors) -> Option<u32> {
    if (1..=MAX_CONCURRENCY).contains(&value) {
        Some(value)
    } else {
        errors.add(field, format!("must be between 1 and {MAX_CONCURRENCY}"));
        None
    }
}

/// A spec's object-store target: a store name, a prefix of safe characters, and part size,
/// concurrency and object size within S3's limits.
fn plan(path: Option<&Path>, settings: &Settings, errors: &mut FieldErrors) -> Option<TargetPlan> {
    let no_path = no_path(&FACTS, path, errors);
    let before = errors.0.len();
    for name in NOT_FROM_A_SPEC {
        if settings.contains_key(name) {
            errors.add(
                format!("target.{name}"),
                "cannot be given in a spec: the lab writes only to the stores its operator \
                 named at start (--s3-store NAME=URL, with credentials from the environment \
                 or a credentials file); name one with target.store",
            );
        }
    }
    if errors.0.len() > before {
        return None;
    }
    let settings: S3Settings = read_settings(&FACTS, settings, errors)?;
    let store = settings.store.unwrap_or_default();
    if store.is_empty() {
        errors.add(
            "target.store",
            "is required with kind s3: the name of a store the lab was started with",
        );
    }
    let prefix = settings.prefix.unwrap_or_else(|| "backlab/".to_string());
    let prefix_ok = prefix.len() <= 256
        && !prefix.starts_with('/')
        && !prefix
            .split('/')
            .any(|segment| segment == "." || segment == "..")
        && prefix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c));
    if !prefix_ok {
        errors.add(
            "target.prefix",
            "must be at most 256 letters, digits, '-', '_', '.' or '/', not start with '/' and \
             have no '.' or '..' segment",
        );
    }
    let part_size = check_part_size(
        settings.part_size.map_or(16 << 20, |size| size.bytes()),
        "target.part_size",
        errors,
    );
    let concurrency = check_concurrency(
        settings.concurrency.unwrap_or(8),
        "target.concurrency",
        errors,
    );
    let object_size = settings.object_size.map_or(1 << 30, |size| size.bytes());
    // An object smaller than a part is one upload of one small part: the run would measure
    // the store's requests per second, not its throughput, and take far longer than asked.
    if let Some(part_size) = part_size
        && !(part_size..=MAX_PARTS.saturating_mul(part_size)).contains(&object_size)
    {
        errors.add(
            "target.object_size",
            format!(
                "must be between one part ({}) and {} parts of it ({}): a smaller object is \
                 one upload of a part smaller than the part size",
                format_bytes(part_size),
                MAX_PARTS,
                format_bytes(MAX_PARTS * part_size)
            ),
        );
    }
    let config = S3Config {
        store,
        prefix,
        part_size: part_size?,
        concurrency: concurrency?,
        object_size,
    };
    (no_path && errors.0.len() == before).then(|| TargetPlan::new(S3Target(config)))
}

/// The name the lab's objects start with under a prefix: the writing lab's own
/// (`EngineSettings::object_owner`), so a sweep never touches what another lab sharing the
/// bucket is writing, even one on the same machine.
pub fn lab_key_start(prefix: &str, owner: &str) -> String {
    format!("{prefix}{}{}-", super::LAB_FILE_PREFIX, key_safe(owner))
}

/// `name` in characters safe in a key.
fn key_safe(name: &str) -> String {
    let name: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(100)
        .collect();
    if name.is_empty() {
        "host".to_string()
    } else {
        name
    }
}

/// This machine's name with the process's id: the owner of the objects of a run started from
/// the command line, which no later sweep looks for (its operator watches it, and an
/// interrupt cleans up).
pub fn process_owner() -> String {
    let uname = rustix::system::uname();
    format!(
        "{}-run{}",
        key_safe(&uname.nodename().to_string_lossy()),
        std::process::id()
    )
}

/// An object store, as a run writes to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct S3Target(pub S3Config);

impl S3Target {
    fn store<'s>(&self, stores: &'s ObjectStores) -> Result<&'s ObjectStore, EngineError> {
        stores
            .get(&self.0.store)
            .ok_or_else(|| EngineError::ObjectStore(unknown_store(&self.0.store, stores)))
    }
}

/// The problem with a store name the lab does not know.
fn unknown_store(name: &str, stores: &ObjectStores) -> String {
    let names = stores.names();
    if names.is_empty() {
        format!("the lab knows no store named {name}: it was started without --s3-store NAME=URL")
    } else {
        format!(
            "the lab knows no store named {name}; its stores are: {}",
            names.join(", ")
        )
    }
}

/// What this kind is before its settings are read. Objects in a store elsewhere: a tool that can keeps its repository in the bucket.
pub const FACTS: KindFacts = KindFacts {
    id: "s3",
    label: "object store (S3)",
    takes_path: false,
    writes: Writes::Nothing,
    tool_repository: ToolRepository::InBucket,
    object_store: true,
};

/// The object-store kind.
pub struct S3;

impl Kind for S3 {
    fn facts(&self) -> &'static KindFacts {
        &FACTS
    }

    fn plan(
        &self,
        path: Option<&Path>,
        settings: &Settings,
        errors: &mut FieldErrors,
    ) -> Option<TargetPlan> {
        plan(path, settings, errors)
    }

    fn stored(&self, value: serde_json::Value) -> Result<TargetPlan, serde_json::Error> {
        super::stored_as::<S3Target>(value)
    }

    fn settings_type(&self) -> Option<SettingsType> {
        Some(SettingsType::of::<S3Settings>())
    }

    fn typed_fields(&self) -> &'static [TypedField] {
        &[
            TypedField {
                setting: "store",
                label: "Store (one the lab was started with)",
                input: FieldInput::Text,
                default: "",
            },
            TypedField {
                setting: "prefix",
                label: "Prefix",
                input: FieldInput::Text,
                default: "backlab/",
            },
            TypedField {
                setting: "part_size",
                label: "Part size",
                input: FieldInput::Size,
                default: "16M",
            },
            TypedField {
                setting: "concurrency",
                label: "Parts in flight per stream",
                input: FieldInput::Count,
                default: "8",
            },
            TypedField {
                setting: "object_size",
                label: "Object size",
                input: FieldInput::Size,
                default: "1G",
            },
        ]
    }

    fn settings_from_text(&self, text: &mut dyn SettingsText) -> Settings {
        settings_of(&S3Settings {
            store: text.text("store"),
            prefix: text.text("prefix"),
            part_size: text.size("part_size"),
            concurrency: text.count("concurrency"),
            object_size: text.size("object_size"),
        })
    }
}

impl Target for S3Target {
    fn facts(&self) -> &'static KindFacts {
        &FACTS
    }

    fn capabilities(&self) -> Capabilities {
        // A completed upload is stored: completing it is the flush, inside the timed window.
        Capabilities::HARDWARE
    }

    fn words(&self) -> String {
        format!("S3 store {} under {}", self.0.store, self.0.prefix)
    }

    fn reaches_outside(&self) -> bool {
        true
    }

    fn preflight(&self, _direct: bool, settings: &EngineSettings, errors: &mut FieldErrors) {
        let Some(store) = settings.object_stores.get(&self.0.store) else {
            errors.add(
                "target.store",
                unknown_store(&self.0.store, &settings.object_stores),
            );
            return;
        };
        let client =
            S3Client::with_timeout(store, Arc::new(RequestTally::default()), CHECK_TIMEOUT);
        if let Err(failure) = client.check_bucket() {
            errors.add("target.store", failure.message);
        }
    }

    fn open(&self, how: &Opening<'_>) -> Result<Vec<Box<dyn Sink>>, EngineError> {
        let store = self.store(&how.settings.object_stores)?;
        let config = self.0.at(how.params);
        let tally = Arc::new(RequestTally::default());
        let run = Arc::new(sink::RunKeys::new(
            &config,
            &how.settings.object_owner,
            how.tag,
        ));
        (0..how.params.streams.max(1))
            .map(|stream| {
                sink::S3Sink::open(
                    S3Client::new(store, Arc::clone(&tally)),
                    &config,
                    &run,
                    stream,
                    how.settings.upload_journal.clone(),
                )
                .map(|sink| Box::new(sink) as Box<dyn Sink>)
            })
            .collect()
    }

    fn restores(&self) -> bool {
        true
    }

    fn restore_image(&self, request: &ImageRequest<'_>) -> Result<RestoreImage, EngineError> {
        let store = self.store(&request.settings.object_stores)?;
        image::lay_down(
            store,
            &self.0.at(request.params),
            request,
            request.settings.upload_journal.clone(),
        )
    }
}

/// Where the objects of a stream are written, for messages: `s3://store/prefix…`.
fn shown(config: &S3Config, key: &str) -> PathBuf {
    PathBuf::from(format!("s3://{}/{key}", config.store))
}
