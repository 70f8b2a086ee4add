//! Heterogeneous for real (issue 28): `pmixw` built for s390x (big-endian)
//! and run under qemu-user on this x86-64 machine, against x86 peers.
//! As the server: x86 libpmix 4.2.2 clients (interop/c/srv_client.c,
//! their whole battery) and an x86 Open MPI 4.1.4 ring run under
//! `pmixw run`. As a client: `pmixw probe` passes every check under x86
//! hosts (our x86 `pmixw run`, libpmix's server interop/c/cap_server.c,
//! Open MPI's `mpirun`). And the bytes: each libpmix connection goes
//! through our relay, recording both sides; the conversation with the
//! s390x pmixw is the conversation the same peer has with the x86 pmixw,
//! message for message and byte for byte (values that differ between any
//! two runs, such as pids and ports, aside: [`same_conversation`]).
//!
//! The s390x pmixw: `PMIXW_S390X` (its path) and `PMIXW_S390X_RUNNER` (the
//! emulator command), which .ci/bigendian.env sets after `.ci/bigendian
//! pmixw` built it. Unset: a skip, saying so; under CI a failure.
//! spec-notes/heterogeneous.md says what this shows and what it cannot.

use pmix_codec::frame::{FrameDecoder, HeaderOrder, DEFAULT_MAX_MESSAGE};
use pmix_codec::handshake::{self, ConnectRequest};
use pmix_test_kit::interop::{build_c, default_out_dir, start_cap_server};
use pmix_test_kit::process::{self as common, finish, Kill};
use pmixw::relay;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

/// The s390x pmixw as a command: the runner's words, then the binary.
fn s390x() -> Option<Vec<OsString>> {
    let exe = common::require(
        "the s390x pmixw (PMIXW_S390X)",
        std::env::var_os("PMIXW_S390X").ok_or_else(|| {
            "PMIXW_S390X is unset (.ci/bigendian pmixw builds it; . .ci/bigendian.env sets it)"
                .to_string()
        }),
    )?;
    let runner = std::env::var("PMIXW_S390X_RUNNER")
        .expect("PMIXW_S390X_RUNNER (the emulator command) must be set with PMIXW_S390X");
    assert!(
        Path::new(&exe).is_file(),
        "PMIXW_S390X={exe:?} is not a file: run `bash .ci/bigendian pmixw`"
    );
    let mut cmd: Vec<OsString> = runner.split_whitespace().map(OsString::from).collect();
    cmd.push(exe);
    Some(cmd)
}

/// The x86 pmixw of this build, as a command.
fn x86() -> Vec<OsString> {
    vec![env!("CARGO_BIN_EXE_pmixw").into()]
}

/// The prefix that runs a rank as `nobody` (uid and gid 65534) when we
/// are root: its `native` credential then holds a uid whose bytes differ
/// in each order (fe ff 00 00 from an x86 client), which the server checks
/// against its socket's owner. Not root: no prefix, and the credential is
/// our own uid's (still checked, in whatever order its bytes fall).
fn unprivileged() -> Vec<OsString> {
    // SAFETY: geteuid has no preconditions
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("not root: the ranks run as ourselves, not as uid 65534");
        return Vec::new();
    }
    let setpriv = pmix_test_kit::hosts::in_path("setpriv").expect("setpriv (util-linux) on PATH");
    ["--reuid=65534", "--regid=65534", "--clear-groups"]
        .iter()
        .fold(vec![setpriv.into_os_string()], |mut v, a| {
            v.push(a.into());
            v
        })
}

fn command(pmixw: &[OsString]) -> Command {
    let mut c = Command::new(&pmixw[0]);
    c.args(&pmixw[1..]);
    c
}

/// A libpmix 4.2.2 C program of tests/interop (None: libpmix-dev is
/// missing outside CI).
fn c_program(name: &str) -> Option<PathBuf> {
    common::require(
        "libpmix-dev (pkg-config pmix)",
        pmix_test_kit::hosts::libpmix4_dev(),
    )?;
    Some(build_c(name, &default_out_dir()).unwrap_or_else(|e| panic!("{e}")))
}

fn scratch(tag: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cross-endian-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Bytes per (connection, sent by the client).
type Conversations = BTreeMap<(usize, bool), Vec<u8>>;

/// [`Conversations`] a relay thread is filling.
type Recorded = Arc<Mutex<Conversations>>;

/// One side's messages: (tag, payload) in order.
type Messages = Vec<(u32, Vec<u8>)>;

/// Text of one run replaced by a name: (text, name).
type Masks = Vec<(Vec<u8>, Vec<u8>)>;

/// A relay on a port of its own in front of the server at `to` (learnt
/// later: `to` is asked for when the first client connects), recording
/// every byte. The thread serves until the test ends.
fn tap(to: impl FnOnce() -> String + Send + 'static) -> (u16, Recorded) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let rec: Recorded = Arc::default();
    let r = rec.clone();
    std::thread::spawn(move || {
        let raw: relay::RawSink = Arc::new(move |conn: usize, from_client: bool, data: &[u8]| {
            let mut m = r.lock().unwrap();
            m.entry((conn, from_client))
                .or_default()
                .extend_from_slice(data);
        });
        // the listener queues the client's connect until `to` is known
        let to = to();
        let _ = relay::serve_recording(
            listener,
            &to,
            Arc::new(|_, _| {}),
            Some(raw),
            DEFAULT_MAX_MESSAGE,
            None,
        );
    });
    (port, rec)
}

/// `env` with every PMIX_SERVER_URI* pointed at 127.0.0.1:`port`.
fn through(env: &[(String, String)], port: u16) -> Vec<(String, String)> {
    env.iter()
        .map(|(k, v)| {
            if k.starts_with("PMIX_SERVER_URI") {
                let (head, _) = v.split_once("tcp4://").expect("a tcp4 URI");
                (k.clone(), format!("{head}tcp4://127.0.0.1:{port}"))
            } else {
                (k.clone(), v.clone())
            }
        })
        .collect()
}

/// The server address of a PMIx URI (`nspace.rank;tcp4://host:port`).
fn uri_addr(uri: &str) -> String {
    uri.split_once("tcp4://")
        .expect("a tcp4 URI")
        .1
        .trim()
        .to_string()
}

/// One connection's messages, client's then server's: (tag, payload) in
/// order; the server's handshake reply (not framed) is its first, tag 0.
fn messages(client: &[u8], server: &[u8]) -> (Messages, Messages) {
    let frames = |bytes: &[u8], first: HeaderOrder| {
        let mut d = FrameDecoder::new(first, DEFAULT_MAX_MESSAGE);
        d.push(bytes);
        let mut out = Vec::new();
        while let Some(m) = d.next_message().expect("a framed stream") {
            out.push((m.header.tag, m.payload.to_vec()));
        }
        out
    };
    let c = frames(client, HeaderOrder::Little);
    let hello = ConnectRequest::decode(&c.first().expect("a connect request").1)
        .expect("a connect request");
    let n = handshake::reply_len(hello.flag).min(server.len());
    let mut s = vec![(0, server[..n].to_vec())];
    s.extend(frames(&server[n..], HeaderOrder::Network));
    (c, s)
}

/// `bytes` with every occurrence of each (from, to) replaced.
fn masked(bytes: &[u8], subs: &[(Vec<u8>, Vec<u8>)]) -> Vec<u8> {
    let mut v = bytes.to_vec();
    for (from, to) in subs {
        if from.is_empty() {
            continue;
        }
        let mut out = Vec::with_capacity(v.len());
        let mut i = 0;
        while i < v.len() {
            if v[i..].starts_with(from) {
                out.extend_from_slice(to);
                i += from.len();
            } else {
                out.push(v[i]);
                i += 1;
            }
        }
        v = out;
    }
    v
}

/// One connection of each run, side by side: the same messages in the
/// same order, tags and bytes equal once each run's own values (`subs`:
/// text of that run replaced by a name) are masked. Panics saying where.
fn same_conversation(
    what: &str,
    (a, a_subs): (&Conversations, &Masks),
    (b, b_subs): (&Conversations, &Masks),
) -> usize {
    let conns = |m: &Conversations| m.keys().map(|k| k.0).max().unwrap_or(0);
    assert_eq!(conns(a), conns(b), "{what}: connections per run");
    assert!(conns(a) > 0, "{what}: nothing recorded");
    let mut n = 0;
    let empty = Vec::new();
    let get = |m: &Conversations, k| m.get(&k).unwrap_or(&empty).clone();
    for conn in 1..=conns(a) {
        let (ca, sa) = messages(&get(a, (conn, true)), &get(a, (conn, false)));
        let (cb, sb) = messages(&get(b, (conn, true)), &get(b, (conn, false)));
        for (side, ma, mb) in [("client", ca, cb), ("server", sa, sb)] {
            assert_eq!(
                ma.len(),
                mb.len(),
                "{what}: connection {conn}, {side} messages"
            );
            for (i, ((ta, pa), (tb, pb))) in ma.iter().zip(&mb).enumerate() {
                assert_eq!(ta, tb, "{what}: connection {conn}, {side} message {i}: tag");
                let (mut pa, mut pb) = (masked(pa, a_subs), masked(pb, b_subs));
                if side == "server" && i == 0 && pa.len() == 8 && pb.len() == 8 {
                    // a simple client's handshake reply: status, then the
                    // index the server gave it, which is the order in
                    // which the ranks happened to connect
                    pa.truncate(4);
                    pb.truncate(4);
                }
                assert!(
                    pa == pb,
                    "{what}: connection {conn}, {side} message {i} (tag {ta}) differs:\n  s390x {}\n  x86   {}",
                    pmix_types::hex::encode(&pa),
                    pmix_types::hex::encode(&pb)
                );
                n += 1;
            }
        }
    }
    n
}

fn sub(from: impl AsRef<[u8]>, to: &str) -> (Vec<u8>, Vec<u8>) {
    (from.as_ref().to_vec(), to.as_bytes().to_vec())
}

// ---------------------------------------------------------------- server

/// A shell wrapper that `pmixw run` starts as each rank: it starts our
/// x86 `pmixw relay --dump DIR/rankR` on port $XE_PORT_R in front of the
/// server, points the rank's program at it and runs it. The relay runs
/// as the rank's child: the server checks that a rank's socket is held by
/// the process it launched or a descendant (server.md, "Threat model").
fn wrapper(dir: &Path) -> PathBuf {
    let w = dir.join("through-relay.sh");
    std::fs::write(
        &w,
        r#"#!/bin/sh
r="$PMIX_RANK"
eval p=\$XE_PORT_$r
mkdir -p "$XE_DIR/rank$r"
"$XE_RELAY" relay --listen "127.0.0.1:$p" --to "${PMIX_SERVER_URI41##*tcp4://}" --dump "$XE_DIR/rank$r" >/dev/null 2>&1 &
relay=$!
# until it listens (the port, as a number, in LISTEN state 0A)
hex=$(printf '%04X' "$p")
i=0
while ! grep -q ":$hex 00000000:0000 0A" /proc/net/tcp; do
  i=$((i + 1)); [ "$i" -lt 12000 ] || { echo "hung: relay never listened" >&2; exit 99; }
  sleep 0.05
done
for v in PMIX_SERVER_URI41 PMIX_SERVER_URI4 PMIX_SERVER_URI3 PMIX_SERVER_URI21 PMIX_SERVER_URI2; do
  eval u=\${$v-}
  [ -n "$u" ] && export $v="${u%%tcp4://*}tcp4://127.0.0.1:$p"
done
# the program in the background, so that a rank ended by pmixw run (a
# failed job) takes its program and relay with it, not orphans them
trap 'kill "$relay" ${child:+"$child"} 2>/dev/null' EXIT
trap 'exit 143' TERM INT HUP
"$@" &
child=$!
wait "$child"
exit $?
"#,
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&w, std::fs::Permissions::from_mode(0o755)).unwrap();
    w
}

/// A port free now (for a relay about to listen on it).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// What `pmixw relay --dump D` wrote: bytes per (connection, by the client).
fn dumped(d: &Path) -> Conversations {
    let mut m = BTreeMap::new();
    for e in std::fs::read_dir(d).expect("the relay's dump") {
        let name = e.unwrap().file_name().into_string().unwrap();
        let (conn, side) = name.strip_prefix("conn-").unwrap().split_once('.').unwrap();
        m.insert(
            (conn.parse().unwrap(), side == "client"),
            std::fs::read(d.join(&name)).unwrap(),
        );
    }
    m
}

/// `PMIXW run -n 2 --nspace xe srv_client all`, each rank through a
/// recording relay: the output and the recordings per rank.
fn hosted_battery(
    pmixw: &[OsString],
    tag: &str,
    client: &Path,
) -> (String, Vec<Conversations>, Masks) {
    let dir = scratch(tag);
    let w = wrapper(&dir);
    // the ranks (wrapper, relay, client) may run as nobody: they write
    // their relay's dump here
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let child = command(pmixw)
        .args(["run", "-n", "2", "--timeout", "500", "--nspace", "xe"])
        .args(unprivileged())
        .arg(&w)
        .arg(client)
        .arg("all")
        .env("XE_DIR", &dir)
        .env("XE_RELAY", env!("CARGO_BIN_EXE_pmixw"))
        .env("XE_PORT_0", free_port().to_string())
        .env("XE_PORT_1", free_port().to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{tag}: cannot start pmixw run ({e})"));
    // what differs between the two runs by design: this run's scratch
    // directory (in the app's argv) and the launcher's pid (`pmix.ppid`,
    // which pmixw run gives every rank as prterun does; under qemu-user
    // the s390x pmixw keeps the pid it was started with)
    let mut pid = pmix_codec::DataBuffer::new(pmix_codec::Format::V41);
    pid.pack(
        pmix_types::DataType::Pid,
        &[pmix_types::Value::Pid(child.id())],
    )
    .unwrap();
    let mut ppid = b"pmix.ppid\0\x05".to_vec();
    ppid.extend_from_slice(&pid.as_bytes()[1..]);
    let masks = vec![
        sub(dir.to_str().unwrap(), "SCRATCH"),
        (ppid, b"PPID".to_vec()),
    ];
    let o = common::output_within(child, common::HANG, &format!("{tag}: pmixw run srv_client"));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{tag}: {out}\n{err}");
    let recs = (0..2)
        .map(|r| dumped(&dir.join(format!("rank{r}"))))
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    (out, recs, masks)
}

/// srv_client's battery passed on both ranks.
fn battery_passed(out: &str, tag: &str) {
    assert!(!out.lines().any(|l| l.starts_with("fail")), "{tag}: {out}");
    for r in 0..2 {
        assert!(
            out.contains(&format!("rank {r}: 0 failures")),
            "{tag}: {out}"
        );
    }
    for c in [
        "get_all_peers 2",
        "fence_collect",
        "get_credential",
        "validate_credential",
        "lookup svc-addr",
    ] {
        assert_eq!(
            out.lines()
                .filter(|l| l.starts_with(&format!("ok {c}")))
                .count(),
            2,
            "{tag}: check {c}\n{out}"
        );
    }
}

#[test]
fn x86_libpmix_clients_see_the_s390x_server_as_the_x86_one() {
    let Some(be) = s390x() else { return };
    let Some(client) = c_program("srv_client") else {
        return;
    };
    let (be_out, be_recs, be_masks) = hosted_battery(&be, "be-server", &client);
    battery_passed(&be_out, "s390x pmixw run");
    let (le_out, le_recs, le_masks) = hosted_battery(&x86(), "le-server", &client);
    battery_passed(&le_out, "x86 pmixw run");
    for r in 0..2 {
        let n = same_conversation(
            &format!("rank {r}"),
            (&be_recs[r], &be_masks),
            (&le_recs[r], &le_masks),
        );
        eprintln!("rank {r}: {n} messages alike");
    }
}

#[test]
fn an_x86_open_mpi_ring_runs_under_the_s390x_server() {
    let Some(be) = s390x() else { return };
    let Some(mpicc) = common::require("Open MPI 4.1.4 mpicc", pmix_test_kit::hosts::mpicc4())
    else {
        return;
    };
    let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mpi_ring-cross-endian");
    let exe = pmix_test_kit::hosts::grid::compile_c(&mpicc, "mpi_ring", &exe, &[])
        .unwrap_or_else(|e| panic!("{e}"));
    let o = common::run_within(
        command(&be)
            .args(["run", "-n", "2", "--timeout", "300"])
            .arg(&exe)
            .env_remove("FLUX_JOB_ID"),
        common::HANG,
        "the MPI job under the s390x pmixw",
    );
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{out}\n{err}");
    for r in 0..2 {
        let want = format!(
            "mpi rank {r} of 2: ring from {}, sum 1, bcast broadcast: ok",
            1 - r
        );
        assert!(
            out.lines().any(|l| l == want),
            "no {want:?} in\n{out}\n{err}"
        );
    }
}

// ---------------------------------------------------------------- client

/// Every rank's probe summary ends in 0 failures, and each read every
/// peer's string.
fn probe_passed(out: &str, n: u32, tag: &str) {
    for r in 0..n {
        assert!(
            out.lines()
                .any(|l| l.starts_with(&format!("[{r}] probe: ")) && l.ends_with(", 0 failures")),
            "{tag}: rank {r}\n{out}"
        );
        for p in 0..n {
            let want = format!("[{r}] ok get rank {p} probe.str: String(Some(\"hello-from-{p}\"))");
            assert!(
                out.lines().any(|l| l == want),
                "{tag}: no {want:?} in\n{out}"
            );
        }
    }
}

#[test]
fn the_s390x_probe_passes_under_x86_pmixw_run() {
    let Some(be) = s390x() else { return };
    let o = common::run_within(
        command(&x86())
            .args(["run", "-n", "2", "--timeout", "300"])
            .args(unprivileged())
            .args(&be)
            .arg("probe"),
        common::HANG,
        "x86 pmixw run, s390x probe",
    );
    let out = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{out}");
    probe_passed(&out, 2, "x86 pmixw run");
}

#[test]
fn the_s390x_probe_passes_under_mpirun() {
    let Some(be) = s390x() else { return };
    let Some(mpirun) = common::require("Open MPI 4.1.4 mpirun", pmix_test_kit::hosts::mpirun4())
    else {
        return;
    };
    let o = common::run_within(
        Command::new(mpirun)
            .args(["--allow-run-as-root", "--oversubscribe", "-n", "2"])
            .args(&be)
            .arg("probe")
            .stdin(Stdio::null()),
        common::HANG,
        "mpirun, s390x probe",
    );
    let out = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{out}");
    probe_passed(&out, 2, "mpirun");
}

/// Two probe ranks of `pmixw` under libpmix's server, each through a
/// recording relay: the output, the recordings, and this run's values
/// to mask (the server's URI port, its tmpdir).
fn probe_under_cap_server(pmixw: &[OsString], tag: &str) -> Option<(String, Vec<Recorded>, Masks)> {
    let server_exe = c_program("cap_server")?;
    let tmp = scratch(tag);
    let (server, envs) = start_cap_server(&server_exe, 2, &tmp);
    let mut recs = Vec::new();
    let mut ranks = Vec::new();
    let mut subs = vec![sub(tmp.to_str().unwrap(), "TMP")];
    for r in 0..2u32 {
        let env = &envs[&("capns".to_string(), r)];
        let uri = &env
            .iter()
            .find(|(k, _)| k == "PMIX_SERVER_URI41")
            .expect("URI41")
            .1;
        let to = uri_addr(uri);
        subs.push(sub(to.rsplit(':').next().unwrap(), "PORT"));
        let (port, rec) = tap(move || to);
        recs.push(rec);
        ranks.push(Kill(
            command(pmixw)
                .args(["probe", "--events"])
                .envs(through(env, port))
                .stdout(Stdio::piped())
                .spawn()
                .unwrap(),
        ));
    }
    let mut all = String::new();
    for (r, k) in ranks.into_iter().enumerate() {
        let (ok, out) = finish(k, common::HANG, &format!("{tag}: probe rank {r}"));
        assert!(ok, "{tag}: rank {r}:\n{out}");
        all.push_str(&out);
    }
    drop(server);
    let _ = std::fs::remove_dir_all(&tmp);
    Some((all, recs, subs))
}

#[test]
fn libpmix_server_sees_the_same_bytes_from_the_s390x_probe_as_from_the_x86_one() {
    let Some(be) = s390x() else { return };
    let Some((be_out, be_recs, be_subs)) = probe_under_cap_server(&be, "be-probe") else {
        return;
    };
    probe_passed(&be_out, 2, "s390x probe under libpmix's server");
    assert!(
        be_out.contains("[1] ok event delivered: status 3131 from rank 0"),
        "{be_out}"
    );
    let (le_out, le_recs, le_subs) = probe_under_cap_server(&x86(), "le-probe").unwrap();
    probe_passed(&le_out, 2, "x86 probe under libpmix's server");
    for r in 0..2 {
        let be = be_recs[r].lock().unwrap().clone();
        let le = le_recs[r].lock().unwrap().clone();
        let n = same_conversation(&format!("probe rank {r}"), (&be, &be_subs), (&le, &le_subs));
        eprintln!("probe rank {r}: {n} messages alike");
    }
}
