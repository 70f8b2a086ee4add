//! `pmixw run` against a PMI-2 server that misbehaves (issue 14, bad
//! input): the test plays slurmstepd on a socket pair handed over as
//! `PMI_FD`. A failed or malformed answer is a typed error and a clean end
//! with a clear message; a server that never answers runs into the
//! timeout; nothing hangs.

use pmix_test_kit::process;

use pmix_wire::pmi::client::Message;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::io::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Read one request: the PMI-1 init line, then length-prefixed bodies.
fn request(s: &mut UnixStream, first: bool) -> Option<Message> {
    let mut body = Vec::new();
    if first {
        let mut b = [0u8; 1];
        while s.read_exact(&mut b).is_ok() && b[0] != b'\n' {
            body.push(b[0]);
        }
        return Message::parse(&String::from_utf8_lossy(&body), &[' ']).ok();
    }
    let mut len = [0u8; 6];
    s.read_exact(&mut len).ok()?;
    let n: usize = String::from_utf8_lossy(&len).trim().parse().ok()?;
    body.resize(n, 0);
    s.read_exact(&mut body).ok()?;
    Message::parse(&String::from_utf8_lossy(&body), &[';']).ok()
}

fn send(s: &mut UnixStream, body: &str) {
    let _ = s.write_all(format!("{:<6}{body}", body.len()).as_bytes());
}

/// What the fake server does with one request: answer with this body,
/// send these raw bytes, or stay silent.
enum Act {
    Body(String),
    Raw(Vec<u8>),
    Silent,
}

/// Run `pmixw run ARGS` as PMI task 0 of `size` with the test as its
/// PMI-2 server; `act` answers every request after init.
fn under_fake(
    size: u32,
    args: &[&str],
    act: impl FnMut(&Message, &mut HashMap<String, String>) -> Act + Send + 'static,
) -> (Output, Duration) {
    under_fake_env(size, args, &[], act)
}

fn under_fake_env(
    size: u32,
    args: &[&str],
    env: &[(&str, &str)],
    mut act: impl FnMut(&Message, &mut HashMap<String, String>) -> Act + Send + 'static,
) -> (Output, Duration) {
    let (mut ours, theirs) = UnixStream::pair().unwrap();
    let fd = theirs.as_raw_fd();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmixw"));
    cmd.arg("run")
        .args(args)
        .env("PMI_FD", fd.to_string())
        .env("PMI_JOBID", "77.0")
        .env("PMI_RANK", "0")
        .env("PMI_SIZE", size.to_string())
        .env("PMIXW_PMI2_TIMEOUT", "2")
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: between fork and exec only fcntl runs, which is
    // async-signal-safe; it lets the child inherit its end of the pair.
    unsafe {
        cmd.pre_exec(move || {
            libc::fcntl(fd, libc::F_SETFD, 0);
            Ok(())
        });
    }
    let start = Instant::now();
    let child = cmd.spawn().unwrap();
    drop(theirs);
    std::thread::spawn(move || {
        let mut kvs = HashMap::new();
        if request(&mut ours, true).is_none() {
            return;
        }
        let _ = ours.write_all(b"cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n");
        while let Some(m) = request(&mut ours, false) {
            match act(&m, &mut kvs) {
                Act::Body(b) => send(&mut ours, &b),
                Act::Raw(b) => {
                    let _ = ours.write_all(&b);
                }
                Act::Silent => {}
            }
        }
    });
    let o = process::output_within(
        child,
        Duration::from_secs(60),
        "pmixw run under a fake PMI-2",
    );
    (o, start.elapsed())
}

/// A well-behaved server for `size` tasks, with the KVS entries of the
/// other (absent) nodes pre-filled by the caller.
fn normal(m: &Message, kvs: &mut HashMap<String, String>, size: u32) -> String {
    match m.cmd.as_str() {
        "fullinit" => format!(
            "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=0;size={size};appnum=-1;debugged=FALSE;pmiverbose=FALSE;"
        ),
        "info-getjobattr" => format!(
            "cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,{size},1));"
        ),
        "job-getid" => "cmd=job-getid-response;rc=0;jobid=77.0;".into(),
        "kvs-put" => {
            kvs.insert(
                m.get("key").unwrap_or("").into(),
                m.get("value").unwrap_or("").into(),
            );
            "cmd=kvs-put-response;rc=0;".into()
        }
        "kvs-fence" => "cmd=kvs-fence-response;rc=0;".into(),
        "kvs-get" => match kvs.get(m.get("key").unwrap_or("")) {
            Some(v) => format!("cmd=kvs-get-response;rc=0;found=TRUE;value={v};"),
            None => "cmd=kvs-get-response;rc=0;found=FALSE;".into(),
        },
        "finalize" => "cmd=finalize-response;rc=0;".into(),
        _ => "cmd=unknown;rc=1;".into(),
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The mn_client test program.
fn mn_client() -> String {
    pmix_test_kit::interop::build_c("mn_client", &pmix_test_kit::interop::default_out_dir())
        .unwrap_or_else(|e| panic!("{e}"))
        .display()
        .to_string()
}

/// Node 1 as only a listener for node 0's bridge connection: it reads
/// until node 0 closes it, or (`vanish`) takes the hello, waits half a
/// second and closes. Its port.
fn node1(vanish: bool) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        if let Ok((mut s, _)) = l.accept() {
            let mut b = [0u8; 4096];
            if vanish {
                let _ = s.read(&mut b);
                std::thread::sleep(Duration::from_millis(500));
            } else {
                while matches!(s.read(&mut b), Ok(n) if n > 0) {}
            }
        }
    });
    port
}

/// Node 1's entry in the KVS, pointing at `port`.
fn boot1(kvs: &mut HashMap<String, String>, port: u16) {
    kvs.entry("pmixw.boot.1".into())
        .or_insert(format!("n2,127.0.0.1:{port}"));
}

#[test]
fn a_failed_answer_ends_cleanly_with_its_message() {
    let (o, _) = under_fake(1, &["-n", "1", "true"], |m, kvs| match m.cmd.as_str() {
        "fullinit" => Act::Body("cmd=fullinit-response;rc=14;errmsg=no such job;".into()),
        _ => Act::Body(normal(m, kvs, 1)),
    });
    let e = stderr(&o);
    assert!(!o.status.success(), "{e}");
    assert!(
        e.contains("fullinit-response failed with rc=14: no such job"),
        "{e}"
    );
}

#[test]
fn a_malformed_answer_is_a_typed_error() {
    let (o, _) = under_fake(1, &["-n", "1", "true"], |m, kvs| match m.cmd.as_str() {
        "job-getid" => Act::Raw(b"12x4  cmd=job-getid-response;".to_vec()),
        _ => Act::Body(normal(m, kvs, 1)),
    });
    let e = stderr(&o);
    assert!(!o.status.success(), "{e}");
    assert!(e.contains("malformed length prefix"), "{e}");
    let (o, _) = under_fake(1, &["-n", "1", "true"], |m, kvs| match m.cmd.as_str() {
        "info-getjobattr" => {
            Act::Body("cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,5,2));".into())
        }
        _ => Act::Body(normal(m, kvs, 1)),
    });
    let e = stderr(&o);
    assert!(!o.status.success(), "{e}");
    assert!(e.contains("PMI_process_mapping"), "{e}");
}

#[test]
fn fewer_ranks_than_nodes_is_refused() {
    let (o, _) = under_fake(2, &["-n", "1", "true"], |m, kvs| {
        Act::Body(normal(m, kvs, 2))
    });
    let e = stderr(&o);
    assert!(!o.status.success(), "{e}");
    assert!(e.contains("fewer ranks than the 2 nodes"), "{e}");
}

#[test]
fn a_server_that_never_answers_runs_into_the_timeout() {
    let (o, took) = under_fake(1, &["-n", "1", "true"], |m, kvs| match m.cmd.as_str() {
        "fullinit" => Act::Silent,
        _ => Act::Body(normal(m, kvs, 1)),
    });
    let e = stderr(&o);
    assert!(!o.status.success(), "{e}");
    assert!(e.contains("no answer to fullinit within 2 s"), "{e}");
    assert!(took < Duration::from_secs(30), "{took:?}");
}

/// Node 1 exists only as KVS entries and a listener that accepts the
/// bridge; node 0's ranks reach a fence, which goes to PMI-2 and fails
/// there: the job ends with status 1 and says why, at once.
#[test]
fn a_failed_fence_ends_the_job() {
    let port = node1(false);
    let mut fences = 0;
    let exe = mn_client();
    let (o, took) = under_fake(2, &["-n", "4", &exe, "abort"], move |m, kvs| {
        boot1(kvs, port);
        match m.cmd.as_str() {
            "kvs-fence" => {
                fences += 1;
                if fences == 2 {
                    return Act::Body("cmd=kvs-fence-response;rc=5;errmsg=tree broken;".into());
                }
                Act::Body(normal(m, kvs, 2))
            }
            _ => Act::Body(normal(m, kvs, 2)),
        }
    });
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("kvs-fence-response failed with rc=5: tree broken"),
        "{e}"
    );
    assert!(took < Duration::from_secs(30), "{took:?}");
}

/// Node 1's host goes away without a word (its connection closes before
/// it said Done or End): node 0 ends the job instead of waiting in a fence
/// that can never complete.
/// Node 0 of 2 running mn_client's ranks (`abort` mode: they wait in a
/// fence), with a fake node 1 (`vanish`: it closes its connection soon),
/// and a PMI-2 server that answers the bootstrap fence and no other.
fn stuck_after_boot(vanish: bool, env: &[(&str, &str)]) -> (Output, Duration) {
    let port = node1(vanish);
    let exe = mn_client();
    under_fake_env(2, &["-n", "4", &exe, "abort"], env, move |m, kvs| {
        boot1(kvs, port);
        match m.cmd.as_str() {
            "kvs-fence" if kvs.contains_key("booted") => Act::Silent,
            "kvs-fence" => {
                kvs.insert("booted".into(), String::new());
                Act::Body(normal(m, kvs, 2))
            }
            _ => Act::Body(normal(m, kvs, 2)),
        }
    })
}

#[test]
fn a_lost_node_ends_the_job() {
    // the job's fences never complete: only the lost node ends it
    let (o, took) = stuck_after_boot(true, &[]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("lost node 1 (n2)"), "{e}");
    assert!(took < Duration::from_secs(30), "{took:?}");
}

/// Strangers on node 0's bridge port (garbage, a wrong token, a huge
/// frame announced) are dropped without disturbing the job, which ends
/// with its ranks' status 0.
#[test]
fn strangers_on_the_bridge_are_dropped() {
    use pmixw::bridge::Msg;
    let port = node1(false);
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let strangers = std::thread::spawn(move || {
        let addr: String = addr_rx.recv().unwrap();
        let mut sent = 0;
        let wrong = Msg::Hello {
            token: "not-the-token".into(),
            node: 1,
        };
        for bytes in [
            vec![0x5a; 10_000],
            wrong.encode(),
            (u32::MAX - 1).to_be_bytes().to_vec(),
        ] {
            if let Ok(mut s) = std::net::TcpStream::connect(&addr) {
                let _ = s.write_all(&bytes);
                // dropped by node 0: its end closes
                let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
                let mut b = [0u8; 16];
                if matches!(s.read(&mut b), Ok(0)) {
                    sent += 1;
                }
            }
        }
        sent
    });
    let mut told = false;
    let (o, _) = under_fake(2, &["-n", "2", "sleep", "2"], move |m, kvs| {
        boot1(kvs, port);
        if m.cmd == "kvs-fence" && !told {
            if let Some(v) = kvs.get("pmixw.boot.0") {
                let port = v.rsplit_once(':').unwrap().1.to_string();
                let _ = addr_tx.send(format!("127.0.0.1:{port}"));
                told = true;
            }
        }
        Act::Body(normal(m, kvs, 2))
    });
    let e = stderr(&o);
    assert!(o.status.success(), "{e}");
    assert_eq!(strangers.join().unwrap(), 3, "every stranger was dropped");
}

/// A job's fence waits for its slowest node longer than any other PMI-2
/// answer, but not forever: `PMIXW_PMI2_FENCE_TIMEOUT` (or `--timeout`).
#[test]
fn a_fence_that_never_completes_runs_into_its_own_timeout() {
    let (o, took) = stuck_after_boot(false, &[("PMIXW_PMI2_FENCE_TIMEOUT", "3")]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    // 3 s, not the 2 s of other answers
    assert!(e.contains("no answer to kvs-fence within 3 s"), "{e}");
    assert!(took < Duration::from_secs(30), "{took:?}");
}
