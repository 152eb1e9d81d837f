//! One lab per SQLite file: a lab holds an exclusive lock on `<db>.lock` for as long as it
//! runs, with its process id written in, so a second lab on the same file is refused at start
//! and told who holds it. The kernel drops the lock when the process ends, however it ends.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

use rustix::fs::{FlockOperation, flock};

/// Why the database's lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "another lab is using this database ({holder}, lock file {lock}): stop it first, or \
         give this lab a database of its own with --db"
    )]
    Held { holder: String, lock: String },
    #[error("cannot lock {lock}: {source}")]
    Io { lock: String, source: io::Error },
}

/// The lock on a SQLite file, held until dropped. The lock file itself stays: removing it
/// would let a lab that opened it just before lock a file nobody else sees.
#[derive(Debug)]
pub struct FileLock {
    _file: File,
}

/// Where the lock of `db` lives.
fn lock_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

impl FileLock {
    /// Takes the lock of `db` without waiting.
    pub fn take(db: &Path) -> Result<Self, LockError> {
        let path = lock_path(db);
        let shown = path.display().to_string();
        let io_error = |source| LockError::Io {
            lock: shown.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io_error)?;
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(rustix::io::Errno::WOULDBLOCK) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = match holder.trim() {
                    "" => "a process that has not written its id yet".to_string(),
                    pid => format!("process {pid}"),
                };
                return Err(LockError::Held {
                    holder,
                    lock: shown,
                });
            }
            Err(errno) => return Err(io_error(errno.into())),
        }
        file.set_len(0).map_err(io_error)?;
        file.rewind().map_err(io_error)?;
        writeln!(file, "{}", std::process::id()).map_err(io_error)?;
        file.flush().map_err(io_error)?;
        Ok(Self { _file: file })
    }
}
