//! `pmixw query [--pid PID | --nspace NS | --uri URI | --system] [--wait
//! SECS] KEY…`: connect as a tool (waiting for a rendezvous file about to
//! appear, `tool::connect_wait`) and print each answer as `KEY: VALUE`
//! (like pquery). Inside a job (PMIX_NAMESPACE, PMIX_RANK and a
//! PMIX_SERVER_URI* set) with no target, or with `--uri` the job's own
//! URI, it asks as the job's client instead: a job's URI is a client
//! listener, and a libpmix server may not take a tool there (a tool
//! handshake on it crashed Open MPI 4.1.4's mpirun; spec-notes/doctor.md).

use pmix_types::{PString, Query};
use pmix_wire::client::{Client, ClientEnv};
use pmix_wire::tool::{address, connect_wait, tmpdirs, Target};
use std::process::ExitCode;
use std::time::Duration;

pub fn query_cmd(args: super::QueryArgs) -> Result<ExitCode, String> {
    let super::QueryArgs {
        pid,
        nspace,
        uri,
        system,
        wait,
        keys,
    } = args;
    // at most one is given (clap rejects two)
    let target = [
        pid.map(Target::Pid),
        nspace.map(Target::Nspace),
        uri.map(Target::Uri),
        system.then_some(Target::System),
    ]
    .into_iter()
    .flatten()
    .next();
    if keys.is_empty() {
        return Err("query needs at least one key (e.g. pmix.qry.ns)".into());
    }
    // the job this process belongs to, if any
    let job = ClientEnv::from_env(|k| std::env::var(k).ok()).ok();
    let as_client = match (&target, &job) {
        (None, Some(_)) => true,
        (Some(Target::Uri(u)), Some(j)) => address(u) == address(&j.uri),
        _ => false,
    };
    let mut t = if let (true, Some(j)) = (as_client, job) {
        Client::init_with(j).map_err(|e| format!("as the job's client: {e}"))?
    } else {
        let target = target.ok_or(
            "query needs --pid, --nspace, --uri or --system (or a job's environment: PMIX_NAMESPACE, PMIX_RANK, PMIX_SERVER_URI*)",
        )?;
        let wait = Duration::try_from_secs_f64(wait).map_err(|e| format!("--wait {wait}: {e}"))?;
        connect_wait(&target, &tmpdirs(), wait).map_err(|e| e.to_string())?
    };
    let q = Query {
        keys: keys.iter().map(|k| PString::from(k.as_str())).collect(),
        qualifiers: Vec::new(),
    };
    let answers = match t.query(vec![q]) {
        Ok(a) => a,
        Err(e) => {
            // disconnect properly all the same: a launcher may count a
            // client gone without PMIx_Finalize as a failed rank
            let _ = t.finalize();
            return Err(e.to_string());
        }
    };
    for i in &answers {
        println!(
            "{}: {}",
            i.key.as_pstring().to_string_lossy(),
            show(&i.value)
        );
    }
    t.finalize().map_err(|e| e.to_string())?;
    Ok(ExitCode::SUCCESS)
}

fn show(v: &pmix_types::Value) -> String {
    match v {
        pmix_types::Value::String(Some(s)) => s.to_string_lossy().into_owned(),
        other => {
            serde_json::to_string(&other.to_bare_json()).unwrap_or_else(|_| format!("{other:?}"))
        }
    }
}
