//! The `backlab` binary: everything lives in the library.

fn main() -> std::process::ExitCode {
    backlab::cli::main()
}
