//! One lab per SQLite file, whatever name reaches it: a lab holds an exclusive lock on the
//! database file itself for as long as it runs, so a second lab that reaches the same file
//! through a symbolic or a hard link is refused at start as well as one given the same path;
//! and one on `<db>.lock` beside the file's real path, with its process id written in, so the
//! second lab is told who holds it. The kernel drops both when the process ends, however it
//! ends.

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
    _database: File,
    /// The database file's real path, its links resolved: the name every connection opens.
    pub path: PathBuf,
}

/// `path` with every symbolic link resolved; a file not made yet is named in its directory's
/// real path.
fn real_path(path: &Path) -> io::Result<PathBuf> {
    match std::fs::canonicalize(path) {
        Ok(real) => Ok(real),
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            let name = path.file_name().ok_or(error)?;
            let parent = match path.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => parent,
                _ => Path::new("."),
            };
            Ok(std::fs::canonicalize(parent)?.join(name))
        }
        Err(error) => Err(error),
    }
}

/// Where the lock of `db` lives.
fn lock_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

impl FileLock {
    /// Takes the lock of `db` without waiting, creating the database file (empty) when it
    /// is not there yet.
    pub fn take(db: &Path) -> Result<Self, LockError> {
        let real = real_path(db).map_err(|source| LockError::Io {
            lock: db.display().to_string(),
            source,
        })?;
        let path = lock_path(&real);
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
        // The file itself, whatever its name: a hard link has a lock file of its own. The
        // lock is flock's, which SQLite's own (fcntl) locks on the file neither see nor move.
        let database = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&real)
            .map_err(|source| LockError::Io {
                lock: real.display().to_string(),
                source,
            })?;
        match flock(&database, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(rustix::io::Errno::WOULDBLOCK) => {
                return Err(LockError::Held {
                    holder: "a process that opened this file under another name (a hard link)"
                        .to_string(),
                    lock: real.display().to_string(),
                });
            }
            Err(errno) => {
                return Err(LockError::Io {
                    lock: real.display().to_string(),
                    source: errno.into(),
                });
            }
        }
        file.set_len(0).map_err(io_error)?;
        file.rewind().map_err(io_error)?;
        writeln!(file, "{}", std::process::id()).map_err(io_error)?;
        file.flush().map_err(io_error)?;
        Ok(Self {
            _file: file,
            _database: database,
            path: real,
        })
    }
}
