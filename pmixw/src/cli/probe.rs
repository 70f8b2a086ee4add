//! `pmixw probe`: a battery of client operations, run as each rank of a
//! job under any PMIx launcher. One line per check (`ok`, `warn`, `skip`,
//! `FAIL`), then `probe: N checks, M failures` (`probe: N checks, W
//! warnings, M failures` when there are warnings); exit status 1 on any
//! failure.
//!
//! It checks what the standard says but accepts what real hosts send: a
//! deviation that does no harm is a `warn` line (Slurm registers
//! `pmix.appnum` as PMIX_INT, the standard says PMIX_UINT32); a feature
//! the host does not offer is a `skip` line with the host's status
//! (PMIX_ERR_NOT_SUPPORTED, a reserved key it does not provide, a spawn it
//! never answers). Nothing it does by default can harm the job: events,
//! which some hosts treat as fatal (Slurm's plugin cancels the step on any
//! event that reaches its default handler), are checked only with
//! `--events`, and then with a custom code and a custom range holding
//! just our own namespace, which leaves every host's own handlers out.

use pmix_types::enums::{DataRange, Scope};
use pmix_types::{Info, Proc, Value, RANK_WILDCARD};
use pmix_wire::client::{Client, ClientError, FenceOpts, GetOpts, LookupOpts, Publish, Spawn};
use std::process::ExitCode;
use std::time::Duration;

/// The probe's fences: the whole namespace, 30 s.
fn fence30() -> FenceOpts {
    FenceOpts::new().timeout(Duration::from_secs(30))
}

/// Status of the probe's event: a positive code (Open MPI 4.1.4 tears
/// the job down when a client notifies a negative, error code).
const PROBE_EVENT: i32 = 3131;
/// PMIX_RANGE_CUSTOM with PMIX_EVENT_CUSTOM_RANGE ("pmix.evrange"):
/// exactly the procs listed (our namespace), never the host's own
/// handlers.
const RANGE_CUSTOM: DataRange = DataRange::CUSTOM;
/// How long a spawn may stay unanswered before the probe calls it not
/// offered (python3-pmix's server never answers one).
const SPAWN_WAIT: Duration = Duration::from_secs(20);

struct Tally {
    prefix: String,
    checks: u32,
    failures: u32,
    warnings: u32,
}

/// How a reserved integer key came back.
enum Int {
    /// The standard's unsigned type.
    Ok(u32),
    /// A value of another integer type (`type` names it).
    Deviant(u32, &'static str),
}

impl Tally {
    fn check<T>(
        &mut self,
        name: &str,
        r: Result<T, String>,
        ok: impl Fn(&T) -> String,
    ) -> Option<T> {
        self.checks += 1;
        match r {
            Ok(v) => {
                println!("{}ok {name}: {}", self.prefix, ok(&v));
                Some(v)
            }
            Err(e) if e.contains("PMIX_ERR_NOT_SUPPORTED") || e.starts_with("skip: ") => {
                println!(
                    "{}skip {name}: {}",
                    self.prefix,
                    e.strip_prefix("skip: ").unwrap_or(&e)
                );
                None
            }
            Err(e) => {
                self.failures += 1;
                println!("{}FAIL {name}: {e}", self.prefix);
                None
            }
        }
    }

    /// A reserved integer key: the standard's unsigned type is ok,
    /// another integer type a warning, a key the host does not provide
    /// (NOT_FOUND) a skip unless `required`.
    fn int_key(
        &mut self,
        name: &str,
        r: Result<Value, ClientError>,
        required: bool,
    ) -> Option<u32> {
        let show = |n: &u32| n.to_string();
        match r {
            Ok(v) => match int_of(&v) {
                Some(Int::Ok(n)) => self.check(name, Ok(n), show),
                Some(Int::Deviant(n, ty)) => {
                    self.checks += 1;
                    self.warnings += 1;
                    println!(
                        "{}warn {name}: {n} as {ty} (the standard: an unsigned type)",
                        self.prefix
                    );
                    Some(n)
                }
                None => self.check(name, Err(format!("{v:?} is not an integer")), show),
            },
            Err(x) if x.status() == -46 && !required => self.check(
                name,
                Err(format!("skip: the host does not provide it ({x})")),
                show,
            ),
            Err(x) => self.check(name, Err(x.to_string()), show),
        }
    }
}

fn e(x: ClientError) -> String {
    x.to_string()
}

fn want(v: Value, expect: &Value) -> Result<Value, String> {
    if &v == expect {
        Ok(v)
    } else {
        Err(format!("got {v:?}, expected {expect:?}"))
    }
}

fn int_of(v: &Value) -> Option<Int> {
    let signed = |x: i64, ty| u32::try_from(x).ok().map(|n| Int::Deviant(n, ty));
    match v {
        Value::Uint32(x) | Value::ProcRank(x) => Some(Int::Ok(*x)),
        Value::Uint16(x) => Some(Int::Ok(u32::from(*x))),
        Value::Uint(x) => Some(Int::Deviant(*x, "PMIX_UINT")),
        Value::Uint8(x) => Some(Int::Deviant(u32::from(*x), "PMIX_UINT8")),
        Value::Uint64(x) => u32::try_from(*x)
            .ok()
            .map(|n| Int::Deviant(n, "PMIX_UINT64")),
        Value::Int(x) => signed(i64::from(*x), "PMIX_INT"),
        Value::Int8(x) => signed(i64::from(*x), "PMIX_INT8"),
        Value::Int16(x) => signed(i64::from(*x), "PMIX_INT16"),
        Value::Int32(x) => signed(i64::from(*x), "PMIX_INT32"),
        Value::Int64(x) => signed(*x, "PMIX_INT64"),
        _ => None,
    }
}

pub fn probe_cmd(args: super::ProbeArgs) -> Result<ExitCode, String> {
    // `--abort STATUS`: rank 0 calls PMIx_Abort once every rank is up
    // (for testing the launcher's handling); the others wait in a fence
    // `--events`: also check an event round trip (off by default: a host
    // may treat any event as fatal)
    let super::ProbeArgs { abort, events } = args;
    let mut t = Tally {
        // the launcher's word for our rank, until the client knows it
        prefix: std::env::var("PMIX_RANK").map_or(String::new(), |r| format!("[{r}] ")),
        checks: 0,
        failures: 0,
        warnings: 0,
    };
    let client = t.check("init", Client::init().map_err(e), |c| {
        format!(
            "{}:{} dialect {}",
            c.proc().nspace.as_pstring().to_string_lossy(),
            c.proc().rank,
            c.core().format().dialect.name()
        )
    });
    let Some(mut c) = client else {
        println!("probe: {} checks, {} failures", t.checks, t.failures);
        return Ok(ExitCode::from(1));
    };
    let me = c.proc().clone();
    t.prefix = format!("[{}] ", me.rank);
    if let Some(status) = abort {
        // every rank connected first: Open MPI 4.1.4's mpirun, killing
        // the job for rank 0's abort while rank 1 was still in its
        // handshake, logged UNREACHABLE and then never ended (one run in
        // a few dozen); a program aborts once it is up
        let up = c.fence(FenceOpts::new());
        println!(
            "{}fence before the abort: {}",
            t.prefix,
            up.map_or_else(|x| x.to_string(), |_| "success".into())
        );
        if me.rank == 0 {
            println!("{}abort: status {status}", t.prefix);
            let r = c.abort(status, "pmixw probe --abort", &[]);
            // the launcher normally kills us before any answer
            println!(
                "{}abort returned: {}",
                t.prefix,
                r.map_or_else(|x| x.to_string(), |_| "success".into())
            );
        } else {
            let r = c.fence(FenceOpts::new());
            println!(
                "{}fence while rank 0 aborts: {}",
                t.prefix,
                r.map_or_else(|x| x.to_string(), |_| "success".into())
            );
        }
        return Ok(ExitCode::from(1));
    }
    let job = Proc {
        nspace: me.nspace.clone(),
        rank: RANK_WILDCARD,
    };
    let mine = Proc {
        nspace: me.nspace.clone(),
        rank: me.rank,
    };
    // job-level and per-rank reserved keys, from the job-info cache
    let size = match t.int_key("get pmix.job.size", c.get(&job, "pmix.job.size"), true) {
        Some(n) if n > me.rank => n,
        Some(n) => {
            t.check::<()>(
                "job size above our rank",
                Err(format!("job size {n}, our rank {}", me.rank)),
                |_| String::new(),
            );
            1
        }
        None => 1,
    };
    if let Ok(ws) = std::env::var("OMPI_COMM_WORLD_SIZE") {
        t.check(
            "job size matches launcher",
            if ws == size.to_string() {
                Ok(())
            } else {
                Err(format!("launcher says {ws}, job info {size}"))
            },
            |_| ws.clone(),
        );
    }
    for key in ["pmix.univ.size", "pmix.local.size"] {
        t.int_key(&format!("get {key}"), c.get(&job, key), false);
    }
    for key in ["pmix.appnum", "pmix.nrank", "pmix.lrank"] {
        t.int_key(&format!("get {key} (own)"), c.get(&mine, key), false);
    }
    // resolve peers and nodes from the job data (one node under a local launcher)
    let myns = me.nspace.as_pstring().to_string_lossy().into_owned();
    let host = pmix_wire::tool::hostname();
    t.check(
        "resolve nodes",
        c.resolve_nodes(&myns).map_err(e).and_then(|nodes| {
            if nodes.is_empty() {
                Err("no nodes".into())
            } else {
                Ok(nodes.join(","))
            }
        }),
        |s| s.clone(),
    );
    // the ranks on our node (rank 0's events reach the others only where
    // the host relays events between nodes)
    let mut node_peers: Vec<u32> = vec![me.rank];
    t.check(
        "resolve peers",
        c.resolve_peers(&myns).map_err(e).and_then(|peers| {
            if peers.iter().any(|p| p.rank == me.rank) {
                node_peers = peers.iter().map(|p| p.rank).collect();
                Ok(peers
                    .iter()
                    .map(|p| p.rank.to_string())
                    .collect::<Vec<_>>()
                    .join(","))
            } else {
                Err(format!(
                    "we are not among our node's peers {peers:?} ({host})"
                ))
            }
        }),
        |s| s.clone(),
    );
    // put/commit/fence/get
    c.put(Scope::GLOBAL, "probe.rank", Value::Uint32(1000 + me.rank));
    let text = |r: u32| Value::String(Some(format!("hello-from-{r}").as_str().into()));
    c.put(Scope::GLOBAL, "probe.str", text(me.rank));
    c.put(
        Scope::REMOTE,
        "probe.bytes",
        Value::ByteObject([me.rank as u8, 1, 2, 3][..].into()),
    );
    t.check("commit", c.commit().map_err(e), |_| "3 keys".into());
    t.check(
        "fence (collect)",
        c.fence(fence30().collect_data(true)).map_err(e),
        |_| "done".into(),
    );
    for r in 0..size {
        let p = Proc {
            nspace: me.nspace.clone(),
            rank: r,
        };
        t.check(
            &format!("get rank {r} probe.rank"),
            c.get(&p, "probe.rank")
                .map_err(e)
                .and_then(|v| want(v, &Value::Uint32(1000 + r))),
            |v| format!("{v:?}"),
        );
        t.check(
            &format!("get rank {r} probe.str"),
            c.get(&p, "probe.str")
                .map_err(e)
                .and_then(|v| want(v, &text(r))),
            |v| format!("{v:?}"),
        );
    }
    let missing = c.get_with::<Value>(
        &Proc {
            nspace: me.nspace.clone(),
            rank: (me.rank + 1) % size,
        },
        "probe.never.put",
        GetOpts::new().optional(true),
    );
    t.check(
        "get of a key nobody put (optional)",
        match missing {
            Err(x) if x.status() == -46 => Ok(()),
            Err(x) => Err(format!("expected PMIX_ERR_NOT_FOUND, got {x}")),
            Ok(v) => Err(format!("got a value {v:?}")),
        },
        |_| "PMIX_ERR_NOT_FOUND".into(),
    );
    // publish/lookup/unpublish
    let pubkey = format!("probe.pub.{}", me.nspace.as_pstring().to_string_lossy());
    let pubval = Value::String(Some(format!("published-by-{}", me.rank).as_str().into()));
    if me.rank == 0 {
        t.check(
            "publish",
            c.publish(Publish::new().put(&pubkey, pubval.clone()))
                .map_err(e),
            |_| pubkey.clone(),
        );
    }
    t.check("fence (no data)", c.fence(fence30()).map_err(e), |_| {
        "done".into()
    });
    let expect0 = Value::String(Some("published-by-0".into()));
    t.check(
        "lookup",
        c.lookup(&[&pubkey], LookupOpts::new())
            .map_err(e)
            .and_then(|d| match d.as_slice() {
                [p] if p.value == expect0 && p.proc.rank == 0 => {
                    Ok(format!("{:?} from rank 0", p.value))
                }
                other => Err(format!("got {other:?}")),
            }),
        |s| s.clone(),
    );
    t.check(
        "fence (after lookup)",
        c.fence(fence30()).map_err(e),
        |_| "done".into(),
    );
    if me.rank == 0 {
        t.check(
            "unpublish",
            c.unpublish(&[&pubkey], LookupOpts::new()).map_err(e),
            |_| "done".into(),
        );
        t.check(
            "lookup after unpublish",
            match c.lookup(&[&pubkey], LookupOpts::new()) {
                Err(x) if x.status() == -46 => Ok(()),
                Err(x) => Err(format!("expected PMIX_ERR_NOT_FOUND, got {x}")),
                Ok(d) => Err(format!("still published: {d:?}")),
            },
            |_| "PMIX_ERR_NOT_FOUND".into(),
        );
    }
    // event round trip (only with --events): everyone registers, rank 0
    // notifies our namespace, named as a custom range
    if events {
        event_checks(&mut t, &mut c, &me, size, node_peers.contains(&0));
    }
    // connect/disconnect across our whole namespace (collective)
    t.check(
        "connect",
        c.connect(std::slice::from_ref(&job), &[]).map_err(e),
        |_| "namespace".into(),
    );
    t.check(
        "disconnect",
        c.disconnect(std::slice::from_ref(&job), &[]).map_err(e),
        |_| "namespace".into(),
    );
    // spawn: rank 0 starts a one-process job running `true`
    if me.rank == 0 {
        let app = pmix_types::App {
            cmd: Some("true".into()),
            argv: vec!["true".into()],
            maxprocs: 1,
            ..Default::default()
        };
        let myns = me.nspace.as_pstring().to_string_lossy().into_owned();
        c.timeout = SPAWN_WAIT;
        let r = c.spawn(Spawn::new().app(app));
        c.timeout = pmix_wire::client::blocking::DEFAULT_TIMEOUT;
        t.check(
            "spawn",
            r.map_err(|x| match x {
                ClientError::Timeout(_) => format!(
                    "skip: no answer in {} s (the host does not offer spawn)",
                    SPAWN_WAIT.as_secs()
                ),
                x => x.to_string(),
            })
            .and_then(|ns| {
                if !ns.is_empty() && ns != myns {
                    Ok(ns)
                } else {
                    Err(format!("new namespace {ns:?}"))
                }
            }),
            |ns| format!("new namespace {ns}"),
        );
    }
    t.check("finalize", c.finalize().map_err(e), |_| "done".into());
    // the line ends ", M failures" whether or not there are warnings
    let warned = if t.warnings > 0 {
        format!(" {} warnings,", t.warnings)
    } else {
        String::new()
    };
    println!(
        "{}probe: {} checks,{warned} {} failures",
        t.prefix, t.checks, t.failures
    );
    Ok(if t.failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The event round trip of `--events`: a custom code, in a custom range
/// of exactly our namespace. A rank on another node than rank 0 that gets
/// no event skips (Slurm's plugin does not relay events between nodes).
fn event_checks(t: &mut Tally, c: &mut Client, me: &Proc, size: u32, with_rank0: bool) {
    let ours = Info::new(
        "pmix.evrange",
        Value::DataArray(Box::new(pmix_types::DataArray::Typed {
            elem_type: pmix_types::DataType::Proc,
            elements: vec![Value::Proc(Box::new(Proc {
                nspace: me.nspace.clone(),
                rank: RANK_WILDCARD,
            }))],
        })),
    );
    let reg = t.check(
        "register event handler",
        c.register_events(&[PROBE_EVENT], &[]).map_err(e),
        |_| PROBE_EVENT.to_string(),
    );
    t.check(
        "fence (events registered)",
        c.fence(fence30()).map_err(e),
        |_| "done".into(),
    );
    if reg.is_some() {
        if me.rank == 0 {
            c.timeout = Duration::from_secs(10);
            t.check(
                "notify",
                c.notify(
                    PROBE_EVENT,
                    RANGE_CUSTOM,
                    &[ours, Info::new("probe.note", Value::Uint32(7))],
                )
                .map_err(e),
                |_| "sent".into(),
            );
            c.timeout = pmix_wire::client::blocking::DEFAULT_TIMEOUT;
        }
        if me.rank != 0 || size == 1 {
            // a lone rank sees its own event only locally (the server does
            // not echo an event to its source)
            let name = if me.rank == 0 {
                "event delivered (locally, to our own handler)"
            } else {
                "event delivered"
            };
            t.check(
                name,
                c.next_event(&[PROBE_EVENT], Duration::from_secs(10))
                    .map_err(|x| match x {
                        ClientError::Timeout(_) if !with_rank0 => "skip: none in 10 s from rank 0 \
                            on another node (the host does not relay events between nodes)"
                            .to_string(),
                        x => x.to_string(),
                    })
                    .and_then(|n| {
                        if n.source.rank == 0 && n.source.nspace == me.nspace {
                            Ok(format!("status {} from rank 0", n.status))
                        } else {
                            Err(format!("from {:?}", n.source))
                        }
                    }),
                |s| s.clone(),
            );
        }
        t.check("fence (events done)", c.fence(fence30()).map_err(e), |_| {
            "done".into()
        });
    }
}
