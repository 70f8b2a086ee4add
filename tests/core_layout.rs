//! The README's "Layout" table is the crate graph: each package's
//! `[dependencies]` name exactly the workspace crates its row allows, and
//! every folder it lists exists; and the library's protocol cores name no
//! thread, socket, clock, file or process (only the drivers listed here
//! do). (The codec's own module layering is checked by
//! codec/tests/core_module_graph.rs.)

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
    assert_eq!(rows.len(), 6, "six packages: {rows:?}");
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

/// Every `cargo run` of a binary the README gives names its package
/// with `-p`, and that package has a binary: cargo looks for `--bin NAME`
/// in the default members only (the root package, pmix-wire, which has
/// none), and the main job's `cargo run --release --bin pmixw -- interop`
/// failed from a clean clone ("no bin target named `pmixw` in default-run
/// packages") once pmixw had a package of its own.
#[test]
fn the_readmes_cargo_run_commands_name_the_binarys_package() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    // the commands: lines of its code blocks, not the prose about them
    let mut in_code = false;
    let runs: Vec<&str> = readme
        .lines()
        .filter(|l| {
            if l.starts_with("```") {
                in_code = !in_code;
                return false;
            }
            in_code
        })
        .filter_map(|l| l.split_once("cargo run").map(|(_, rest)| rest))
        .filter(|r| !r.contains("--example"))
        .collect();
    // the main job's command is among them
    assert!(runs.iter().any(|r| r.contains(" -- interop")), "{runs:?}");
    let with_bin: BTreeSet<String> = layout_rows()
        .into_iter()
        .filter(|(folder, _, _)| {
            let manifest =
                std::fs::read_to_string(repo().join(folder).join("Cargo.toml")).unwrap_or_default();
            manifest.contains("[[bin]]") || repo().join(folder).join("src/main.rs").is_file()
        })
        .map(|(_, package, _)| package)
        .collect();
    assert!(with_bin.contains("pmixw"), "{with_bin:?}");
    for run in runs {
        let words: Vec<&str> = run
            .split(" -- ")
            .next()
            .unwrap_or(run)
            .split_whitespace()
            .collect();
        let package = words
            .windows(2)
            .find(|w| w[0] == "-p" || w[0] == "--package")
            .map(|w| w[1]);
        assert!(
            package.is_some_and(|p| with_bin.contains(p)),
            "README's `cargo run{run}` names no package with a binary ({with_bin:?})"
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
        "capi/tests",
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

/// The library's files that do I/O: the drivers of the sans-IO cores and
/// the helpers only drivers and tools call. Every other file under `src/`
/// is a protocol core (or pure glue) and must own no threads, sockets,
/// clocks, files or processes; a new driver file is named here.
const DRIVERS: &[&str] = &[
    "src/server/net/", // the server's event loop, peer checks, rendezvous files
    "src/server/dstore/files.rs", // the ds21 store's files, maps and mutexes
    "src/server/dstore/snapshot.rs", // a store directory read back (tests, `pmixw inspect`)
    "src/client/asyncio.rs", // the client core over tokio
    "src/client/blocking.rs", // the client core over a blocking socket
    "src/client/mod.rs", // what both client drivers share
    "src/tool/",       // the tool role: rendezvous files, connect, query
    "src/pmi/fd.rs",   // the PMI server core over PMI_FD / PMI_PORT sockets
    "src/pmi2/fd.rs",  // the PMI-2 client over PMI_FD
    "src/procfs.rs",   // /proc readers for the drivers' peer checks
];

/// What only a driver may touch (a path or call in code, not in comments).
const IO: &[&str] = &[
    "std::net",
    "std::thread",
    "std::fs",
    "std::process",
    "Instant::now",
    "SystemTime::now",
    "tokio::",
    "mio::",
    "TcpStream",
    "UnixStream",
];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The engineering rule "the protocol cores own no threads, sockets or
/// clocks": no file of `src/` outside [`DRIVERS`] names an I/O path or
/// calls a libc function (its constants, such as a signal's number, are
/// data). Unit tests (from `#[cfg(test)]` on) may use clocks and threads.
#[test]
fn the_protocol_cores_own_no_threads_sockets_clocks_or_files() {
    let mut files = Vec::new();
    rust_files(&repo().join("src"), &mut files);
    let mut found = Vec::new();
    let mut cores = 0;
    for f in &files {
        let rel = f
            .strip_prefix(repo())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if DRIVERS.iter().any(|d| rel.starts_with(d)) {
            continue;
        }
        cores += 1;
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if line.trim_start().starts_with("#[cfg(test)]") {
                break;
            }
            let libc_call = code.match_indices("libc::").any(|(at, _)| {
                code[at + 6..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_lowercase())
            });
            if libc_call || IO.iter().any(|p| code.contains(p)) {
                found.push(format!("{rel}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    // the scan is real: it looked at the cores, and it finds I/O in a driver
    assert!(cores >= 20, "only {cores} core files");
    let net = std::fs::read_to_string(repo().join("src/server/net/mod.rs")).unwrap();
    assert!(IO.iter().any(|p| net.contains(p)));
    assert!(
        found.is_empty(),
        "I/O in a protocol core:\n{}",
        found.join("\n")
    );
    // every driver named still exists
    for d in DRIVERS {
        assert!(repo().join(d).exists(), "{d} is gone: take it off DRIVERS");
    }
}
