//! `pmixw run` forwards its ranks' output to the tools that pull it, as
//! prterun does (pmixw/src/cli/output.rs, spec-notes/server.md "IO
//! forwarding"): a rank writes a line on stdout and one on stderr, then
//! waits; a libpmix 4.2.2 tool (interop/c/iof_tool.c) attached to the
//! launcher by its pid pulls the job's stdout and stderr and gets both
//! lines (kept for it since no one had pulled them), under the handler id
//! its pull was given, with the rank as their source; its stdin push is
//! refused (the launcher takes no stdin from tools). The launcher's own
//! stdout and stderr still carry every line, the one written after the
//! tool left too.

use pmix_test_kit::{hosts, interop, process};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

#[test]
fn a_tool_attached_to_pmixw_run_gets_the_ranks_output() {
    let Some(()) = process::require("cc and libpmix 4.2.2", hosts::libpmix4_dev()) else {
        return;
    };
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("run_iof");
    std::fs::create_dir_all(&out).unwrap();
    let tool = interop::build_c("iof_tool", &out).unwrap_or_else(|e| panic!("{e}"));
    let done = out.join(format!("done-{}", std::process::id()));
    let _ = std::fs::remove_file(&done);
    let ns = format!("iofrun-{}", std::process::id());
    // the rank waits for the test to say the tool is done
    let script = "echo line one; echo error one >&2; \
                  while [ ! -e \"$IOF_DONE\" ]; do sleep 0.05; done; echo line two";
    let mut c = Command::new(env!("CARGO_BIN_EXE_pmixw"));
    c.args(["run", "-n", "1", "--timeout", "120", "--nspace", &ns])
        .args(["sh", "-c", script])
        .env("IOF_DONE", &done)
        .env_remove("FLUX_JOB_ID")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (v, _) in pmix_codec::select::SERVER_URI_VARS {
        c.env_remove(v);
    }
    let mut run = c.spawn().unwrap();
    let mut lines = BufReader::new(run.stdout.take().unwrap()).lines();
    // the rank runs, so the server is up and its rendezvous file written
    let first = lines.next().expect("a line").unwrap();
    assert_eq!(first, "line one");

    let t = Command::new(&tool)
        .arg(format!("pid:{}", run.id()))
        .args([ns.as_str(), "2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = process::output_within(t, process::HANG, "iof_tool");
    std::fs::write(&done, b"").unwrap();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    let status = run.wait().unwrap();
    let _ = std::fs::remove_file(&done);
    assert!(
        o.status.success(),
        "the tool: {}\n{text}{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    let got: Vec<&str> = text.lines().collect();
    for want in [
        "tool init SUCCESS".to_string(),
        "tool pull SUCCESS registered 1".into(),
        format!("tool got STDOUT  from {ns}:0 handler ok \"line one\" ninfo 0"),
        format!("tool got STDERR  from {ns}:0 handler ok \"error one\" ninfo 0"),
        "tool deliveries 2".into(),
        "tool push NOT-SUPPORTED".into(),
        "tool deregister SUCCESS".into(),
        "tool finalize SUCCESS".into(),
    ] {
        assert!(got.contains(&want.as_str()), "no {want:?} in {got:#?}");
    }
    assert_eq!(rest, ["line two"], "the launcher's stdout");
    let mut err = String::new();
    std::io::Read::read_to_string(&mut run.stderr.take().unwrap(), &mut err).unwrap();
    assert!(err.contains("error one"), "{err}");
    assert!(status.success(), "pmixw run: {status}\n{err}");
}
