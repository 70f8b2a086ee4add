//! Live conformance of the message layer (issue #4 item 6): a libpmix
//! 4.2.2 server (interop/c/cap_server.c) hosts two C clients that send
//! every request the 4.2.2 client library sends (cap_client.c), a client
//! that aborts, and a C tool (cap_tool.c). Every connection goes through
//! our relay, which records the bytes. Each message must decode as a typed
//! message with nothing left over and re-encode byte for byte
//! (`pmixw::verify`), the inspector must show every connection without
//! an error, and the C programs must report the values they were given.
//!
//! `PMIX_WRITE_CAPTURES=1` stores the recorded connections under
//! corpus/captures-4.2.2/, which `stored_captures_verify` replays without
//! libpmix.

use pmix_test_kit::process;

use pmix_codec::handshake::ConnectRequest;
use pmix_test_kit::interop::{build_c, default_out_dir, start_cap_server};
use pmixw::relay;
use pmixw::verify::{verify, Verified};
use process::{finish, lines_of, Kill};
use std::collections::{BTreeMap, BTreeSet};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Bytes per (connection, sent by the client).
type Recorded = BTreeMap<(usize, bool), Vec<u8>>;

/// A C program of the harness, built against the system libpmix; `None`
/// (the caller skips, saying why) only when libpmix-dev is not installed.
/// With libpmix present, a build failure fails the test.
fn c_program(name: &str) -> Option<PathBuf> {
    // a failure under CI (which installs libpmix-dev), a skip elsewhere
    process::require(
        "libpmix-dev (pkg-config pmix)",
        pmix_test_kit::hosts::libpmix4_dev(),
    )?;
    Some(build_c(name, &default_out_dir()).unwrap_or_else(|e| panic!("{e}")))
}

fn captures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/captures-4.2.2")
}

/// A name for a recorded connection, from its handshake.
fn name_of(client: &[u8]) -> String {
    let n = u32::from_le_bytes(client[8..12].try_into().unwrap()) as usize;
    let r = ConnectRequest::decode(&client[16..16 + n]).unwrap();
    match &r.proc {
        Some(p) if r.flag == 0 => format!("client-{}-{}", p.nspace, p.rank),
        _ => format!("tool-flag{}", r.flag),
    }
}

fn expect_lines(out: &str, want: &[String], who: &str) {
    for w in want {
        assert!(
            out.lines().any(|l| l == w),
            "{who}: no line {w:?} in\n{out}"
        );
    }
    assert!(
        !out.lines().any(|l| l.starts_with("fail")),
        "{who} reported a failure:\n{out}"
    );
}

#[test]
fn libpmix_conversations_through_the_relay_decode_and_reencode() {
    let (Some(server_exe), Some(client_exe), Some(tool_exe)) = (
        c_program("cap_server"),
        c_program("cap_client"),
        c_program("cap_tool"),
    ) else {
        return;
    };
    let tmp =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("live-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();

    let (mut server, envs) = start_cap_server(&server_exe, 2, &tmp);
    let uri = envs[&("capns".to_string(), 0)]
        .iter()
        .find(|(k, _)| k == "PMIX_SERVER_URI41")
        .map(|(_, v)| v.clone())
        .expect("PMIX_SERVER_URI41");
    let (uri_head, server_port) = uri.rsplit_once(':').unwrap();

    // the relay, recording both sides of each connection
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let relay_port = listener.local_addr().unwrap().port();
    let recorded: Arc<Mutex<Recorded>> = Arc::default();
    let rec = recorded.clone();
    let raw: relay::RawSink = Arc::new(move |conn, from_client, data| {
        rec.lock()
            .unwrap()
            .entry((conn, from_client))
            .or_default()
            .extend_from_slice(data);
    });
    let logged = Arc::new(Mutex::new(0usize));
    let lg = logged.clone();
    let sink: relay::Sink = Arc::new(move |_, _| *lg.lock().unwrap() += 1);
    let to = format!("127.0.0.1:{server_port}");
    let relay_thread = std::thread::spawn(move || {
        relay::serve_recording(
            listener,
            &to,
            sink,
            Some(raw),
            pmix_codec::frame::DEFAULT_MAX_MESSAGE,
            Some(4),
        )
    });

    // the clients see the relay where the server was
    let client = |ns: &str, rank: u32, mode: &str| {
        let mut c = Command::new(&client_exe);
        c.arg(mode)
            .env("PMIX_MCA_gds", "hash")
            .stdout(Stdio::piped());
        for (k, v) in &envs[&(ns.to_string(), rank)] {
            let v = match v.rsplit_once(':') {
                Some((head, _)) if k.starts_with("PMIX_SERVER_URI") => {
                    format!("{head}:{relay_port}")
                }
                _ => v.clone(),
            };
            c.env(k, v);
        }
        Kill(c.spawn().unwrap())
    };
    let c0 = client("capns", 0, "all");
    let c1 = client("capns", 1, "all");
    let limit = Duration::from_secs(60);
    let (ok0, out0) = finish(c0, limit, "rank 0");
    let (ok1, out1) = finish(c1, limit, "rank 1");
    assert!(ok0 && ok1, "rank 0:\n{out0}\nrank 1:\n{out1}");
    for (rank, out) in [(0u32, &out0), (1, &out1)] {
        let peer = 1 - rank;
        let mut want = vec![
            "ok init capns".to_string(),
            "ok job_size 2".to_string(),
            format!("ok get cap.global.{peer}=global-from-{peer}"),
            format!("ok get cap.local.{peer}=local-from-{peer}"),
            "ok event_delivered ".to_string(),
            "ok query capns,capspawn".to_string(),
            "ok group_construct ".to_string(),
            "ok finalize ".to_string(),
        ];
        if rank == 0 {
            want.push("ok spawn capspawn".into());
            want.push("ok get_credential capcred".into());
            want.push("rc allocate NOT-SUPPORTED".into());
        } else {
            want.push("ok lookup port-1234".into());
            want.push("rc group_leave NOT-SUPPORTED".into());
            want.push("rc lookup_missing NOT-FOUND".into());
        }
        expect_lines(out, &want, &format!("rank {rank}"));
    }
    let (_, outa) = finish(client("capabort", 0, "abort"), limit, "aborting client");
    expect_lines(&outa, &["ok init capabort".into()], "aborting client");
    let tool = Kill(
        Command::new(&tool_exe)
            .arg(format!("{uri_head}:{relay_port}"))
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let (okt, outt) = finish(tool, limit, "tool");
    assert!(okt, "tool:\n{outt}");
    expect_lines(
        &outt,
        &[
            "ok query capns,capspawn".into(),
            "ok iof_pull SUCCESS".into(),
            "ok iof_push SUCCESS".into(),
            "ok iof_deregister SUCCESS".into(),
        ],
        "tool",
    );

    // the relay ends once its four connections have closed
    let start = Instant::now();
    while !relay_thread.is_finished() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the relay did not finish"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    relay_thread.join().unwrap().unwrap();
    drop(server.0.stdin.take());
    drop(server);
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(*logged.lock().unwrap() > 100, "the relay logged too little");

    // every connection: typed, complete, byte-identical; the inspector clean
    let rec = recorded.lock().unwrap();
    let mut seen = BTreeSet::new();
    let mut total = Verified::default();
    let mut saved = Vec::new();
    for conn in 1..=4 {
        let c = &rec[&(conn, true)];
        let s = &rec[&(conn, false)];
        let name = name_of(c);
        let v = verify(c, s).unwrap_or_else(|e| panic!("{name}: {e}"));
        let conv = pmixw::inspect::inspect(c, s, pmix_codec::frame::DEFAULT_MAX_MESSAGE);
        assert_eq!(conv.errors(), 0, "{}", pmixw::inspect::render_text(&conv));
        seen.extend(v.requests.keys().copied());
        total.events += v.events;
        total.messages += v.messages;
        if v.flag != 0 {
            total.flag = v.flag;
        }
        saved.push((name, c.clone(), s.clone()));
    }
    // every request the 4.2.2 client library sends in these programs
    let want: BTreeSet<u8> = [
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
        27, 28, 29,
    ]
    .into();
    assert_eq!(seen, want, "commands seen");
    assert!(total.events >= 1, "no event crossed the socket");
    assert_ne!(total.flag, 0, "no tool connection");
    eprintln!("{} messages in 4 connections verified", total.messages);

    if std::env::var_os("PMIX_WRITE_CAPTURES").is_some() {
        let dir = captures_dir();
        std::fs::create_dir_all(&dir).unwrap();
        for (name, c, s) in saved {
            std::fs::write(dir.join(format!("{name}.client")), c).unwrap();
            std::fs::write(dir.join(format!("{name}.server")), s).unwrap();
        }
    }
}

fn stored() -> Vec<(String, Vec<u8>, Vec<u8>)> {
    let dir = captures_dir();
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).expect("corpus/captures-4.2.2") {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "client") {
            let s = p.with_extension("server");
            out.push((
                p.file_stem().unwrap().to_string_lossy().to_string(),
                std::fs::read(&p).unwrap(),
                std::fs::read(Path::new(&s)).unwrap(),
            ));
        }
    }
    out.sort();
    out
}

/// The stored 4.2.2 conversations, replayed without libpmix.
#[test]
fn stored_captures_verify() {
    let all = stored();
    assert!(all.len() >= 4, "{} stored connections", all.len());
    let mut seen = BTreeSet::new();
    for (name, c, s) in &all {
        let v = verify(c, s).unwrap_or_else(|e| panic!("{name}: {e}"));
        seen.extend(v.requests.keys().copied());
        // and the same through the inspector, split anywhere
        let conv = pmixw::inspect::inspect(c, s, pmix_codec::frame::DEFAULT_MAX_MESSAGE);
        assert_eq!(conv.errors(), 0, "{name}");
    }
    assert!(seen.len() >= 28, "{seen:?}");
}

/// Bytes off the end or flipped in a stored capture are reported, never a
/// panic, and never verify.
#[test]
fn damaged_stored_captures_are_refused() {
    for (name, c, s) in stored() {
        for cut in [1, 7, c.len() / 2] {
            assert!(verify(&c[..c.len() - cut], &s).is_err(), "{name} cut {cut}");
        }
        // every single-bit flip of the client stream: an answer, no panic
        for at in 0..c.len() {
            let mut flipped = c.clone();
            flipped[at] ^= 1 << (at % 8);
            let _ = verify(&flipped, &s);
        }
    }
}

/// Our client (`pmixw probe`) as both ranks of a job hosted by libpmix
/// 4.2.2's server (cap_server, whose upcalls answer publish/lookup, spawn,
/// connect, credentials, …): every check passes or is reported skipped.
#[test]
fn our_probe_passes_against_the_c_server() {
    let Some(server_exe) = c_program("cap_server") else {
        return;
    };
    let tmp =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("probe-c-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let (server, envs) = start_cap_server(&server_exe, 2, &tmp);
    let ranks: Vec<Kill> = (0..2u32)
        .map(|r| {
            Kill(
                Command::new(env!("CARGO_BIN_EXE_pmixw"))
                    .args(["probe", "--events"])
                    .envs(envs[&("capns".to_string(), r)].iter().cloned())
                    .stdout(Stdio::piped())
                    .spawn()
                    .unwrap(),
            )
        })
        .collect();
    let mut all = String::new();
    for (r, k) in ranks.into_iter().enumerate() {
        let (ok, out) = finish(k, Duration::from_secs(60), "probe");
        assert!(ok, "rank {r}:\n{out}");
        all.push_str(&out);
    }
    drop(server);
    let _ = std::fs::remove_dir_all(&tmp);
    for r in 0..2 {
        assert!(
            all.lines()
                .any(|l| l.starts_with(&format!("[{r}] probe: ")) && l.ends_with(", 0 failures")),
            "{all}"
        );
        for p in 0..2 {
            let want = format!("[{r}] ok get rank {p} probe.str: String(Some(\"hello-from-{p}\"))");
            assert!(all.lines().any(|l| l == want), "no {want:?} in\n{all}");
        }
    }
    assert!(
        all.contains("[1] ok event delivered: status 3131 from rank 0"),
        "{all}"
    );
    assert!(
        all.contains("[0] ok spawn: new namespace capspawn"),
        "{all}"
    );
}

/// No entry of an inspector text has an error (an "error" entry or an
/// "ERROR:" line under a decoded one).
fn clean(text: &str) -> bool {
    !text
        .lines()
        .any(|l| l.contains("ERROR: ") || (l.contains(" @") && l.ends_with(" error")))
}

/// `pmixw relay --dump` (the binary) between the libpmix 4.2.2 server and
/// both C ranks: the ranks succeed through it, its log shows the decoded
/// commands of each connection, and `pmixw inspect` (text and --verify) reads
/// each dumped connection cleanly.
#[test]
fn pmixw_relay_and_inspect_on_a_live_pair() {
    let (Some(server_exe), Some(client_exe)) = (c_program("cap_server"), c_program("cap_client"))
    else {
        return;
    };
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pmixw-relay-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let dump = tmp.join("dump");
    std::fs::create_dir_all(&tmp).unwrap();
    let (server, envs) = start_cap_server(&server_exe, 2, &tmp);
    let uri = envs[&("capns".to_string(), 0)]
        .iter()
        .find(|(k, _)| k == "PMIX_SERVER_URI41")
        .map(|(_, v)| v.clone())
        .expect("PMIX_SERVER_URI41");
    let server_port = uri.rsplit_once(':').unwrap().1;

    // the relay binary; its log goes to a file, its address comes on stderr
    let log_path = tmp.join("relay.log");
    let mut relay = Kill(
        Command::new(env!("CARGO_BIN_EXE_pmixw"))
            .args(["relay", "--listen", "127.0.0.1:0", "--to"])
            .arg(format!("127.0.0.1:{server_port}"))
            .arg("--dump")
            .arg(&dump)
            .stdout(std::fs::File::create(&log_path).unwrap())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let rx = lines_of(relay.0.stderr.take().unwrap());
    let first = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("pmixw relay said nothing");
    let relay_port = first
        .split("listening on ")
        .nth(1)
        .and_then(|s| s.split(',').next())
        .and_then(|a| a.rsplit_once(':'))
        .map(|(_, p)| p.to_string())
        .unwrap_or_else(|| panic!("pmixw relay: {first}"));

    let ranks: Vec<Kill> = (0..2u32)
        .map(|rank| {
            let mut c = Command::new(&client_exe);
            c.arg("all")
                .env("PMIX_MCA_gds", "hash")
                .stdout(Stdio::piped());
            for (k, v) in &envs[&("capns".to_string(), rank)] {
                let v = match v.rsplit_once(':') {
                    Some((head, _)) if k.starts_with("PMIX_SERVER_URI") => {
                        format!("{head}:{relay_port}")
                    }
                    _ => v.clone(),
                };
                c.env(k, v);
            }
            Kill(c.spawn().unwrap())
        })
        .collect();
    for (r, k) in ranks.into_iter().enumerate() {
        let (ok, out) = finish(k, Duration::from_secs(60), "rank");
        assert!(ok, "rank {r} through pmixw relay:\n{out}");
        expect_lines(&out, &["ok finalize ".to_string()], "rank");
    }
    drop(server);
    // the ranks have their replies, so the relay has written what it
    // forwarded; it serves forever, so it is stopped here
    drop(relay);
    let log = std::fs::read_to_string(&log_path).unwrap();
    for conn in 1..=2 {
        for c in [
            "\"REQ\"",
            "\"COMMIT\"",
            "\"FENCE\"",
            "\"GROUP_CONSTRUCT\"",
            "\"FINALIZE\"",
        ] {
            assert!(
                log.split(&format!("[{conn}] "))
                    .skip(1)
                    .any(|e| e.contains(c)),
                "connection {conn}: no {c} in the relay's log:\n{log}"
            );
        }
    }
    assert!(clean(&log), "the relay's log shows an error:\n{log}");

    for conn in 1..=2 {
        let (c, s) = (
            dump.join(format!("conn-{conn}.client")),
            dump.join(format!("conn-{conn}.server")),
        );
        let inspect = |extra: &[&str]| {
            Command::new(env!("CARGO_BIN_EXE_pmixw"))
                .arg("inspect")
                .args(extra)
                .arg("--client")
                .arg(&c)
                .arg("--server")
                .arg(&s)
                .output()
                .unwrap()
        };
        let text = inspect(&[]);
        assert!(text.status.success(), "{text:?}");
        let text = String::from_utf8_lossy(&text.stdout);
        assert!(text.contains("\"command\": \"LOG\""), "{text}");
        assert!(clean(&text), "{text}");
        let v = inspect(&["--verify"]);
        assert!(
            v.status.success(),
            "conn {conn}: {}",
            String::from_utf8_lossy(&v.stderr)
        );
        assert!(String::from_utf8_lossy(&v.stdout).starts_with("verified: "));
    }
    let _ = std::fs::remove_dir_all(&tmp);
}
