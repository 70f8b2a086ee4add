//! The async client's operations beyond put/commit/fence/get (issue #33
//! item 3: a tokio program can publish and look up, spawn, query, resolve
//! peers and nodes, use groups and events), against our server embedded
//! in the same tokio program (`net::spawn`, loopback TCP), two ranks
//! concurrently on one thread, the test acting as the host that answers
//! PMIx_Spawn.

use pmix_types::enums::DataRange;
use pmix_types::keys::typed;
use pmix_types::{Info, Proc, Value};
use pmix_wire::client::{
    AsyncClient, ClientEnv, ClientError, FenceOpts, GroupOpts, LookupOpts, Publish, Queries, Spawn,
    SpawnApp,
};
use pmix_wire::server::{net, HostEvent, JobSpec};
use std::collections::HashMap;
use std::time::Duration;

const NS: &str = "aops";
const EVENT: i32 = -3131;

fn env_of(vars: Vec<(String, String)>) -> ClientEnv {
    let m: HashMap<String, String> = vars.into_iter().collect();
    ClientEnv::from_env(|k| m.get(k).cloned()).expect("client environment")
}

async fn fence(c: &mut AsyncClient) -> Result<(), ClientError> {
    c.fence(FenceOpts::new().timeout(Duration::from_secs(30)))
        .await
}

/// Rank 0: publishes, notifies, spawns.
async fn rank0(env: ClientEnv) -> Result<String, ClientError> {
    let mut c = AsyncClient::init_with(env).await?;
    c.timeout = Duration::from_secs(30);
    c.publish(
        Publish::new()
            .put("aops.port", 4242u32)
            .range(DataRange::NAMESPACE),
    )
    .await?;
    fence(&mut c).await?; // published; rank 1 has registered for EVENT
    group(&mut c).await?;
    c.notify(EVENT, DataRange::NAMESPACE, &[]).await?;
    let kid = c
        .spawn(Spawn::new().app(SpawnApp::new("/bin/true", 1)))
        .await?;
    fence(&mut c).await?; // rank 1 looked up
    c.unpublish(&["aops.port"], LookupOpts::new()).await?;
    common(&mut c).await?;
    c.finalize().await?;
    Ok(kid)
}

/// Rank 1: registers for the event, looks up, waits for the event.
async fn rank1(env: ClientEnv) -> Result<u32, ClientError> {
    let mut c = AsyncClient::init_with(env).await?;
    c.timeout = Duration::from_secs(30);
    c.register_events(&[EVENT], &[]).await?;
    fence(&mut c).await?;
    group(&mut c).await?;
    let found = c
        .lookup(
            &["aops.port"],
            LookupOpts::new().range(DataRange::NAMESPACE),
        )
        .await?;
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].proc, Proc::new(NS, 0));
    let port = match &found[0].value {
        Value::Uint32(p) => *p,
        v => panic!("aops.port is {v:?}"),
    };
    let n = c.next_event(&[EVENT], Duration::from_secs(30)).await?;
    assert_eq!((n.status, n.source.rank), (EVENT, 0));
    fence(&mut c).await?;
    common(&mut c).await?;
    c.finalize().await?;
    Ok(port)
}

/// A group of both ranks, with a context id the server assigns (the
/// client speaks v61 to our server: 6.x's reply, whose id is absent
/// unless asked for).
async fn group(c: &mut AsyncClient) -> Result<(), ClientError> {
    let both = [Proc::new(NS, 0), Proc::new(NS, 1)];
    let id = c
        .group_construct("agrp", &both, GroupOpts::new().assign_context_id(true))
        .await?;
    assert!(matches!(id, Some(i) if i != u64::MAX), "{id:?}");
    c.group_destruct("agrp", &[]).await
}

/// What both ranks do: resolve, query, typed get, a group, log.
async fn common(c: &mut AsyncClient) -> Result<(), ClientError> {
    let peers = c.resolve_peers(NS).await?;
    assert_eq!(peers, vec![Proc::new(NS, 0), Proc::new(NS, 1)]);
    assert_eq!(c.resolve_nodes(NS).await?, vec![net::hostname()]);
    // both ask after the second fence, which rank 0 enters once spawned
    let ns = c.query(Queries::new().ask(["pmix.qry.ns"])).await?;
    assert_eq!(
        ns[0].value,
        Value::String(Some("aops,aops-kid".into())),
        "{ns:?}"
    );
    assert_eq!(c.get_key(typed::JOB_SIZE).await?, 2u32);
    let text = Info::new(
        "pmix.log.stderr",
        Value::String(Some("from the async client\n".into())),
    );
    c.log(&[text], &[]).await?;
    Ok(())
}

#[test]
fn async_client_publishes_looks_up_spawns_queries_and_resolves_on_our_server() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut server = net::spawn(
            vec![JobSpec {
                nspace: NS.into(),
                nprocs: 2,
                hostname: net::hostname(),
                info: vec![],
            }],
            net::Options::default(),
        )
        .expect("server");
        let (e0, e1) = (
            env_of(server.client_env(NS, 0u32)),
            env_of(server.client_env(NS, 1u32)),
        );
        // the host: answers the spawn with a job it registers, until
        // both ranks finalized; what it saw
        let host = async {
            let (mut spawned, mut finalized) = (Vec::new(), 0);
            while finalized < 2 {
                match server.events.recv().await.expect("server events") {
                    HostEvent::Spawn {
                        request,
                        requester,
                        apps,
                        ..
                    } => {
                        spawned.push((requester, apps.len()));
                        server
                            .call(move |s| {
                                s.register_nspace(JobSpec {
                                    nspace: "aops-kid".into(),
                                    nprocs: 1,
                                    hostname: net::hostname(),
                                    info: vec![],
                                });
                                s.spawned(request, Ok("aops-kid".into()));
                            })
                            .await
                            .expect("server call");
                    }
                    HostEvent::Finalized(_) => finalized += 1,
                    HostEvent::Lost(p) => panic!("{p:?} lost"),
                    _ => {}
                }
            }
            spawned
        };
        let (r0, r1, spawned) = tokio::join!(rank0(e0), rank1(e1), host);
        assert_eq!(r0.unwrap_or_else(|e| panic!("rank 0: {e}")), "aops-kid");
        assert_eq!(r1.unwrap_or_else(|e| panic!("rank 1: {e}")), 4242);
        assert_eq!(spawned, vec![(Proc::new(NS, 0), 1)]);
        server.stop().await;
    });
}

/// Typed errors at the edge: a status from the server names the
/// operation (here a lookup of a key nobody published, which our server
/// answers at once with PMIX_ERR_NOT_FOUND).
#[test]
fn async_client_errors_name_their_operation() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let server = net::spawn(
            vec![JobSpec {
                nspace: "aerr".into(),
                nprocs: 1,
                hostname: net::hostname(),
                info: vec![],
            }],
            net::Options::default(),
        )
        .expect("server");
        let mut c = AsyncClient::init_with(env_of(server.client_env("aerr", 0u32)))
            .await
            .unwrap();
        let e = c
            .lookup(&["aerr.never"], LookupOpts::new())
            .await
            .unwrap_err();
        assert!(
            matches!(e, ClientError::Status { op: "lookup", .. }),
            "{e:?}"
        );
        assert_eq!(e.op(), Some("lookup"));
        c.finalize().await.unwrap();
        server.stop().await;
    });
}
