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
    let members = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    // one row per workspace member: `members = [".", "types", …]`
    let listed = members
        .lines()
        .find(|l| l.starts_with("members = ["))
        .map(|l| l.matches('"').count() / 2)
        .expect("the workspace lists its members on one line");
    assert_eq!(rows.len(), listed, "a row per workspace member: {rows:?}");
    let ours: BTreeSet<String> = rows.iter().map(|r| r.1.clone()).collect();
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
        "interop/tests",
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
    "src/server/net/", // the server's event loop, peer checks, rendezvous files, the ds21 store's files
    "src/client/asyncio.rs", // the client core over tokio
    "src/client/blocking.rs", // the client core over a blocking socket
    "src/client/mod.rs", // what both client drivers share
    "src/tool/",       // the tool role: rendezvous files, connect, query
    "src/pmi/server/fd.rs", // the PMI server core over PMI_FD / PMI_PORT sockets
    "src/pmi/client/fd.rs", // the PMI-2 client over PMI_FD
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
            // unit tests from here on (or a whole file of them)
            if line.trim_start().starts_with("#[cfg(test)]")
                || line.trim_start().starts_with("#![cfg(test)]")
            {
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

/// `path` parsed: the checks below read the library's items (a struct and
/// its fields, a `use`, a module under `#[cfg(test)]`), not its lines.
fn parse(path: &Path) -> syn::File {
    let text = std::fs::read_to_string(path).unwrap();
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

/// `use super::*` items in `items` and the modules within them, outside
/// `#[cfg(test)]` modules.
fn super_globs(items: &[syn::Item]) -> usize {
    let mut n = 0;
    for item in items {
        match item {
            syn::Item::Use(u) => {
                if let syn::UseTree::Path(p) = &u.tree {
                    if p.ident == "super" && matches!(*p.tree, syn::UseTree::Glob(_)) {
                        n += 1;
                    }
                }
            }
            syn::Item::Mod(m) if !cfg_test(&m.attrs) => {
                if let Some((_, inner)) = &m.content {
                    n += super_globs(inner);
                }
            }
            _ => {}
        }
    }
    n
}

/// The files (or folders) of the `#[cfg(test)] mod name;` that `file`
/// declares: `name.rs` and `name/` beside a `mod.rs` or `lib.rs`, under
/// the file's own folder otherwise.
fn test_module_files(file: &Path) -> Vec<std::path::PathBuf> {
    let dir = file.parent().unwrap();
    let stem = file.file_stem().unwrap().to_string_lossy();
    let base = if stem == "mod" || stem == "lib" {
        dir.to_path_buf()
    } else {
        dir.join(&*stem)
    };
    parse(file)
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Mod(m) if m.content.is_none() && cfg_test(&m.attrs) => {
                Some(m.ident.to_string())
            }
            _ => None,
        })
        .flat_map(|name| [base.join(format!("{name}.rs")), base.join(name)])
        .collect()
}

/// Issue #33: a file's imports say what it touches. No file of `src/`
/// imports `super::*` outside its tests.
#[test]
fn no_library_file_imports_super_star_outside_its_tests() {
    // the check is real: it sees a glob, and not one in a test module
    let probe: syn::File = syn::parse_str(
        "use super::*; mod a { use super::*; } #[cfg(test)] mod tests { use super::*; }",
    )
    .unwrap();
    assert_eq!(super_globs(&probe.items), 2);
    let mut files = Vec::new();
    rust_files(&repo().join("src"), &mut files);
    assert!(files.len() >= 40, "{} files", files.len());
    // files that are test modules of their own (`#[cfg(test)] mod tests;`)
    let tests: Vec<std::path::PathBuf> = files.iter().flat_map(|f| test_module_files(f)).collect();
    assert!(
        tests.iter().any(|t| t.ends_with("src/pmi/server/tests.rs")),
        "{tests:?}"
    );
    let found: Vec<String> = files
        .iter()
        .filter(|f| !tests.iter().any(|t| f.starts_with(t)))
        .filter(|f| super_globs(&parse(f).items) > 0)
        .map(|f| f.strip_prefix(repo()).unwrap().display().to_string())
        .collect();
    assert!(
        found.is_empty(),
        "use super::* outside tests (import by name): {found:?}"
    );
}

/// The struct `name` defined at the top of one of `files`.
fn find_struct(files: &[std::path::PathBuf], name: &str) -> (String, syn::ItemStruct) {
    let mut hits = Vec::new();
    for f in files {
        for item in parse(f).items {
            if let syn::Item::Struct(s) = item {
                if s.ident == name {
                    hits.push((f.strip_prefix(repo()).unwrap().display().to_string(), s));
                }
            }
        }
    }
    assert_eq!(hits.len(), 1, "struct {name} defined {} times", hits.len());
    hits.remove(0)
}

/// The server core's state by area (issue #33): `Server` keeps the
/// routing and at most 15 fields, and each area's state struct keeps its
/// fields private to the module that owns it (quinn-proto's `Connection`
/// and its `StreamsState`, `CidState`, … are split the same way).
#[test]
fn the_server_core_is_split_by_state_into_areas_that_own_their_fields() {
    let mut files = Vec::new();
    rust_files(&repo().join("src/server"), &mut files);
    let (file, server) = find_struct(&files, "Server");
    // README's Layout names it as the server's start
    assert_eq!(file, "src/server/endpoint.rs");
    let n = server.fields.len();
    assert!(n >= 5, "Server has {n} fields: is it parsed?");
    assert!(
        n <= 15,
        "Server has {n} fields (at most 15: put state in its area)"
    );
    // the driver's verbs and the router sit with the type
    let endpoint = std::fs::read_to_string(repo().join(&file)).unwrap();
    for verb in ["pub fn handle_input(", "pub fn closed(", "fn route("] {
        assert!(endpoint.contains(verb), "{verb} is not in {file}");
    }
    for (area, module) in [
        ("Conns", "connection.rs"),
        ("Modex", "modex.rs"),
        ("PubSub", "pubsub.rs"),
        ("Collectives", "collective.rs"),
        ("Queries", "query.rs"),
        ("Registrations", "events.rs"),
        ("JobInfoCache", "jobinfo.rs"),
        ("HostRequests", "requests.rs"),
        ("Tools", "tool_peers.rs"),
    ] {
        let (at, s) = find_struct(&files, area);
        assert_eq!(at, format!("src/server/{module}"), "{area}");
        assert!(!s.fields.is_empty(), "{area} holds nothing");
        for f in &s.fields {
            assert!(
                matches!(f.vis, syn::Visibility::Inherited),
                "{area}.{} is visible outside {module}",
                f.ident.as_ref().map(|i| i.to_string()).unwrap_or_default()
            );
        }
        // and Server holds it
        let ty = |f: &syn::Field| match &f.ty {
            syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        assert!(
            server.fields.iter().any(|f| ty(f).as_deref() == Some(area)),
            "Server holds no {area}"
        );
    }
}

/// The sans-IO cores and where their verbs are defined (src/sansio.rs):
/// (core, the files of its impl, whether it writes as well as reads).
const CORES: &[(&str, &[&str], bool)] = &[
    ("the PMIx server core", &["src/server/"], true),
    ("the PMIx client core", &["src/client/core.rs"], true),
    ("the PMI server core", &["src/pmi/server/"], true),
    ("the PMI-2 client", &["src/pmi/client/mod.rs"], true),
    // reads only: the node's host writes its own frames (Msg::encode)
    (
        "the bridge's incoming side",
        &["pmixw/src/bridge.rs"],
        false,
    ),
];

/// One signature: from `pub fn NAME(` to the `{` that opens its body,
/// whitespace folded.
fn signature(code: &str, name: &str) -> Option<String> {
    let at = code.find(&format!("pub fn {name}("))?;
    let end = code[at..].find('{')? + at;
    Some(
        code[at..end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// "Every core has the same verbs, `now` included" (issue 33): each core
/// above takes its bytes with the time, says when to wake it and takes
/// the time then, and yields its events (and what to write).
#[test]
fn every_core_has_the_same_verbs_now_included() {
    let mut missing = Vec::new();
    for (core, places, writes) in CORES {
        let mut code = String::new();
        for p in *places {
            let path = repo().join(p);
            let mut files = Vec::new();
            if path.is_dir() {
                for e in std::fs::read_dir(&path).unwrap() {
                    let f = e.unwrap().path();
                    if f.extension().is_some_and(|x| x == "rs") {
                        files.push(f);
                    }
                }
            } else {
                files.push(path);
            }
            for f in files {
                let text = std::fs::read_to_string(&f).unwrap();
                // the code before the unit tests, comments dropped
                for line in text.lines() {
                    if line.trim_start().starts_with("#[cfg(test)]") {
                        break;
                    }
                    code.push_str(line.split("//").next().unwrap_or(""));
                    code.push('\n');
                }
            }
        }
        let mut want = vec![
            ("handle_input", Some("now: Instant")),
            ("poll_event", None),
            ("poll_timeout", None),
            ("handle_timeout", Some("now: Instant")),
        ];
        if *writes {
            want.push(("poll_transmit", None));
        }
        for (verb, arg) in want {
            match (signature(&code, verb), arg) {
                (None, _) => missing.push(format!("{core}: no pub fn {verb}")),
                (Some(s), Some(a)) if !s.contains(a) => {
                    missing.push(format!("{core}: {s} takes no {a}"))
                }
                _ => {}
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    // the check is real: a signature without the time is seen as such
    assert!(!signature(
        "pub fn handle_input(&mut self, data: &[u8]) {",
        "handle_input"
    )
    .unwrap()
    .contains("now: Instant"));
}
