//! `pmixw`: the pmix-wire command line.

use std::process::ExitCode;

mod cli;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match cli::run(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("pmixw: {e}");
            ExitCode::from(2)
        }
    }
}
