//! Where the lab keeps its results: a SQLite file (the default), or a PostgreSQL database that
//! a fleet of labs shares.

use std::fmt;
use std::path::PathBuf;

/// A `--db` value, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A SQLite file, created and migrated when missing.
    File(PathBuf),
    /// A PostgreSQL connection URL (`postgres://user@host/db`).
    Postgres(String),
}

impl Location {
    /// Reads a path or a `postgres://` (or `postgresql://`) URL. Any other URL is refused rather
    /// than taken as a path, which would create a directory named after its scheme.
    pub fn parse(text: &str) -> Result<Location, String> {
        match text.split_once("://") {
            Some(("postgres" | "postgresql", _)) => Ok(Location::Postgres(text.to_string())),
            Some((scheme, _)) => Err(format!(
                "'{scheme}://…' is a database URL the lab does not speak: give a SQLite file's \
                 path or a postgres:// URL"
            )),
            None if text.is_empty() => Err("give a SQLite file's path or a postgres:// URL".into()),
            None => Ok(Location::File(PathBuf::from(text))),
        }
    }
}

impl fmt::Display for Location {
    /// The file's path, or the URL without its password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::File(path) => write!(f, "{}", path.display()),
            Location::Postgres(url) => f.write_str(&without_password(url)),
        }
    }
}

/// `postgres://user:secret@host/db` as `postgres://user:…@host/db`, for logs and messages.
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    match authority.rsplit_once('@') {
        Some((credentials, host)) => match credentials.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:…@{host}{tail}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_a_postgres_url_and_nothing_else() {
        assert_eq!(
            Location::parse("lab/backlab.db"),
            Ok(Location::File(PathBuf::from("lab/backlab.db")))
        );
        assert!(matches!(
            Location::parse("postgresql://lab@db/backlab"),
            Ok(Location::Postgres(_))
        ));
        let refused = Location::parse("mysql://lab@db/backlab").expect_err("not spoken");
        assert!(
            refused.contains("'mysql://…' is a database URL"),
            "{refused}"
        );
    }

    #[test]
    fn a_url_is_shown_without_its_password() {
        let location = Location::parse("postgres://lab:s3cret@db:5432/backlab").expect("url");
        assert_eq!(location.to_string(), "postgres://lab:…@db:5432/backlab");
    }
}
