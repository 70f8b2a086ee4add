//! pmix_types::keys (issue 16 item 5) against its two sources: the PMIx
//! standard's reserved-keys chapter (its rows in
//! corpus/standard/reserved-keys.tsv), and libpmix 4.2.2's
//! attribute dictionary (interop/c/dictionary.c prints it).

use pmix_types::keys::{Level, RESERVED};
use pmix_types::{DataType, Value};
use std::path::PathBuf;
use std::process::Command;

/// (macro, string, C type, level, provisional) of every row of
/// corpus/standard/reserved-keys.tsv: the `\declareAttribute` lines of
/// the standard's data realm subsections (provenance: corpus/README.md).
fn chapter_rows(text: &str) -> Vec<(String, String, String, Level, bool)> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            assert_eq!(f.len(), 5, "{line}");
            let level = match f[3] {
                "session" => Level::Session,
                "job" => Level::Job,
                "app" => Level::App,
                "proc" => Level::Proc,
                "node" => Level::Node,
                other => panic!("level {other} in {line}"),
            };
            let provisional = match f[4] {
                "provisional" => true,
                "stable" => false,
                other => panic!("status {other} in {line}"),
            };
            (f[0].into(), f[1].into(), f[2].into(), level, provisional)
        })
        .collect()
}

#[test]
fn table_is_the_standards_chapter() {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/standard/reserved-keys.tsv");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let rows = chapter_rows(&text);
    let ours: Vec<_> = RESERVED
        .iter()
        .map(|k| {
            (
                k.name.to_string(),
                k.string.to_string(),
                k.c_type.to_string(),
                k.level,
                k.provisional,
            )
        })
        .collect();
    assert_eq!(ours, rows);
    assert_eq!(rows.len(), 59);
}

/// Where libpmix 4.2.2's dictionary gives another type than the standard.
const LIBPMIX_DIFFERS: &[(&str, &str)] = &[
    // the standard: pmix_data_array_t; libpmix registers a string
    ("pmix.lcpus", "PMIX_STRING"),
];

#[test]
fn table_agrees_with_libpmix_dictionary() {
    let dir = pmix_test_kit::interop::default_out_dir();
    let exe = pmix_test_kit::interop::build_c("dictionary", &dir).unwrap_or_else(|e| panic!("{e}"));
    let out = Command::new(exe).output().expect("run dictionary");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let dict: std::collections::HashMap<&str, (&str, &str)> = text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f.len() == 3).then(|| (f[1], (f[0], f[2])))
        })
        .collect();
    assert!(dict.len() > 400, "{} dictionary entries", dict.len());
    for k in RESERVED {
        let (name, ty) = dict
            .get(k.string)
            .unwrap_or_else(|| panic!("{} is not in libpmix's dictionary", k.string));
        assert_eq!(*name, k.name);
        let want = LIBPMIX_DIFFERS
            .iter()
            .find(|(s, _)| *s == k.string)
            .map_or(k.data_type.name(), |(_, t)| t);
        assert_eq!(*ty, want, "{}", k.string);
        assert!(DataType::parse(ty).is_some());
    }
}

#[test]
fn types_keys_lists_the_table() {
    let o = Command::new(env!("CARGO_BIN_EXE_pmixw"))
        .args(["types", "--keys", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let a = j.as_array().unwrap();
    assert_eq!(a.len(), RESERVED.len());
    let appnum = a.iter().find(|r| r["string"] == "pmix.appnum").unwrap();
    assert_eq!(appnum["name"], "PMIX_APPNUM");
    assert_eq!(appnum["type"], "PMIX_UINT32");
    assert_eq!(appnum["level"], "proc");
    let o = Command::new(env!("CARGO_BIN_EXE_pmixw"))
        .args(["types", "--keys"])
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text
        .lines()
        .any(|l| l.split_whitespace().collect::<Vec<_>>()
            == ["PMIX_JOB_SIZE", "pmix.job.size", "PMIX_UINT32", "job"]));
}

#[test]
fn print_flags_slurms_int_appnum() {
    use std::io::Write;
    let run = |ty: &str| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_pmixw"))
            .args(["print", "--type", "INFO", "--json"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let v =
            format!(r#"[{{"key":"pmix.appnum","flags":0,"value":{{"type":"{ty}","value":0}}}}]"#);
        c.stdin.take().unwrap().write_all(v.as_bytes()).unwrap();
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success());
        String::from_utf8(o.stderr).unwrap()
    };
    let err = run("INT");
    assert!(
        err.contains(
            "pmix.appnum (PMIX_APPNUM) is PMIX_UINT32 (uint32_t) by the standard, not PMIX_INT"
        ),
        "{err}"
    );
    assert_eq!(run("UINT32"), "");
}

/// The typed getters over reserved keys, on our server: job size, appnum
/// and local rank as integers, the typed keys from the table, a wrong
/// type refused with both types named.
#[test]
fn typed_getters_read_reserved_keys() {
    use pmix_types::keys::{self, typed};
    use pmix_wire::client::{Client, ClientEnv, ClientError};
    use pmix_wire::server::{net, JobSpec};
    let server = net::start(vec![JobSpec {
        nspace: "typed".into(),
        nprocs: 1,
        hostname: net::hostname(),
        // a reserved key with a host's wrong type, as Slurm's appnum
        info: vec![pmix_types::Info::new(keys::JOB_NUM_APPS, Value::Int(1))],
    }])
    .unwrap();
    let env = server.client_env("typed", 0);
    let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let mut c = Client::init_with(ClientEnv::from_env(get).unwrap()).unwrap();
    let job = pmix_types::Proc::new("typed", pmix_types::RANK_WILDCARD);
    let me = pmix_types::Proc::new("typed", 0);
    assert_eq!(
        c.get::<String>(&me, keys::HOSTNAME).unwrap(),
        net::hostname()
    );
    assert_eq!(c.get::<u32>(&job, keys::JOB_SIZE).unwrap(), 1);
    assert_eq!(c.get::<u32>(&me, keys::APPNUM).unwrap(), 0);
    assert_eq!(c.get::<u16>(&me, keys::LOCAL_RANK).unwrap(), 0);
    // typed keys: the type comes from the table
    let size: u32 = c.get_key(typed::JOB_SIZE).unwrap();
    assert_eq!(size, 1);
    let lrank: u16 = c.get_key(typed::LOCAL_RANK).unwrap();
    assert_eq!(lrank, 0);
    // an app-level key of our job, a node-level key of our node
    assert_eq!(c.get_key(typed::APPNUM).unwrap(), 0);
    assert_eq!(c.get_key(typed::HOSTNAME).unwrap(), net::hostname());
    assert_eq!(c.get_key(typed::NODEID).unwrap(), 0);
    assert_eq!(c.get_key_of(&me, typed::HOSTNAME).unwrap(), net::hostname());
    // the wrong type reads all the same, and the key check names it
    assert_eq!(c.get_key(typed::JOB_NUM_APPS).unwrap(), 1);
    let v: Value = c.get(&job, keys::JOB_NUM_APPS).unwrap();
    assert_eq!(v, Value::Int(1));
    assert!(keys::check(keys::JOB_NUM_APPS, v.data_type()).is_some());
    let e = c.get::<String>(&job, keys::JOB_SIZE).unwrap_err();
    assert!(matches!(e, ClientError::Type { .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        "get pmix.job.size: expected PMIX_STRING, got PMIX_UINT32"
    );
    assert_eq!(e.status(), -18);
    c.finalize().unwrap();
}
