//! Waiting for something another process or thread does: the one polling loop of these tests.

use std::fmt::Display;
use std::time::{Duration, Instant};

/// Calls `check` every `every` until it returns `Ok`, and returns that value. Once `timeout`
/// has passed the test fails, naming what it waited for (`what`) and what the last check saw
/// instead (its `Err`).
///
/// The check runs at least once, and the last one runs after the deadline: a test is not
/// failed for a sleep that overran it on a busy machine.
pub async fn wait_until<T, E: Display>(
    what: &str,
    timeout: Duration,
    every: Duration,
    mut check: impl AsyncFnMut() -> Result<T, E>,
) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        let seen = match check().await {
            Ok(value) => return value,
            Err(seen) => seen,
        };
        assert!(
            Instant::now() < deadline,
            "waited {timeout:?} for {what}; last seen: {seen}"
        );
        tokio::time::sleep(every).await;
    }
}
