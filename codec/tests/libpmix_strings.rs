//! pmix-types' string helpers and status table against the running
//! libpmix 4.2.2: interop/c/strings.c prints what the C helpers return
//! for every status code in range and every 8-bit enum value.

use pmix_types::names::*;
use pmix_types::status::error_string;
use std::process::Command;

#[test]
fn every_helper_matches_libpmix() {
    let dir = pmix_test_kit::interop::default_out_dir();
    let exe = pmix_test_kit::interop::build_c("strings", &dir).unwrap_or_else(|e| panic!("{e}"));
    let out = Command::new(exe).output().expect("run strings");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut checked = 0;
    let mut bad = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.splitn(3, '\t').collect();
        let (helper, input, want) = (f[0], f[1], f[2]);
        if helper == "attribute_name" {
            checked += 1;
            let ours = pmix_types::attrs::attribute_name(input);
            if ours != want {
                bad.push(format!(
                    "attribute_name({input}): ours {ours:?} libpmix {want:?}"
                ));
            }
            continue;
        }
        let n: i128 = input.parse().unwrap();
        let ours: String = match helper {
            "error" => error_string(n as i32).into(),
            "proc_state" => proc_state_string(n as u8).into(),
            "scope" => scope_string(n as u8).into(),
            "persistence" => persistence_string(n as u8).into(),
            "data_range" => data_range_string(n as u8).into(),
            "alloc_directive" => alloc_directive_string(n as u8).into(),
            "job_state" => job_state_string(n as u8).into(),
            "link_state" => link_state_string(n as u8).into(),
            "iof_channel" => iof_channel_string(n as u16),
            "data_type" => data_type_string(n as u16).into(),
            "device_type" => device_type_string(n as u64).into(),
            "info_directives" => info_directives_string(n as u32),
            other => panic!("unknown helper {other}"),
        };
        checked += 1;
        if ours != want {
            bad.push(format!("{helper}({input}): ours {ours:?} libpmix {want:?}"));
        }
    }
    assert!(checked > 3000, "only {checked} lines");
    assert!(
        bad.is_empty(),
        "{} mismatches:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
