//! The object stores a lab may write to, given by its operator at start (`--s3-store
//! NAME=URL`, credentials from the environment or a credentials file as the AWS tools read
//! them). A spec names a store and nothing else: no request can point the lab at an endpoint,
//! and no credential is ever part of a spec, a result, a page or a message.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use rusty_s3::{Bucket, Credentials, UrlStyle};
use url::Url;

/// Region signed for when a store's URL does not name one.
pub const DEFAULT_REGION: &str = "us-east-1";

/// One bucket on one endpoint, with the credentials the lab signs its requests with.
#[derive(Clone)]
pub struct ObjectStore {
    /// The name specs use for it.
    pub name: String,
    /// The bucket at its endpoint, for signing requests.
    pub bucket: Bucket,
    /// `None`: requests go unsigned (a public bucket).
    pub credentials: Option<Credentials>,
    /// A tool reaches the store directly, its requests not counted (the operator's
    /// `--s3-uncounted`); by default they pass through the lab's counting relay.
    pub uncounted: bool,
}

impl ObjectStore {
    /// The store in words for pages and messages: `store lab (bucket b at 127.0.0.1:9000)`;
    /// never a credential.
    pub fn words(&self) -> String {
        format!(
            "S3 store {} (bucket {} at {})",
            self.name,
            self.bucket.name(),
            self.host_port()
        )
    }

    /// The endpoint the bucket is on, `http://127.0.0.1:9000`, as another S3 client is given
    /// it (with the bucket apart).
    pub fn endpoint(&self) -> String {
        format!("{}://{}", self.bucket.base_url().scheme(), self.host_port())
    }

    /// The endpoint's host and port; a virtual-hosted bucket's own name is not the host's.
    fn host_port(&self) -> String {
        let url = self.bucket.base_url();
        let host = url.host_str().unwrap_or("?");
        let host = host
            .strip_prefix(&format!("{}.", self.bucket.name()))
            .unwrap_or(host);
        let port = url
            .port()
            .map(|port| format!(":{port}"))
            .unwrap_or_default();
        format!("{host}{port}")
    }
}

impl fmt::Debug for ObjectStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectStore")
            .field("name", &self.name)
            .field("bucket", &self.bucket.name())
            .field("endpoint", &self.bucket.base_url().as_str())
            .field("signed", &self.credentials.is_some())
            .finish()
    }
}

/// The stores an operator gave the lab, by name. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct ObjectStores(Arc<BTreeMap<String, ObjectStore>>);

/// Where a store's credentials come from, in the order they are looked for.
#[derive(Debug, Clone, Default)]
pub struct CredentialSources {
    /// `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`, when both are set.
    pub environment: Option<(String, String)>,
    /// The text of a credentials file in the AWS tools' format: a `[NAME]` section per store
    /// (or `[default]`) with `aws_access_key_id` and `aws_secret_access_key`.
    pub file: Option<String>,
}

impl CredentialSources {
    /// The process's environment, and the credentials file it names
    /// (`AWS_SHARED_CREDENTIALS_FILE`) or `file`, read if it exists.
    pub fn from_environment(file: Option<&Path>) -> Result<Self, String> {
        let environment = match (
            std::env::var("AWS_ACCESS_KEY_ID"),
            std::env::var("AWS_SECRET_ACCESS_KEY"),
        ) {
            (Ok(id), Ok(secret)) if !id.is_empty() && !secret.is_empty() => Some((id, secret)),
            _ => None,
        };
        let named = file
            .map(Path::to_path_buf)
            .or_else(|| std::env::var_os("AWS_SHARED_CREDENTIALS_FILE").map(Into::into));
        let file = match named {
            Some(path) => Some(std::fs::read_to_string(&path).map_err(|error| {
                format!(
                    "cannot read the credentials file {}: {error}",
                    path.display()
                )
            })?),
            None => None,
        };
        Ok(Self { environment, file })
    }

    /// The key pair for store `name`: its own section of the file, else the environment, else
    /// the file's `[default]`.
    fn for_store(&self, name: &str) -> Result<Option<Credentials>, String> {
        let section = |wanted: &str| -> Result<Option<Credentials>, String> {
            let Some(text) = &self.file else {
                return Ok(None);
            };
            let ini = ini::Ini::load_from_str(text)
                .map_err(|error| format!("the credentials file cannot be read: {error}"))?;
            let Some(properties) = ini.section(Some(wanted)) else {
                return Ok(None);
            };
            match (
                properties.get("aws_access_key_id"),
                properties.get("aws_secret_access_key"),
            ) {
                (Some(id), Some(secret)) => {
                    Ok(Some(Credentials::new(id.to_string(), secret.to_string())))
                }
                _ => Err(format!(
                    "the credentials file's [{wanted}] section needs both aws_access_key_id and \
                     aws_secret_access_key"
                )),
            }
        };
        if let Some(own) = section(name)? {
            return Ok(Some(own));
        }
        if let Some((id, secret)) = &self.environment {
            return Ok(Some(Credentials::new(id.clone(), secret.clone())));
        }
        section("default")
    }
}

impl ObjectStores {
    /// Every key and secret of the stores, for the lab to redact from what tools print.
    pub fn secret_values(&self) -> Vec<String> {
        self.0
            .values()
            .filter_map(|store| store.credentials.as_ref())
            .flat_map(|credentials| {
                [
                    Some(credentials.key().to_string()),
                    Some(credentials.secret().to_string()),
                    credentials.token().map(str::to_string),
                ]
            })
            .flatten()
            .collect()
    }

    /// Reads every `NAME=URL` the operator gave. The URL is the endpoint with the bucket as
    /// its path, `http://127.0.0.1:9000/backups`, and may add `?region=R` and
    /// `?style=virtual` (the bucket in the host name instead of the path). Every bad one is
    /// named.
    pub fn parse(given: &[String], credentials: &CredentialSources) -> Result<Self, Vec<String>> {
        let mut stores = BTreeMap::new();
        let mut problems = Vec::new();
        for text in given {
            match parse_one(text, credentials) {
                Ok(store) if stores.contains_key(&store.name) => {
                    problems.push(format!("--s3-store {}: given twice", store.name));
                }
                Ok(store) => {
                    stores.insert(store.name.clone(), store);
                }
                Err(problem) => problems.push(problem),
            }
        }
        if problems.is_empty() {
            Ok(Self(Arc::new(stores)))
        } else {
            Err(problems)
        }
    }

    /// The store a spec names.
    pub fn get(&self, name: &str) -> Option<&ObjectStore> {
        self.0.get(name)
    }

    /// The names of every store, in order.
    pub fn names(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }

    /// Every store.
    pub fn iter(&self) -> impl Iterator<Item = &ObjectStore> {
        self.0.values()
    }

    /// The same stores, reached by a tool directly: its requests not counted.
    pub fn uncounted(self) -> Self {
        let stores = self
            .0
            .iter()
            .map(|(name, store)| {
                let mut store = store.clone();
                store.uncounted = true;
                (name.clone(), store)
            })
            .collect();
        Self(Arc::new(stores))
    }
}

fn parse_one(text: &str, credentials: &CredentialSources) -> Result<ObjectStore, String> {
    let Some((name, url)) = text.split_once('=') else {
        return Err(format!("--s3-store {text}: expected NAME=URL"));
    };
    let problem = |message: &str| format!("--s3-store {name}: {message}");
    if name.is_empty()
        || name.len() > 64
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(problem(
            "a store's name is 1 to 64 letters, digits, '-' or '_'",
        ));
    }
    let url = Url::parse(url).map_err(|error| problem(&format!("not a URL: {error}")))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(problem(
            "credentials do not go in the URL; set AWS_ACCESS_KEY_ID and \
             AWS_SECRET_ACCESS_KEY, or give a credentials file with a section for the store",
        ));
    }
    if !matches!(url.scheme(), "http" | "https") {
        return Err(problem("the URL must be http:// or https://"));
    }
    let mut region = DEFAULT_REGION.to_string();
    let mut style = UrlStyle::Path;
    for (key, value) in url.query_pairs() {
        match (key.as_ref(), value.as_ref()) {
            ("region", value) if !value.is_empty() => region = value.to_string(),
            ("style", "path") => style = UrlStyle::Path,
            ("style", "virtual") => style = UrlStyle::VirtualHost,
            (key, _) => {
                return Err(problem(&format!(
                    "unknown URL setting {key}; the settings are region=R and style=path|virtual"
                )));
            }
        }
    }
    let mut segments = url
        .path_segments()
        .into_iter()
        .flatten()
        .filter(|s| !s.is_empty());
    let bucket = segments
        .next()
        .ok_or_else(|| problem("the URL's path must name the bucket: http://host:port/BUCKET"))?
        .to_string();
    if segments.next().is_some() {
        return Err(problem(
            "the URL's path is the bucket alone; a spec gives the prefix",
        ));
    }
    let mut endpoint = url.clone();
    endpoint.set_path("/");
    endpoint.set_query(None);
    let bucket = Bucket::new(endpoint, style, bucket, region)
        .map_err(|error| problem(&format!("not a usable bucket URL: {error}")))?;
    Ok(ObjectStore {
        name: name.to_string(),
        bucket,
        credentials: credentials.for_store(name).map_err(|e| problem(&e))?,
        uncounted: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources(file: &str) -> CredentialSources {
        CredentialSources {
            environment: None,
            file: Some(file.to_string()),
        }
    }

    #[test]
    fn a_store_is_an_endpoint_and_a_bucket_with_credentials_from_its_own_section() {
        let file = "[default]\naws_access_key_id = D\naws_secret_access_key = DS\n\
                    [lab]\naws_access_key_id = L\naws_secret_access_key = LS\n";
        let stores = ObjectStores::parse(
            &[
                "lab=http://127.0.0.1:9000/backups?region=eu-west-1".to_string(),
                "other=https://s3.example.com/b2".to_string(),
            ],
            &sources(file),
        )
        .expect("stores");
        let lab = stores.get("lab").expect("lab");
        assert_eq!(lab.bucket.name(), "backups");
        assert_eq!(lab.bucket.region(), "eu-west-1");
        assert_eq!(lab.credentials.as_ref().map(Credentials::key), Some("L"));
        let other = stores.get("other").expect("other");
        assert_eq!(other.credentials.as_ref().map(Credentials::key), Some("D"));
        assert_eq!(other.bucket.region(), DEFAULT_REGION);
        assert_eq!(
            lab.words(),
            "S3 store lab (bucket backups at 127.0.0.1:9000)"
        );
        assert_eq!(lab.endpoint(), "http://127.0.0.1:9000");
        assert_eq!(other.endpoint(), "https://s3.example.com");
        assert!(!format!("{lab:?}").contains("LS"));
    }

    #[test]
    fn every_bad_store_is_named_and_no_url_may_carry_a_secret() {
        let problems = ObjectStores::parse(
            &[
                "nourl".to_string(),
                "a=http://key:secret@host/b".to_string(),
                "b=http://host:9000/".to_string(),
                "c=ftp://host/b".to_string(),
                "d=http://host/b?colour=red".to_string(),
            ],
            &CredentialSources::default(),
        )
        .expect_err("all bad");
        assert_eq!(problems.len(), 5, "{problems:?}");
        assert!(problems.iter().all(|problem| !problem.contains("secret@")));
        assert!(problems[1].contains("credentials do not go in the URL"));
    }
}
