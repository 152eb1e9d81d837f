//! Structs read from a query's columns by name, and the lab's migrations.
//!
//! Both are what sqlx's macros would give (`#[derive(sqlx::FromRow)]`, `sqlx::migrate!`), written
//! without them: the macros compile both database drivers a second time for the build machine,
//! about a minute of CPU in every fresh build, for three structs and two lists of files.

/// Declares a struct and reads it from a row, each field from the column of its name, or from
/// the one given with `as "column"`.
macro_rules! row_struct {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[$field_meta:meta])*
                $field_vis:vis $field:ident: $ty:ty $(as $column:literal)?
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $(
                $(#[$field_meta])*
                $field_vis $field: $ty,
            )*
        }

        impl<'r, R: sqlx::Row> sqlx::FromRow<'r, R> for $name
        where
            &'r str: sqlx::ColumnIndex<R>,
            $($ty: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,)*
        {
            fn from_row(row: &'r R) -> Result<Self, sqlx::Error> {
                Ok(Self {
                    $($field: row.try_get(row_struct!(@column $field $($column)?))?,)*
                })
            }
        }
    };
    (@column $field:ident $column:literal) => { $column };
    (@column $field:ident) => { stringify!($field) };
}
/// The migrations of each backend, one `(version, description, sql)` per file of
/// `migrations/` and `migrations/postgres/` (listed by `build.rs`, read in at compile time).
mod listed {
    include!(concat!(env!("OUT_DIR"), "/migrations.rs"));
}

/// The migrator of one backend's files, named and checksummed as `sqlx::migrate!` names and
/// checksums them, so a database migrated by either reads as up to date to the other.
fn migrator(files: &'static [(i64, &'static str, &'static str)]) -> sqlx::migrate::Migrator {
    use sqlx::SqlSafeStr;
    use sqlx::migrate::{Migration, MigrationType, Migrator};
    Migrator::with_migrations(
        files
            .iter()
            .map(|&(version, description, sql)| {
                Migration::new(
                    version,
                    description.into(),
                    MigrationType::Simple,
                    sqlx::AssertSqlSafe(sql).into_sql_str(),
                    sql.starts_with("-- no-transaction"),
                )
            })
            .collect(),
    )
}

/// The SQLite file's migrations (`migrations/`).
pub(super) fn sqlite_migrator() -> sqlx::migrate::Migrator {
    migrator(listed::SQLITE)
}

/// The PostgreSQL database's migrations (`migrations/postgres/`).
pub(super) fn postgres_migrator() -> sqlx::migrate::Migrator {
    migrator(listed::POSTGRES)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use sqlx::migrate::Migrator;

    /// Each backend's list holds every file of its directory with the version, description,
    /// checksum and transaction choice sqlx's own reading of the directory gives.
    #[tokio::test]
    async fn the_listed_migrations_are_the_files_as_sqlx_reads_them() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        for (listed, dir) in [
            (super::sqlite_migrator(), "migrations"),
            (super::postgres_migrator(), "migrations/postgres"),
        ] {
            let read = Migrator::new(root.join(dir)).await.expect("the directory");
            let shape = |migrator: &Migrator| {
                migrator
                    .iter()
                    .map(|m| {
                        let (version, description) = (m.version, m.description.to_string());
                        (version, description, m.checksum.to_vec(), m.no_tx)
                    })
                    .collect::<Vec<_>>()
            };
            assert!(read.iter().count() >= 8, "{dir}");
            assert_eq!(shape(&listed), shape(&read), "{dir}");
        }
    }
}
