//! Issue 17 item 3: a crate that depends only on the codec
//! (tests/dependent/, path dependencies on codec/ and types/ with their
//! default features) resolves without serde, serde_json, clap or tokio in
//! its normal dependency graph, builds, and packs the bytes libpmix's
//! formats carry.

use std::path::{Path, PathBuf};
use std::process::Command;

fn dependent() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/dependent/Cargo.toml")
}

fn cargo(args: &[&str]) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // its own target directory: the outer `cargo test` holds target/'s lock
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dependent");
    let o = Command::new(cargo)
        .args(args)
        .arg("--manifest-path")
        .arg(dependent())
        .arg("--locked")
        .env("CARGO_TARGET_DIR", target)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "cargo {args:?} failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn a_codec_only_dependent_has_no_json_cli_or_async_dependency() {
    let tree = cargo(&[
        "tree", "-e", "normal", "--prefix", "none", "--format", "{p}",
    ]);
    let names: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    // the tree is real: the codec and the types are in it
    for want in ["pmix-codec", "pmix-types", "bytes"] {
        assert!(names.contains(&want), "{want} missing from\n{tree}");
    }
    for banned in [
        "serde",
        "serde_json",
        "clap",
        "clap_complete",
        "tokio",
        "pmix-wire",
    ] {
        assert!(
            !names.contains(&banned),
            "{banned} in the codec's tree:\n{tree}"
        );
    }
}

#[test]
fn a_codec_only_dependent_builds_and_packs_for_two_dialects() {
    let out = cargo(&["run", "--quiet"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    // v3 fully described: the INFO type tag (0x0009) comes first
    assert!(lines[1].starts_with("0009"), "{out}");
    // libpmix 4.2.2's default: non-described, count then key "pmix.job.size"
    let key_hex: String = b"pmix.job.size"
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(
        lines[0].contains(&key_hex) && lines[1].contains(&key_hex),
        "{out}"
    );
    assert!(
        lines[1].len() > lines[0].len(),
        "described is longer:\n{out}"
    );
}
