//! What a request to an object store is, by the S3 API's own name for it (`PutObject`,
//! `UploadPart`, `ListObjectsV2`, …), told from its method, path, query and headers as the
//! store tells them; and the requests a run made, counted per operation with their answers
//! and bytes. What a bucket bills is requests by operation: these are its units.

use serde::{Deserialize, Serialize};

/// One operation's requests.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct OperationCount {
    /// The S3 API's name: `PutObject`, `GetObject`, `ListObjectsV2`.
    pub operation: String,
    /// Every request, whatever its answer.
    pub requests: u64,
    /// Answered 2xx.
    pub ok: u64,
    /// Answered 4xx (refused, not found).
    pub client_errors: u64,
    /// Answered 5xx, or not answered at all.
    pub server_errors: u64,
    /// Bytes of the requests' bodies.
    pub bytes_up: u64,
    /// Bytes of the answers' bodies.
    pub bytes_down: u64,
}

/// The requests a run (or one of its commands) made of a store, per operation, in name order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RequestCounts {
    pub operations: Vec<OperationCount>,
}

/// What a run left stored in its bucket: its objects, their bytes, and the sizes of the small
/// ones (under [`SMALL_OBJECT`]), which a store may bill as larger than they are.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct StoredObjects {
    pub objects: u64,
    pub bytes: u64,
    /// The sizes of the objects under [`SMALL_OBJECT`], smallest first.
    pub small_sizes: Vec<u64>,
}

/// Objects under this size have their sizes kept ([`StoredObjects::small_sizes`]).
pub const SMALL_OBJECT: u64 = 1 << 20;

impl StoredObjects {
    /// The objects of a listing (each one's size).
    pub fn of(sizes: impl IntoIterator<Item = u64>) -> StoredObjects {
        let mut stored = StoredObjects::default();
        for size in sizes {
            stored.objects += 1;
            stored.bytes += size;
            if size < SMALL_OBJECT {
                stored.small_sizes.push(size);
            }
        }
        stored.small_sizes.sort_unstable();
        stored
    }

    /// The bytes a store bills when it bills each object as at least `min_object` bytes
    /// (at most [`SMALL_OBJECT`]) and adds `overhead` bytes to each.
    pub fn billed_bytes(&self, min_object: u64, overhead: u64) -> u64 {
        let raised: u64 = self
            .small_sizes
            .iter()
            .map(|size| min_object.saturating_sub(*size))
            .sum();
        self.bytes + raised + self.objects * overhead
    }
}

/// How a request was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answered {
    /// With this HTTP status.
    Status(u16),
    /// Not at all: the store was not reached, or the connection broke.
    Not,
}

impl RequestCounts {
    /// The count of `operation`, made when it is the first.
    fn entry(&mut self, operation: &str) -> &mut OperationCount {
        let at = match self
            .operations
            .binary_search_by(|count| count.operation.as_str().cmp(operation))
        {
            Ok(at) => at,
            Err(at) => {
                self.operations.insert(
                    at,
                    OperationCount {
                        operation: operation.to_string(),
                        ..OperationCount::default()
                    },
                );
                at
            }
        };
        &mut self.operations[at]
    }

    /// One request of `operation`, as it was answered.
    pub fn request(&mut self, operation: &str, answered: Answered) {
        let count = self.entry(operation);
        count.requests += 1;
        match answered {
            Answered::Status(status) if (200..300).contains(&status) => count.ok += 1,
            Answered::Status(status) if (400..500).contains(&status) => count.client_errors += 1,
            Answered::Status(status) if status >= 500 => count.server_errors += 1,
            Answered::Status(_) => {}
            Answered::Not => count.server_errors += 1,
        }
    }

    /// Body bytes of a request of `operation`, sent (`up`) or received.
    pub fn bytes(&mut self, operation: &str, up: bool, bytes: u64) {
        let count = self.entry(operation);
        if up {
            count.bytes_up += bytes;
        } else {
            count.bytes_down += bytes;
        }
    }

    /// Every request.
    pub fn requests(&self) -> u64 {
        self.operations.iter().map(|count| count.requests).sum()
    }

    /// The requests of one operation.
    pub fn of(&self, operation: &str) -> u64 {
        self.operations
            .iter()
            .find(|count| count.operation == operation)
            .map_or(0, |count| count.requests)
    }

    /// Bytes sent and received, every operation's.
    pub fn bytes_up_down(&self) -> (u64, u64) {
        self.operations.iter().fold((0, 0), |(up, down), count| {
            (up + count.bytes_up, down + count.bytes_down)
        })
    }

    /// Adds `other`'s counts to these, operation by operation: several commands' together.
    pub fn add(&mut self, other: &RequestCounts) {
        for count in &other.operations {
            let into = self.entry(&count.operation);
            into.requests += count.requests;
            into.ok += count.ok;
            into.client_errors += count.client_errors;
            into.server_errors += count.server_errors;
            into.bytes_up += count.bytes_up;
            into.bytes_down += count.bytes_down;
        }
    }

    /// What was counted since `earlier` (a snapshot of the same counts): one command's share
    /// of a run's.
    pub fn since(&self, earlier: &RequestCounts) -> RequestCounts {
        let mut since = RequestCounts::default();
        for count in &self.operations {
            let before = earlier
                .operations
                .iter()
                .find(|before| before.operation == count.operation)
                .cloned()
                .unwrap_or_default();
            if count.requests == before.requests
                && count.bytes_up == before.bytes_up
                && count.bytes_down == before.bytes_down
            {
                continue;
            }
            since.operations.push(OperationCount {
                operation: count.operation.clone(),
                requests: count.requests - before.requests,
                ok: count.ok - before.ok,
                client_errors: count.client_errors - before.client_errors,
                server_errors: count.server_errors - before.server_errors,
                bytes_up: count.bytes_up - before.bytes_up,
                bytes_down: count.bytes_down - before.bytes_down,
            });
        }
        since
    }

    /// `412 requests: 380 PutObject, 20 ListObjectsV2, …`, the most first.
    pub fn words(&self) -> String {
        format!("{} requests: {}", self.requests(), self.each_words())
    }

    /// Each operation's count, the most first: `380 PutObject, 20 ListObjectsV2`.
    pub fn each_words(&self) -> String {
        let mut by_most: Vec<&OperationCount> = self.operations.iter().collect();
        by_most.sort_by(|a, b| {
            b.requests
                .cmp(&a.requests)
                .then(a.operation.cmp(&b.operation))
        });
        let each: Vec<String> = by_most
            .iter()
            .map(|count| format!("{} {}", count.requests, count.operation))
            .collect();
        each.join(", ")
    }
}

/// Every operation [`operation`] names (besides `Other` and its method).
pub const KNOWN: &[&str] = &[
    "AbortMultipartUpload",
    "CompleteMultipartUpload",
    "CopyObject",
    "CreateBucket",
    "CreateMultipartUpload",
    "DeleteBucket",
    "DeleteObject",
    "DeleteObjects",
    "GetBucketLocation",
    "GetBucketPolicy",
    "GetBucketVersioning",
    "GetObject",
    "GetObjectAcl",
    "GetObjectLegalHold",
    "GetObjectLockConfiguration",
    "GetObjectRetention",
    "GetObjectTagging",
    "HeadBucket",
    "HeadObject",
    "ListMultipartUploads",
    "ListObjectVersions",
    "ListObjects",
    "ListObjectsV2",
    "ListParts",
    "PutBucketVersioning",
    "PutObject",
    "PutObjectLegalHold",
    "PutObjectLockConfiguration",
    "PutObjectRetention",
    "PutObjectTagging",
    "UploadPart",
    "UploadPartCopy",
];

/// The S3 operation a request is, from its method, its path (with `bucket` first in a
/// path-style request, or not at all where the bucket is the host's first label), its query
/// and whether it copies (`x-amz-copy-source`). An operation the lab does not tell apart is
/// `Other` with its method (`OtherGET`).
pub fn operation(
    method: &str,
    path: &str,
    query: &str,
    bucket: &str,
    bucket_in_host: bool,
    copies: bool,
) -> String {
    let path = path.trim_start_matches('/');
    let key = if bucket_in_host {
        path
    } else {
        match path.split_once('/') {
            Some((first, rest)) if first == bucket => rest,
            Some(_) => path,
            None if path == bucket => "",
            None => path,
        }
    };
    let has = |name: &str| {
        query
            .split('&')
            .any(|pair| pair.split('=').next() == Some(name))
    };
    let object = !key.is_empty();
    let name = match (method, object) {
        ("GET", true) if has("uploadId") => "ListParts",
        ("GET", true) if has("tagging") => "GetObjectTagging",
        ("GET", true) if has("retention") => "GetObjectRetention",
        ("GET", true) if has("legal-hold") => "GetObjectLegalHold",
        ("GET", true) if has("acl") => "GetObjectAcl",
        ("GET", true) => "GetObject",
        ("GET", false) if has("list-type") => "ListObjectsV2",
        ("GET", false) if has("uploads") => "ListMultipartUploads",
        ("GET", false) if has("versions") => "ListObjectVersions",
        ("GET", false) if has("location") => "GetBucketLocation",
        ("GET", false) if has("versioning") => "GetBucketVersioning",
        ("GET", false) if has("object-lock") => "GetObjectLockConfiguration",
        ("GET", false) if has("policy") => "GetBucketPolicy",
        ("GET", false) => "ListObjects",
        ("HEAD", true) => "HeadObject",
        ("HEAD", false) => "HeadBucket",
        ("PUT", true) if has("partNumber") && has("uploadId") && copies => "UploadPartCopy",
        ("PUT", true) if has("partNumber") && has("uploadId") => "UploadPart",
        ("PUT", true) if has("retention") => "PutObjectRetention",
        ("PUT", true) if has("legal-hold") => "PutObjectLegalHold",
        ("PUT", true) if has("tagging") => "PutObjectTagging",
        ("PUT", true) if copies => "CopyObject",
        ("PUT", true) => "PutObject",
        ("PUT", false) if has("versioning") => "PutBucketVersioning",
        ("PUT", false) if has("object-lock") => "PutObjectLockConfiguration",
        ("PUT", false) => "CreateBucket",
        ("POST", true) if has("uploads") => "CreateMultipartUpload",
        ("POST", true) if has("uploadId") => "CompleteMultipartUpload",
        ("POST", false) if has("delete") => "DeleteObjects",
        ("DELETE", true) if has("uploadId") => "AbortMultipartUpload",
        ("DELETE", true) => "DeleteObject",
        ("DELETE", false) => "DeleteBucket",
        _ => return format!("Other{method}"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_request_is_named_as_the_s3_api_names_it() {
        let named = |method: &str, path: &str, query: &str, copies: bool| {
            operation(method, path, query, "backups", false, copies)
        };
        assert_eq!(
            named("PUT", "/backups/repo/data/ab", "", false),
            "PutObject"
        );
        assert_eq!(
            named("PUT", "/backups/a", "partNumber=3&uploadId=x", false),
            "UploadPart"
        );
        assert_eq!(named("PUT", "/backups/a", "", true), "CopyObject");
        assert_eq!(
            named("POST", "/backups/a", "uploads", false),
            "CreateMultipartUpload"
        );
        assert_eq!(
            named("POST", "/backups/a", "uploadId=x", false),
            "CompleteMultipartUpload"
        );
        assert_eq!(
            named("DELETE", "/backups/a", "uploadId=x", false),
            "AbortMultipartUpload"
        );
        assert_eq!(named("GET", "/backups/a", "", false), "GetObject");
        assert_eq!(named("HEAD", "/backups/a", "", false), "HeadObject");
        assert_eq!(named("HEAD", "/backups", "", false), "HeadBucket");
        assert_eq!(named("HEAD", "/backups/", "", false), "HeadBucket");
        assert_eq!(
            named("GET", "/backups/", "list-type=2&prefix=repo%2F", false),
            "ListObjectsV2"
        );
        assert_eq!(
            named("GET", "/backups", "location", false),
            "GetBucketLocation"
        );
        assert_eq!(named("POST", "/backups", "delete", false), "DeleteObjects");
        assert_eq!(named("DELETE", "/backups/a", "", false), "DeleteObject");
        assert_eq!(named("PATCH", "/backups/a", "", false), "OtherPATCH");
        // A virtual-hosted request: the bucket is the host's, every path is a key.
        assert_eq!(
            operation("GET", "/backups", "", "backups", true, false),
            "GetObject"
        );
    }

    #[test]
    fn a_small_object_is_billed_as_the_least_a_store_bills() {
        let stored = StoredObjects::of([100, 200_000, 5 << 20, 131_072]);
        assert_eq!(stored.objects, 4);
        assert_eq!(stored.small_sizes, [100, 131_072, 200_000]);
        assert_eq!(stored.billed_bytes(0, 0), stored.bytes);
        // 128 KiB at least: the 100-byte object is billed as 131 072 bytes.
        assert_eq!(
            stored.billed_bytes(131_072, 0),
            stored.bytes + 131_072 - 100
        );
        assert_eq!(stored.billed_bytes(0, 40_960), stored.bytes + 4 * 40_960);
    }

    #[test]
    fn counts_add_up_and_a_commands_share_is_what_came_after_it() {
        let mut counts = RequestCounts::default();
        counts.request("PutObject", Answered::Status(200));
        counts.bytes("PutObject", true, 100);
        counts.request("HeadObject", Answered::Status(404));
        let before = counts.clone();
        counts.request("PutObject", Answered::Status(503));
        counts.bytes("PutObject", true, 50);
        counts.request("GetObject", Answered::Not);
        assert_eq!(counts.requests(), 4);
        assert_eq!(counts.of("PutObject"), 2);
        let since = counts.since(&before);
        assert_eq!(since.requests(), 2);
        assert_eq!(since.bytes_up_down(), (50, 0));
        let put = &since.operations[1];
        assert_eq!(
            (put.operation.as_str(), put.server_errors, put.ok),
            ("PutObject", 1, 0)
        );
        assert_eq!(since.operations[0].operation, "GetObject");
        assert_eq!(
            counts.words(),
            "4 requests: 2 PutObject, 1 GetObject, 1 HeadObject"
        );
    }
}
