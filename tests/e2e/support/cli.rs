//! The built `backlab` binary as a command, and what it printed.

use std::process::{Command, Output};

/// The built `backlab` binary, ready for arguments.
pub fn backlab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_backlab"))
}

/// Runs a command and returns its output, failing the test if it could not start.
pub fn output(command: &mut Command) -> Output {
    command.output().expect("backlab starts")
}

/// What the command printed on stderr, as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// What the command printed on stdout, as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The report `backlab run --json` printed; a failure shows both streams.
pub fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|error| {
        panic!(
            "stdout is not JSON ({error}): {}\nstderr: {}",
            stdout(out),
            stderr(out)
        )
    })
}
