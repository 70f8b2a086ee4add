//! The `pmixw` command line, run as a user would.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn pmixw(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pmixw"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run pmixw");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "pmixw failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn encode_and_decode_match_libpmix_bytes() {
    // bfrops.md §12.1: INT32 1, -1, 300 → count 3 (06), 02, 01, d8 04
    let out = ok(&pmixw(
        &["encode", "--type", "INT32", "--hex"],
        b"[1,-1,300]",
    ));
    assert_eq!(out.trim(), "060201d804");
    let out = ok(&pmixw(
        &["decode", "--type", "pmix_int32", "--hex"],
        b"06 02 01 d8 04",
    ));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v, serde_json::json!([1, -1, 300]));
}

#[test]
fn info_in_v3_fully_described_round_trips_through_raw_bytes() {
    let json = br#"[{"key":"k","flags":0,"value":{"type":"INT32","value":300}}]"#;
    let o = pmixw(
        &["encode", "--type", "INFO", "--dialect", "v3", "--described"],
        json,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // bfrops.md §6: v3 info k=int32 300, here with the two FULLY_DESC tags
    assert_eq!(
        pmix_types::hex::encode(&o.stdout),
        "0009000000010018000000026b00000000000009".to_owned() + "0000012c"
    );
    let back = ok(&pmixw(
        &["decode", "--type", "info", "--dialect", "v3", "--described"],
        &o.stdout,
    ));
    let v: serde_json::Value = serde_json::from_str(&back).unwrap();
    let want: serde_json::Value = serde_json::from_slice(json).unwrap();
    assert_eq!(v, want);
}

/// `--dialect v61` reads 7.0's types 74 and 75 (only 7.0's v61 has them:
/// corpus/releases/vectors/v7.0.0a1/v61/), and 6.1's typeless array as 6.1
/// wrote it, with its size.
#[test]
fn decode_v61_reads_7_0s_regex2_and_alloc_inherit() {
    let vectors = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus/releases/vectors/v7.0.0a1/v61");
    for (ty, case, want) in [
        (
            "ALLOC_INHERIT",
            "ALLOC_INHERIT_child",
            serde_json::json!([2]),
        ),
        (
            "VALUE",
            "VALUE_alloc_inherit",
            serde_json::json!([{"type": "ALLOC_INHERIT", "value": 2}]),
        ),
        (
            "REGEX2",
            "REGEX2_raw_nodes3",
            serde_json::json!([{"type": "raw", "data": "6e6f646530312c6e6f646530322c6e6f64653033"}]),
        ),
    ] {
        let bytes = std::fs::read(vectors.join(format!("{case}.bin"))).unwrap();
        let out = ok(&pmixw(
            &["decode", "--type", ty, "--dialect", "v61"],
            &bytes,
        ));
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v, want, "{case}");
    }
    // 6.1.0's typeless array (tag, size 0): read whole as 6.1's
    let out = ok(&pmixw(
        &[
            "decode",
            "--type",
            "DATA_ARRAY",
            "--dialect",
            "v61",
            "--hex",
        ],
        b"02 00 00",
    ));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v, serde_json::json!([{"type": "UNDEF", "size": 0}]));
}

#[test]
fn decode_errors_say_where() {
    // a STRING whose length (4) runs past the end of the input
    let o = pmixw(&["decode", "--type", "STRING", "--hex"], b"02 08 61 62");
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("read past end"), "{err}");
    assert!(err.contains("offset 1"), "{err}");
    assert!(err.contains("PMIX_STRING"), "{err}");
}

#[test]
fn described_type_mismatch_is_reported() {
    // FULLY_DESC unit of one INT32 decoded as UINT32
    let o = pmixw(
        &["decode", "--type", "UINT32", "--described", "--hex"],
        b"09 02 09 02",
    );
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("type mismatch"));
}

#[test]
fn types_table_lists_every_code_and_dialect() {
    let out = ok(&pmixw(&["types", "--json"], b""));
    let rows: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    assert_eq!(rows.len(), 76);
    assert_eq!(rows[60]["name"], "PMIX_PROC_NSPACE");
    assert_eq!(
        rows[60]["dialects"],
        serde_json::json!(["v41", "v51", "v61", "v7"])
    );
    assert_eq!(
        rows[29]["dialects"],
        serde_json::json!(["v12", "v20", "v21", "v3"])
    );
}

#[test]
fn bad_usage_fails_cleanly() {
    assert!(!pmixw(&["decode"], b"").status.success());
    assert!(!pmixw(&["decode", "--type", "NOPE"], b"").status.success());
    assert!(!pmixw(&["encode", "--type", "BOOL"], b"[1]")
        .status
        .success());
    assert!(!pmixw(&["frobnicate"], b"").status.success());
}

#[test]
fn print_shows_libpmix_layout() {
    // bfrops.md §11.1: INFO key=STRING val, REQD, prefix "PFX>"
    let json = br#"[{"key":"key","flags":1,"value":{"type":"STRING","value":"val"}}]"#;
    let out = ok(&pmixw(
        &["print", "--type", "INFO", "--json", "--prefix", "PFX>"],
        json,
    ));
    assert_eq!(
        out,
        "PFX>KEY: key\nPFX>\tPFX>Data type: PMIX_INFO_DIRECTIVES\tValue: REQUIRED\nPFX>\tPFX>PMIX_VALUE:  Data type: PMIX_STRING\tValue: val\n"
    );
    // and from bytes: INT32 [1, -1]
    let out = ok(&pmixw(&["print", "--type", "INT32", "--hex"], b"04 02 01"));
    assert_eq!(
        out,
        " Data type: PMIX_INT32\tValue: 1\n Data type: PMIX_INT32\tValue: -1\n"
    );
}

/// `pmixw inspect --verify` on a stored libpmix 4.2.2 conversation, whole
/// and with its last bytes cut off; `pmixw inspect` on the same shows the
/// decoded commands.
#[test]
fn inspect_verifies_a_stored_conversation() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus/captures-4.2.2");
    let c = format!("{dir}/client-capns-0.client");
    let s = format!("{dir}/client-capns-0.server");
    let out = ok(&pmixw(
        &["inspect", "--verify", "--client", &c, "--server", &s],
        b"",
    ));
    assert!(out.starts_with("verified: "), "{out}");
    let text = ok(&pmixw(&["inspect", "--client", &c, "--server", &s], b""));
    for cmd in [
        "\"REQ\"",
        "\"COMMIT\"",
        "\"FENCE\"",
        "\"SPAWN\"",
        "\"LOG\"",
        "\"FINALIZE\"",
    ] {
        assert!(text.contains(cmd), "no {cmd} in\n{text}");
    }
    let bytes = std::fs::read(&c).unwrap();
    let cut = std::env::temp_dir().join(format!("pmixw-cut-{}", std::process::id()));
    std::fs::write(&cut, &bytes[..bytes.len() - 3]).unwrap();
    let o = pmixw(
        &[
            "inspect",
            "--verify",
            "--client",
            cut.to_str().unwrap(),
            "--server",
            &s,
        ],
        b"",
    );
    let _ = std::fs::remove_file(&cut);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a whole message"));
}

/// Every subcommand the top-level help lists (so a new one is covered too).
fn subcommands() -> Vec<String> {
    let top = ok(&pmixw(&["--help"], b""));
    let list: Vec<String> = top
        .split("Commands:")
        .nth(1)
        .expect("a Commands: section")
        .split("\n\n")
        .next()
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect();
    for c in [
        "decode", "encode", "print", "types", "inspect", "relay", "run",
    ] {
        assert!(list.iter().any(|x| x == c), "{c} missing from {list:?}");
    }
    for c in ["probe", "query", "doctor", "interop", "completions"] {
        assert!(list.iter().any(|x| x == c), "{c} missing from {list:?}");
    }
    list
}

#[test]
fn help_works_on_every_subcommand() {
    for c in subcommands() {
        for flag in ["--help", "-h"] {
            let out = ok(&pmixw(&[&c, flag], b""));
            assert!(
                out.contains(&format!("Usage: pmixw {c}")),
                "{c} {flag}: {out}"
            );
        }
        let out = ok(&pmixw(&["help", &c], b""));
        assert!(
            out.contains(&format!("Usage: pmixw {c}")),
            "help {c}: {out}"
        );
    }
    // the options of run are documented where users look for them
    let run = ok(&pmixw(&["run", "--help"], b""));
    for f in ["--np", "--nspace", "--dialect", "--timeout", "--grace"] {
        assert!(run.contains(f), "run --help lacks {f}: {run}");
    }
    for f in [
        "--keep-going",
        "--system",
        "--stats",
        "--cyclic",
        "--verbose",
    ] {
        assert!(run.contains(f), "run --help lacks {f}: {run}");
    }
}

#[test]
fn version_names_the_crate_version() {
    for flag in ["--version", "-V"] {
        let out = ok(&pmixw(&[flag], b""));
        assert_eq!(out.trim(), format!("pmixw {}", env!("CARGO_PKG_VERSION")));
    }
}

#[test]
fn completions_cover_subcommands_and_flags() {
    let bash = ok(&pmixw(&["completions", "bash"], b""));
    assert!(bash.contains("_pmixw()"), "{bash}");
    for word in ["decode", "inspect", "--nspace", "--pcap", "--fixed-ints"] {
        assert!(bash.contains(word), "bash completion lacks {word}");
    }
    let zsh = ok(&pmixw(&["completions", "zsh"], b""));
    assert!(zsh.starts_with("#compdef pmixw"), "{zsh}");
    let bad = pmixw(&["completions", "tcsh-nope"], b"");
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn unknown_flags_exit_2_and_name_the_flag() {
    for args in [
        &["decode", "--type", "INT32", "--bogus"][..],
        &["types", "--bogus"],
        &["run", "-n", "1", "--bogus", "true"],
        &["probe", "--bogus"],
        &["query", "--bogus", "k"],
        &["interop", "--bogus"],
    ] {
        let o = pmixw(args, b"");
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("'--bogus'"), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    // no command at all: the help, on stderr, status 2
    let o = pmixw(&[], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("Commands:"));
    // an unknown command and a missing value
    assert_eq!(pmixw(&["frobnicate"], b"").status.code(), Some(2));
    assert_eq!(pmixw(&["run", "-n"], b"").status.code(), Some(2));
    // the live matrix takes none of the codec matrix's options
    let o = pmixw(&["interop", "--hosts", "--dialect", "v3"], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot be used with"));
}

#[test]
fn run_passes_flag_like_arguments_to_the_program() {
    // everything after PROG is the program's, even `-n`, `--timeout` and
    // `--help`; a `--` before PROG is optional
    let script = r#"printf '%s|' "$@""#;
    let want = "--timeout|-n|5|--help|-- x|";
    for pre in [&[][..], &["--"][..]] {
        let mut args = vec!["run", "-n", "1", "--grace", "2"];
        args.extend_from_slice(pre);
        args.extend(["sh", "-c", script, "sh", "--timeout", "-n", "5"]);
        args.extend(["--help", "-- x"]);
        let out = ok(&pmixw(&args, b""));
        assert_eq!(out, want, "{args:?}");
    }
    // the program's exit status is ours, as before
    let o = pmixw(&["run", "--np", "1", "sh", "-c", "exit 3"], b"");
    assert_eq!(o.status.code(), Some(3));
}

/// `pmixw inspect --dstore DIR` reads a ds21 store back: namespaces, the
/// lock segment, each rank's keys with their values unpacked, superseded
/// records marked; a record whose length runs past its segment is an
/// error, not a panic.
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
#[test]
fn inspect_reads_a_ds21_store_back() {
    use pmix_codec::Format;
    use pmix_types::{DataType, Value};
    use pmix_wire::server::{dstore::layout::WILDCARD, net::dstore::Session};
    let base = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("inspect_dstore");
    std::fs::create_dir_all(&base).unwrap();
    let mut s = Session::create(&base).unwrap();
    s.add_nspace("insp", 2).unwrap();
    let v = |x: Value| {
        pmix_codec::encode(&Format::V41, DataType::Value, &[Value::Value(Box::new(x))]).unwrap()
    };
    let st = |x: &str| Value::String(Some(x.into()));
    s.store(
        "insp",
        &[
            (
                WILDCARD,
                vec![("pmix.job.size".into(), v(Value::Uint32(2)))],
            ),
            (
                1,
                vec![
                    ("k".into(), v(st("x"))),
                    ("k2".into(), v(Value::Bool(true))),
                ],
            ),
        ],
    )
    .unwrap();
    s.store("insp", &[(1, vec![("k".into(), v(Value::Uint8(9)))])])
        .unwrap();
    let dir = s.dir().to_str().unwrap().to_string();
    let out = ok(&pmixw(&["inspect", "--dstore", &dir], b""));
    for want in [
        "1 namespace(s)\n",
        "namespace insp: 1 meta, 1 data segment(s)\n",
        " 2 reader slot(s), 0 claimed, stride ",
        "  rank WILDCARD: 1 key(s)\n    pmix.job.size = Uint32(2)\n",
        "  rank 1: 2 key(s)\n    k = String(Some(\"x\")) (superseded)\n    k2 = Bool(true)\n    k = Uint8(9)\n",
    ] {
        assert!(out.contains(want), "no {want:?} in\n{out}");
    }
    assert!(!out.contains("rank 0:"), "{out}");
    // rank 1's first record (the wildcard's is at 8) says it runs past
    // the segment
    let wild = 16 + "pmix.job.size".len() + 1 + v(Value::Uint32(2)).len();
    let data = std::path::Path::new(&dir).join("smdataseg-insp-0");
    // (written in place: the file stays mapped by the session)
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(&data).unwrap();
    f.write_all_at(&u64::MAX.to_ne_bytes(), (8 + wild + 25) as u64)
        .unwrap();
    let o = pmixw(&["inspect", "--dstore", &dir], b"");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!o.status.success(), "{out}");
    assert!(out.contains("  rank 1: ds21 data at "), "{out}");
    drop(s);
    let _ = std::fs::remove_dir(&base);
}

/// Every rank's output reaches `pmixw run`'s stdout and stderr whole,
/// each line once, with many ranks writing at once (their pipes watched
/// together by one reader, pmixw/src/cli/output.rs).
#[test]
fn run_forwards_every_ranks_output_and_errors_once() {
    let (n, lines) = (64u32, 20u32);
    let script = format!(
        r#"i=0; while [ $i -lt {lines} ]; do echo "out $PMIX_RANK $i"; echo "err $PMIX_RANK $i" >&2; i=$((i+1)); done"#
    );
    let ns = n.to_string();
    let o = pmixw(
        &["run", "-n", &ns, "--timeout", "120", "sh", "-c", &script],
        b"",
    );
    let out = ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    for (text, what) in [(out.as_str(), "out"), (&*err, "err")] {
        let mut got: Vec<&str> = text.lines().filter(|l| l.starts_with(what)).collect();
        got.sort();
        let mut want: Vec<String> = (0..n)
            .flat_map(|r| (0..lines).map(move |i| format!("{what} {r} {i}")))
            .collect();
        want.sort();
        assert_eq!(got, want, "{what}");
    }
}
