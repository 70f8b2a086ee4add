//! The README's "Layout" table is the crate graph: each package's
//! `[dependencies]` name exactly the workspace crates its row allows, and
//! every folder it lists exists. (The codec's own module layering is
//! checked by codec/tests/core_module_graph.rs.)

use std::collections::BTreeSet;
use std::path::Path;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// (folder, package, allowed workspace dependencies) of every row of the
/// README's Layout table.
fn layout_rows() -> Vec<(String, String, BTreeSet<String>)> {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let section = readme
        .split("\n## Layout\n")
        .nth(1)
        .expect("README has a Layout section");
    let names = |cell: &str| -> BTreeSet<String> {
        cell.split(',')
            .filter_map(|n| {
                n.trim()
                    .strip_prefix('`')?
                    .strip_suffix('`')
                    .map(String::from)
            })
            .collect()
    };
    section
        .lines()
        .skip_while(|l| !l.starts_with("| folder"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let folder = cells[1].trim_matches('`').to_string();
            let package = cells[2].trim_matches('`').to_string();
            (folder, package, names(cells[3]))
        })
        .collect()
}

/// The names in one `[section]` of a Cargo.toml that are workspace crates.
fn workspace_deps(manifest: &str, section: &str, ours: &BTreeSet<String>) -> BTreeSet<String> {
    let mut in_section = false;
    let mut out = BTreeSet::new();
    for line in manifest.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            in_section = t == section;
            continue;
        }
        if !in_section || t.starts_with('#') {
            continue;
        }
        let name = t.split(['=', '.']).next().unwrap_or("").trim();
        if ours.contains(name) {
            out.insert(name.to_string());
        }
    }
    out
}

#[test]
fn every_package_depends_only_on_what_the_layout_allows() {
    let rows = layout_rows();
    assert_eq!(rows.len(), 5, "five packages: {rows:?}");
    let ours: BTreeSet<String> = rows.iter().map(|r| r.1.clone()).collect();
    let members = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    for (folder, package, allowed) in &rows {
        let dir = repo().join(folder.trim_end_matches('/'));
        let dir = if folder == "src/" {
            repo().to_path_buf()
        } else {
            dir
        };
        assert!(dir.is_dir(), "{folder} is missing");
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(
            manifest.contains(&format!("name = \"{package}\"")),
            "{folder}Cargo.toml is not package {package}"
        );
        let deps = workspace_deps(&manifest, "[dependencies]", &ours);
        assert_eq!(
            &deps, allowed,
            "{package}'s [dependencies] against the README's Layout row"
        );
        for dev in workspace_deps(&manifest, "[dev-dependencies]", &ours) {
            assert!(
                allowed.contains(&dev) || dev == "pmix-test-kit" || &dev == package,
                "{package} dev-depends on {dev}, which its row does not allow"
            );
        }
        let member = if folder == "src/" {
            "."
        } else {
            folder.trim_end_matches('/')
        };
        assert!(
            members.contains(&format!("\"{member}\"")),
            "{member} is not a workspace member"
        );
    }
}

#[test]
fn the_library_leaves_the_command_line_dependencies_to_pmixw() {
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let deps = manifest
        .split("[dependencies]")
        .nth(1)
        .unwrap()
        .split("\n[")
        .next()
        .unwrap();
    // the tree itself is real: the library's own dependencies are there
    assert!(deps.contains("tokio"), "{deps}");
    for banned in [
        "clap",
        "pcap-file",
        "etherparse",
        "tracing-subscriber",
        "serde_json",
        "signal-hook",
    ] {
        assert!(
            !deps.lines().any(|l| l.trim_start().starts_with(banned)),
            "pmix-wire depends on {banned}"
        );
    }
}

#[test]
fn every_integration_test_names_its_tier() {
    for dir in [
        "tests",
        "codec/tests",
        "pmixw/tests",
        "types/tests",
        "test-kit/tests",
    ] {
        let Ok(entries) = std::fs::read_dir(repo().join(dir)) else {
            continue;
        };
        for e in entries {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            if let Some(stem) = name.strip_suffix(".rs") {
                assert!(
                    ["core_", "libpmix_", "live_"]
                        .iter()
                        .any(|t| stem.starts_with(t)),
                    "{dir}/{name} does not start with its tier (core_, libpmix_, live_)"
                );
            }
        }
    }
}
