//! `pmixw run` forwards its ranks' output to the tools that pull it, as
//! prterun does (pmixw/src/cli/output.rs, spec-notes/server.md "IO
//! forwarding"): a rank writes a line on stdout and one on stderr, then
//! waits; a libpmix 4.2.2 tool (interop/c/iof_tool.c) attached to the
//! launcher by its pid pulls the job's stdout and stderr and gets both
//! lines (kept for it since no one had pulled them), under the handler id
//! its pull was given, with the rank as their source. The same under
//! PRRTE 5.0.11's prterun (when installed), but for stdin: prterun takes
//! the tool's push, `pmixw run` refuses it (it takes no stdin from
//! tools). The launcher's own stdout and stderr still carry every line,
//! the one written after the tool left too.

use pmix_test_kit::{hosts, interop, process};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What the tool printed (its namespace written NS), what the launcher
/// wrote on stdout after the first line and on stderr.
struct Seen {
    tool: Vec<String>,
    rest: Vec<String>,
    err: String,
}

/// Run the rank's script under `launcher` (its arguments up to the
/// command), attach the tool by the launcher's pid once the rank's first
/// line is out; `ns` names the job from the launcher's pid.
fn attach(tool: &Path, mut launcher: Command, done: &Path, ns: impl Fn(u32) -> String) -> Seen {
    let _ = std::fs::remove_file(done);
    // the rank waits for the test to say the tool is done
    let script = "echo line one; echo error one >&2; \
                  while [ ! -e \"$IOF_DONE\" ]; do sleep 0.05; done; echo line two";
    launcher
        .args(["sh", "-c", script])
        .env("IOF_DONE", done)
        .env_remove("FLUX_JOB_ID")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (v, _) in pmix_codec::select::SERVER_URI_VARS {
        launcher.env_remove(v);
    }
    let mut run = launcher.spawn().unwrap();
    let ns = ns(run.id());
    let mut lines = BufReader::new(run.stdout.take().unwrap()).lines();
    // the rank runs, so the server is up and its rendezvous file written
    assert_eq!(lines.next().expect("a line").unwrap(), "line one");
    let t = Command::new(tool)
        .arg(format!("pid:{}", run.id()))
        .args([ns.as_str(), "2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = process::output_within(t, process::HANG, "iof_tool");
    std::fs::write(done, b"").unwrap();
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    let status = run.wait().unwrap();
    let _ = std::fs::remove_file(done);
    let mut err = String::new();
    std::io::Read::read_to_string(&mut run.stderr.take().unwrap(), &mut err).unwrap();
    let text = String::from_utf8_lossy(&o.stdout).replace(&ns, "NS");
    assert!(
        o.status.success(),
        "the tool: {}\n{text}{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(status.success(), "the launcher: {status}\n{err}");
    Seen {
        tool: text.lines().map(String::from).collect(),
        rest,
        err,
    }
}

/// The lines every launcher's tool must print, stdin's aside, sorted.
fn common(tool: &[String]) -> Vec<String> {
    let mut v: Vec<String> = tool
        .iter()
        .filter(|l| !l.starts_with("tool push"))
        .cloned()
        .collect();
    v.sort();
    v
}

#[test]
fn a_tool_attached_to_pmixw_run_gets_the_ranks_output_as_under_prterun() {
    let Some(()) = process::require("cc and libpmix 4.2.2", hosts::libpmix4_dev()) else {
        return;
    };
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("run_iof");
    std::fs::create_dir_all(&out).unwrap();
    let tool = interop::build_c("iof_tool", &out).unwrap_or_else(|e| panic!("{e}"));
    let done = out.join(format!("done-{}", std::process::id()));
    let ns = format!("iofrun-{}", std::process::id());
    let mut c = Command::new(env!("CARGO_BIN_EXE_pmixw"));
    c.args(["run", "-n", "1", "--timeout", "120", "--nspace", &ns]);
    let ours = attach(&tool, c, &done, |_| ns.clone());
    let want: Vec<String> = [
        "tool deliveries 2",
        "tool deregister SUCCESS",
        "tool finalize SUCCESS",
        "tool got STDERR  from NS:0 handler ok \"error one\" ninfo 0",
        "tool got STDOUT  from NS:0 handler ok \"line one\" ninfo 0",
        "tool init SUCCESS",
        "tool pull SUCCESS registered 1",
    ]
    .map(String::from)
    .into();
    assert_eq!(common(&ours.tool), want, "{:#?}", ours.tool);
    assert!(
        ours.tool.iter().any(|l| l == "tool push NOT-SUPPORTED"),
        "{:#?}",
        ours.tool
    );
    assert_eq!(ours.rest, ["line two"], "the launcher's stdout");
    assert!(ours.err.contains("error one"), "{}", ours.err);

    let Some(prterun) = process::require("PRRTE 5.0.11's prterun", hosts::prterun5()) else {
        return;
    };
    let host = pmix_wire::server::net::hostname();
    let theirs = attach(&tool, hosts::prterun_n(&prterun, 1), &done, |pid| {
        format!("prterun-{host}-{pid}@1")
    });
    assert_eq!(common(&theirs.tool), want, "prterun: {:#?}", theirs.tool);
    assert!(
        theirs.tool.iter().any(|l| l == "tool push SUCCESS"),
        "{:#?}",
        theirs.tool
    );
    assert_eq!(theirs.rest, ["line two"], "prterun's stdout");
}
