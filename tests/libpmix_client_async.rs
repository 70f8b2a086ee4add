//! The async client (src/client/asyncio.rs) on tokio: ranks of one job
//! put, commit, fence with data, GET a neighbour's key and finalize,
//! concurrently on one thread; against our server embedded in the same
//! tokio program (`net::spawn`), and against libpmix 4.2.2's server
//! (interop/c/bench_server.c, which registers the ranks and waits for
//! whoever connects as them). The C server skips only where cc or libpmix
//! is absent (outside CI; under CI that fails).

use pmix_test_kit::process;

use pmix_test_kit::interop::build_c;
use pmix_types::enums::Scope;
use pmix_types::{Proc, Value};
use pmix_wire::client::{AsyncClient, ClientEnv, ClientError, FenceOpts};
use pmix_wire::server::{net, HostEvent, JobSpec};
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// One rank's life; the value it read from its neighbour.
async fn rank(env: ClientEnv, n: u32) -> Result<Value, ClientError> {
    let mut c = AsyncClient::init_with(env).await?;
    c.timeout = Duration::from_secs(30);
    let me = c.proc().clone();
    c.put(
        Scope::GLOBAL,
        "async.key",
        Value::String(Some(format!("from-{}", me.rank).as_str().into())),
    );
    c.commit().await?;
    c.fence(FenceOpts::new().collect_data(true)).await?;
    let next = Proc::new(&me.nspace.to_string(), (me.rank + 1) % n);
    let v: Value = c.get(&next, "async.key").await?;
    // job data the server sent at init, answered without a round trip
    assert_eq!(c.get::<u32>(&me, "pmix.job.size").await?, n);
    c.finalize().await?;
    Ok(v)
}

/// Every rank of `n` concurrently; each one's result, by rank.
async fn job(envs: Vec<ClientEnv>) -> Vec<Result<Value, ClientError>> {
    let n = envs.len() as u32;
    let mut set = tokio::task::JoinSet::new();
    for (r, env) in envs.into_iter().enumerate() {
        set.spawn(async move { (r, rank(env, n).await) });
    }
    let mut out: Vec<Option<Result<Value, ClientError>>> = (0..n).map(|_| None).collect();
    while let Some(j) = set.join_next().await {
        let (r, res) = j.expect("rank task");
        out[r] = Some(res);
    }
    out.into_iter().map(|o| o.unwrap()).collect()
}

fn env_of(vars: Vec<(String, String)>) -> ClientEnv {
    let m: HashMap<String, String> = vars.into_iter().collect();
    ClientEnv::from_env(|k| m.get(k).cloned()).expect("client environment")
}

fn check(results: Vec<Result<Value, ClientError>>) {
    let n = results.len();
    for (r, res) in results.into_iter().enumerate() {
        let want = format!("from-{}", (r + 1) % n);
        match res {
            Ok(v) => assert_eq!(v, Value::String(Some(want.as_str().into())), "rank {r}"),
            Err(e) => panic!("rank {r}: {e}"),
        }
    }
}

#[test]
fn async_clients_wire_up_on_our_server_in_one_tokio_program() {
    let n = 6;
    runtime().block_on(async {
        let mut server = net::spawn(
            vec![JobSpec {
                nspace: "asyncjob".into(),
                nprocs: n,
                hostname: net::hostname(),
                info: vec![],
            }],
            net::Options::default(),
        )
        .expect("server");
        let envs = (0..n)
            .map(|r| env_of(server.client_env("asyncjob", r)))
            .collect();
        check(job(envs).await);
        let mut finalized = Vec::new();
        while let Ok(e) = server.events.try_recv() {
            if let HostEvent::Finalized(p) = e {
                finalized.push(p.rank);
            }
        }
        finalized.sort();
        assert_eq!(finalized, (0..n).collect::<Vec<_>>());
        server.stop().await;
    });
}

/// libpmix 4.2.2's server with `n` ranks registered: its URI and namespace.
struct CServer(std::process::Child);

impl Drop for CServer {
    fn drop(&mut self) {
        drop(self.0.stdin.take()); // EOF: it finalizes and exits
        pmix_test_kit::hosts::reap(&mut self.0, process::STOP_GRACE);
    }
}

#[test]
fn async_clients_wire_up_on_libpmix_422s_server() {
    if process::require("cc and libpmix 4.2.2", pmix_test_kit::hosts::libpmix4_dev()).is_none() {
        return;
    }
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("client_async");
    std::fs::create_dir_all(&out).unwrap();
    let exe = build_c("bench_server", &out).unwrap_or_else(|e| panic!("{e}"));
    let n = 4u32;
    let mut child = Command::new(&exe)
        .args([n.to_string().as_str(), "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("bench_server");
    let stdout = child.stdout.take().unwrap();
    let server = CServer(child);
    let mut lines = BufReader::new(stdout).lines();
    let mut field = |name: &str| -> String {
        for l in lines.by_ref() {
            let l = l.expect("server output");
            if let Some(v) = l.strip_prefix(name) {
                return v.trim().to_string();
            }
        }
        panic!("libpmix's server ended before printing {name}");
    };
    let uri = field("uri ");
    let ns = field("nspace ");
    let envs = (0..n)
        .map(|r| {
            env_of(vec![
                ("PMIX_NAMESPACE".into(), ns.clone()),
                ("PMIX_RANK".into(), r.to_string()),
                ("PMIX_SERVER_URI41".into(), uri.clone()),
            ])
        })
        .collect();
    check(runtime().block_on(job(envs)));
    // every rank finalized: the server reports and is done
    let rss = field("server_rss ");
    assert!(rss.parse::<u64>().is_ok(), "{rss}");
    drop(server);
}

#[test]
fn an_async_client_claiming_no_rank_of_the_job_gets_the_servers_refusal() {
    runtime().block_on(async {
        let server = net::spawn(
            vec![JobSpec {
                nspace: "asyncsmall".into(),
                nprocs: 1,
                hostname: net::hostname(),
                info: vec![],
            }],
            net::Options::default(),
        )
        .expect("server");
        let mut env = env_of(server.client_env("asyncsmall", 0));
        env.proc = Proc::new("asyncsmall", 5);
        match AsyncClient::init_with(env).await {
            Err(ClientError::Status { op, code }) => {
                assert_eq!((op, code), ("handshake", -46)); // PMIX_ERR_NOT_FOUND
            }
            Err(e) => panic!("another error: {e}"),
            Ok(_) => panic!("a rank the job does not have was served"),
        }
        server.stop().await;
    });
}
