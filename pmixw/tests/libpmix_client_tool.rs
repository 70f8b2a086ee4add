//! Our tool against a libpmix 4.2.2 server (interop/c/cli_server.c,
//! PMIx_server_init with tool support): find it through the rendezvous
//! files it writes, connect (the server assigns our identity) and query.
//! Skips only if cc or libpmix (pkg-config pmix) is absent (outside CI;
//! under CI that fails). The rendezvous search itself (stale files passed
//! over, waiting for a file about to appear) runs against our own server.

use pmix_test_kit::process;

use pmix_types::{Query, Value};
use pmix_wire::tool::{connect_in, Rendezvous, Target};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

struct Server {
    child: Child,
    pid: u32,
    dir: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.child.stdin.take()); // EOF: the server finalizes
        pmix_test_kit::hosts::reap(&mut self.child, process::STOP_GRACE);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn start(tag: &str) -> Option<Server> {
    // a failure under CI, a skip elsewhere
    process::require("cc and libpmix 4.2.2", pmix_test_kit::hosts::libpmix4_dev())?;
    let dir = std::env::temp_dir().join(format!("pmixw-tool-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let flags = Command::new("pkg-config")
        .args(["--cflags", "--libs", "pmix"])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let flags = String::from_utf8(flags.stdout).unwrap();
    let exe = dir.join("cli_server");
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/../interop/c/cli_server.c");
    let cc = Command::new("cc")
        .arg("-o")
        .arg(&exe)
        .arg(src)
        .args(flags.split_whitespace())
        .status()
        .ok()?;
    assert!(cc.success(), "cli_server.c does not compile");
    let mut child = Command::new(&exe)
        .arg(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let mut s = Server { child, pid: 0, dir };
    s.pid = line
        .strip_prefix("ready ")
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("server said {line:?}"));
    Some(s)
}

fn ns_query() -> Vec<Query> {
    vec![Query {
        keys: vec!["pmix.qry.ns".into(), "pmix.qry.psetnum".into()],
        qualifiers: vec![],
    }]
}

#[test]
fn tool_by_pid_gets_an_identity_and_queries() {
    let Some(srv) = start("pid") else {
        return;
    };
    let host = pmix_wire::tool::hostname();
    let file = srv.dir.join(format!("pmix.{host}.tool.{}", srv.pid));
    let r = Rendezvous::parse(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(r.pid, Some(srv.pid));
    assert!(
        r.uri
            .starts_with(&format!("pmix-server.{};tcp4://", srv.pid)),
        "{r:?}"
    );
    assert_eq!(r.version, "4.2.2rc2");
    assert_eq!(r.format().unwrap(), pmix_codec::Format::V41);

    let mut t = connect_in(&Target::Pid(srv.pid), std::slice::from_ref(&srv.dir)).unwrap();
    // the identity the server's tool_connected upcall assigned
    assert_eq!(t.proc(), &pmix_types::Proc::new("clitool", 0));
    let server = t.core().server.clone().unwrap();
    assert_eq!(server.nspace.as_pstring().as_str(), Some("pmix-server"));
    assert_eq!(server.rank, srv.pid);
    let answers = t.query(ns_query()).unwrap();
    let got: Vec<(String, Value)> = answers
        .into_iter()
        .map(|i| (i.key.as_pstring().to_string_lossy().into_owned(), i.value))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "pmix.qry.ns".to_string(),
                Value::String(Some("cli-job".into()))
            ),
            ("pmix.qry.psetnum".to_string(), Value::Size(0)),
        ]
    );
    // a query the host cannot answer is a named status
    let e = t
        .query(vec![Query {
            keys: vec!["pmix.qry.bogus".into()],
            qualifiers: vec![],
        }])
        .unwrap_err();
    assert_eq!(e.status(), -46, "{e}");
    t.finalize().unwrap();

    // a second tool by namespace and by rendezvous-file URI: the next ranks
    let t = connect_in(
        &Target::Nspace("pmix-server".into()),
        std::slice::from_ref(&srv.dir),
    )
    .unwrap();
    assert_eq!(t.proc().rank, 1);
    t.finalize().unwrap();
    let mut t = connect_in(&Target::Uri(format!("file:{}", file.display())), &[]).unwrap();
    assert_eq!(t.proc().rank, 2);
    assert_eq!(t.query(ns_query()).unwrap().len(), 2);
    t.finalize().unwrap();
    // a pid nobody serves
    match connect_in(&Target::Pid(u32::MAX), std::slice::from_ref(&srv.dir)) {
        Err(e) => assert_eq!(e.status(), -25, "{e}"),
        Ok(_) => panic!("connected to a server that does not exist"),
    }
}

#[test]
fn pmixw_query_prints_the_answers() {
    let Some(srv) = start("cli") else {
        return;
    };
    let out = Command::new(env!("CARGO_BIN_EXE_pmixw"))
        .args([
            "query",
            "--pid",
            &srv.pid.to_string(),
            "pmix.qry.ns",
            "pmix.qry.psetnum",
        ])
        .env("PMIX_SYSTEM_TMPDIR", &srv.dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(text, "pmix.qry.ns: cli-job\npmix.qry.psetnum: 0\n");
}

/// Our own server (this process, pid `me`) writing its rendezvous files
/// into `dir`; the tool connects to it by this process's pid.
fn our_server(dir: &std::path::Path) -> pmix_wire::server::net::Running {
    use pmix_wire::server::{net, JobSpec};
    let job = JobSpec {
        nspace: "tooljob".into(),
        nprocs: 1,
        hostname: net::hostname(),
        info: vec![],
    };
    net::start_with(vec![job], Some(dir.to_path_buf())).unwrap()
}

fn scratch(tag: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("tool-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A dead server's file under the name the tool wants (its pid reused:
/// PRRTE killed by SIGKILL leaves `<tmp>/prtrn.<pid>/` behind) is passed
/// over: it was written before the process with that pid started. Here
/// the stale file is in the directory searched first and names a port
/// nobody listens on; the tool takes the live server's file instead, and
/// with only the stale one it says what it passed over and why.
#[test]
fn a_dead_servers_file_under_a_reused_pid_is_passed_over() {
    let me = std::process::id();
    let host = pmix_wire::tool::hostname();
    let (old, live) = (scratch("old"), scratch("live"));
    let srv = our_server(&live);
    let stale_dir = old.join(format!("prtrn.{me}"));
    std::fs::create_dir_all(&stale_dir).unwrap();
    let stale = stale_dir.join(format!("pmix.{host}.tool.{me}"));
    // a port that was free a moment ago: nobody listens on it
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    std::fs::write(
        &stale,
        format!("prterun-{host}-{me}@0.0;tcp4://127.0.0.1:{port}\n5.0.11\n{me}\n0:0\n"),
    )
    .unwrap();
    let f = std::fs::File::options().write(true).open(&stale).unwrap();
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    // written before this test process started (it has not run an hour)
    f.set_modified(hour_ago).unwrap();
    drop(f);

    let dirs = [old.clone(), live.clone()];
    let found = pmix_wire::tool::find(&Target::Pid(me), &dirs).unwrap();
    assert_eq!(found, live.join(format!("pmix.{host}.tool.{me}")));
    let t = connect_in(&Target::Pid(me), &dirs).unwrap();
    let server = t.core().server.clone().unwrap();
    assert_eq!(
        server.nspace.as_pstring().as_str(),
        Some(pmix_wire::server::net::SERVER_NSPACE)
    );
    t.finalize().unwrap();

    let e = pmix_wire::tool::connect_wait(
        &Target::Pid(me),
        std::slice::from_ref(&old),
        std::time::Duration::ZERO,
    )
    .err()
    .expect("connected through a dead server's file");
    assert_eq!(e.status(), -25, "{e}");
    let text = e.to_string();
    assert!(
        text.contains(&format!(
            "no rendezvous file pmix.{host}.tool.{me} in {}",
            old.display()
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "passed over: {} (written before process {me} started)",
            stale.display()
        )),
        "{text}"
    );
    // and the same, typed: which file was passed over and why
    let pmix_wire::client::ClientError::Unreachable(search) = &e else {
        panic!("{e:?}");
    };
    assert_eq!(
        search.passed,
        vec![(stale.clone(), pmix_wire::client::Stale::BeforeStart(me))]
    );
    srv.stop();
    let _ = std::fs::remove_dir_all(&old);
    let _ = std::fs::remove_dir_all(&live);
}

/// A file whose server pid no longer runs is passed over too (here found
/// by namespace, the name a dead server cannot have shared with a live
/// one's pid).
#[test]
fn a_file_naming_a_dead_server_pid_is_passed_over() {
    let host = pmix_wire::tool::hostname();
    let dir = scratch("deadpid");
    let mut child = Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let file = dir.join(format!("pmix.{host}.tool.somejob"));
    std::fs::write(
        &file,
        format!("x.0;tcp4://127.0.0.1:1\n4.2.2\n{dead}\n0:0\n"),
    )
    .unwrap();
    let e = pmix_wire::tool::find(
        &Target::Nspace("somejob".into()),
        std::slice::from_ref(&dir),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains(&format!(
            "passed over: {} (its server, pid {dead}, is gone)",
            file.display()
        )),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A tool started together with its launcher waits for the rendezvous
/// file about to appear: the connect begins before the server exists and
/// succeeds once it has written its files (the wait given is only a hang
/// guard). Without a wait the same search fails at once, naming the file
/// it looked for and where; a pid whose process is gone ends the wait at
/// once.
#[test]
fn the_tool_waits_for_a_rendezvous_file_about_to_appear() {
    use pmix_wire::tool::connect_wait;
    let me = std::process::id();
    let host = pmix_wire::tool::hostname();
    let dir = scratch("wait");
    let guard = std::time::Duration::from_secs(120);
    let e = connect_wait(
        &Target::Pid(me),
        std::slice::from_ref(&dir),
        Default::default(),
    )
    .err()
    .expect("a server without a rendezvous file");
    assert_eq!(e.status(), -25);
    assert_eq!(
        e.to_string(),
        format!(
            "no rendezvous file pmix.{host}.tool.{me} in {} (and 4 levels below)",
            dir.display()
        )
    );
    let d = dir.clone();
    let tool = std::thread::spawn(move || connect_wait(&Target::Pid(me), &[d], guard));
    let srv = our_server(&dir);
    let t = tool.join().unwrap().unwrap();
    let server = t.core().server.clone().unwrap();
    assert_eq!(
        server.nspace.as_pstring().as_str(),
        Some(pmix_wire::server::net::SERVER_NSPACE)
    );
    t.finalize().unwrap();
    srv.stop();

    let mut child = Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let e = connect_wait(&Target::Pid(dead), std::slice::from_ref(&dir), guard)
        .err()
        .expect("a server for a pid that does not run");
    assert!(
        e.to_string()
            .ends_with(&format!("; no process {dead} runs")),
        "{e}"
    );
    assert!(
        matches!(&e, pmix_wire::client::ClientError::GaveUp { gone: Some(p), .. } if *p == dead),
        "{e:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
