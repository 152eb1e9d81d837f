//! Requests to an object store: each one signed for a few minutes (a presigned URL), sent with
//! ureq, timed, and tried again after a throttling answer (503 SlowDown), a server error or a
//! lost connection. Every attempt is counted and every successful request timed in the run's
//! `RequestTally`. No message built here carries a URL: a signed URL names the access key.

use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rusty_s3::actions::{
    AbortMultipartUpload, CompleteMultipartUpload, CreateMultipartUpload, DeleteObject, GetObject,
    HeadBucket, ListObjectsV2, S3Action, UploadPart,
};
use rusty_s3::{Method, signing};
use ureq::http::Response;

use super::figures::{RequestClass, RequestTally};
use super::operations::Answered;
use super::stores::ObjectStore;

/// How long each signature is good for; a request is signed just before it is sent.
const SIGNED_FOR: Duration = Duration::from_secs(15 * 60);
/// Attempts of one request before it fails the run.
const ATTEMPTS: u32 = 6;
/// First wait before trying again; it doubles each time, up to `LONGEST_BACKOFF`.
const FIRST_BACKOFF: Duration = Duration::from_millis(50);
const LONGEST_BACKOFF: Duration = Duration::from_secs(2);
/// Longest wait between looks at the run's cancel flag while backing off.
const NAP: Duration = Duration::from_millis(50);
/// Longest one request may take: a large part over a slow link.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(600);
/// Longest the lab waits for a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest a store may take to answer a request, or to send the rest of its answer, or to take
/// a request's head: a store that stops answering is given up here, not at `REQUEST_TIMEOUT`.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);
/// The slowest a part's body may be taken by the store, in bytes per second, beyond
/// `ANSWER_TIMEOUT`: a part of `B` bytes may take `ANSWER_TIMEOUT + B / SLOWEST_SEND` to send.
const SLOWEST_SEND: u64 = 1_000_000;
/// Longest a store may take to complete an upload: it assembles the parts before it answers.
const COMPLETE_TIMEOUT: Duration = Duration::from_secs(300);
/// Times a request that timed out is sent in all: a store that has stopped answering is not
/// asked six times.
const TIMEOUT_ATTEMPTS: u32 = 2;
/// Longest a request that cleans up after a run may take (an abort, a delete), and the times
/// it is sent (once only when it timed out): what is not removed then stays in the journal
/// for the start-up sweep.
const CLEANUP_TIMEOUT: Duration = Duration::from_secs(5);
const CLEANUP_ATTEMPTS: u32 = 2;
/// Times one request of the object-lock probe is sent in all.
const PROBE_ATTEMPTS: u32 = 3;
/// Most keys a listing asks for at once.
const LIST_PAGE: usize = 1000;

/// Why a request to a store failed, in words: the operation, the key, what the store said.
#[derive(Debug, Clone)]
pub struct S3Failure {
    /// The HTTP status of the last answer, when there was one.
    pub status: Option<u16>,
    /// The S3 error code of the last answer (`NoSuchBucket`, `SignatureDoesNotMatch`).
    pub code: Option<String>,
    pub message: String,
}

impl std::fmt::Display for S3Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// One multipart upload under way: the key and the id the store gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upload {
    pub key: String,
    pub upload_id: String,
}

/// One request [`S3Client::ask`] sends: its operation, method, object (or the bucket), query
/// and signed headers, and body.
pub struct Request<'r> {
    pub operation: &'r str,
    pub method: Method,
    pub key: Option<&'r str>,
    pub query: &'r [(&'r str, &'r str)],
    pub headers: &'r [(&'r str, &'r str)],
    pub body: &'r [u8],
}

/// What a store answered a request of [`S3Client::ask`]: a refusal is an answer too.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    /// The S3 error code of a refusal (`AccessDenied`).
    pub code: Option<String>,
    /// The answer's `x-amz-…` headers (a version id, a delete marker, a retention).
    pub headers: Vec<(String, String)>,
    /// The answer's body, when it succeeded.
    pub body: String,
}

impl Answer {
    /// Whether the store did what was asked.
    pub fn accepted(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The value of the answer's header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(have, _)| have == name)
            .map(|(_, value)| value.as_str())
    }

    /// The answer in a few words: `200`, `403 AccessDenied`.
    pub fn words(&self) -> String {
        match &self.code {
            Some(code) => format!("{} {code}", self.status),
            None => self.status.to_string(),
        }
    }
}

/// A body's MD5 in base64, as `Content-MD5` carries it.
fn content_md5(body: &[u8]) -> String {
    use base64::Engine as _;
    use md5::Digest as _;
    base64::engine::general_purpose::STANDARD.encode(md5::Md5::digest(body))
}

/// A connection pool to one store, and the tally its requests are counted in.
#[derive(Clone)]
pub struct S3Client {
    store: ObjectStore,
    agent: ureq::Agent,
    tally: Arc<RequestTally>,
    /// Times a request is sent before it fails for good, and times when each timed out.
    attempts: u32,
    timeout_attempts: u32,
    /// Its requests are the run's, counted by operation for the bill: not a check's, not a
    /// cleanup's.
    billed: bool,
}

impl S3Client {
    /// A client of `store` whose requests are counted in `tally`, each by its operation for
    /// the run's bill; it names itself `backlab` to the store.
    pub fn new(store: &ObjectStore, tally: Arc<RequestTally>) -> Self {
        Self {
            billed: true,
            ..Self::built(store, tally, REQUEST_TIMEOUT, "backlab")
        }
    }

    /// A client that sets a run up before its clock starts (a restore's image laid down): its
    /// requests are not the run's, nor billed; it names itself `backlab-setup`.
    pub fn for_setup(store: &ObjectStore, tally: Arc<RequestTally>) -> Self {
        Self::built(store, tally, REQUEST_TIMEOUT, "backlab-setup")
    }

    /// A client whose every request gives up after `timeout` (a check at submission); it
    /// names itself `backlab-check`.
    pub fn with_timeout(store: &ObjectStore, tally: Arc<RequestTally>, timeout: Duration) -> Self {
        Self::built(store, tally, timeout, "backlab-check")
    }

    /// A client whose requests give up after `timeout`, naming itself `name` (with the lab's
    /// version) in its User-Agent, so a store's own log tells the lab's requests apart.
    fn built(store: &ObjectStore, tally: Arc<RequestTally>, timeout: Duration, name: &str) -> Self {
        let agent = ureq::Agent::config_builder()
            .user_agent(format!("{name}/{}", env!("CARGO_PKG_VERSION")))
            .http_status_as_error(false)
            .timeout_global(Some(timeout))
            .timeout_connect(Some(CONNECT_TIMEOUT.min(timeout)))
            .timeout_send_request(Some(ANSWER_TIMEOUT.min(timeout)))
            .timeout_recv_response(Some(ANSWER_TIMEOUT.min(timeout)))
            .timeout_recv_body(Some(ANSWER_TIMEOUT.min(timeout)))
            .max_redirects(0)
            .max_idle_connections_per_host(256)
            .build()
            .new_agent();
        Self {
            store: store.clone(),
            agent,
            tally,
            attempts: ATTEMPTS,
            timeout_attempts: TIMEOUT_ATTEMPTS,
            billed: false,
        }
    }

    /// A client for what cleans up after a run or a crash (aborts, deletes, the sweeps): each
    /// request gives up after [`CLEANUP_TIMEOUT`] and is sent at most twice, so a store that
    /// stopped answering cannot hold a cancel, a lane or a start (a request that timed out is
    /// not sent again); what it leaves stays in the journal.
    pub fn for_cleanup(store: &ObjectStore, tally: Arc<RequestTally>) -> Self {
        Self {
            attempts: CLEANUP_ATTEMPTS,
            timeout_attempts: 1,
            ..Self::built(store, tally, CLEANUP_TIMEOUT, "backlab-cleanup")
        }
    }

    /// A client for the object-lock probe: its requests give up after `timeout` (once: one
    /// that timed out is not sent again), are sent at most three times after a throttling
    /// answer, a server error or a lost connection, and are counted by operation for the
    /// probe's bill, as a run's are; it names itself `backlab-probe`. A store that stops
    /// answering holds each of the probe's requests `timeout` at most.
    pub fn for_probe(store: &ObjectStore, tally: Arc<RequestTally>, timeout: Duration) -> Self {
        Self {
            attempts: PROBE_ATTEMPTS,
            timeout_attempts: 1,
            billed: true,
            ..Self::built(store, tally, timeout, "backlab-probe")
        }
    }

    /// A client of the same store for cleaning up after a run ([`S3Client::for_cleanup`]).
    pub fn cleanup(&self) -> Self {
        Self::for_cleanup(&self.store, self.tally())
    }

    /// The tally this client's requests are counted in.
    pub fn tally(&self) -> Arc<RequestTally> {
        Arc::clone(&self.tally)
    }

    /// The store this client writes to.
    pub fn store(&self) -> &ObjectStore {
        &self.store
    }

    /// Whether the bucket exists and the credentials are accepted: one HEAD, not retried.
    pub fn check_bucket(&self) -> Result<(), S3Failure> {
        let url =
            HeadBucket::new(&self.store.bucket, self.store.credentials.as_ref()).sign(SIGNED_FOR);
        let answer = self.agent.head(url.as_str()).call();
        match answer {
            Ok(response) if response.status().is_success() => Ok(()),
            Ok(response) => {
                let status = response.status().as_u16();
                let message = match status {
                    404 => format!(
                        "{}: the bucket {} does not exist",
                        self.store.words(),
                        self.store.bucket.name()
                    ),
                    401 | 403 => format!(
                        "{}: the store refused the lab's credentials for the bucket (HTTP \
                         {status}); check the access key and secret the lab was started with",
                        self.store.words()
                    ),
                    _ => format!(
                        "{}: the bucket cannot be used (HTTP {status})",
                        self.store.words()
                    ),
                };
                Err(S3Failure {
                    status: Some(status),
                    code: None,
                    message,
                })
            }
            Err(error) => Err(S3Failure {
                status: None,
                code: None,
                message: format!(
                    "{}: cannot be reached: {}",
                    self.store.words(),
                    describe(&error)
                ),
            }),
        }
    }

    /// Starts a multipart upload of `key`.
    pub fn create_upload(&self, key: &str, give_up: &AtomicBool) -> Result<Upload, S3Failure> {
        let mut response = self.send(
            ("CreateMultipartUpload", 0),
            RequestClass::Other,
            "start an upload of",
            key,
            give_up,
            || {
                let url = CreateMultipartUpload::new(
                    &self.store.bucket,
                    self.store.credentials.as_ref(),
                    key,
                )
                .sign(SIGNED_FOR);
                self.agent.post(url.as_str()).send_empty()
            },
        )?;
        let body = read_text(&mut response, "start an upload of", key)?;
        let parsed = CreateMultipartUpload::parse_response(&body).map_err(|error| S3Failure {
            status: None,
            code: None,
            message: format!(
                "starting an upload of {key}: the store's answer is unreadable: {error}"
            ),
        })?;
        Ok(Upload {
            key: key.to_string(),
            upload_id: parsed.upload_id().to_string(),
        })
    }

    /// Uploads part `number` (from 1) of an upload; returns its ETag.
    pub fn upload_part(
        &self,
        upload: &Upload,
        number: u16,
        data: &[u8],
        give_up: &AtomicBool,
    ) -> Result<String, S3Failure> {
        let what = format!("upload part {number} of");
        let sent = ("UploadPart", data.len() as u64);
        let mut response = self.send(
            sent,
            RequestClass::Part,
            &what,
            &upload.key,
            give_up,
            || {
                let url = UploadPart::new(
                    &self.store.bucket,
                    self.store.credentials.as_ref(),
                    &upload.key,
                    number,
                    &upload.upload_id,
                )
                .sign(SIGNED_FOR);
                // A part's body gets time by its size; a store that stops taking it is given up.
                let send_body =
                    ANSWER_TIMEOUT + Duration::from_secs(data.len() as u64 / SLOWEST_SEND);
                self.agent
                    .put(url.as_str())
                    .config()
                    .timeout_send_body(Some(send_body))
                    .build()
                    .send(data)
            },
        )?;
        let etag = response
            .headers()
            .get("etag")
            .and_then(|value| value.to_str().ok())
            .map(str::to_string);
        drain(&mut response);
        etag.ok_or_else(|| S3Failure {
            status: None,
            code: None,
            message: format!("{what} {}: the store gave no ETag", upload.key),
        })
    }

    /// Completes an upload from its parts' ETags, in order.
    pub fn complete(
        &self,
        upload: &Upload,
        etags: &[String],
        give_up: &AtomicBool,
    ) -> Result<(), S3Failure> {
        let started = Instant::now();
        let mut response = self.send(
            ("CompleteMultipartUpload", 0),
            RequestClass::Complete,
            "complete the upload of",
            &upload.key,
            give_up,
            || {
                let action = CompleteMultipartUpload::new(
                    &self.store.bucket,
                    self.store.credentials.as_ref(),
                    &upload.key,
                    &upload.upload_id,
                    etags.iter().map(String::as_str),
                );
                let url = action.sign(SIGNED_FOR);
                let body = action.body();
                self.agent
                    .post(url.as_str())
                    .config()
                    .timeout_recv_response(Some(COMPLETE_TIMEOUT))
                    .build()
                    .send(body.as_bytes())
            },
        )?;
        // A store may answer 200 and carry an error in the body while it assembles the parts.
        let body = read_text(&mut response, "complete the upload of", &upload.key)?;
        self.tally.completed(started.elapsed());
        if body.contains("<Error>") {
            let (code, message) = error_of(&body);
            return Err(S3Failure {
                status: Some(200),
                code,
                message: format!(
                    "completing the upload of {}: {}",
                    upload.key,
                    message.unwrap_or_else(|| "the store reported an error".to_string())
                ),
            });
        }
        Ok(())
    }

    /// Aborts an upload, removing its parts.
    pub fn abort(&self, upload: &Upload, give_up: &AtomicBool) -> Result<(), S3Failure> {
        let mut response = self.send(
            ("AbortMultipartUpload", 0),
            RequestClass::Other,
            "abort the upload of",
            &upload.key,
            give_up,
            || {
                let url = AbortMultipartUpload::new(
                    &self.store.bucket,
                    self.store.credentials.as_ref(),
                    &upload.key,
                    &upload.upload_id,
                )
                .sign(SIGNED_FOR);
                self.agent.delete(url.as_str()).call()
            },
        );
        match &mut response {
            Ok(response) => {
                drain(response);
                Ok(())
            }
            // Gone already: nothing to abort.
            Err(failure) if failure.status == Some(404) => Ok(()),
            Err(failure) => Err(failure.clone()),
        }
    }

    /// Removes one object; one that is not there counts as removed.
    pub fn delete(&self, key: &str, give_up: &AtomicBool) -> Result<(), S3Failure> {
        let sent = ("DeleteObject", 0);
        let response = self.send(sent, RequestClass::Other, "remove", key, give_up, || {
            let url = DeleteObject::new(&self.store.bucket, self.store.credentials.as_ref(), key)
                .sign(SIGNED_FOR);
            self.agent.delete(url.as_str()).call()
        });
        match response {
            Ok(mut response) => {
                drain(&mut response);
                Ok(())
            }
            Err(failure) if failure.status == Some(404) => Ok(()),
            Err(failure) => Err(failure),
        }
    }

    /// Reads `buf.len()` bytes of `key` from `offset`: one ranged GET.
    pub fn get_range(
        &self,
        key: &str,
        offset: u64,
        buf: &mut [u8],
        give_up: &AtomicBool,
    ) -> Result<(), S3Failure> {
        let end = offset + buf.len() as u64 - 1;
        let range = format!("bytes={offset}-{end}");
        let started = Instant::now();
        let sent = ("GetObject", 0);
        let mut response = self.send(sent, RequestClass::Get, "read", key, give_up, || {
            let url = GetObject::new(&self.store.bucket, self.store.credentials.as_ref(), key)
                .sign(SIGNED_FOR);
            self.agent.get(url.as_str()).header("Range", &range).call()
        })?;
        let read = response
            .body_mut()
            .with_config()
            .limit(buf.len() as u64 + 1)
            .reader()
            .read_exact(buf);
        // A read's latency is its whole answer: the data is what a restore waits for.
        self.tally.latency(RequestClass::Get, started.elapsed());
        read.map_err(|error| S3Failure {
            status: None,
            code: None,
            message: format!("reading {key} at {offset}: {error}"),
        })
    }

    /// Every key under `prefix`, with its size.
    pub fn list_objects(
        &self,
        prefix: &str,
        give_up: &AtomicBool,
    ) -> Result<Vec<(String, u64)>, S3Failure> {
        let mut found = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let sent = ("ListObjectsV2", 0);
            let mut response =
                self.send(sent, RequestClass::Other, "list", prefix, give_up, || {
                    let mut action =
                        ListObjectsV2::new(&self.store.bucket, self.store.credentials.as_ref());
                    action.with_prefix(prefix);
                    action.with_max_keys(LIST_PAGE);
                    if let Some(token) = &token {
                        action.with_continuation_token(token.as_str());
                    }
                    let url = action.sign(SIGNED_FOR);
                    self.agent.get(url.as_str()).call()
                })?;
            let body = read_text(&mut response, "list", prefix)?;
            let page = parse_objects(&body).map_err(|error| S3Failure {
                status: None,
                code: None,
                message: format!("listing {prefix}: {error}"),
            })?;
            found.extend(page.objects);
            match page.next {
                Some(next) => token = Some(next),
                None => return Ok(found),
            }
        }
    }

    /// Every multipart upload under way whose key starts with `prefix`.
    pub fn list_uploads(
        &self,
        prefix: &str,
        give_up: &AtomicBool,
    ) -> Result<Vec<Upload>, S3Failure> {
        let mut found = Vec::new();
        let mut markers: Option<(String, String)> = None;
        loop {
            let mut response = self.send(
                ("ListMultipartUploads", 0),
                RequestClass::Other,
                "list the uploads under",
                prefix,
                give_up,
                || {
                    let mut query = vec![("uploads", ""), ("prefix", prefix)];
                    if let Some((key, id)) = &markers {
                        query.push(("key-marker", key.as_str()));
                        query.push(("upload-id-marker", id.as_str()));
                    }
                    let url = self.signed(
                        Method::Get,
                        self.store.bucket.base_url().clone(),
                        &query,
                        &[],
                    );
                    self.agent.get(url.as_str()).call()
                },
            )?;
            let body = read_text(&mut response, "list the uploads under", prefix)?;
            let page = parse_uploads(&body).map_err(|error| S3Failure {
                status: None,
                code: None,
                message: format!("listing the uploads under {prefix}: {error}"),
            })?;
            found.extend(page.uploads);
            match page.next {
                Some(next) => markers = Some(next),
                None => return Ok(found),
            }
        }
    }

    /// Sends one request of any kind, the bucket's (`key` `None`) or an object's, its
    /// `headers` signed beside the host, and returns what the store answered, a refusal
    /// included: only a request that got no answer at all is an error. `operation` names it
    /// for the count; a body goes with its `Content-MD5`, as S3 asks of a request under object
    /// lock.
    pub fn ask(&self, request: &Request<'_>, give_up: &AtomicBool) -> Result<Answer, S3Failure> {
        let url = match request.key {
            Some(key) => self
                .store
                .bucket
                .object_url(key)
                .map_err(|error| S3Failure {
                    status: None,
                    code: None,
                    message: format!("the key {key} cannot be put in a URL: {error}"),
                })?,
            None => self.store.bucket.base_url().clone(),
        };
        let md5 = (!request.body.is_empty()).then(|| content_md5(request.body));
        let what = request.operation;
        let key = request.key.unwrap_or(self.store.bucket.name());
        let answer = self.send(
            (request.operation, request.body.len() as u64),
            RequestClass::Other,
            what,
            key,
            give_up,
            || {
                let url = self.signed(request.method, url.clone(), request.query, request.headers);
                let mut builder = ureq::http::Request::builder()
                    .method(request.method.to_str())
                    .uri(url.as_str());
                for (name, value) in request.headers {
                    builder = builder.header(*name, *value);
                }
                if let Some(md5) = &md5 {
                    builder = builder.header("Content-MD5", md5.as_str());
                }
                let built = builder
                    .body(request.body.to_vec())
                    .map_err(|error| ureq::Error::BadUri(error.to_string()))?;
                self.agent.run(built)
            },
        );
        match answer {
            Ok(mut response) => {
                let status = response.status().as_u16();
                let headers = response
                    .headers()
                    .iter()
                    .filter(|(name, _)| name.as_str().starts_with("x-amz-"))
                    .filter_map(|(name, value)| {
                        Some((name.as_str().to_string(), value.to_str().ok()?.to_string()))
                    })
                    .collect();
                let body = read_text(&mut response, what, key)?;
                Ok(Answer {
                    status,
                    code: None,
                    headers,
                    body,
                })
            }
            Err(S3Failure {
                status: Some(status),
                code,
                ..
            }) => Ok(Answer {
                status,
                code,
                headers: Vec::new(),
                body: String::new(),
            }),
            Err(failure) => Err(failure),
        }
    }

    /// `url` with `query`, presigned for [`SIGNED_FOR`] with `headers` signed beside the
    /// host; unsigned for a store without credentials.
    fn signed(
        &self,
        method: Method,
        mut url: url::Url,
        query: &[(&str, &str)],
        headers: &[(&str, &str)],
    ) -> url::Url {
        match &self.store.credentials {
            Some(credentials) => signing::sign(
                &jiff_now(),
                method,
                url,
                credentials.key(),
                credentials.secret(),
                None,
                self.store.bucket.region(),
                SIGNED_FOR.as_secs(),
                query.iter().copied(),
                headers.iter().copied(),
            ),
            None => {
                url.query_pairs_mut().extend_pairs(query.iter().copied());
                url
            }
        }
    }

    /// Sends one request until it succeeds, fails for good, or the run gives up; `attempt`
    /// signs and sends it afresh each time. `sent` names its S3 operation and the bytes of
    /// its body: a billed client counts each attempt by them, with its answer's status and
    /// the bytes its answer says it carries.
    fn send(
        &self,
        sent: (&str, u64),
        class: RequestClass,
        what: &str,
        key: &str,
        give_up: &AtomicBool,
        mut attempt: impl FnMut() -> Result<Response<ureq::Body>, ureq::Error>,
    ) -> Result<Response<ureq::Body>, S3Failure> {
        let mut backoff = FIRST_BACKOFF;
        let mut last = None;
        let mut timed_out = 0;
        for tried in 1..=self.attempts {
            if give_up.load(Ordering::Relaxed) {
                break;
            }
            let started = Instant::now();
            let answer = attempt();
            let took = started.elapsed();
            if self.billed {
                self.count(sent, &answer);
            }
            let failure = match answer {
                Ok(response) if response.status().is_success() => {
                    self.tally.answered(class, took);
                    return Ok(response);
                }
                Ok(mut response) => {
                    let status = response.status().as_u16();
                    let body = response
                        .body_mut()
                        .with_config()
                        .limit(64 << 10)
                        .read_to_string()
                        .unwrap_or_default();
                    let (code, message) = error_of(&body);
                    let throttled = status == 503 || status == 429;
                    self.tally.refused(throttled);
                    let failure = S3Failure {
                        status: Some(status),
                        code: code.clone(),
                        message: format!(
                            "{what} {key}: the store answered {status}{}{}",
                            code.map(|code| format!(" {code}")).unwrap_or_default(),
                            message
                                .map(|message| format!(": {message}"))
                                .unwrap_or_default()
                        ),
                    };
                    if !(throttled || matches!(status, 500 | 502 | 504)) {
                        return Err(failure);
                    }
                    failure
                }
                Err(error) => {
                    self.tally.refused(false);
                    let failure = S3Failure {
                        status: None,
                        code: None,
                        message: format!("{what} {key}: {}", describe(&error)),
                    };
                    if matches!(error, ureq::Error::Timeout(_)) {
                        timed_out += 1;
                    }
                    if !retryable(&error) || timed_out >= self.timeout_attempts {
                        return Err(failure);
                    }
                    failure
                }
            };
            last = Some(failure);
            if tried < self.attempts {
                self.tally.retried();
                if !nap(backoff, give_up) {
                    break;
                }
                backoff = (backoff * 2).min(LONGEST_BACKOFF);
            }
        }
        Err(last.unwrap_or_else(|| S3Failure {
            status: None,
            code: None,
            message: format!("{what} {key}: cancelled"),
        }))
    }
}

impl S3Client {
    /// Counts one attempt of `sent` (its operation, its body's bytes) with how it was answered.
    fn count(
        &self,
        (operation, up): (&str, u64),
        answer: &Result<Response<ureq::Body>, ureq::Error>,
    ) {
        let (answered, down) = match answer {
            Ok(response) => (
                Answered::Status(response.status().as_u16()),
                response
                    .headers()
                    .get("content-length")
                    .and_then(|value| value.to_str().ok())
                    .and_then(|value| value.parse::<u64>().ok())
                    .unwrap_or(0),
            ),
            Err(_) => (Answered::Not, 0),
        };
        self.tally.counted(operation, answered, up, down);
    }
}

/// Sleeps `total` unless `give_up` is raised first; `false` when it was.
fn nap(total: Duration, give_up: &AtomicBool) -> bool {
    let jitter = Duration::from_micros(rand::random::<u64>() % (total.as_micros() as u64 / 4 + 1));
    let until = Instant::now() + total + jitter;
    while Instant::now() < until {
        if give_up.load(Ordering::Relaxed) {
            return false;
        }
        std::thread::sleep(NAP.min(until.saturating_duration_since(Instant::now())));
    }
    true
}

fn jiff_now() -> jiff::Timestamp {
    jiff::Timestamp::now()
}

/// Whether a failed attempt may succeed when made again.
fn retryable(error: &ureq::Error) -> bool {
    matches!(
        error,
        ureq::Error::Io(_)
            | ureq::Error::Timeout(_)
            | ureq::Error::ConnectionFailed
            | ureq::Error::Protocol(_)
    )
}

/// A failed request in words, without its URL.
fn describe(error: &ureq::Error) -> String {
    match error {
        ureq::Error::Io(error) => error.to_string(),
        ureq::Error::Timeout(which) => format!("timed out ({which})"),
        ureq::Error::HostNotFound => "the store's host name does not resolve".to_string(),
        ureq::Error::ConnectionFailed => "the connection was refused or failed".to_string(),
        ureq::Error::Protocol(error) => format!("the store broke the HTTP protocol: {error}"),
        ureq::Error::Tls(message) => format!("TLS: {message}"),
        ureq::Error::Rustls(error) => format!("TLS: {error}"),
        ureq::Error::BodyExceedsLimit(_) => {
            "the store's answer was longer than expected".to_string()
        }
        _ => "the request could not be made".to_string(),
    }
}

/// Reads an answer's body as text.
fn read_text(
    response: &mut Response<ureq::Body>,
    what: &str,
    key: &str,
) -> Result<String, S3Failure> {
    response
        .body_mut()
        .with_config()
        .limit(16 << 20)
        .read_to_string()
        .map_err(|error| S3Failure {
            status: None,
            code: None,
            message: format!(
                "{what} {key}: reading the store's answer failed: {}",
                describe(&error)
            ),
        })
}

/// Reads what is left of an answer, so its connection can be used again.
fn drain(response: &mut Response<ureq::Body>) {
    let _ = response
        .body_mut()
        .with_config()
        .limit(1 << 20)
        .read_to_vec();
}

/// The `Code` and `Message` of an S3 error document.
fn error_of(body: &str) -> (Option<String>, Option<String>) {
    (first_text(body, "Code"), first_text(body, "Message"))
}

/// The text of the first element `name` of an XML document, trimmed; `None` when the document
/// cannot be read or the element is missing or empty.
pub(super) fn first_text(body: &str, name: &str) -> Option<String> {
    let document = roxmltree::Document::parse(body).ok()?;
    document
        .descendants()
        .find(|node| node.has_tag_name(name))
        .and_then(|node| node.text())
        .map(|text| text.trim().to_string())
        .filter(|text| !text.is_empty())
}

/// One page of a ListMultipartUploads answer.
struct UploadsPage {
    uploads: Vec<Upload>,
    /// The key and upload id markers of the next page, when the answer was truncated.
    next: Option<(String, String)>,
}

/// A store's XML answer, or why it cannot be read.
fn read_xml(body: &str) -> Result<roxmltree::Document<'_>, String> {
    roxmltree::Document::parse(body)
        .map_err(|error| format!("the store's answer is unreadable: {error}"))
}

/// The text of `node`'s first child named `name`.
fn child_text(node: roxmltree::Node<'_, '_>, name: &str) -> Option<String> {
    node.children()
        .find(|child| child.has_tag_name(name))
        .and_then(|child| child.text())
        .map(str::to_string)
}

/// One page of a bucket's listing: each key with its size, and the token of the next page.
struct ObjectsPage {
    objects: Vec<(String, u64)>,
    next: Option<String>,
}

/// Reads a ListObjectsV2 answer for what a listing needs, the keys and sizes: stores differ in
/// what else they send (some leave out an object's ETag), and none of it is needed here.
fn parse_objects(body: &str) -> Result<ObjectsPage, String> {
    let document = read_xml(body)?;
    let root = document.root_element();
    let objects = root
        .children()
        .filter(|node| node.has_tag_name("Contents"))
        .filter_map(|node| {
            let size = child_text(node, "Size").and_then(|size| size.parse().ok());
            Some((child_text(node, "Key")?, size.unwrap_or(0)))
        })
        .collect();
    let truncated = child_text(root, "IsTruncated").is_some_and(|text| text == "true");
    let next =
        child_text(root, "NextContinuationToken").filter(|token| truncated && !token.is_empty());
    Ok(ObjectsPage { objects, next })
}

fn parse_uploads(body: &str) -> Result<UploadsPage, String> {
    let document = read_xml(body)?;
    let root = document.root_element();
    let uploads = root
        .children()
        .filter(|node| node.has_tag_name("Upload"))
        .filter_map(|node| {
            Some(Upload {
                key: child_text(node, "Key")?,
                upload_id: child_text(node, "UploadId")?,
            })
        })
        .collect();
    let truncated = child_text(root, "IsTruncated").is_some_and(|text| text == "true");
    let next = match (
        truncated,
        child_text(root, "NextKeyMarker"),
        child_text(root, "NextUploadIdMarker"),
    ) {
        (true, Some(key), Some(id)) => Some((key, id)),
        _ => None,
    };
    Ok(UploadsPage { uploads, next })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_objects_listing_reads_keys_and_sizes_with_or_without_etags() {
        let body = r#"<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>b</Name><Prefix>p/</Prefix><KeyCount>2</KeyCount><IsTruncated>true</IsTruncated>
  <NextContinuationToken>t2</NextContinuationToken>
  <Contents><Key>p/a</Key><Size>5</Size><ETag>"x"</ETag></Contents>
  <Contents><Key>p/b</Key><Size>7</Size></Contents>
</ListBucketResult>"#;
        let page = parse_objects(body).expect("parses");
        assert_eq!(
            page.objects,
            vec![("p/a".to_string(), 5), ("p/b".to_string(), 7)]
        );
        assert_eq!(page.next.as_deref(), Some("t2"));
        let last = body.replace("<IsTruncated>true", "<IsTruncated>false");
        assert_eq!(parse_objects(&last).expect("parses").next, None);
    }

    #[test]
    fn an_uploads_listing_reads_its_keys_ids_and_next_page() {
        let body = r#"<?xml version="1.0" encoding="UTF-8"?>
<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Bucket>b</Bucket><IsTruncated>true</IsTruncated>
  <NextKeyMarker>p/k2</NextKeyMarker><NextUploadIdMarker>u2</NextUploadIdMarker>
  <Upload><Key>p/k1</Key><UploadId>u1</UploadId></Upload>
  <Upload><Key>p/k2</Key><UploadId>u2</UploadId></Upload>
</ListMultipartUploadsResult>"#;
        let page = parse_uploads(body).expect("parses");
        assert_eq!(page.uploads.len(), 2);
        assert_eq!(page.uploads[1].upload_id, "u2");
        assert_eq!(page.next, Some(("p/k2".to_string(), "u2".to_string())));
    }

    #[test]
    fn an_error_document_gives_its_code_and_message() {
        let body = "<Error><Code>SlowDown</Code><Message>Reduce your rate</Message></Error>";
        assert_eq!(
            error_of(body),
            (
                Some("SlowDown".to_string()),
                Some("Reduce your rate".to_string())
            )
        );
    }
}
