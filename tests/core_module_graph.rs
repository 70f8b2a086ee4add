//! No source file of any workspace package imports, directly or through
//! others, a file that imports it back (issue #33): each crate's files form
//! layers.
//!
//! Every crate root of every package (`src/lib.rs`, `src/main.rs`, the
//! `[[bin]]`s) is read, and its module tree followed through its `mod NAME;`
//! declarations to the files they name (`NAME.rs` or `NAME/mod.rs` beside
//! a root or `mod.rs`, else in the folder of the declaring file's name).
//! Comments, strings and `#[cfg(test)]` items are left out (unit tests may
//! use anything). A file imports another when its code names a path into
//! it: a `use` (tree) or an inline path that begins with `crate::`,
//! `super::`, `self::` or a child module's name, resolved to the deepest
//! module it names, which is in the file that module is (an inline
//! `mod x { … }` is in its file). `pub use` counts as any `use`. A
//! module's own descendants are its parts, not imports: a file naming a
//! path below its own module (`cli/mod.rs` calling `run::run`, `lib.rs`
//! re-exporting a child's item) draws no edge; a child naming its parent's
//! items (`super::Opts`) does. The test fails on any cycle and prints one
//! path around it.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A file's text without comments, and with every string and char literal
/// emptied (raw strings included).
fn strip(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let at = |i: usize, k: usize| c.get(i + k).copied();
    let ident = |k: usize| k > 0 && (c[k - 1].is_alphanumeric() || c[k - 1] == '_');
    while i < c.len() {
        if c[i] == '/' && at(i, 1) == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if c[i] == '/' && at(i, 1) == Some('*') {
            // nested block comments
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i, 1) == Some('*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i, 1) == Some('/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c[i] == 'r' && !ident(i) && matches!(at(i, 1), Some('"') | Some('#')) {
            // r"…", r#"…"#
            let mut k = i + 1;
            while c.get(k) == Some(&'#') {
                k += 1;
            }
            if c.get(k) != Some(&'"') {
                out.push(c[i]);
                i += 1;
                continue;
            }
            let hashes = k - i - 1;
            k += 1;
            while k < c.len() && !(c[k] == '"' && (1..=hashes).all(|h| c.get(k + h) == Some(&'#')))
            {
                k += 1;
            }
            i = k + 1 + hashes;
            out.push_str("\"\"");
        } else if c[i] == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c[i] == '\'' && (at(i, 2) == Some('\'') || at(i, 1) == Some('\\')) {
            // a char literal ('x', '\n', '\u{1F}'), not a lifetime ('a)
            i += 1;
            while i < c.len() && c[i] != '\'' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// Identifiers, `::` and single punctuation characters.
fn tokens(src: &str) -> Vec<String> {
    let s = strip(src);
    let mut out = Vec::new();
    let mut word = String::new();
    let mut chars = s.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch.is_alphanumeric() || ch == '_' {
            word.push(ch);
            continue;
        }
        if !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
        if ch == ':' && chars.peek() == Some(&':') {
            chars.next();
            out.push("::".into());
        } else if !ch.is_whitespace() {
            out.push(ch.to_string());
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    without_test_items(out)
}

/// The tokens without the items under `#[cfg(test)]` (a `mod tests { … }`,
/// a `mod tests;`, a test-only `use` or `fn`).
fn without_test_items(t: Vec<String>) -> Vec<String> {
    const MARK: [&str; 7] = ["#", "[", "cfg", "(", "test", ")", "]"];
    let is_mark = |i: usize| {
        MARK.iter()
            .enumerate()
            .all(|(k, m)| t.get(i + k).is_some_and(|x| x == m))
    };
    let mut out = Vec::with_capacity(t.len());
    let mut i = 0;
    while i < t.len() {
        if !is_mark(i) {
            out.push(t[i].clone());
            i += 1;
            continue;
        }
        i += MARK.len();
        // the item: to its `;` or through its outermost braces
        let mut depth = 0;
        while i < t.len() {
            match t[i].as_str() {
                "{" => depth += 1,
                "}" => {
                    depth -= 1;
                    if depth == 0 {
                        i += 1;
                        break;
                    }
                }
                ";" if depth == 0 => {
                    i += 1;
                    break;
                }
                _ => {}
            }
            i += 1;
        }
    }
    out
}

fn is_ident(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// One crate: each module (`a::b`, the root `""`) and the file it is in.
struct Crate {
    file_of: BTreeMap<String, PathBuf>,
    /// Each file's module and tokens.
    files: Vec<(String, PathBuf, Vec<String>)>,
}

fn join(m: &str, name: &str) -> String {
    if m.is_empty() {
        name.to_string()
    } else {
        format!("{m}::{name}")
    }
}

/// Whether module `inner` is strictly inside module `outer`.
fn below(inner: &str, outer: &str) -> bool {
    inner != outer && (outer.is_empty() || inner.starts_with(&format!("{outer}::")))
}

/// The inline module scopes of a file: for each token, the module it is in.
fn scopes(file_module: &str, t: &[String]) -> Vec<String> {
    let mut stack: Vec<(String, usize)> = vec![(file_module.to_string(), 0)];
    let mut depth = 0;
    let mut out = Vec::with_capacity(t.len());
    for i in 0..t.len() {
        out.push(stack.last().map(|s| s.0.clone()).unwrap_or_default());
        match t[i].as_str() {
            "{" => {
                depth += 1;
                if i >= 2 && t[i - 2] == "mod" && is_ident(&t[i - 1]) {
                    let m = join(&stack[stack.len() - 1].0, &t[i - 1]);
                    stack.push((m, depth));
                }
            }
            "}" => {
                if stack.len() > 1 && stack[stack.len() - 1].1 == depth {
                    stack.pop();
                }
                depth -= 1;
            }
            _ => {}
        }
    }
    out
}

/// Read the crate rooted at `root`, following its `mod NAME;` declarations.
fn load_crate(root: &Path) -> Crate {
    let mut k = Crate {
        file_of: BTreeMap::new(),
        files: Vec::new(),
    };
    let mut todo = vec![(String::new(), root.to_path_buf())];
    while let Some((module, file)) = todo.pop() {
        let src =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let t = tokens(&src);
        let scope = scopes(&module, &t);
        k.file_of.insert(module.clone(), file.clone());
        // a root or mod.rs declares children beside it; `a.rs`, in `a/`
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let base = if file == root || stem == "mod" {
            file.parent().unwrap().to_path_buf()
        } else {
            file.parent().unwrap().join(stem)
        };
        for i in 0..t.len() {
            if t[i] == "mod" && t.get(i + 1).is_some_and(|n| is_ident(n)) {
                let name = &t[i + 1];
                let child = join(&scope[i], name);
                match t.get(i + 2).map(String::as_str) {
                    Some(";") => {
                        // inside an inline module: its folder
                        let mut dir = base.clone();
                        for seg in scope[i].strip_prefix(&module).unwrap_or("").split("::") {
                            if !seg.is_empty() {
                                dir = dir.join(seg);
                            }
                        }
                        let flat = dir.join(format!("{name}.rs"));
                        let nested = dir.join(name).join("mod.rs");
                        let path = if flat.is_file() { flat } else { nested };
                        assert!(path.is_file(), "{}: mod {name}: no file", file.display());
                        todo.push((child, path));
                    }
                    Some("{") => {
                        k.file_of.insert(child, file.clone());
                    }
                    _ => {}
                }
            }
        }
        k.files.push((module, file, t));
    }
    k
}

/// Expand a `use` tree (the tokens between `use` and `;`) into paths.
fn use_paths(t: &[String]) -> Vec<Vec<String>> {
    fn walk(t: &[String], i: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
        let mut path = prefix;
        while let Some(tok) = t.get(*i) {
            match tok.as_str() {
                "::" => *i += 1,
                "as" => *i += 2,
                "{" => {
                    *i += 1;
                    while t.get(*i).is_some_and(|x| x != "}") {
                        walk(t, i, path.clone(), out);
                        if t.get(*i).is_some_and(|x| x == ",") {
                            *i += 1;
                        }
                    }
                    *i += 1;
                    return;
                }
                "," | "}" => break,
                _ => {
                    path.push(tok.clone());
                    *i += 1;
                }
            }
        }
        out.push(path);
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < t.len() {
        walk(t, &mut i, Vec::new(), &mut out);
        i += 1;
    }
    out
}

impl Crate {
    /// The module a path written in `scope` reaches (the deepest module
    /// it names), or None when it leaves the crate.
    fn resolve(&self, scope: &str, segs: &[String]) -> Option<String> {
        let mut base: Vec<&str> = scope.split("::").filter(|s| !s.is_empty()).collect();
        let mut rest = segs;
        match segs.first()?.as_str() {
            "crate" => {
                base.clear();
                rest = &segs[1..];
            }
            "self" => rest = &segs[1..],
            "super" => {
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
            }
            first if self.file_of.contains_key(&join(scope, first)) => {}
            _ => return None,
        }
        let mut m = base.join("::");
        for s in rest {
            let child = join(&m, s);
            if !self.file_of.contains_key(&child) {
                break;
            }
            m = child;
        }
        Some(m)
    }

    /// The files each file imports (relative to the repository).
    fn edges(&self) -> BTreeMap<String, BTreeSet<String>> {
        let rel = |p: &Path| p.strip_prefix(repo()).unwrap().display().to_string();
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (module, file, t) in &self.files {
            let scope = scopes(module, t);
            let mut paths: Vec<(usize, Vec<String>)> = Vec::new();
            let mut i = 0;
            while i < t.len() {
                if t[i] == "use" {
                    let end = (i..t.len()).find(|&j| t[j] == ";").unwrap_or(t.len());
                    for p in use_paths(&t[i + 1..end]) {
                        paths.push((i, p));
                    }
                    i = end;
                    continue;
                }
                let starts = is_ident(&t[i])
                    && t.get(i + 1).is_some_and(|x| x == "::")
                    && (i == 0 || t[i - 1] != "::");
                if starts {
                    // `a::b::c`: the identifiers at i, i + 2, … while `::` joins them
                    let len = (1..)
                        .take_while(|k| {
                            t.get(i + 2 * k - 1).is_some_and(|x| x == "::")
                                && t.get(i + 2 * k).is_some_and(|x| is_ident(x))
                        })
                        .count();
                    let segs: Vec<String> = (0..=len).map(|k| t[i + 2 * k].clone()).collect();
                    paths.push((i, segs));
                    i += 2 * len + 1;
                    continue;
                }
                i += 1;
            }
            let deps = g.entry(rel(file)).or_default();
            for (at, p) in paths {
                let Some(target) = self.resolve(&scope[at], &p) else {
                    continue;
                };
                if below(&target, module) {
                    continue; // its own parts
                }
                let to = &self.file_of[&target];
                if to != file {
                    deps.insert(rel(to));
                }
            }
        }
        g
    }
}

/// Every crate root of every workspace package.
fn crate_roots() -> Vec<PathBuf> {
    let ws = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let members = ws
        .split("members = [")
        .nth(1)
        .and_then(|s| s.split(']').next())
        .expect("the workspace's members");
    let mut roots = Vec::new();
    for m in members
        .split(',')
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
    {
        let dir = repo().join(m);
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let mut found: BTreeSet<PathBuf> = ["src/lib.rs", "src/main.rs"]
            .iter()
            .map(|f| dir.join(f))
            .filter(|p| p.is_file())
            .collect();
        if let Ok(bins) = std::fs::read_dir(dir.join("src/bin")) {
            found.extend(
                bins.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "rs")),
            );
        }
        for line in manifest.lines() {
            if let Some(p) = line.trim().strip_prefix("path = \"") {
                let p = dir.join(p.trim_end_matches('"'));
                if p.extension().is_some_and(|e| e == "rs") {
                    found.insert(p);
                }
            }
        }
        roots.extend(found);
    }
    roots
}

/// The whole workspace's file graph (files of different crates never
/// name each other by these paths).
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut g = BTreeMap::new();
    for root in crate_roots() {
        g.extend(load_crate(&root).edges());
    }
    g
}

/// The files `from` reaches.
fn reach(g: &BTreeMap<String, BTreeSet<String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<&str> = vec![from];
    while let Some(v) = todo.pop() {
        for w in g.get(v).into_iter().flatten() {
            if seen.insert(w.clone()) {
                todo.push(w);
            }
        }
    }
    seen
}

/// Each group of files that reach each other (two or more).
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    let reached: BTreeMap<&str, BTreeSet<String>> =
        g.keys().map(|v| (v.as_str(), reach(g, v))).collect();
    let mut groups: Vec<BTreeSet<String>> = Vec::new();
    for (v, r) in &reached {
        if !r.contains(*v) || groups.iter().any(|c| c.contains(*v)) {
            continue;
        }
        let group: BTreeSet<String> = r
            .iter()
            .filter(|w| {
                reached
                    .get(w.as_str())
                    .is_some_and(|back| back.contains(*v))
            })
            .cloned()
            .collect();
        groups.push(group);
    }
    groups
}

/// The shortest path from `v` back to itself inside `group`.
fn one_cycle(
    g: &BTreeMap<String, BTreeSet<String>>,
    group: &BTreeSet<String>,
    v: &str,
) -> Vec<String> {
    let mut prev: BTreeMap<String, String> = BTreeMap::new();
    let mut todo = VecDeque::from([v.to_string()]);
    while let Some(u) = todo.pop_front() {
        for w in g
            .get(&u)
            .into_iter()
            .flatten()
            .filter(|w| group.contains(*w))
        {
            if w == v {
                let mut path = vec![v.to_string(), u.clone()];
                while let Some(p) = prev.get(path.last().unwrap()) {
                    path.push(p.clone());
                }
                // v → … → u → v
                path.reverse();
                path.insert(0, v.to_string());
                path.pop();
                path.dedup();
                path.push(v.to_string());
                return path;
            }
            if !prev.contains_key(w) && w != v {
                prev.insert(w.clone(), u.clone());
                todo.push_back(w.clone());
            }
        }
    }
    vec![v.to_string()]
}

fn report(g: &BTreeMap<String, BTreeSet<String>>, groups: &[&BTreeSet<String>]) -> String {
    let mut s = String::new();
    for c in groups {
        let first = c.iter().next().unwrap();
        s.push_str(&format!(
            "import cycle among {{{}}}:\n  {}\n",
            c.iter().cloned().collect::<Vec<_>>().join(", "),
            one_cycle(g, c, first).join(" -> ")
        ));
        for f in c.iter() {
            let inside: Vec<&str> = g[f]
                .iter()
                .filter(|d| c.contains(*d))
                .map(String::as_str)
                .collect();
            s.push_str(&format!("    {f} imports {}\n", inside.join(", ")));
        }
    }
    s
}

#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    let g = graph();
    let found = cycles(&g);
    assert!(
        found.is_empty(),
        "{}",
        report(&g, &found.iter().collect::<Vec<_>>())
    );
}

/// The checker sees what it must: every package's files, the edges of
/// each kind of path, and a cycle planted in the real graph.
#[test]
fn the_checker_sees_every_package_and_every_kind_of_path() {
    let g = graph();
    for root in [
        "src/lib.rs",
        "types/src/lib.rs",
        "codec/src/lib.rs",
        "interop/src/lib.rs",
        "test-kit/src/lib.rs",
        "pmixw/src/lib.rs",
        "pmixw/src/main.rs",
    ] {
        assert!(g.contains_key(root), "{root} not read: {:?}", g.keys());
    }
    // a file found through nested `mod` declarations (folder/mod.rs, a.rs + a/)
    assert!(
        g.keys().any(|f| f.starts_with("pmixw/src/cli/")),
        "{:?}",
        g.keys()
    );
    assert!(
        g.keys().any(|f| f.starts_with("codec/src/msg/")),
        "{:?}",
        g.keys()
    );
    let has = |a: &str, b: &str| g.get(a).is_some_and(|d| d.contains(b));
    // `use crate::{pack, unpack}` (a use tree)
    assert!(
        has("codec/src/layout.rs", "codec/src/unpack.rs"),
        "{:?}",
        g.get("codec/src/layout.rs")
    );
    // an inline path `crate::cbuild::build_c(…)` from a nested module
    assert!(has("interop/src/hosts/grid.rs", "interop/src/cbuild.rs"));
    // `use super::{emit, …}`: a child naming its parent's items
    assert!(has("pmixw/src/cli/debug.rs", "pmixw/src/cli/mod.rs"));
    // a parent naming its own parts draws no edge (`run::run(a)`)
    assert!(!g["pmixw/src/cli/mod.rs"]
        .iter()
        .any(|f| f.starts_with("pmixw/src/cli/")));
    // the cycle finder finds a planted cycle and prints a path around it
    let mut planted = g.clone();
    planted
        .get_mut("codec/src/error.rs")
        .unwrap()
        .insert("codec/src/wire.rs".into());
    planted
        .get_mut("codec/src/wire.rs")
        .unwrap()
        .insert("codec/src/error.rs".into());
    let found = cycles(&planted);
    let c = found
        .iter()
        .find(|c| c.contains("codec/src/error.rs"))
        .expect("the planted cycle");
    assert!(c.contains("codec/src/wire.rs"));
    let path = one_cycle(&planted, c, "codec/src/error.rs");
    assert_eq!(path.first(), path.last());
    assert!(path.len() >= 3, "{path:?}");
    for w in path.windows(2) {
        assert!(planted[&w[0]].contains(&w[1]), "{path:?}");
    }
}
