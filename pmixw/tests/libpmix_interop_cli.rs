//! `pmixw interop --only TEXT` against libpmix 4.2.2: the codec matrix
//! narrowed to the types whose name holds TEXT (what `.ci/installed` runs
//! with the installed binary), and a TEXT no type holds refused.

use pmix_test_kit::hosts::libpmix4_dev;
use pmix_test_kit::process::{require, run_within};
use std::process::Command;
use std::time::Duration;

fn interop(args: &[&str]) -> std::process::Output {
    run_within(
        Command::new(env!("CARGO_BIN_EXE_pmixw"))
            .arg("interop")
            .args(args),
        Duration::from_secs(300),
        "pmixw interop",
    )
}

#[test]
fn only_narrows_the_codec_matrix_to_the_types_named() {
    if require("libpmix 4.2.2's headers and cc", libpmix4_dev()).is_none() {
        return;
    }
    let o = interop(&["--only", "string"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let types: Vec<&str> = out
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    // both buffer types of v41, STRING and COMPRESSED_STRING in each
    assert_eq!(
        types,
        ["STRING", "COMPRESSED_STRING", "STRING", "COMPRESSED_STRING"],
        "{out}"
    );
    assert!(out.contains(" 0 failed"), "{out}");

    let o = interop(&["--only", "no-such-type"]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--only no-such-type: no type"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
