//! The PMI server core in memory: negotiation, every command family,
//! malformed and over-long lines, a rank that vanishes mid-barrier.
#![cfg(test)]

use super::*;

/// The tests' clock: one instant for the whole run (no test here waits).
fn t0() -> Instant {
    static T0: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *T0.get_or_init(Instant::now)
}

fn server(size: u32) -> Server {
    let mut s = Server::new();
    s.register(JobSpec::single_node("kvs_1", size));
    for r in 0..size {
        s.open(r as u64, Some(("kvs_1", r)), t0());
    }
    s
}

/// Everything sent to `conn` since the last call, as text; events apart.
fn sent(s: &mut Server) -> (Vec<(ConnId, String)>, Vec<Event>, Vec<ConnId>) {
    let (mut out, mut ev, mut closed) = (Vec::new(), Vec::new(), Vec::new());
    ev.extend(std::iter::from_fn(|| s.poll_event()));
    while let Some(t) = s.poll_transmit() {
        match t {
            Transmit::Send(c, b) => out.push((c, String::from_utf8(b).unwrap())),
            Transmit::Close(c) => closed.push(c),
        }
    }
    (out, ev, closed)
}

fn ask(s: &mut Server, c: ConnId, line: &str) -> Vec<String> {
    s.handle_input(c, line.as_bytes(), t0());
    sent(s)
        .0
        .into_iter()
        .filter(|(to, _)| *to == c)
        .map(|(_, t)| t)
        .collect()
}

fn v2(body: &str) -> String {
    format!("{:>6}{body}", body.len())
}

#[test]
fn versions_1_1_1_2_and_2_0_are_negotiated_as_hydra_does() {
    let mut s = server(1);
    for (ask_v, answer) in [
        ("1 pmi_subversion=1", "pmi_version=1 pmi_subversion=2"),
        ("1 pmi_subversion=2", "pmi_version=1 pmi_subversion=2"),
        ("1 pmi_subversion=0", "pmi_version=1 pmi_subversion=2"),
        ("2 pmi_subversion=0", "pmi_version=2 pmi_subversion=0"),
    ] {
        let got = ask(&mut s, 0, &format!("cmd=init pmi_version={ask_v}\n"));
        assert_eq!(got, [format!("cmd=response_to_init rc=0 {answer}\n")]);
    }
    // 3.0 and 2.1: refused with a reason, and the connection closed
    for bad in ["3 pmi_subversion=0", "2 pmi_subversion=1"] {
        let mut s = server(1);
        s.handle_input(0, format!("cmd=init pmi_version={bad}\n").as_bytes(), t0());
        let (out, _, closed) = sent(&mut s);
        assert!(
            out[0]
                .1
                .starts_with("cmd=response_to_init rc=1 msg=PMI\\ version"),
            "{out:?}"
        );
        assert_eq!(closed, [0]);
    }
}

#[test]
fn pmi1_as_mpich_asks_it() {
    let mut s = server(2);
    for c in 0..2 {
        ask(&mut s, c, "cmd=init pmi_version=1 pmi_subversion=1\n");
        assert_eq!(
            ask(&mut s, c, "cmd=get_maxes\n"),
            ["cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024\n"]
        );
    }
    assert_eq!(
        ask(&mut s, 1, "cmd=get_my_kvsname\n"),
        ["cmd=my_kvsname rc=0 kvsname=kvs_1\n"]
    );
    assert_eq!(
        ask(&mut s, 1, "cmd=get_appnum\n"),
        ["cmd=appnum rc=0 appnum=0\n"]
    );
    assert_eq!(
        ask(&mut s, 1, "cmd=get_universe_size\n"),
        ["cmd=universe_size rc=0 size=2\n"]
    );
    assert_eq!(
        ask(&mut s, 0, "cmd=get kvsname=kvs_1 key=PMI_process_mapping\n"),
        ["cmd=get_result rc=0 found=TRUE value=(vector,(0,1,2))\n"]
    );
    assert_eq!(
        ask(&mut s, 0, "cmd=put kvsname=kvs_1 key=bc-0 value=a\\ b\n"),
        ["cmd=put_result rc=0\n"]
    );
    // PMI_ keys are the server's; another job's kvsname is refused
    assert!(
        ask(&mut s, 0, "cmd=put kvsname=kvs_1 key=PMI_x value=1\n")[0]
            .starts_with("cmd=put_result rc=1 ")
    );
    assert!(ask(&mut s, 0, "cmd=put kvsname=other key=k value=1\n")[0]
        .starts_with("cmd=put_result rc=1 "));
    // the world barrier answers both once both are in
    assert!(ask(&mut s, 0, "cmd=barrier_in\n").is_empty());
    s.handle_input(1, b"cmd=barrier_in\n", t0());
    let (out, _, _) = sent(&mut s);
    assert_eq!(
        out,
        [
            (0, "cmd=barrier_out rc=0\n".into()),
            (1, "cmd=barrier_out rc=0\n".into())
        ]
    );
    assert_eq!(
        ask(&mut s, 1, "cmd=get kvsname=kvs_1 key=bc-0\n"),
        ["cmd=get_result rc=0 found=TRUE value=a\\ b\n"]
    );
    assert!(ask(&mut s, 1, "cmd=get kvsname=kvs_1 key=nope\n")[0]
        .starts_with("cmd=get_result rc=1 msg="));
    // PMI 1.2 groups: a tagged world barrier, and a group of rank 1 alone
    assert!(ask(&mut s, 0, "cmd=barrier_in group=WORLD:77\n").is_empty());
    assert_eq!(
        ask(&mut s, 1, "cmd=barrier_in group=1:5\n"),
        ["cmd=barrier_out rc=0 tag=5\n"]
    );
    s.handle_input(1, b"cmd=barrier_in group=WORLD:77\n", t0());
    let (out, _, _) = sent(&mut s);
    assert_eq!(out.len(), 2);
    assert!(out
        .iter()
        .all(|(_, t)| t == "cmd=barrier_out rc=0 tag=77\n"));
    assert!(ask(&mut s, 1, "cmd=barrier_in group=0,9:1\n")[0].starts_with("cmd=barrier_out rc=1 "));
    // finalize and abort reach the host
    s.handle_input(0, b"cmd=finalize\n", t0());
    let (out, ev, _) = sent(&mut s);
    assert_eq!(out, [(0, "cmd=finalize_ack rc=0\n".into())]);
    assert_eq!(
        ev,
        [Event::Finalized {
            kvsname: "kvs_1".into(),
            rank: 0
        }]
    );
    s.handle_input(1, b"cmd=abort exitcode=7 message=bye\n", t0());
    let (out, ev, _) = sent(&mut s);
    assert!(out.is_empty());
    assert_eq!(
        ev,
        [Event::Aborted {
            kvsname: "kvs_1".into(),
            rank: 1,
            status: 7,
            message: "bye".into()
        }]
    );
}

#[test]
fn pmi2_as_mpich_asks_it() {
    let mut s = server(2);
    for c in 0..2 {
        ask(&mut s, c, "cmd=init pmi_version=2 pmi_subversion=0\n");
        let got = ask(
            &mut s,
            c,
            &v2(&format!("cmd=fullinit;pmirank={c};thrid=0x1;")),
        );
        assert!(got[0].ends_with(&format!(
            "cmd=fullinit-response;thrid=0x1;rc=0;pmi-version=2;pmi-subversion=0;rank={c};size=2;appnum=0;debugged=FALSE;pmiverbose=0;"
        )), "{got:?}");
    }
    let got = ask(&mut s, 0, &v2("cmd=job-getid;"));
    assert_eq!(got, [v2l("cmd=job-getid-response;rc=0;jobid=kvs_1;")]);
    assert_eq!(
        ask(&mut s, 0, &v2("cmd=kvs-put;key=k0;value=x=y;")),
        [v2l("cmd=kvs-put-response;rc=0;")]
    );
    assert!(ask(&mut s, 0, &v2("cmd=kvs-fence;")).is_empty());
    s.handle_input(1, v2("cmd=kvs-fence;").as_bytes(), t0());
    assert_eq!(sent(&mut s).0.len(), 2);
    assert_eq!(
        ask(&mut s, 1, &v2("cmd=kvs-get;jobid=kvs_1;srcid=-1;key=k0;")),
        [v2l("cmd=kvs-get-response;rc=0;found=TRUE;value=x=y;")]
    );
    assert_eq!(
        ask(
            &mut s,
            1,
            &v2("cmd=kvs-get;jobid=kvs_1;srcid=-1;key=-NONEXIST-KEY;")
        ),
        [v2l("cmd=kvs-get-response;rc=0;found=FALSE;")]
    );
    assert_eq!(
        ask(
            &mut s,
            1,
            &v2("cmd=info-getjobattr;key=PMI_process_mapping;")
        ),
        [v2l(
            "cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,1,2));"
        )]
    );
    // a node attribute waited for arrives when put
    assert!(ask(&mut s, 1, &v2("cmd=info-getnodeattr;key=shm;wait=TRUE;")).is_empty());
    s.handle_input(
        0,
        v2("cmd=info-putnodeattr;key=shm;value=/dev/shm/x;").as_bytes(),
        t0(),
    );
    let (out, _, _) = sent(&mut s);
    assert_eq!(
        out,
        [
            (0, v2l("cmd=info-putnodeattr-response;rc=0;")),
            (
                1,
                v2l("cmd=info-getnodeattr-response;rc=0;found=TRUE;value=/dev/shm/x;")
            )
        ]
    );
    assert_eq!(
        ask(&mut s, 1, &v2("cmd=info-getnodeattr;key=none;")),
        [v2l("cmd=info-getnodeattr-response;rc=0;found=FALSE;")]
    );
    // our own PMI-2 client reads these answers
    let mut c = crate::pmi::client::Client::new();
    c.send(&crate::pmi::client::Request::Init).unwrap();
    c.poll_transmit().unwrap();
    c.handle_input(
        b"cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n",
        t0(),
    );
    assert_eq!(c.poll_event(), Some(Ok(crate::pmi::client::Response::Init)));
    c.send(&crate::pmi::client::Request::KvsGet {
        jobid: "kvs_1".into(),
        key: "k0".into(),
    })
    .unwrap();
    let req = c.poll_transmit().unwrap();
    for out in ask(&mut s, 0, std::str::from_utf8(&req).unwrap()) {
        c.handle_input(out.as_bytes(), t0());
    }
    assert_eq!(
        c.poll_event(),
        Some(Ok(crate::pmi::client::Response::KvsGet(Some("x=y".into()))))
    );
}

/// The v2 bytes of `body` as the server writes them (`%-6d`).
fn v2l(body: &str) -> String {
    format!("{:<6}{body}", body.len())
}

#[test]
fn names_publish_lookup_unpublish_in_both_wires() {
    let mut s = server(2);
    ask(&mut s, 0, "cmd=init pmi_version=1 pmi_subversion=1\n");
    ask(&mut s, 1, "cmd=init pmi_version=2 pmi_subversion=0\n");
    ask(&mut s, 1, &v2("cmd=fullinit;pmirank=1;"));
    assert!(ask(&mut s, 1, &v2("cmd=name-lookup;name=svc;"))[0].contains("rc=1;"));
    assert_eq!(
        ask(&mut s, 0, "cmd=publish_name service=svc port=tag#0$\n"),
        ["cmd=publish_result rc=0\n"]
    );
    assert!(ask(&mut s, 0, "cmd=publish_name service=svc port=x\n")[0]
        .starts_with("cmd=publish_result rc=1"));
    assert_eq!(
        ask(&mut s, 1, &v2("cmd=name-lookup;name=svc;")),
        [v2l(
            "cmd=name-lookup-response;rc=0;found=TRUE;port=tag#0$;value=tag#0$;"
        )]
    );
    assert_eq!(
        ask(&mut s, 0, "cmd=lookup_name service=svc\n"),
        ["cmd=lookup_result rc=0 port=tag#0$\n"]
    );
    assert_eq!(
        ask(&mut s, 1, &v2("cmd=name-unpublish;name=svc;")),
        [v2l("cmd=name-unpublish-response;rc=0;")]
    );
    assert!(ask(&mut s, 0, "cmd=unpublish_name service=svc\n")[0]
        .starts_with("cmd=unpublish_result rc=1"));
}

#[test]
fn spawn_in_both_wires_reaches_the_host() {
    let mut s = server(1);
    ask(&mut s, 0, "cmd=init pmi_version=1 pmi_subversion=1\n");
    let m = "mcmd=spawn\nnprocs=2\nexecname=./child\ntotspawns=1\nspawnssofar=1\nargcnt=2\narg1=-x\narg2=a b\npreput_num=1\npreput_key_0=PARENT_ROOT_PORT_NAME\npreput_val_0=tag#0$\ninfo_num=1\ninfo_key_0=wdir\ninfo_val_0=/tmp\nendcmd\n";
    s.handle_input(0, m.as_bytes(), t0());
    let (out, ev, _) = sent(&mut s);
    assert!(out.is_empty());
    let [Event::Spawn {
        request,
        apps,
        preput,
        kvsname,
        rank,
    }] = &ev[..]
    else {
        panic!("{ev:?}")
    };
    assert_eq!((kvsname.as_str(), *rank), ("kvs_1", 0));
    assert_eq!(
        apps,
        &[App {
            cmd: "./child".into(),
            argv: vec!["-x".into(), "a b".into()],
            maxprocs: 2,
            info: vec![("wdir".into(), "/tmp".into())]
        }]
    );
    assert_eq!(
        preput,
        &[("PARENT_ROOT_PORT_NAME".to_string(), "tag#0$".to_string())]
    );
    s.spawned(*request, Ok(()));
    assert_eq!(sent(&mut s).0, [(0, "cmd=spawn_result rc=0\n".into())]);
    // the spawned job finds its preput and its spawner
    let mut child = JobSpec::single_node("kvs_2", 1);
    child.spawner = Some("kvs_1".into());
    child.preput = preput.clone();
    s.register(child);
    s.open(10, Some(("kvs_2", 0)), t0());
    ask(&mut s, 10, "cmd=init pmi_version=2 pmi_subversion=0\n");
    assert!(ask(&mut s, 10, &v2("cmd=fullinit;pmirank=0;"))[0].contains("spawner-jobid=kvs_1;"));
    assert_eq!(
        ask(
            &mut s,
            10,
            &v2("cmd=kvs-get;jobid=kvs_2;key=PARENT_ROOT_PORT_NAME;")
        ),
        [v2l("cmd=kvs-get-response;rc=0;found=TRUE;value=tag#0$;")]
    );
    // PMI-2's spawn
    s.handle_input(10, v2("cmd=spawn;thrid=7;ncmds=2;preputcount=0;subcmd=a;maxprocs=1;argc=1;argv0=z;infokeycount=0;subcmd=b;maxprocs=3;argc=0;infokeycount=0;").as_bytes(), t0());
    let (_, ev, _) = sent(&mut s);
    let [Event::Spawn { request, apps, .. }] = &ev[..] else {
        panic!("{ev:?}")
    };
    assert_eq!(
        apps.iter()
            .map(|a| (a.cmd.as_str(), a.maxprocs, a.argv.len()))
            .collect::<Vec<_>>(),
        [("a", 1, 1), ("b", 3, 0)]
    );
    s.spawned(*request, Err("no such file".into()));
    assert_eq!(
        sent(&mut s).0,
        [(
            10,
            v2l("cmd=spawn-response;thrid=7;rc=1;errmsg=no such file;")
        )]
    );
}

#[test]
fn malformed_and_over_long_lines_close_only_their_connection() {
    let mut s = server(2);
    ask(&mut s, 1, "cmd=init pmi_version=1 pmi_subversion=1\n");
    // no cmd=, a field without a key, an over-long line, a huge v2 length
    for bad in [
        &b"hello there\n"[..],
        b"cmd=put =x\n",
        &[b"cmd=put value=".as_slice(), &[b'x'; 5000]].concat(),
        b"900000cmd=x;",
    ] {
        let mut s2 = server(1);
        s2.handle_input(0, bad, t0());
        let (out, ev, closed) = sent(&mut s2);
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(closed, [0]);
        assert_eq!(
            ev,
            [Event::Lost {
                kvsname: "kvs_1".into(),
                rank: 0
            }]
        );
    }
    // an unknown command and one of the other wire are answered rc=1, the connection kept
    assert!(ask(&mut s, 1, "cmd=frobnicate\n")[0]
        .starts_with("cmd=frobnicate_response rc=1 msg=unknown\\ command"));
    assert!(ask(&mut s, 1, "cmd=kvs-put key=a value=b\n")[0].contains("rc=1"));
    // before init: refused
    assert!(ask(&mut s, 0, "cmd=get_appnum\n")[0]
        .starts_with("cmd=appnum rc=1 msg=get_appnum\\ before\\ init"));
    // a value longer than vallen_max
    let long = format!(
        "cmd=put kvsname=kvs_1 key=k value={}\n",
        "v".repeat(MAX_VALUE + 1)
    );
    assert!(ask(&mut s, 1, &long)[0].starts_with("cmd=put_result rc=1"));
    // bytes one at a time make the same answer
    let line = b"cmd=get_maxes\n";
    for b in &line[..line.len() - 1] {
        s.handle_input(1, &[*b], t0());
        assert!(sent(&mut s).0.is_empty());
    }
    assert_eq!(ask(&mut s, 1, "\n").len(), 1);
}

#[test]
fn a_rank_that_vanishes_mid_barrier_fails_it_for_the_others() {
    let mut s = server(3);
    for c in 0..3 {
        ask(&mut s, c, "cmd=init pmi_version=1 pmi_subversion=1\n");
    }
    assert!(ask(&mut s, 0, "cmd=barrier_in\n").is_empty());
    assert!(ask(&mut s, 1, "cmd=barrier_in\n").is_empty());
    s.closed(2);
    let (out, ev, _) = sent(&mut s);
    assert_eq!(
        ev,
        [Event::Lost {
            kvsname: "kvs_1".into(),
            rank: 2
        }]
    );
    assert_eq!(out.len(), 2);
    assert!(
        out.iter()
            .all(|(_, t)| t.starts_with("cmd=barrier_out rc=1 msg=rank\\ 2")),
        "{out:?}"
    );
    // and a later barrier fails at once rather than hanging
    assert!(ask(&mut s, 0, "cmd=barrier_in\n")[0].starts_with("cmd=barrier_out rc=1"));
    // a finalized rank leaving is no loss
    ask(&mut s, 1, "cmd=finalize\n");
    s.closed(1);
    assert!(sent(&mut s).1.is_empty());
}

#[test]
fn pmi_port_connections_name_themselves() {
    let mut s = Server::new();
    s.register(JobSpec::single_node("kvs_1", 2));
    s.expect_id(5, "kvs_1", 1);
    s.open(1, None, t0());
    assert_eq!(
        ask(&mut s, 1, "cmd=initack pmiid=5\n"),
        [
            "cmd=initack rc=0\n",
            "cmd=set size=2\n",
            "cmd=set rank=1\n",
            "cmd=set debug=0\n"
        ]
    );
    // a second connection claiming the same rank is refused
    s.open(2, None, t0());
    assert!(ask(&mut s, 2, "cmd=initack pmiid=5\n")[0].starts_with("cmd=initack rc=1"));
    assert!(ask(&mut s, 2, "cmd=initack pmiid=6\n")[0].starts_with("cmd=initack rc=1"));
    // PMI-2 over a port: fullinit names the rank; a PMI_FD's rank cannot be changed
    s.open(3, None, t0());
    ask(&mut s, 3, "cmd=init pmi_version=2 pmi_subversion=0\n");
    assert!(
        ask(&mut s, 3, &v2("cmd=fullinit;pmijobid=kvs_1;pmirank=0;"))[0].contains("rank=0;size=2;")
    );
    let mut s = server(2);
    ask(&mut s, 0, "cmd=init pmi_version=2 pmi_subversion=0\n");
    assert!(ask(&mut s, 0, &v2("cmd=fullinit;pmirank=1;"))[0].contains("rc=1;"));
}

proptest::proptest! {
    /// Whatever a connection sends, the server answers, refuses or closes;
    /// it never panics, and another rank's barrier still completes.
    #[test]
    fn any_bytes_hurt_no_other_rank(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600)) {
        let mut s = server(2);
        s.handle_input(1, b"cmd=init pmi_version=1 pmi_subversion=1\n", t0());
        s.handle_input(0, &data, t0());
        sent(&mut s);
        s.closed(0);
        sent(&mut s);
        s.handle_input(1, b"cmd=get_maxes\n", t0());
        proptest::prop_assert!(matches!(s.poll_transmit(), Some(Transmit::Send(1, _))));
    }
}

#[test]
fn a_job_across_nodes_fences_through_the_host() {
    let mut s = Server::new();
    let mut spec = JobSpec::single_node("kvs_1", 4);
    spec.local = vec![0, 1];
    s.register(spec);
    s.open(0, Some(("kvs_1", 0)), t0());
    s.open(1, Some(("kvs_1", 1)), t0());
    for c in 0..2 {
        ask(&mut s, c, "cmd=init pmi_version=1 pmi_subversion=1\n");
        ask(
            &mut s,
            c,
            &format!("cmd=put kvsname=kvs_1 key=bc-{c} value=here{c}\n"),
        );
    }
    // a node-local group needs no other node; a group across nodes is refused
    assert_eq!(
        ask(&mut s, 0, "cmd=barrier_in group=0,1:3\n"),
        Vec::<String>::new()
    );
    assert_eq!(ask(&mut s, 1, "cmd=barrier_in group=0,1:3\n").len(), 1);
    assert!(ask(&mut s, 0, "cmd=barrier_in group=0,2:4\n")[0].starts_with("cmd=barrier_out rc=1"));
    assert!(ask(&mut s, 0, "cmd=barrier_in\n").is_empty());
    s.handle_input(1, b"cmd=barrier_in\n", t0());
    let (out, ev, _) = sent(&mut s);
    assert!(out.is_empty(), "{out:?}");
    let [Event::Fence {
        request,
        kvsname,
        data,
    }] = &ev[..]
    else {
        panic!("{ev:?}")
    };
    assert_eq!(kvsname, "kvs_1");
    assert_eq!(
        decode_pairs(data).unwrap(),
        [
            ("bc-0".to_string(), "here0".to_string()),
            ("bc-1".into(), "here1".into())
        ]
    );
    // every node's data, this one's included
    let mut all = data.clone();
    all.extend(encode_pairs(&[
        ("bc-2".into(), "there2".into()),
        ("bc-3".into(), "there3".into()),
    ]));
    s.fence_done(*request, Ok(all));
    assert_eq!(sent(&mut s).0.len(), 2);
    assert_eq!(
        ask(&mut s, 0, "cmd=get kvsname=kvs_1 key=bc-3\n"),
        ["cmd=get_result rc=0 found=TRUE value=there3\n"]
    );
    // a failed fence fails the barrier; a blob that does not parse too
    ask(&mut s, 0, "cmd=barrier_in\n");
    s.handle_input(1, b"cmd=barrier_in\n", t0());
    let (_, ev, _) = sent(&mut s);
    let [Event::Fence { request, data, .. }] = &ev[..] else {
        panic!("{ev:?}")
    };
    assert!(data.is_empty());
    s.fence_done(*request, Ok(vec![9, 0, 0, 0, b'x']));
    let (out, _, _) = sent(&mut s);
    assert!(
        out.iter()
            .all(|(_, t)| t.starts_with("cmd=barrier_out rc=1")),
        "{out:?}"
    );
    assert_eq!(decode_pairs(&[255, 255, 255, 255]), None);
}

#[test]
fn names_of_a_job_across_nodes_go_through_the_host() {
    let mut s = Server::new();
    let mut spec = JobSpec::single_node("kvs_1", 4);
    spec.local = vec![0, 1];
    s.register(spec);
    s.open(0, Some(("kvs_1", 0)), t0());
    s.open(1, Some(("kvs_1", 1)), t0());
    ask(&mut s, 0, "cmd=init pmi_version=1 pmi_subversion=1\n");
    ask(&mut s, 1, "cmd=init pmi_version=2 pmi_subversion=0\n");
    ask(&mut s, 1, &v2("cmd=fullinit;pmirank=1;"));
    s.handle_input(0, b"cmd=publish_name service=svc port=p1\n", t0());
    let (out, ev, _) = sent(&mut s);
    assert!(out.is_empty());
    let [Event::Name { request, op }] = &ev[..] else {
        panic!("{ev:?}")
    };
    assert_eq!(
        op,
        &NameOp::Publish {
            name: "svc".into(),
            port: "p1".into()
        }
    );
    s.name_done(*request, Ok(None));
    assert_eq!(sent(&mut s).0, [(0, "cmd=publish_result rc=0\n".into())]);
    s.handle_input(1, v2("cmd=name-lookup;name=svc;").as_bytes(), t0());
    let (_, ev, _) = sent(&mut s);
    let [Event::Name { request, op }] = &ev[..] else {
        panic!("{ev:?}")
    };
    assert_eq!(op, &NameOp::Lookup { name: "svc".into() });
    s.name_done(*request, Ok(Some("p1".into())));
    assert_eq!(
        sent(&mut s).0,
        [(
            1,
            v2l("cmd=name-lookup-response;rc=0;found=TRUE;port=p1;value=p1;")
        )]
    );
    s.handle_input(0, b"cmd=lookup_name service=gone\n", t0());
    let (_, ev, _) = sent(&mut s);
    let [Event::Name { request, .. }] = &ev[..] else {
        panic!("{ev:?}")
    };
    s.name_done(*request, Err("service_not_found".into()));
    assert_eq!(
        sent(&mut s).0,
        [(0, "cmd=lookup_result rc=1 msg=service_not_found\n".into())]
    );
}

#[test]
fn a_joint_job_hands_each_ranks_last_puts_to_the_host_at_its_barrier() {
    let mut s = Server::new();
    let mut spec = JobSpec::single_node("kvs_1", 2);
    spec.joint = true;
    s.register(spec);
    s.open(0, Some(("kvs_1", 0)), t0());
    ask(&mut s, 0, "cmd=init pmi_version=1 pmi_subversion=1\n");
    for v in ["a", "b", "c"] {
        let got = ask(
            &mut s,
            0,
            &format!("cmd=put kvsname=kvs_1 key=k value={v}\n"),
        );
        assert_eq!(got, ["cmd=put_result rc=0\n"]);
    }
    ask(&mut s, 0, "cmd=put kvsname=kvs_1 key=j value=1\n");
    // the barrier goes to the host, with the last value of each key
    s.handle_input(0, b"cmd=barrier_in\n", t0());
    let (out, ev, _) = sent(&mut s);
    assert!(out.is_empty(), "{out:?}");
    let Some(Event::JointFence {
        request,
        rank: 0,
        puts,
        ..
    }) = ev.into_iter().next()
    else {
        panic!("no JointFence");
    };
    assert_eq!(
        puts,
        [("j".to_string(), "1".to_string()), ("k".into(), "c".into())]
    );
    // the host's answer: the store's keys (reserved and over-long ones left out)
    s.joint_done(
        request,
        Ok(vec![
            ("px".into(), "7".into()),
            ("PMI_x".into(), "no".into()),
            ("y".repeat(MAX_KEY + 1), "no".into()),
        ]),
    );
    assert_eq!(sent(&mut s).0, [(0, "cmd=barrier_out rc=0\n".to_string())]);
    assert_eq!(s.kvs_value("kvs_1", "px"), Some("7"));
    assert_eq!(s.kvs_value("kvs_1", "PMI_x"), None);
    // nothing more waits: a second barrier carries no puts; a failure is rc=1
    s.handle_input(0, b"cmd=barrier_in\n", t0());
    let (_, ev, _) = sent(&mut s);
    let Some(Event::JointFence { request, puts, .. }) = ev.into_iter().next() else {
        panic!("no JointFence");
    };
    assert!(puts.is_empty());
    s.joint_done(request, Err("LOST_CONNECTION".into()));
    let (out, _, _) = sent(&mut s);
    assert!(
        out[0]
            .1
            .starts_with("cmd=barrier_out rc=1 msg=LOST_CONNECTION"),
        "{out:?}"
    );
    // an answer for a request nobody waits for is dropped
    s.joint_done(request, Ok(vec![]));
    assert!(sent(&mut s).0.is_empty());
}

/// A connection that came in through PMI_PORT and never names itself is
/// closed at its deadline, with the reason; one that named itself in time,
/// and a PMI_FD rank's, are not; a closed one's deadline is forgotten.
#[test]
fn an_anonymous_connection_must_name_itself_in_time() {
    let mut s = Server::new();
    s.register(JobSpec::single_node("kvs_1", 2));
    s.expect_id(5, "kvs_1", 1);
    s.open(0, Some(("kvs_1", 0)), t0());
    s.open(1, None, t0());
    s.open(2, None, t0() + Duration::from_secs(1));
    s.open(3, None, t0() + Duration::from_secs(2));
    assert_eq!(s.poll_timeout(), Some(t0() + IDENTIFY_TIMEOUT));
    ask(&mut s, 2, "cmd=init pmi_version=1 pmi_subversion=1\n");
    assert_eq!(
        ask(&mut s, 2, "cmd=initack pmiid=5\n")[0],
        "cmd=initack rc=0\n"
    );
    s.closed(3);
    // only 1's deadline is left: named and closed connections have none
    assert_eq!(s.poll_timeout(), Some(t0() + IDENTIFY_TIMEOUT));
    s.handle_timeout(t0() + IDENTIFY_TIMEOUT - Duration::from_millis(1));
    assert_eq!(s.poll_transmit(), None);
    s.handle_timeout(t0() + IDENTIFY_TIMEOUT);
    assert_eq!(s.poll_transmit(), Some(Transmit::Close(1)));
    assert_eq!(s.poll_transmit(), None);
    assert_eq!(s.poll_timeout(), None);
    // bytes of a connection past its deadline are not read: it is closed
    s.open(4, None, t0());
    s.handle_input(
        4,
        b"cmd=init pmi_version=1 pmi_subversion=1\n",
        t0() + IDENTIFY_TIMEOUT,
    );
    assert_eq!(s.poll_transmit(), Some(Transmit::Close(4)));
    assert_eq!(s.poll_transmit(), None);
    // the named ones still answer
    assert_eq!(
        ask(&mut s, 0, "cmd=init pmi_version=1 pmi_subversion=1\n")[0],
        "cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=2\n"
    );
}
