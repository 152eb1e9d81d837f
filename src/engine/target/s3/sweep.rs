//! What a lab that stopped in the middle of a run left in an object store: uploads never
//! completed nor aborted, and objects never removed. Found by the lab's own key start under a
//! campaign's prefix (`lab_key_start`), so nothing another lab or anyone else wrote is touched.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::client::{S3Client, Upload};
use super::figures::RequestTally;
use super::journal::Journal;
use super::{ObjectStore, ObjectStores, lab_key_start};

/// What a sweep removed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Swept {
    pub uploads_aborted: usize,
    pub objects_removed: usize,
}

/// Aborts every upload and removes every object the journal holds, forgetting each once it
/// is gone; an entry of a store the lab no longer knows is kept, and named.
pub fn sweep_journal(journal: &Journal, stores: &ObjectStores) -> (Swept, Vec<String>) {
    let never = AtomicBool::new(false);
    let mut swept = Swept::default();
    let mut problems = Vec::new();
    for entry in journal.entries() {
        let Some(store) = stores.get(&entry.store) else {
            problems.push(format!(
                "{} in store {}: the lab was started without this store",
                entry.key, entry.store
            ));
            continue;
        };
        let client = S3Client::new(store, Arc::new(RequestTally::default()));
        let aborted = match &entry.upload_id {
            Some(upload_id) => client
                .abort(
                    &Upload {
                        key: entry.key.clone(),
                        upload_id: upload_id.clone(),
                    },
                    &never,
                )
                .map(|()| swept.uploads_aborted += 1),
            None => Ok(()),
        };
        let removed = aborted.and_then(|()| client.delete(&entry.key, &never));
        match removed {
            Ok(()) => {
                if entry.upload_id.is_none() {
                    swept.objects_removed += 1;
                }
                journal.forget(&entry.store, &entry.key);
            }
            Err(failure) => problems.push(failure.message),
        }
    }
    (swept, problems)
}

/// Aborts every upload and removes every object of this host's runs under `prefix`, as far
/// as the store lists them (not every store lists uploads under way: then objects only).
pub fn sweep(store: &ObjectStore, prefix: &str) -> Result<Swept, String> {
    let never = AtomicBool::new(false);
    let client = S3Client::new(store, Arc::new(RequestTally::default()));
    let start = lab_key_start(prefix);
    let mut swept = Swept::default();
    let uploads = match client.list_uploads(&start, &never) {
        Ok(uploads) => uploads,
        Err(failure) if matches!(failure.status, Some(501 | 405 | 403)) => Vec::new(),
        Err(failure) => return Err(failure.message),
    };
    for upload in uploads {
        if upload.key.starts_with(&start) {
            client.abort(&upload, &never).map_err(|f| f.message)?;
            swept.uploads_aborted += 1;
        }
    }
    for (key, _) in client.list_objects(&start, &never).map_err(|f| f.message)? {
        if key.starts_with(&start) {
            client.delete(&key, &never).map_err(|f| f.message)?;
            swept.objects_removed += 1;
        }
    }
    Ok(swept)
}
