//! `pmixw query [--pid PID | --nspace NS | --uri URI | --system] [--wait
//! SECS] KEY…`: connect as a tool (waiting for a rendezvous file about to
//! appear, `tool::connect_wait`) and print each answer as `KEY: VALUE`
//! (like pquery).

use pmix_types::{PString, Query};
use pmix_wire::tool::{connect_wait, tmpdirs, Target};
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
    let target = target.ok_or("query needs --pid, --nspace, --uri or --system")?;
    if keys.is_empty() {
        return Err("query needs at least one key (e.g. pmix.qry.ns)".into());
    }
    let wait = Duration::try_from_secs_f64(wait).map_err(|e| format!("--wait {wait}: {e}"))?;
    let mut t = connect_wait(&target, &tmpdirs(), wait).map_err(|e| e.to_string())?;
    let q = Query {
        keys: keys.iter().map(|k| PString::from(k.as_str())).collect(),
        qualifiers: Vec::new(),
    };
    let answers = t.query(vec![q]).map_err(|e| e.to_string())?;
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
