//! The interop harness against the system libpmix (the C reference).
//!
//! Two C programs in `interop/c/` are built at run time against
//! `pkg-config pmix`: `gen` packs a broad set of cases of every type and
//! prints the bytes with the packed values as JSON; `unpack` unpacks bytes
//! it is given and prints the values and its own re-pack. For every case
//! and wire format the matrix checks four things:
//!
//! * `pack`: our encoding of the case's values equals libpmix's bytes;
//! * `unpack`: our decoding of libpmix's bytes equals what libpmix itself
//!   unpacks from them;
//! * `repack`: our re-encoding of what we decoded gives libpmix's bytes;
//! * `c-reads-ours`: libpmix unpacks our bytes to our values and re-packs
//!   them to our bytes;
//! * `print`: our `PMIx_Data_print` text of each value equals libpmix's
//!   (memory addresses, which libpmix prints for a few types, are masked).
//!
//! Known defects of libpmix 4.2.2 are listed in [`KNOWN_C_DEFECTS`] by
//! case and check, each with its reason. A listed cell that passes is
//! reported as `fixed?` so the list cannot go stale silently.

pub use crate::cbuild::{build_c, default_out_dir};
use pmix_codec::{BufferType, Dialect, Format};
use pmix_types::{DataType, Value};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The checks made for each case.
pub const CHECKS: [&str; 5] = ["pack", "unpack", "repack", "c-reads-ours", "print"];

/// Which integer family a known defect shows in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applies {
    All,
    /// flex128 dialects only (v4, v41 without psquash native).
    Flex,
    /// The modern components (v4 and later), whatever the integer family.
    Modern,
    /// The fixed-width components before v4 (v3, v21).
    Legacy,
    /// The v20 component (its own private pack driver).
    V20,
    /// The v12 component.
    V12,
    /// The v12 component, described buffers only.
    V12Described,
    /// The v41 component (the only one that registers DATA_BUFFER).
    V41,
}

/// The checks that read libpmix's unpack of some bytes: a libpmix unpack
/// defect shows in all of them.
const C_UNPACKS: &[&str] = &["unpack", "c-reads-ours", "print"];
/// The same where the defect does not show in the printed text.
const C_READS: &[&str] = &["unpack", "c-reads-ours"];

/// libpmix 4.2.2 defects: (case pattern, checks, where, reason). A pattern
/// is `TYPE/case`, with `*` matching any case name of that type.
pub const KNOWN_C_DEFECTS: &[(&str, &[&str], Applies, &str)] = &[
    (
        "DATA_TYPE/*",
        C_READS,
        Applies::Flex,
        "libpmix packs PMIX_DATA_TYPE as UINT16 but unpacks it as INT16 (zig-zag): 15 comes back as 65528 (bfrops.md §10.3); we decode the unsigned value that was sent",
    ),
    // the misread code also shows in the printed type name, except where
    // both codes are unknown (300 is read back as 150: both print UNKNOWN)
    ("DATA_TYPE/edges", &["print"], Applies::Flex, "DATA_TYPE unpack bug: libpmix prints the misread type code"),
    ("DATA_TYPE/uint64", &["print"], Applies::Flex, "DATA_TYPE unpack bug: libpmix prints the misread type code"),
    (
        "DATA_TYPE/stor_access_type",
        &["print"],
        Applies::Flex,
        "DATA_TYPE unpack bug: libpmix prints the misread type code",
    ),
    ("VALUE/data_type", C_READS, Applies::Flex, "DATA_TYPE unpack bug inside a value"),
    ("INFO/v_data_type", C_READS, Applies::Flex, "DATA_TYPE unpack bug inside an info"),
    ("DATA_ARRAY/of_data_type", C_READS, Applies::Flex, "DATA_TYPE unpack bug inside an array"),
    ("REGATTR/*", C_READS, Applies::Flex, "the REGATTR type field goes through the DATA_TYPE unpack bug"),
    ("VALUE/regattr", C_READS, Applies::Flex, "REGATTR type field: DATA_TYPE unpack bug"),
    ("INFO/v_regattr", C_READS, Applies::Flex, "REGATTR type field: DATA_TYPE unpack bug"),
    ("DATA_ARRAY/of_regattr", C_READS, Applies::Flex, "REGATTR type field: DATA_TYPE unpack bug"),
    (
        "PROC_STATS/*",
        C_UNPACKS,
        Applies::All,
        "libpmix's PROC_STATS unpacker reads a peak_vsize FLOAT its packer never wrote (bfrops.md §4.15): C cannot read its own bytes",
    ),
    ("VALUE/proc_stats", C_UNPACKS, Applies::All, "PROC_STATS unpack bug"),
    ("INFO/v_proc_stats", C_UNPACKS, Applies::All, "PROC_STATS unpack bug"),
    ("DATA_ARRAY/of_proc_stats", C_UNPACKS, Applies::All, "PROC_STATS unpack bug"),
    (
        "DATA_ARRAY/depth5",
        C_UNPACKS,
        Applies::All,
        "libpmix 4.2.2's DATA_ARRAY unpacker allocates element storage only for a fixed list of types; for others (here DATA_ARRAY) it fails with PMIX_ERR_NOMEM (also vector v5.0.11/v41/DATA_ARRAY_darray_of_darray)",
    ),
    (
        "DATA_ARRAY/darray_of_darray",
        C_UNPACKS,
        Applies::All,
        "DATA_ARRAY unpack: no storage for DATA_ARRAY elements (NOMEM), as DATA_ARRAY/depth5; v5.0.11 fails the same way",
    ),
    ("VALUE/aoa_in_value", C_UNPACKS, Applies::All, "DATA_ARRAY unpack: no storage for DATA_ARRAY elements (NOMEM)"),
    ("INFO/aoa_info", C_UNPACKS, Applies::All, "DATA_ARRAY unpack: no storage for DATA_ARRAY elements (NOMEM)"),
    ("DATA_ARRAY/of_info_aoa", C_UNPACKS, Applies::All, "DATA_ARRAY unpack: no storage for DATA_ARRAY elements (NOMEM)"),
    ("DATA_ARRAY/of_command", C_UNPACKS, Applies::All, "DATA_ARRAY unpack: no storage for COMMAND elements (NOMEM)"),
    ("DATA_ARRAY/of_regex", C_UNPACKS, Applies::All, "DATA_ARRAY unpack: no storage for REGEX elements (NOMEM)"),
    ("DATA_ARRAY/of_job_state", C_UNPACKS, Applies::All, "DATA_ARRAY unpack: no storage for JOB_STATE elements (NOMEM)"),
    ("DATA_ARRAY/of_devtype", C_UNPACKS, Applies::All, "DATA_ARRAY unpack: no storage for DEVTYPE elements (NOMEM)"),
    ("DATA_ARRAY/of_loctype", C_UNPACKS, Applies::All, "DATA_ARRAY unpack: no storage for LOCTYPE elements (NOMEM)"),
    (
        "DATA_ARRAY/of_compressed_byte_object",
        C_UNPACKS,
        Applies::All,
        "DATA_ARRAY unpack: no storage for COMPRESSED_BYTE_OBJECT elements (NOMEM)",
    ),
    ("DATA_ARRAY/of_stor_medium", C_UNPACKS, Applies::All, "DATA_ARRAY unpack: no storage for STOR_MEDIUM elements (NOMEM)"),
    ("DATA_ARRAY/of_stor_access", C_UNPACKS, Applies::All, "DATA_ARRAY unpack: no storage for STOR_ACCESS elements (NOMEM)"),
    ("DATA_ARRAY/of_stor_persist", C_UNPACKS, Applies::All, "DATA_ARRAY unpack: no storage for STOR_PERSIST elements (NOMEM)"),
    (
        "DATA_ARRAY/of_stor_access_type",
        C_UNPACKS,
        Applies::All,
        "DATA_ARRAY unpack: no storage for STOR_ACCESS_TYPE elements (NOMEM)",
    ),
    (
        "PID/array0",
        C_UNPACKS,
        Applies::Modern,
        "a unit of zero PIDs (count then system tag): libpmix's v4/v41 unpacker fails on it",
    ),
    ("INT/array0", C_UNPACKS, Applies::Modern, "zero-count unit: libpmix's v4/v41 unpacker fails on it"),
    ("INT32/count0", C_UNPACKS, Applies::Modern, "zero-count unit: libpmix's v4/v41 unpacker fails on it (-50)"),
    (
        "PROC_CPUSET/0-3_8",
        &["pack"],
        Applies::Modern,
        "libpmix's cpuset packer treats hwloc_bitmap_list_asprintf's character count as an error: any non-empty cpuset fails with PMIX_ERROR after the count is written (bfrops.md §4.13); we send the list string, which libpmix unpacks (codec/tests/libpmix_cpuset.rs)",
    ),
    ("VALUE/proc_cpuset", &["pack"], Applies::Modern, "non-empty cpuset: libpmix's packer fails (-1), bfrops.md §4.13"),
    ("INFO/v_proc_cpuset", &["pack"], Applies::Modern, "non-empty cpuset: libpmix's packer fails (-1), bfrops.md §4.13"),
    (
        "VALUE/data_buffer",
        &["pack", "c-reads-ours"],
        Applies::V41,
        "libpmix packs a DATA_BUFFER value by reading the 24-byte union as a 40-byte pmix_data_buffer_t (bfrops.md §4.6): its size comes from the 16 bytes after the value (zeroed padding in gen.c), so it sends an empty buffer; we send the buffer; libpmix unpacks ours correctly but re-packs it the same broken way",
    ),
    (
        "INFO/v_data_buffer",
        &["pack", "c-reads-ours"],
        Applies::V41,
        "DATA_BUFFER value packed from the wrong union layout (bfrops.md §4.6), as VALUE/data_buffer",
    ),
    (
        "KVAL/*",
        &["print"],
        Applies::All,
        "PMIx_Data_print of a KVAL returns PMIX_SUCCESS and leaves the text NULL in libpmix 4.2.2 (as for APP, bfrops.md §11.1); our print renders key and value",
    ),
    (
        "INT32/empty",
        C_UNPACKS,
        Applies::Modern,
        "libpmix's v4/v41 unpacker refuses a unit whose count is 0 (PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER)",
    ),
    (
        "DATA_TYPE/edges",
        &["print"],
        Applies::Legacy,
        "not a libpmix defect: PMIx_Data_type_string answers from the process's own dialect (UNKNOWN for 69 in v3/v21); our print renders as a v41 process does",
    ),
    (
        "COMMAND/edges",
        &["pack", "unpack", "repack", "c-reads-ours"],
        Applies::V20,
        "v20 packs PMIX_COMMAND as a UINT32 read from the 1-byte variable: the other 3 bytes are whatever follows it in memory (bfrops.md §8.2); we send the command in the low byte",
    ),
    (
        "COMMAND/edges",
        &["pack", "unpack", "repack", "c-reads-ours"],
        Applies::V12,
        "v12 packs PMIX_COMMAND as a UINT32 read from the 1-byte variables: garbage high bytes; we send the command in the low byte",
    ),
    (
        "SCOPE/edges",
        &["pack", "unpack", "repack", "c-reads-ours"],
        Applies::V12,
        "v12 widens SCOPE to a tagged UINT read 4 bytes at a time from 1-byte variables (bfrops.md §8.3): garbage; we send each value as its own int",
    ),
    ("DATA_RANGE/edges", &["pack", "unpack", "repack", "c-reads-ours"], Applies::V12, "as SCOPE: widened to UINT from 1-byte variables"),
    ("PERSIST/edges", &["pack", "unpack", "repack", "c-reads-ours"], Applies::V12, "as SCOPE: widened to INT from 1-byte variables"),
    (
        "DATA_TYPE/edges",
        &["pack", "unpack", "repack", "c-reads-ours"],
        Applies::V12,
        "v12 packs the 2-byte data type as a 4-byte int read from the 2-byte array: garbage; we send each code as its own int",
    ),
    ("INFO_DIRECTIVES/*", C_READS, Applies::V12, "v12 packs no payload for INFO_DIRECTIVES and cannot unpack the unit (-47)"),
    ("PROC_STATE/*", C_READS, Applies::V12, "v12 packs no payload for PROC_STATE and cannot unpack the unit (-47)"),
    ("POINTER/*", C_READS, Applies::V12, "v12 packs nothing for POINTER and cannot unpack the unit (-47)"),
    (
        "APP/basic",
        C_READS,
        Applies::V12,
        "not on the wire: libpmix's v12 APP unpack marks its last info PMIX_INFO_ARRAY_END (flags 2); v12 sends no flags",
    ),
    (
        "PROC/*",
        C_READS,
        Applies::V12Described,
        "v12 renumbers type tags on send but not PROC (22), and renumbers 22 to INFO_ARRAY on receipt: libpmix cannot unpack its own described PROC units (-22); we compare tags as sent",
    ),
    ("APP/array2", C_READS, Applies::V12, "as APP/basic: ARRAY_END set by libpmix's v12 unpack"),
    ("VALUE/persist", C_READS, Applies::V20, "libpmix's v20 value unpacker cannot read its own PERSIST value (-50)"),
    ("INFO/v_persist", C_READS, Applies::V20, "libpmix's v20 value unpacker cannot read its own PERSIST value (-50)"),
    (
        "DATA_ARRAY/of_alloc_directive",
        C_READS,
        Applies::V20,
        "libpmix's v20 DATA_ARRAY unpacker supports a fixed list of element types; others fail with PMIX_ERR_NOT_SUPPORTED (-47)",
    ),
    ("DATA_ARRAY/of_data_type", C_READS, Applies::V20, "v20 DATA_ARRAY unpack: element type not supported (-47)"),
    ("DATA_ARRAY/of_info_directives", C_READS, Applies::V20, "v20 DATA_ARRAY unpack: element type not supported (-47)"),
    ("DATA_ARRAY/of_pointer", C_READS, Applies::V20, "v20 DATA_ARRAY unpack: element type not supported (-47)"),
    ("DATA_ARRAY/pointer2", C_READS, Applies::V20, "v20 DATA_ARRAY unpack: element type not supported (-47)"),
    ("DATA_ARRAY/of_special_ranks", C_READS, Applies::V20, "v20 DATA_ARRAY unpack: element type not supported (-47)"),
    ("DATA_ARRAY/of_proc_rank", C_READS, Applies::V20, "v20 DATA_ARRAY unpack: element type not supported (-47)"),
    ("DATA_ARRAY/value2", C_READS, Applies::V20, "v20 DATA_ARRAY unpack: element type not supported (-47)"),
    ("DATA_ARRAY/several", C_READS, Applies::V20, "v20 DATA_ARRAY unpack: element type not supported (-47)"),
    (
        "DATA_TYPE/stor_access_type",
        &["print"],
        Applies::Legacy,
        "not a libpmix defect: PMIx_Data_type_string answers from the process's own dialect (UNKNOWN for 69 in v3/v21); our print renders as a v41 process does",
    ),
    (
        "REGEX/*",
        &["print"],
        Applies::All,
        "PMIx_Data_print of a REGEX prints the bytes of the char* pointer as text (garbage); we print the regex",
    ),
];

/// Where the C programs are built.
pub struct Tools {
    gen: PathBuf,
    unpack: PathBuf,
}

impl Tools {
    /// Build the C programs (once per process).
    pub fn build() -> Result<&'static Tools, String> {
        static TOOLS: std::sync::OnceLock<Result<Tools, String>> = std::sync::OnceLock::new();
        TOOLS
            .get_or_init(|| {
                let dir = default_out_dir();
                Ok(Tools {
                    gen: build_c("gen", &dir)?,
                    unpack: build_c("unpack", &dir)?,
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl Tools {
    /// The unpacker's executable (`interop/c/unpack.c`), for runs of
    /// its own (under valgrind: capi/tests/libpmix_capi_diff.rs).
    pub fn unpack_exe(&self) -> &Path {
        &self.unpack
    }

    /// The C programs built with libpmix 4.2.2's headers but linked to
    /// another libpmix file, `lib` (libpmix 5.0.11 ships without headers;
    /// spec-notes/interop.md says what holds).
    pub fn build_with_lib(lib: &Path) -> Result<Tools, String> {
        let dir = default_out_dir().join("with-lib");
        Ok(Tools {
            gen: crate::cbuild::build_with_lib("gen", lib, &dir)?,
            unpack: crate::cbuild::build_with_lib("unpack", lib, &dir)?,
        })
    }
}

/// The environment that makes libpmix use a wire format.
pub fn format_env(fmt: &Format) -> Vec<(&'static str, String)> {
    let mut env = vec![("PMIX_MCA_bfrops", fmt.dialect.module_name().to_string())];
    if fmt.buffer_type == BufferType::FullyDesc {
        env.push((
            "PMIX_BFROP_BUFFER_TYPE",
            "PMIX_BFROP_BUFFER_FULLY_DESC".into(),
        ));
    }
    if fmt.fixed_ints {
        env.push(("PMIX_MCA_psquash", "native".into()));
    }
    env
}

fn run(exe: &Path, fmt: &Format, input: &str) -> Result<String, String> {
    let mut cmd = Command::new(exe);
    cmd.envs(format_env(fmt))
        .env("TMPDIR", std::env::temp_dir());
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    let mut stdin = child.stdin.take().expect("piped");
    let input = input.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let _ = writer.join();
    if !out.status.success() {
        return Err(format!(
            "{} failed ({}): {}",
            exe.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    // printed C strings may be any bytes: compared as lossy text
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// One case packed by libpmix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GenCase {
    pub ty: String,
    pub case: String,
    pub num_vals: i32,
    pub pack_rc: i32,
    pub hex: String,
    pub json: String,
}

impl GenCase {
    pub fn name(&self) -> String {
        format!("{}/{}", self.ty, self.case)
    }
}

/// Parse `gen` output (also the format of the committed corpus manifests).
pub fn parse_gen(text: &str) -> Result<Vec<GenCase>, String> {
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            if f.len() != 6 {
                return Err(format!("bad gen line: {l}"));
            }
            Ok(GenCase {
                ty: f[0].into(),
                case: f[1].into(),
                num_vals: f[2].parse().map_err(|_| format!("bad count in {l}"))?,
                pack_rc: f[3].parse().map_err(|_| format!("bad rc in {l}"))?,
                hex: f[4].into(),
                json: f[5].into(),
            })
        })
        .collect()
}

impl Tools {
    pub fn gen(&self, fmt: &Format) -> Result<Vec<GenCase>, String> {
        parse_gen(&run(&self.gen, fmt, "")?)
    }

    /// libpmix's view of each `(type, bytes)`: (rc, values as JSON, re-pack hex).
    pub fn unpack(
        &self,
        fmt: &Format,
        inputs: &[(String, Vec<u8>)],
    ) -> Result<Vec<CUnpack>, String> {
        let input: String = inputs
            .iter()
            .map(|(t, b)| format!("{t}\t{}\n", pmix_types::hex::encode(b)))
            .collect();
        let out = run(&self.unpack, fmt, &input)?;
        let rows: Vec<CUnpack> = out
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.splitn(4, '\t').collect();
                CUnpack {
                    rc: f.first().and_then(|s| s.parse().ok()).unwrap_or(i32::MIN),
                    json: f.get(1).unwrap_or(&"").to_string(),
                    repack_hex: f.get(2).unwrap_or(&"").to_string(),
                    prints: f.get(3).unwrap_or(&"").to_string(),
                }
            })
            .collect();
        if rows.len() != inputs.len() {
            return Err(format!(
                "unpack gave {} answers for {} inputs",
                rows.len(),
                inputs.len()
            ));
        }
        Ok(rows)
    }
}

#[derive(Clone, Debug)]
pub struct CUnpack {
    pub rc: i32,
    pub json: String,
    pub repack_hex: String,
    /// JSON array: PMIx_Data_print of each value (null: no text; {"rc": n}: failed).
    pub prints: String,
}

/// The outcome of one check.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "result", content = "detail", rename_all = "kebab-case")]
pub enum Cell {
    Pass,
    Fail(String),
    /// A listed libpmix defect, with its reason.
    CDefect(String),
    /// Listed as a libpmix defect but it passed: the list needs a look.
    Fixed(String),
    /// Not applicable (libpmix could not pack the case).
    NotApplicable(String),
}

#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    pub name: String,
    pub ty: String,
    pub format: String,
    pub cells: Vec<(String, Cell)>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Matrix {
    pub cases: Vec<CaseResult>,
}

/// The listed libpmix defect for a case and check in a format, if any.
pub fn known(name: &str, check: &str, fmt: &Format) -> Option<&'static str> {
    KNOWN_C_DEFECTS
        .iter()
        .find_map(|(pat, checks, applies, reason)| {
            let m = match pat.strip_suffix("/*") {
                Some(ty) => name.split('/').next() == Some(ty),
                None => *pat == name,
            };
            let here = match applies {
                Applies::All => true,
                Applies::Flex => fmt.ints() == pmix_codec::Ints::Flex,
                Applies::Modern => fmt.dialect >= Dialect::V4,
                Applies::Legacy => fmt.dialect < Dialect::V4,
                Applies::V20 => fmt.dialect == Dialect::V20,
                Applies::V12 => fmt.dialect == Dialect::V12,
                Applies::V41 => fmt.dialect == Dialect::V41,
                Applies::V12Described => {
                    fmt.dialect == Dialect::V12 && fmt.buffer_type == BufferType::FullyDesc
                }
            };
            (m && here && checks.contains(&check)).then_some(*reason)
        })
}

fn classify(name: &str, check: &str, fmt: &Format, ok: Result<(), String>) -> Cell {
    match (ok, known(name, check, fmt)) {
        (Ok(()), None) => Cell::Pass,
        (Ok(()), Some(r)) => Cell::Fixed(r.into()),
        (Err(_), Some(r)) => Cell::CDefect(r.into()),
        (Err(e), None) => Cell::Fail(e),
    }
}

/// A short label for a format ("v41", "v41-fullydesc", "v41-native").
pub fn format_label(fmt: &Format) -> String {
    let mut s = fmt.dialect.name().to_string();
    if fmt.fixed_ints {
        s.push_str("-native");
    }
    if fmt.buffer_type == BufferType::FullyDesc {
        s.push_str("-fullydesc");
    }
    s
}

fn values_from_json(ty: DataType, json: &str) -> Result<Vec<Value>, String> {
    let j: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("JSON {json}: {e}"))?;
    j.as_array()
        .ok_or("not an array")?
        .iter()
        .map(|v| Value::from_bare_json(ty, v.clone()).map_err(|e| format!("{e} in {v}")))
        .collect()
}

fn same(what: &str, ours: &[u8], theirs: &str) -> Result<(), String> {
    let ours = pmix_types::hex::encode(ours);
    if ours == theirs {
        Ok(())
    } else {
        Err(format!("{what}: ours {ours} libpmix {theirs}"))
    }
}

fn same_values(ty: DataType, ours: &[Value], theirs_json: &str) -> Result<(), String> {
    if ty == DataType::Buffer {
        return Ok(()); // opaque in C: checked through the re-pack only
    }
    let theirs = values_from_json(ty, theirs_json)?;
    if theirs == ours {
        Ok(())
    } else {
        Err(format!(
            "values: ours {} libpmix {theirs_json}",
            serde_json::to_string(&ours.iter().map(Value::to_bare_json).collect::<Vec<_>>())
                .unwrap_or_default()
        ))
    }
}

/// Replace every `0x…` address by `0x?`.
pub fn mask_addresses(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'0' && b.get(i + 1) == Some(&b'x') {
            out.push_str("0x?");
            i += 2;
            while i < b.len() && b[i].is_ascii_hexdigit() {
                i += 1;
            }
        } else {
            let c = s[i..].chars().next().expect("in bounds");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn same_prints(ours: &[Value], theirs_json: &str) -> Result<(), String> {
    let theirs: Vec<serde_json::Value> =
        serde_json::from_str(theirs_json).map_err(|e| format!("print JSON {theirs_json}: {e}"))?;
    if theirs.len() != ours.len() {
        return Err(format!(
            "libpmix printed {} values, we have {}",
            theirs.len(),
            ours.len()
        ));
    }
    for (v, t) in ours.iter().zip(&theirs) {
        let mine = match pmix_types::print::print(v, None) {
            Ok(Some(s)) => serde_json::Value::String(mask_addresses(&s)),
            Ok(None) => serde_json::Value::Null,
            Err(e) => serde_json::json!({ "rc": e.status }),
        };
        let t = match t {
            serde_json::Value::String(s) => serde_json::Value::String(mask_addresses(s)),
            other => other.clone(),
        };
        if mine != t {
            return Err(format!("print: ours {mine} libpmix {t}"));
        }
    }
    Ok(())
}

/// Run every case of `gen` in one format through the four checks.
pub fn run_format(tools: &Tools, fmt: &Format) -> Result<Vec<CaseResult>, String> {
    let cases = tools.gen(fmt)?;
    let packed: Vec<&GenCase> = cases.iter().filter(|c| c.pack_rc == 0).collect();
    // libpmix's view of its own bytes
    let c_bytes: Vec<(String, Vec<u8>)> = packed
        .iter()
        .map(|c| {
            (
                c.ty.clone(),
                pmix_types::hex::decode(&c.hex).unwrap_or_default(),
            )
        })
        .collect();
    let c_own = tools.unpack(fmt, &c_bytes)?;
    // our encoding of each case's values, and libpmix's view of it
    let mut ours_enc = Vec::new();
    for c in &packed {
        let ty = DataType::parse(&c.ty);
        let enc = ty
            .ok_or_else(|| format!("unknown type {}", c.ty))
            .and_then(|ty| Ok((ty, values_from_json(ty, &c.json)?)))
            .and_then(|(ty, v)| pmix_codec::encode(fmt, ty, &v).map_err(|e| e.to_string()));
        ours_enc.push(enc);
    }
    let to_c: Vec<(String, Vec<u8>)> = packed
        .iter()
        .zip(&ours_enc)
        .map(|(c, e)| (c.ty.clone(), e.clone().unwrap_or_default()))
        .collect();
    let c_reads = tools.unpack(fmt, &to_c)?;

    let mut results = Vec::new();
    for c in &cases {
        let name = c.name();
        let mut cells = Vec::new();
        if c.pack_rc != 0 {
            // libpmix refused to pack: we must refuse too, with the same status
            let ours = DataType::parse(&c.ty)
                .ok_or_else(|| format!("unknown type {}", c.ty))
                .and_then(|ty| Ok((ty, values_from_json(ty, &c.json)?)))
                .map(|(ty, v)| pmix_codec::encode(fmt, ty, &v));
            let r = match ours {
                Ok(Err(e)) if e.status() == c.pack_rc => Ok(()),
                Ok(Err(e)) => Err(format!("libpmix fails with {}, we with {e}", c.pack_rc)),
                Ok(Ok(_)) => Err(format!("libpmix fails with {}, we pack it", c.pack_rc)),
                Err(e) => Err(e),
            };
            cells.push(("pack".to_string(), classify(&name, "pack", fmt, r)));
            for check in &CHECKS[1..] {
                cells.push((
                    check.to_string(),
                    Cell::NotApplicable(format!("libpmix pack failed with {}", c.pack_rc)),
                ));
            }
            results.push(CaseResult {
                name,
                ty: c.ty.clone(),
                format: format_label(fmt),
                cells,
            });
            continue;
        }
        let i = packed
            .iter()
            .position(|p| std::ptr::eq(*p, c))
            .expect("packed case");
        let ty = DataType::parse(&c.ty).expect("gen prints known types");
        let bytes = &c_bytes[i].1;
        let pack = ours_enc[i].clone().and_then(|b| same("bytes", &b, &c.hex));
        let decoded = pmix_codec::decode(fmt, ty, bytes).map_err(|e| format!("decode: {e}"));
        let unpack = decoded.clone().and_then(|v| {
            if c_own[i].rc != 0 {
                return Err(format!(
                    "libpmix cannot unpack its own bytes: {}",
                    c_own[i].rc
                ));
            }
            same_values(ty, &v, &c_own[i].json)
        });
        let repack = decoded.clone().and_then(|v| {
            pmix_codec::encode(fmt, ty, &v)
                .map_err(|e| format!("encode: {e}"))
                .and_then(|b| same("bytes", &b, &c.hex))
        });
        let c_read = match (&ours_enc[i], &decoded) {
            (Ok(b), Ok(v)) => {
                let r = &c_reads[i];
                if r.rc != 0 {
                    Err(format!("libpmix unpack of our bytes failed: {}", r.rc))
                } else {
                    same_values(ty, v, &r.json).and_then(|_| same("re-pack", b, &r.repack_hex))
                }
            }
            (Err(e), _) | (_, Err(e)) => Err(e.clone()),
        };
        let print_na = fmt.dialect.is_legacy();
        let print = decoded.clone().and_then(|v| {
            if c_own[i].rc != 0 {
                return Err(format!(
                    "libpmix cannot unpack its own bytes: {}",
                    c_own[i].rc
                ));
            }
            same_prints(&v, &c_own[i].prints)
        });
        for (check, r) in CHECKS.iter().zip([pack, unpack, repack, c_read, print]) {
            if *check == "print" && print_na {
                // a v20/v12 process prints with that component's own printers;
                // our print renders as a v41 process does
                cells.push((
                    check.to_string(),
                    Cell::NotApplicable("v20/v12 print layout".into()),
                ));
                continue;
            }
            cells.push((check.to_string(), classify(&name, check, fmt, r)));
        }
        results.push(CaseResult {
            name,
            ty: c.ty.clone(),
            format: format_label(fmt),
            cells,
        });
    }
    Ok(results)
}

/// The formats of the matrix: v41 (libpmix 4.2.2's default) in both
/// buffer types unless others are asked for.
pub fn default_formats() -> Vec<Format> {
    vec![
        Format::new(Dialect::V41, BufferType::NonDesc),
        Format::new(Dialect::V41, BufferType::FullyDesc),
    ]
}

pub fn run_matrix(formats: &[Format]) -> Result<Matrix, String> {
    run_matrix_with(Tools::build()?, formats)
}

/// The matrix with given tools (e.g. [`Tools::build_with_lib`]).
pub fn run_matrix_with(tools: &Tools, formats: &[Format]) -> Result<Matrix, String> {
    let mut m = Matrix::default();
    for f in formats {
        m.cases.extend(run_format(tools, f)?);
    }
    Ok(m)
}

impl Matrix {
    /// Cells that are neither a pass, a listed defect nor not-applicable.
    pub fn problems(&self) -> Vec<String> {
        let mut v = Vec::new();
        for c in &self.cases {
            for (check, cell) in &c.cells {
                match cell {
                    Cell::Fail(e) => v.push(format!("{} [{}] {check}: FAIL {e}", c.name, c.format)),
                    Cell::Fixed(r) => v.push(format!(
                        "{} [{}] {check}: listed C defect passed ({r})",
                        c.name, c.format
                    )),
                    _ => {}
                }
            }
        }
        v
    }

    /// The readable table: one row per type and format, a column per
    /// check, counting pass / C-defect / fail.
    pub fn table(&self) -> String {
        use std::collections::BTreeMap;
        let mut rows: BTreeMap<(String, String), [[usize; 4]; 5]> = BTreeMap::new();
        let order: Vec<String> = DataType::ALL
            .iter()
            .map(|t| t.short_name().to_string())
            .collect();
        for c in &self.cases {
            let r = rows.entry((c.format.clone(), c.ty.clone())).or_default();
            for (k, (_, cell)) in c.cells.iter().enumerate() {
                let slot = match cell {
                    Cell::Pass => 0,
                    Cell::CDefect(_) => 1,
                    Cell::NotApplicable(_) => 2,
                    Cell::Fail(_) | Cell::Fixed(_) => 3,
                };
                r[k][slot] += 1;
            }
        }
        let mut keys: Vec<_> = rows.keys().cloned().collect::<Vec<_>>();
        keys.sort_by_key(|(f, t)| (f.clone(), order.iter().position(|o| o == t).unwrap_or(999)));
        let mut s = format!("{:<16} {:<24}", "format", "type");
        for c in CHECKS {
            s.push_str(&format!(" {c:>14}"));
        }
        s.push('\n');
        for k in keys {
            let r = rows[&k];
            s.push_str(&format!("{:<16} {:<24}", k.0, k.1));
            for cell in r {
                let txt = if cell[3] > 0 {
                    format!("FAIL {}", cell[3])
                } else if cell[1] > 0 {
                    format!("{} ok {} C-def", cell[0], cell[1])
                } else if cell[0] == 0 {
                    "n/a".to_string()
                } else {
                    format!("{} ok", cell[0])
                };
                s.push_str(&format!(" {txt:>14}"));
            }
            s.push('\n');
        }
        let (mut pass, mut cdef, mut na, mut fail) = (0, 0, 0, 0);
        for c in &self.cases {
            for (_, cell) in &c.cells {
                match cell {
                    Cell::Pass => pass += 1,
                    Cell::CDefect(_) => cdef += 1,
                    Cell::NotApplicable(_) => na += 1,
                    _ => fail += 1,
                }
            }
        }
        s.push_str(&format!(
            "\n{} cases, {pass} checks passed, {cdef} listed libpmix defects, {na} not applicable, {fail} failed\n",
            self.cases.len()
        ));
        // the defects met, grouped by reason
        let mut by_reason: Vec<(String, Vec<String>)> = Vec::new();
        for c in &self.cases {
            for (_, cell) in &c.cells {
                if let Cell::CDefect(r) = cell {
                    let entry = match by_reason.iter_mut().find(|(x, _)| x == r) {
                        Some(e) => e,
                        None => {
                            by_reason.push((r.clone(), Vec::new()));
                            by_reason.last_mut().expect("just pushed")
                        }
                    };
                    if !entry.1.contains(&c.name) {
                        entry.1.push(c.name.clone());
                    }
                }
            }
        }
        if !by_reason.is_empty() {
            s.push_str("\nlibpmix 4.2.2 defects met (listed in KNOWN_C_DEFECTS):\n");
            for (reason, cases) in by_reason {
                s.push_str(&format!("  - {reason}\n    {}\n", cases.join(", ")));
            }
        }
        s
    }
}

/// Write libpmix's own vectors (the `gen` output) for each format to
/// `dir/<label>.tsv`, for replay without libpmix.
pub fn save_vectors(dir: &Path, formats: &[Format]) -> Result<Vec<PathBuf>, String> {
    let tools = Tools::build()?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut written = Vec::new();
    for f in formats {
        let text = run(&tools.gen, f, "")?;
        let env: Vec<String> = format_env(f)
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let path = dir.join(format!("{}.tsv", format_label(f)));
        let body = format!(
            "# libpmix {} (Debian 4.2.2), {}\n# type\tcase\tnum_vals\tpack_rc\thex\tjson\n{text}",
            libpmix_version(),
            env.join(" ")
        );
        std::fs::write(&path, body).map_err(|e| format!("{}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// The version pkg-config reports for pmix.
pub fn libpmix_version() -> String {
    Command::new("pkg-config")
        .args(["--modversion", "pmix"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// The environment of each client of `cap_server`, by (nspace, rank).
pub type CapEnvs = std::collections::HashMap<(String, u32), Vec<(String, String)>>;

/// Start `cap_server` (interop/c/cap_server.c, libpmix 4.2.2's server,
/// built with [`build_c`]) with `n` ranks of "capns" and its session
/// directory under `tmp`: the server (stopped when dropped) and the
/// environment it gives each client. Waits for its "ready" line (a hang
/// guard of [`crate::process::HANG`]).
pub fn start_cap_server(exe: &Path, n: u32, tmp: &Path) -> (crate::process::Kill, CapEnvs) {
    let mut server = crate::process::Kill(
        Command::new(exe)
            .args([n.to_string().as_str(), tmp.to_str().unwrap()])
            .env("PMIX_MCA_gds", "hash")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let rx = crate::process::lines_of(server.0.stdout.take().unwrap());
    let mut envs = CapEnvs::new();
    loop {
        let line = rx
            .recv_timeout(crate::process::HANG)
            .expect("cap_server did not become ready");
        if line == "ready" {
            break;
        }
        let mut f = line.splitn(4, ' ');
        assert_eq!(f.next(), Some("env"), "{line}");
        let ns = f.next().unwrap().to_string();
        let rank: u32 = f.next().unwrap().parse().unwrap();
        let (k, v) = f.next().unwrap().split_once('=').unwrap();
        envs.entry((ns, rank))
            .or_default()
            .push((k.to_string(), v.to_string()));
    }
    (server, envs)
}

/// Assert that `out` holds, for every rank of an `n`-rank job of
/// interop/c/mpi_ring.c, the line it prints when its ring, its sum
/// reduction and its broadcast all held; `context` (more output, logs)
/// is shown with a failure.
pub fn assert_mpi_ring(out: &str, n: u32, context: &str) {
    let sum = n * n.saturating_sub(1) / 2;
    for r in 0..n {
        let prev = (r + n - 1) % n;
        let want = format!("mpi rank {r} of {n}: ring from {prev}, sum {sum}, bcast broadcast: ok");
        assert!(
            out.lines().any(|l| l == want),
            "no {want:?} in\n{out}\n{context}"
        );
    }
}
