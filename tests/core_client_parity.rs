//! The two client drivers offer the same calls (issue #33 item 3). Their
//! operations are generated from one table in src/client/ops.rs
//! (`operations!`), so those match by construction; this test reads the
//! sources and checks the rest: both drivers expand the table, every row
//! runs an operation of the ops layer, and the methods written by hand
//! in each driver (init, the typed getters, put, next_event, finalize …)
//! are the same in both, none of them also a row of the table.

use std::collections::BTreeSet;
use std::path::Path;

fn source(rel: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The names of the `pub fn` / `pub async fn` items written in `text`
/// (a macro's `pub fn $name` is not a name).
fn pub_fns(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let l = line.trim_start();
        let rest = l
            .strip_prefix("pub async fn ")
            .or_else(|| l.strip_prefix("pub fn "));
        if let Some(rest) = rest {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

/// The rows of the `operations!` table: (method, the ops function it runs).
fn table() -> Vec<(String, String)> {
    let ops = source("src/client/ops.rs");
    let start = ops
        .find("macro_rules! operations")
        .expect("src/client/ops.rs defines the operations! table");
    let body = &ops[start..];
    let end = body.find("\n}\n").expect("the table's end");
    // rows may wrap: join the body, then split at the rows' semicolons
    let joined: String = body[..end]
        .lines()
        .filter(|l| !l.trim_start().starts_with("///"))
        .collect::<Vec<_>>()
        .join(" ");
    let mut rows = Vec::new();
    for part in joined.split(';') {
        let Some(at) = part.find(" fn ") else {
            continue;
        };
        let sig = &part[at + 4..];
        let name: String = sig
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let Some((_, op)) = part.rsplit_once("= ops::") else {
            panic!("row {name:?} runs no ops:: operation: {part}");
        };
        let op: String = op
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        rows.push((name, op));
    }
    rows
}

/// Methods one driver has and the other does not, each with its reason.
/// Empty: the drivers differ only in being blocking or async.
const DRIVER_ONLY: &[(&str, &str, &str)] = &[];

#[test]
fn both_client_drivers_offer_the_same_operations() {
    let rows = table();
    let names: BTreeSet<String> = rows.iter().map(|(n, _)| n.clone()).collect();
    // the scan is real: the table holds the calls the issue names
    for op in [
        "lookup",
        "publish",
        "query",
        "spawn",
        "resolve_peers",
        "resolve_nodes",
        "group_construct",
        "job_control",
        "notify",
        "log",
        "connect",
    ] {
        assert!(names.contains(op), "the table has no {op}: {names:?}");
    }
    assert_eq!(names.len(), rows.len(), "a row twice: {rows:?}");
    assert!(rows.len() >= 20, "{rows:?}");

    // every row runs a function of the ops layer
    let ops_fns = pub_fns(&source("src/client/ops.rs"));
    for (name, op) in &rows {
        assert!(
            ops_fns.contains(op),
            "row {name} runs ops::{op}, which src/client/ops.rs does not define"
        );
    }

    let files = ["src/client/blocking.rs", "src/client/asyncio.rs"];
    let mut hand = Vec::new();
    for f in files {
        let text = source(f);
        assert!(
            text.contains("ops::operations!("),
            "{f} does not expand the operations! table"
        );
        let mut fns = pub_fns(&text);
        for (driver, name, why) in DRIVER_ONLY {
            assert!(!why.is_empty(), "{name}: say why only {driver} has it");
            if f.ends_with(driver) {
                assert!(
                    fns.remove(*name),
                    "{f} lists {name} as its own but lacks it"
                );
            }
        }
        let twice: Vec<_> = fns.intersection(&names).collect();
        assert!(
            twice.is_empty(),
            "{f} writes by hand what the table generates: {twice:?}"
        );
        hand.push((f, fns));
    }
    let (b, a) = (&hand[0], &hand[1]);
    assert!(b.1.contains("get") && b.1.contains("finalize"), "{:?}", b.1);
    let only_b: Vec<_> = b.1.difference(&a.1).collect();
    let only_a: Vec<_> = a.1.difference(&b.1).collect();
    assert!(
        only_b.is_empty() && only_a.is_empty(),
        "only in {}: {only_b:?}; only in {}: {only_a:?}",
        b.0,
        a.0
    );
}
