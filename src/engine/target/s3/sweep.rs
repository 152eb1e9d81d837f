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
pub fn sweep_journal(
    journal: &Journal,
    stores: &ObjectStores,
    give_up: &AtomicBool,
) -> (Swept, Vec<String>) {
    let mut swept = Swept::default();
    let mut problems = Vec::new();
    for entry in journal.entries() {
        if give_up.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let Some(store) = stores.get(&entry.store) else {
            problems.push(format!(
                "{} in store {}: the lab was started without this store",
                entry.key, entry.store
            ));
            continue;
        };
        let client = S3Client::for_cleanup(store, Arc::new(RequestTally::default()));
        let aborted = match &entry.upload_id {
            Some(upload_id) => client
                .abort(
                    &Upload {
                        key: entry.key.clone(),
                        upload_id: upload_id.clone(),
                    },
                    give_up,
                )
                .map(|()| swept.uploads_aborted += 1),
            None => Ok(()),
        };
        let removed = aborted.and_then(|()| client.delete(&entry.key, give_up));
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

/// Aborts every upload and removes every object of this lab's runs (`owner`, as its
/// `EngineSettings::object_owner`) under `prefix`, as far as the store lists them (not every
/// store lists uploads under way: then objects only).
pub fn sweep(
    store: &ObjectStore,
    prefix: &str,
    owner: &str,
    give_up: &AtomicBool,
) -> Result<Swept, String> {
    let client = S3Client::for_cleanup(store, Arc::new(RequestTally::default()));
    let start = lab_key_start(prefix, owner);
    let mut swept = Swept::default();
    let uploads = match client.list_uploads(&start, give_up) {
        Ok(uploads) => uploads,
        Err(failure) if matches!(failure.status, Some(501 | 405 | 403)) => Vec::new(),
        Err(failure) => return Err(failure.message),
    };
    for upload in uploads {
        if upload.key.starts_with(&start) {
            client.abort(&upload, give_up).map_err(|f| f.message)?;
            swept.uploads_aborted += 1;
        }
    }
    for (key, _) in client
        .list_objects(&start, give_up)
        .map_err(|f| f.message)?
    {
        if key.starts_with(&start) {
            client.delete(&key, give_up).map_err(|f| f.message)?;
            swept.objects_removed += 1;
        }
    }
    Ok(swept)
}
