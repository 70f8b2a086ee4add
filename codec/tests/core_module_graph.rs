//! The modules of codec/src form a layered graph: no module depends,
//! directly or through others, on a module that depends on it (issue 10).
//!
//! The test reads the sources (comments, strings and `#[cfg(test)]`
//! modules removed) and draws an edge A → B for every path by which A's
//! code reaches B: `crate::b::…`, `super::…`, a `use` tree naming B, a bare
//! `b::…` naming a child module, or a crate-root item (`crate::pack_unit`),
//! which is an edge to the root. A `pub use` re-export is a name, not
//! code (`pub use`, `pub(crate) use`): it draws no edge, and a path
//! through it is resolved to the module that defines the item
//! (`crate::Format` is `dialect`, `crate::layout::U8` is `form`). A `mod`
//! declaration draws no edge either. The test fails on any cycle and
//! prints it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One source file as a module: its path (`""` for the root, `msg`,
/// `msg::field`) and its tokens.
struct Module {
    path: String,
    tokens: Vec<String>,
}

/// Remove comments and string and char literals.
fn strip(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 2;
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                out.push_str("\"\"");
            }
            // a char literal ('x', '\n'), not a lifetime ('a)
            b'\'' if b.get(i + 2) == Some(&b'\'') || b.get(i + 1) == Some(&b'\\') => {
                i += 1;
                while i < b.len() && b[i] != b'\'' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            c => {
                out.push(c as char);
                i += 1;
            }
        }
    }
    out
}

/// The tokens of a file, without its `#[cfg(test)] mod … { … }` modules
/// (unit tests, which may use anything).
fn tokenize(src: &str) -> Vec<String> {
    let all = lex(src);
    let test_mod = ["#", "[", "cfg", "(", "test", ")", "]", "mod"];
    let mut out = Vec::with_capacity(all.len());
    let mut i = 0;
    while i < all.len() {
        let at_test_mod = all.len() > i + 9
            && test_mod.iter().zip(&all[i..]).all(|(a, b)| a == b)
            && all[i + 9] == "{";
        if !at_test_mod {
            out.push(all[i].clone());
            i += 1;
            continue;
        }
        let mut depth = 0;
        i += 9;
        while i < all.len() {
            match all[i].as_str() {
                "{" => depth += 1,
                "}" => depth -= 1,
                _ => {}
            }
            i += 1;
            if depth == 0 {
                break;
            }
        }
    }
    out
}

fn lex(src: &str) -> Vec<String> {
    let s = strip(src);
    let b = s.as_bytes();
    let mut t = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphanumeric() || c == b'_' {
            let st = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            t.push(s[st..i].to_string());
        } else if c == b':' && b.get(i + 1) == Some(&b':') {
            t.push("::".into());
            i += 2;
        } else {
            if !c.is_ascii_whitespace() {
                t.push((c as char).to_string());
            }
            i += 1;
        }
    }
    t
}

fn load(dir: &Path, prefix: &str, out: &mut Vec<Module>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let name = p.file_stem().unwrap().to_str().unwrap().to_string();
        if p.is_dir() {
            load(&p, &join(prefix, &name), out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            let path = match name.as_str() {
                "lib" | "mod" => prefix.to_string(),
                _ => join(prefix, &name),
            };
            let src = std::fs::read_to_string(&p).unwrap();
            out.push(Module {
                path,
                tokens: tokenize(&src),
            });
        }
    }
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}::{name}")
    }
}

fn parent(path: &str) -> String {
    path.rsplit_once("::")
        .map(|(p, _)| p.to_string())
        .unwrap_or_default()
}

/// Expand the `use` tree in `toks` (without `use` and `;`) into paths.
fn use_paths(toks: &[String]) -> Vec<Vec<String>> {
    fn tree(toks: &[String], i: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
        let mut path = prefix.to_vec();
        while *i < toks.len() {
            let t = toks[*i].as_str();
            match t {
                "::" => *i += 1,
                "{" => {
                    *i += 1;
                    loop {
                        tree(toks, i, &path, out);
                        match toks.get(*i).map(String::as_str) {
                            Some(",") => *i += 1,
                            Some("}") => {
                                *i += 1;
                                break;
                            }
                            _ => break,
                        }
                        if toks.get(*i).map(String::as_str) == Some("}") {
                            *i += 1;
                            break;
                        }
                    }
                    return;
                }
                "," | "}" => break,
                "as" => *i += 2,
                _ => {
                    path.push(t.to_string());
                    *i += 1;
                }
            }
        }
        out.push(path);
    }
    let mut out = Vec::new();
    let mut i = 0;
    tree(toks, &mut i, &[], &mut out);
    out
}

struct Crate {
    modules: BTreeSet<String>,
    /// (module, name) → the path the name is re-exported from
    reexports: BTreeMap<(String, String), Vec<String>>,
}

impl Crate {
    /// The module a path (already absolute: segments after `crate`)
    /// reaches: the deepest module it names, through re-exports.
    fn resolve(&self, segs: &[String], depth: usize) -> String {
        let mut m = String::new();
        for (k, s) in segs.iter().enumerate() {
            if s == "self" || s == "*" {
                break;
            }
            let child = join(&m, s);
            if self.modules.contains(&child) {
                m = child;
                continue;
            }
            if let Some(target) = self.reexports.get(&(m.clone(), s.clone())) {
                if depth < 8 {
                    let mut full = target.clone();
                    full.extend_from_slice(&segs[k + 1..]);
                    return self.resolve(&full, depth + 1);
                }
            }
            break;
        }
        m
    }

    /// Make a path relative to `module` absolute (segments after `crate`),
    /// or `None` when it leaves the crate.
    fn absolute(&self, module: &str, segs: &[String]) -> Option<Vec<String>> {
        let first = segs.first()?.as_str();
        let mut base: Vec<String> = if module.is_empty() {
            Vec::new()
        } else {
            module.split("::").map(String::from).collect()
        };
        match first {
            "crate" => Some(segs[1..].to_vec()),
            "super" => {
                let mut rest = segs;
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop();
                    rest = &rest[1..];
                }
                base.extend_from_slice(rest);
                Some(base)
            }
            "self" => {
                base.extend_from_slice(&segs[1..]);
                Some(base)
            }
            _ if self.modules.contains(&join(module, first)) => {
                base.extend_from_slice(segs);
                Some(base)
            }
            _ => None,
        }
    }
}

/// The modules each module's code depends on.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut mods = Vec::new();
    load(&src, "", &mut mods);
    let mut krate = Crate {
        modules: mods.iter().map(|m| m.path.clone()).collect(),
        reexports: BTreeMap::new(),
    };
    // names each file's `pub use` lines bring into scope: where the file's
    // own code uses one, that is an edge to the module defining it
    let mut imported: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    // inline modules that only re-export (`pub mod command { pub use … }`)
    // are aliases of what they re-export
    for m in &mods {
        let t = &m.tokens;
        for i in 0..t.len() {
            if t[i] == "use" && is_reexport(t, i) {
                let end = (i..t.len()).find(|&j| t[j] == ";").unwrap();
                for p in use_paths(&t[i + 1..end]) {
                    if let (Some(abs), Some(last)) = (krate.absolute(&m.path, &p), p.last()) {
                        let owner = inline_owner(t, i, &m.path);
                        if last == "*" {
                            // `pub mod command { pub use crate::msg::*; }`
                            let alias = owner.rsplit("::").next().unwrap_or("").to_string();
                            let at = parent(&owner);
                            krate
                                .reexports
                                .insert((at, alias), abs[..abs.len() - 1].to_vec());
                        } else {
                            if owner == m.path {
                                imported
                                    .entry(m.path.clone())
                                    .or_default()
                                    .insert(last.clone(), abs.clone());
                            }
                            krate.reexports.insert((owner, last.clone()), abs);
                        }
                    }
                }
            }
        }
    }
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for m in &mods {
        let deps = g.entry(m.path.clone()).or_default();
        let t = &m.tokens;
        // modules glob-imported (`use super::*`): the names they re-export
        // are edges where this file's code uses them
        let mut globs: Vec<String> = Vec::new();
        let mut i = 0;
        while i < t.len() {
            if t[i] == "use" {
                let end = (i..t.len()).find(|&j| t[j] == ";").unwrap();
                if !is_reexport(t, i) {
                    for p in use_paths(&t[i + 1..end]) {
                        if let Some(abs) = krate.absolute(&m.path, &p) {
                            let target = krate.resolve(&abs, 0);
                            if p.last().is_some_and(|x| x == "*") {
                                globs.push(target.clone());
                            }
                            deps.insert(target);
                        }
                    }
                }
                i = end + 1;
                continue;
            }
            let starts_path = (t[i] == "crate"
                || t[i] == "super"
                || krate.modules.contains(&join(&m.path, &t[i])))
                && t.get(i + 1).is_some_and(|x| x == "::")
                && (i == 0 || t[i - 1] != "::");
            if starts_path {
                let mut segs = vec![t[i].clone()];
                let mut j = i + 1;
                while t.get(j).is_some_and(|x| x == "::")
                    && t.get(j + 1).is_some_and(|x| is_ident(x))
                {
                    segs.push(t[j + 1].clone());
                    j += 2;
                }
                if let Some(abs) = krate.absolute(&m.path, &segs) {
                    deps.insert(krate.resolve(&abs, 0));
                }
                i = j;
                continue;
            }
            if i == 0 || t[i - 1] != "::" {
                if let Some(abs) = imported.get(&m.path).and_then(|n| n.get(&t[i])) {
                    deps.insert(krate.resolve(abs, 0));
                }
                for g in &globs {
                    if let Some(abs) = krate.reexports.get(&(g.clone(), t[i].clone())) {
                        deps.insert(krate.resolve(abs, 0));
                    }
                }
            }
            i += 1;
        }
        deps.remove(&m.path);
    }
    g
}

/// The inline module a token at `at` sits in (`pub mod command { … }`),
/// as a path, or the file's module.
fn inline_owner(t: &[String], at: usize, file: &str) -> String {
    let mut depth = 0i32;
    for k in (0..at).rev() {
        match t[k].as_str() {
            "}" => depth += 1,
            "{" if depth > 0 => depth -= 1,
            "{" => {
                if k >= 2 && t[k - 2] == "mod" {
                    return join(file, &t[k - 1]);
                }
                return file.to_string();
            }
            _ => {}
        }
    }
    file.to_string()
}

/// Whether the `use` at `i` is a re-export: `pub use`, `pub(crate) use`,
/// `pub(super) use`.
fn is_reexport(t: &[String], i: usize) -> bool {
    (i >= 1 && t[i - 1] == "pub")
        || (i >= 4 && t[i - 1] == ")" && t[i - 3] == "(" && t[i - 4] == "pub")
}

fn is_ident(s: &str) -> bool {
    s.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
        && s.bytes().next().is_some_and(|c| !c.is_ascii_digit())
}

fn name(m: &str) -> &str {
    if m.is_empty() {
        "crate"
    } else {
        m
    }
}

/// Every cycle's strongly connected set of modules (Tarjan).
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct St<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut St<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                comp.push(name(w).to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = St {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn codec_modules_have_no_import_cycles() {
    let g = graph();
    let found = cycles(&g);
    let mut report = String::new();
    for c in &found {
        report.push_str(&format!("cycle among {{{}}}:\n", c.join(", ")));
        for m in c {
            let key = if m == "crate" { "" } else { m.as_str() };
            let inside: Vec<&str> = g[key]
                .iter()
                .filter(|d| c.iter().any(|x| x == name(d)))
                .map(|d| name(d))
                .collect();
            report.push_str(&format!("  {m} -> {}\n", inside.join(", ")));
        }
    }
    assert!(found.is_empty(), "{report}");
}

/// The checker sees the edges it must: it is not passing on an empty graph.
#[test]
fn checker_sees_known_edges() {
    let g = graph();
    let has = |a: &str, b: &str| g.get(a).is_some_and(|d| d.contains(b));
    // `use crate::error::…` in a file module
    assert!(has("wire", "error"), "{g:#?}");
    // a re-exported name resolves to its defining module (crate::Format)
    assert!(has("legacy", "dialect"), "{g:#?}");
    // through a `pub(crate) use` too: the forms dispatch.rs names through
    // layout.rs's re-exports (`use crate::layout::*`) are form.rs's
    assert!(has("dispatch", "form"), "{g:#?}");
    // `super::field::*` in a child of msg
    assert!(has("msg::reply", "msg::field"), "{g:#?}");
    // a name a glob import brings in through a re-export (`Reply` by
    // `use super::*`, from `pub use reply::Reply` in msg)
    assert!(has("msg::commands", "msg::reply"), "{g:#?}");
    // a re-exported name used by the file that re-exports it (request.rs
    // re-exports `Request` from commands.rs and implements it)
    assert!(has("msg::request", "msg::commands"), "{g:#?}");
    // the checker's own cycle finder finds a planted cycle
    let mut planted = g.clone();
    planted.get_mut("error").unwrap().insert("wire".into());
    assert!(cycles(&planted)
        .iter()
        .any(|c| c.contains(&"error".to_string()) && c.contains(&"wire".to_string())));
}
