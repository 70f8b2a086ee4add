//! A tool of several servers on ours as on libpmix 4.2.2:
//! interop/c/capi_tools.c, built against libpmix, run once on it and once
//! on our libpmix.so.2 (LD_LIBRARY_PATH, that process only), each time
//! with two fresh servers of this build's pmixw: A a job's (`pmixw run -n
//! 1 -- sleep`), B the system server (`pmixw dvm`, its pmix.sys file in
//! the private $PMIX_SYSTEM_TMPDIR). The tool starts on A (by pid),
//! attaches to B by pid, by PMIX_CONNECT_TO_SYSTEM with
//! PMIX_PRIMARY_SERVER, by its rendezvous file (PMIx_tool_connect_to_
//! server) and by its URI, to A by its job's namespace (after dropping
//! both), lists its servers after every step, moves its primary with
//! PMIx_tool_set_server (at once, and with PMIX_WAIT_FOR_CONNECTION and
//! PMIX_TIMEOUT for a server it never attaches), queries through each
//! primary (A names its job, B none), disconnects from the others and the
//! primary, and finalizes: every line the same on both but the three the
//! test lists, where libpmix 4.2.2 errs (spec-notes/divergences.md, "A
//! tool attached twice"). And, on ours only, the same program without a
//! system server: its PMIX_CONNECT_TO_SYSTEM attach answers UNREACH
//! (libpmix 4.2.2 hangs there). And the wheel's libpmix 5.0.11 prints
//! what 4.2.2 does but one status.
//!
//! pmixw is the binary of the same cargo build (target/<profile>/pmixw);
//! without it, or without libpmix 4.2.2's headers, the test skips (fails
//! under CI).

mod common;
use common::pmixw;
use pmix_test_kit::process::{self, Kill};
use pmix_test_kit::{hosts, interop};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `cmd` with the private directories and no outer job's server.
fn in_dirs(mut c: Command, tmp: &Path, system: &Path) -> Command {
    c.env("TMPDIR", tmp)
        .env("PMIX_SYSTEM_TMPDIR", system)
        .env_remove("FLUX_JOB_ID");
    for (v, _) in pmix_codec::select::SERVER_URI_VARS {
        c.env_remove(v);
    }
    c
}

/// The library a run loads.
#[derive(Clone, Copy)]
enum Lib<'a> {
    /// Debian's libpmix 4.2.2, as built.
    Debian,
    /// The wheel's libpmix 5.0.11, in this directory.
    Wheel(&'a Path),
    /// Ours, in this directory.
    Ours(&'a Path),
}

/// Two fresh servers in `dir`, then the tool on `lib`: its output lines.
/// B is the system server if `system`, else its pmix.sys file is where
/// the tool does not look.
fn run(pmixw: &Path, exe: &Path, lib: Lib, dir: &Path, system: bool) -> Vec<String> {
    let _ = std::fs::remove_dir_all(dir);
    let b_tmp = dir.join("b");
    std::fs::create_dir_all(&b_tmp).unwrap();
    let host = pmix_wire::tool::hostname();
    let mut a = Command::new(pmixw);
    a.args(["run", "-n", "1", "--", "sleep", "300"]);
    let mut a = Kill(
        in_dirs(a, dir, dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut b = Command::new(pmixw);
    b.arg("dvm");
    let mut b = Kill(
        in_dirs(b, &b_tmp, if system { dir } else { &b_tmp })
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let (pa, pb) = (a.0.id(), b.0.id());
    let file_b = b_tmp.join(format!("pmix.{host}.tool.{pb}"));
    process::wait_for_file(&dir.join(format!("pmix.{host}.tool.{pa}")), &mut a.0);
    process::wait_for_file(&file_b, &mut b.0);
    let sys_dir = if system { dir } else { &b_tmp };
    process::wait_for_file(&sys_dir.join(format!("pmix.sys.{host}")), &mut b.0);
    let mut t = Command::new(exe);
    t.arg(pa.to_string()).arg(pb.to_string()).arg(&file_b);
    let mut t = in_dirs(t, dir, dir);
    let which = match lib {
        Lib::Debian => "libpmix",
        Lib::Wheel(l) => {
            t.env("LD_LIBRARY_PATH", l);
            "libpmix 5.0.11"
        }
        Lib::Ours(l) => {
            t.env("LD_LIBRARY_PATH", l).env("PMIX_CAPI_TRACE", "1");
            "ours"
        }
    };
    let o = process::run_within(&mut t, process::HANG, &format!("capi_tools on {which}"));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success(),
        "capi_tools on {which}: {}\n{out}\n{err}",
        o.status
    );
    if let Lib::Ours(_) = lib {
        for call in [
            "PMIx_tool_attach_to_server",
            "PMIx_tool_set_server",
            "PMIx_tool_get_servers",
            "PMIx_tool_disconnect",
            "PMIx_tool_connect_to_server",
        ] {
            assert!(
                err.lines().any(|l| l == format!("pmix-capi: {call}")),
                "{call} not traced:\n{err}"
            );
        }
    }
    out.lines().map(String::from).collect()
}

/// What a test needs: pmixw, the program built against libpmix 4.2.2 in
/// `<target tmp>/<tag>`, and that directory; None (a skip) without them.
fn setup(tag: &str) -> Option<(PathBuf, PathBuf, PathBuf)> {
    process::require("cc and libpmix 4.2.2", hosts::libpmix4_dev())?;
    let pmixw = process::require("pmixw of this build", pmixw())?;
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(tag);
    std::fs::create_dir_all(&out).unwrap();
    let exe = interop::build_c("capi_tools", &out).unwrap_or_else(|e| panic!("{e}"));
    Some((pmixw, exe, out))
}

#[test]
fn a_tool_attaches_to_two_servers_and_moves_between_them_as_on_libpmix() {
    let Some((pmixw, exe, out)) = setup("capi_tools") else {
        return;
    };
    let lib = common::our_lib(&out);
    let lib = lib.parent().unwrap();
    let theirs = run(&pmixw, &exe, Lib::Debian, &out.join("libpmix"), true);
    let ours = run(&pmixw, &exe, Lib::Ours(lib), &out.join("ours"), true);
    // libpmix's run went where the program means it to: both servers
    // reached, queried through each, the primary moved and dropped
    for want in [
        "pid B: attach rc=0 me=pmixw-tool-1.0 server=pmixw-server.<B>",
        "after set B: get_servers rc=0 n=2 [pmixw-server.<B> pmixw-server.<A>]",
        "through A: query rc=0 n=1 namespaces=1",
        "through B: query rc=0 n=1 namespaces=0",
        "set unknown waiting 1s: set_server rc=-46",
        "without a primary: query rc=-25 n=0 namespaces=-1",
        "connect_to_server file B: rc=0 me=pmixw-tool-1.0",
        "pid nobody: attach rc=-25 me=pmixw-tool-1.0 server=unset.77",
        "nspace of A's job: attach rc=0 me=pmixw-tool-1.0 server=pmixw-server.<A>",
        "uri B: attach rc=0 me=pmixw-tool-1.0 server=pmixw-server.<B>",
        "tool_finalize: rc=-25 initialized=0",
    ] {
        assert!(
            theirs.iter().any(|l| l == want),
            "libpmix's run has no {want:?}: {theirs:#?}"
        );
    }
    // libpmix 4.2.2 attaches to B a second time, takes the URI of an
    // attach for a later attach by pid, and names no primary after every
    // server was dropped: its finalize answers UNREACH
    let listed = |l: &str| {
        match l {
        "after pid B again: get_servers rc=0 n=3 [pmixw-server.<A> pmixw-server.<B> pmixw-server.<B>]" => {
            Some(("attached twice", 1))
        }
        "pid nobody after uri: attach rc=0 me=pmixw-tool-1.0 server=pmixw-server.<B>" => {
            Some(("the URI kept", 1))
        }
        "tool_finalize: rc=-25 initialized=0" => Some(("no primary", 1)),
        _ => None,
    }
    };
    let mut seen = Vec::new();
    let bad = common::compare_listed("capi_tools", &theirs, &ours, listed, &mut seen);
    assert!(
        bad.is_empty(),
        "{bad:#?}\nlibpmix: {theirs:#?}\nours: {ours:#?}"
    );
    assert_eq!(
        seen,
        ["attached twice", "the URI kept", "no primary"],
        "{ours:#?}"
    );
    for want in [
        "after pid B again: get_servers rc=0 n=2 [pmixw-server.<A> pmixw-server.<B>]",
        "pid nobody after uri: attach rc=-25 me=pmixw-tool-1.0 server=unset.77",
        "tool_finalize: rc=0 initialized=0",
    ] {
        assert!(
            ours.iter().any(|l| l == want),
            "our run has no {want:?}: {ours:#?}"
        );
    }
}

/// Without a system server, PMIX_CONNECT_TO_SYSTEM tried once answers
/// PMIX_ERR_UNREACH at once on ours, and the tool goes on on A (libpmix
/// 4.2.2 hangs in that attach: its progress thread waits for the missing
/// file on a timer of its own event loop; spec-notes/divergences.md, so
/// it is not run there).
#[test]
fn attaching_to_a_missing_system_server_answers_unreach_on_ours() {
    let Some((pmixw, exe, out)) = setup("capi_tools_nosys") else {
        return;
    };
    let lib = common::our_lib(&out);
    let ours = run(
        &pmixw,
        &exe,
        Lib::Ours(lib.parent().unwrap()),
        &out.join("run"),
        false,
    );
    for want in [
        "system primary: attach rc=-25 me=pmixw-tool-1.0 server=unset.77",
        "after system primary: get_servers rc=0 n=1 [pmixw-server.<A>]",
        "through system: query rc=0 n=1 namespaces=1",
        "tool_finalize: rc=0 initialized=0",
    ] {
        assert!(
            ours.iter().any(|l| l == want),
            "our run has no {want:?}: {ours:#?}"
        );
    }
}

/// The same program on the wheel's libpmix 5.0.11 (LD_LIBRARY_PATH: its
/// directory; built against 4.2.2's headers, whose structs 5.0.11 keeps):
/// every line as on 4.2.2, its three defects too, but that 5.0.11
/// answers the attach by the pid of a process with no server
/// PMIX_ERR_NOT_FOUND where 4.2.2 and ours answer PMIX_ERR_UNREACH (the
/// standard: UNREACH "if no new connection is made").
#[test]
fn libpmix_5_prints_what_4_2_2_does_but_one_status() {
    let Some((pmixw, exe, out)) = setup("capi_tools_5") else {
        return;
    };
    let Some(lib5) = process::require("libpmix 5.0.11 (the wheel)", hosts::libpmix5()) else {
        return;
    };
    let four = run(&pmixw, &exe, Lib::Debian, &out.join("libpmix"), true);
    let five = run(
        &pmixw,
        &exe,
        Lib::Wheel(lib5.parent().unwrap()),
        &out.join("five"),
        true,
    );
    let listed = |l: &str| {
        (l == "pid nobody: attach rc=-25 me=pmixw-tool-1.0 server=unset.77")
            .then_some(("not found", 1))
    };
    let mut seen = Vec::new();
    let bad = common::compare_listed("capi_tools 5.0.11", &four, &five, listed, &mut seen);
    assert!(
        bad.is_empty(),
        "{bad:#?}\n4.2.2: {four:#?}\n5.0.11: {five:#?}"
    );
    assert_eq!(seen, ["not found"]);
    assert!(
        five.iter()
            .any(|l| l == "pid nobody: attach rc=-46 me=pmixw-tool-1.0 server=unset.77"),
        "{five:#?}"
    );
}
