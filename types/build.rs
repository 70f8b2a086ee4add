//! Typed keys (`keys::typed`) generated from the reserved-key table in
//! `src/keys.rs`: one `Key<T>` per row, `T` the Rust type of the row's
//! PMIx data type. The table stays the one source; this only reads it.

use std::fmt::Write as _;

fn rust_type(data_type: &str) -> &'static str {
    match data_type {
        "Bool" => "bool",
        "String" => "String",
        "Int" => "i32",
        "Pid" | "Uint32" => "u32",
        "Uint16" => "u16",
        "Uint64" => "u64",
        "ProcRank" => "crate::rank::Rank",
        "Proc" => "crate::Proc",
        // no narrower Rust type: the value as it came
        _ => "crate::Value",
    }
}

/// The text after `field: ` on a row's line, without the trailing comma.
fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let rest = line.trim().strip_prefix(name)?.strip_prefix(": ")?;
    Some(rest.trim_end_matches(','))
}

fn main() {
    println!("cargo:rerun-if-changed=src/keys.rs");
    let src = std::fs::read_to_string("src/keys.rs").expect("src/keys.rs");
    let table = src
        .split_once("pub const RESERVED: &[Key] = &[")
        .expect("the RESERVED table")
        .1;
    let table = &table[..table.find("\n];").expect("end of RESERVED")];
    let mut out = String::new();
    let (mut name, mut string, mut c_type, mut ty, mut level) = (None, None, None, None, None);
    for line in table.lines() {
        if let Some(v) = field(line, "name") {
            name = Some(v.trim_matches('"'));
        } else if let Some(v) = field(line, "string") {
            string = Some(v);
        } else if let Some(v) = field(line, "c_type") {
            c_type = Some(v.trim_matches('"'));
        } else if let Some(v) = field(line, "data_type") {
            ty = Some(v.trim_start_matches("DataType::"));
        } else if let Some(v) = field(line, "level") {
            level = Some(v);
        } else if line.trim() == "}," {
            let (n, s, c, t, l) = (
                name.take().expect("name"),
                string.take().expect("string"),
                c_type.take().expect("c_type"),
                ty.take().expect("data_type"),
                level.take().expect("level"),
            );
            let rt = rust_type(t);
            writeln!(
                out,
                "/// `{n}` ({c}, {l}): read as `{rt}`.\n\
                 pub const {s}: Key<{rt}> = Key::new(super::{s}, {l});"
            )
            .unwrap();
        }
    }
    let dest = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("typed_keys.rs");
    std::fs::write(dest, out).unwrap();
}
