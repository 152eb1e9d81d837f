//! The lab's note of what it has under way in object stores: one small file per object, in a
//! directory of the lab's own, written when an upload starts, marked when it completes and
//! removed once the object is gone. A lab killed in the middle of a run finds in it, at its next
//! start, every upload to abort and every object to remove, on any store: listing a bucket's
//! uploads is not something every store offers or every credential may do.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// One object the lab made or is making.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub store: String,
    pub key: String,
    /// The upload under way; `None` once it completed and the object exists.
    pub upload_id: Option<String>,
}

/// A directory of entries.
#[derive(Debug, Clone)]
pub struct Journal {
    dir: PathBuf,
}

impl Journal {
    /// The journal kept in `dir`, created when missing.
    pub fn open(dir: &Path) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        Ok(Self {
            dir: dir.to_path_buf(),
        })
    }

    fn file_of(&self, store: &str, key: &str) -> PathBuf {
        let digest = Sha256::digest(format!("{store}\n{key}").as_bytes());
        let name: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("{name}.json"))
    }

    /// Notes an entry (an upload started, or completed); a failure to note it is only
    /// logged: the run goes on, and the start-up listing of the bucket is the fallback.
    pub fn note(&self, entry: &Entry) {
        let path = self.file_of(&entry.store, &entry.key);
        let written = serde_json::to_vec(entry)
            .map_err(std::io::Error::other)
            .and_then(|text| std::fs::write(&path, text));
        if let Err(error) = written {
            tracing::warn!(path = %path.display(), %error, "cannot note an upload in the lab's journal");
        }
    }

    /// Forgets an object once it is gone.
    pub fn forget(&self, store: &str, key: &str) {
        let _ = std::fs::remove_file(self.file_of(store, key));
    }

    /// Every entry left, with the file it is in.
    pub fn entries(&self) -> Vec<Entry> {
        let Ok(listing) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        listing
            .flatten()
            .filter_map(|item| {
                let text = std::fs::read(item.path()).ok()?;
                match serde_json::from_slice(&text) {
                    Ok(entry) => Some(entry),
                    Err(_) => {
                        // Half-written when the lab stopped: nothing can be done with it.
                        let _ = std::fs::remove_file(item.path());
                        None
                    }
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_noted_marked_and_forgotten() {
        let dir = tempfile::tempdir().expect("temp dir");
        let journal = Journal::open(&dir.path().join("uploads")).expect("journal");
        let mut entry = Entry {
            store: "lab".into(),
            key: "backlab/k".into(),
            upload_id: Some("u1".into()),
        };
        journal.note(&entry);
        assert_eq!(journal.entries(), vec![entry.clone()]);
        entry.upload_id = None;
        journal.note(&entry);
        assert_eq!(journal.entries(), vec![entry]);
        journal.forget("lab", "backlab/k");
        assert!(journal.entries().is_empty());
    }
}
