//! `pmixw interop --hosts [--json] [--only TEXT]`: the live matrix of our
//! roles against the PMIx hosts and client kinds found on this machine
//! (interop/src/hosts/grid.rs). Exit status 1 when a cell fails; an absent peer
//! is reported, not failed.

use pmix_interop::hosts::grid;
use std::process::ExitCode;

pub fn hosts_cmd(json: bool, only: Option<String>) -> Result<ExitCode, String> {
    let pmixw = std::env::current_exe().map_err(|e| format!("our own path: {e}"))?;
    let scratch = std::env::temp_dir().join(format!("pmixw-hosts-{}", std::process::id()));
    // what a killed run of the same pid left (another pid namespace's, or
    // a wrapped pid) is not ours to build on
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let ctx = grid::Ctx::new(pmixw, scratch.clone());
    let cells = grid::run(&ctx, only.as_deref());
    let _ = std::fs::remove_dir_all(&scratch);
    if json {
        println!("{}", grid::json(&cells));
    } else {
        print!("{}", grid::table(&cells));
    }
    Ok(
        if cells
            .iter()
            .any(|c| matches!(c.outcome, grid::Outcome::Fail(_)))
        {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        },
    )
}
