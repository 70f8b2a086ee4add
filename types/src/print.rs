//! `PMIx_Data_print`: the text libpmix 4.2.2 produces for a value,
//! including its quirks (DATA_RANGE and DEVTYPE printed as addresses at
//! the top level, "UNPRINTABLE" members inside values and arrays, hex
//! counters in the disk and network statistics). Checked against the
//! running library by the interop matrix's `print` check.
//!
//! Where libpmix prints a memory address, we print the address of our own
//! value: the layout matches, the number cannot.

use crate::attrs::attribute_name;
use crate::cfmt::{ctime_utc, percent_5_2f, percent_f};
use crate::names::*;
use crate::rank::*;
use crate::status::error_string;
use crate::value::*;
use crate::{DataType, PString};

/// A print that libpmix refuses, with its status code.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("PMIx_Data_print fails for {ty}: status {status}")]
pub struct PrintError {
    /// The type whose print failed.
    pub ty: DataType,
    /// The `pmix_status_t` libpmix returns (`PMIX_ERR_BAD_PARAM` …).
    pub status: i32,
}

fn s_or(s: &Option<PString>, null: &str) -> String {
    s.as_ref()
        .map_or_else(|| null.to_string(), |s| s.to_string())
}

fn rank_text(r: u32) -> String {
    match r {
        RANK_WILDCARD => "PMIX_RANK_WILDCARD".into(),
        RANK_UNDEF => "PMIX_RANK_UNDEF".into(),
        RANK_LOCAL_NODE => "PMIX_RANK_LOCAL_NODE".into(),
        r => r.to_string(),
    }
}

fn scalar(p: &str, ty: DataType, v: impl std::fmt::Display) -> String {
    format!("{p}Data type: {}\tValue: {v}", ty.name())
}

fn address<T>(p: &str, label: &str, v: &T) -> String {
    format!("{p}Data type: {label}\tAddress: {:p}", v as *const T)
}

fn proc_text(p: &str, pr: &Proc) -> String {
    format!("{p}PROC: {}:{}", pr.nspace, rank_text(pr.rank))
}

fn coord_text(p: &str, c: &Coord) -> String {
    let view = match c.view {
        1 => "LOGICAL",
        2 => "PHYSICAL",
        _ => "UNDEF",
    };
    format!(
        "{p}Data type: PMIX_COORD\tView: {view}\tDims: {}",
        c.coord.len()
    )
}

fn info_text(p: &str, i: &Info) -> Result<String, i32> {
    Ok(format!(
        "{p}KEY: {}\n{p}\t{}\n{p}\t{}",
        attribute_name(&i.key.to_string()),
        scalar(p, DataType::InfoDirectives, info_directives_string(i.flags)),
        value_text(p, &i.value)?
    ))
}

/// A `pmix_value_t`: "PMIX_VALUE: " and the member, or UNPRINTABLE. A data
/// array libpmix cannot print makes the whole value fail with
/// PMIX_ERR_OUT_OF_RESOURCE.
fn value_text(p: &str, v: &Value) -> Result<String, i32> {
    let m = member(" ", v, false).map_err(|rc| if rc == -27 { -29 } else { rc })?;
    Ok(format!("{p}PMIX_VALUE: {m}"))
}

fn unprintable(p: &str, ty: DataType) -> String {
    format!(
        "{p}Data type: {}({})\tValue: UNPRINTABLE",
        data_type_string(ty.code()),
        ty.code()
    )
}

/// How libpmix's value printer (`pmix_bfrops_base_print_value` and the
/// data-array loop) treats a type as a member of a value or an array: the
/// print column of the type table. libpmix prints these with its own
/// switch, which knows fewer types than `PMIx_Data_print` and prints some
/// better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Member {
    /// As `PMIx_Data_print` prints it, inside and outside arrays.
    Top,
    /// As `PMIx_Data_print` outside an array; UNPRINTABLE inside one.
    TopOutsideArray,
    /// As `PMIx_Data_print` inside an array; UNPRINTABLE in a value.
    TopInsideArray,
    /// Always "Value: UNPRINTABLE".
    Unprintable,
    /// "Data type: PMIX_UNDEF" in a value; UNPRINTABLE in an array.
    Undef,
    /// A NULL string is "NULL pointer"; others as `PMIx_Data_print`.
    String,
    /// The range's name (where `PMIx_Data_print` prints an address).
    DataRange,
    /// The value's address as "PMIX_DEVICE_TYPE" in a value; UNPRINTABLE
    /// in an array.
    DevType,
}

macro_rules! member_classes {
    ($( $code:literal $variant:ident $name:literal ( $($inner:ty)? ) $form:ty, $print:ident ; )*) => {
        impl Member {
            /// The print class of a type (generated from the type table).
            pub fn of(ty: DataType) -> Member {
                match ty {
                    $( DataType::$variant => Member::$print, )*
                }
            }
        }
    };
}
crate::type_table!(member_classes);

/// A value inside a pmix_value_t or a data array.
fn member(p: &str, v: &Value, in_array: bool) -> Result<String, i32> {
    let ty = v.data_type();
    let via_top = || {
        top(p, v)
            .map(Option::unwrap_or_default)
            .map_err(|e| e.status)
    };
    // the class fixes the type: the `if let`s below always match
    Ok(match (Member::of(ty), in_array) {
        (Member::Top, _) | (Member::TopOutsideArray, false) | (Member::TopInsideArray, true) => {
            via_top()?
        }
        (Member::String, _) => {
            if let Value::String(None) = v {
                scalar(p, ty, "NULL pointer")
            } else {
                via_top()?
            }
        }
        (Member::Undef, false) => format!("{p}Data type: PMIX_UNDEF"),
        (Member::DataRange, _) => {
            if let Value::DataRange(x) = v {
                scalar(p, ty, data_range_string(*x))
            } else {
                unprintable(p, ty)
            }
        }
        (Member::DevType, false) => {
            if let Value::DevType(x) = v {
                format!(
                    "{p}Data type: PMIX_DEVICE_TYPE\tValue: {:p}",
                    x as *const u64
                )
            } else {
                unprintable(p, ty)
            }
        }
        (Member::TopOutsideArray, true)
        | (Member::TopInsideArray, false)
        | (Member::Unprintable, _)
        | (Member::Undef, true)
        | (Member::DevType, true) => unprintable(p, ty),
    })
}

/// `PMIx_Data_print(&out, prefix, &value, type)`: `Ok(None)` where libpmix
/// succeeds without producing text (APP, BUFFER).
pub fn print(v: &Value, prefix: Option<&str>) -> Result<Option<String>, PrintError> {
    top(prefix.unwrap_or(" "), v)
}

fn top(p: &str, v: &Value) -> Result<Option<String>, PrintError> {
    let ty = v.data_type();
    let err = |status| Err(PrintError { ty, status });
    let fail = |status| PrintError { ty, status };
    Ok(Some(match v {
        Value::Undef => return err(-16),
        Value::Bool(b) => scalar(p, ty, if *b { "TRUE" } else { "FALSE" }),
        Value::Byte(x) => scalar(p, ty, format!("{x:x}")),
        // the C API takes the string itself: a NULL one is a bad parameter
        Value::String(None) => return err(-27),
        Value::String(Some(s)) => scalar(p, ty, s),
        Value::Size(x) | Value::Uint64(x) => scalar(p, ty, x),
        Value::Pid(x) => scalar(p, ty, *x as i32 as i64 as u64),
        Value::Int(x) | Value::Int32(x) => scalar(p, ty, x),
        Value::Int8(x) => scalar(p, ty, x),
        Value::Int16(x) => scalar(p, ty, x),
        Value::Int64(x) => scalar(p, ty, x),
        Value::Uint(x) | Value::Uint32(x) => scalar(p, ty, x),
        Value::Uint8(x) => scalar(p, ty, x),
        Value::Uint16(x) => scalar(p, ty, x),
        Value::Float(x) => scalar(p, ty, percent_f(x.0 as f64)),
        Value::Double(x) => scalar(p, ty, percent_f(x.0)),
        Value::Timeval(t) => scalar(p, ty, format!("{}.{:06}", t.sec, t.usec)),
        Value::Time(t) => scalar(p, ty, ctime_utc(*t as i64)),
        Value::Status(s) => scalar(p, ty, error_string(*s)),
        Value::Value(inner) => value_text(p, inner).map_err(fail)?,
        Value::Proc(pr) => proc_text(p, pr),
        Value::App(_) | Value::Buffer(_) => return Ok(None),
        Value::Info(i) => info_text(p, i).map_err(fail)?,
        Value::Pdata(d) => format!(
            "{p}  {}  KEY: {}  {}",
            proc_text(" ", &d.proc),
            attribute_name(&d.key.to_string()),
            value_text("", &d.value).map_err(fail)?
        ),
        Value::ByteObject(b) | Value::CompressedString(b) => {
            format!("{p}Data type: PMIX_BYTE_OBJECT\tSize: {}", b.len())
        }
        Value::CompressedByteObject(b) => format!("{p}Data type: PMIX_COMPRESSED_BYTE_OBJECT\tSize: {}", b.len()),
        Value::Kval(k) => format!("{p}KEY: {}\n{}", s_or(&k.key, "NULL"), value_text(p, &k.value).map_err(fail)?),
        Value::Modex(b) => format!("{p}Data type: PMIX_MODEX\tSize: {}", b.len()),
        Value::Persist(x) => scalar(p, ty, x),
        Value::Pointer => address(p, "PMIX_POINTER", v),
        Value::Scope(x) => scalar(p, ty, scope_string(*x)),
        Value::DataRange(x) => address(p, "PMIX_POINTER", x),
        Value::Command(x) => scalar(p, ty, command_string(*x)),
        Value::InfoDirectives(x) => scalar(p, ty, info_directives_string(*x)),
        Value::DataTypeCode(x) => scalar(p, ty, data_type_string(*x)),
        Value::ProcState(x) => scalar(p, ty, proc_state_string(*x)),
        Value::ProcInfo(i) => format!(
            "{p}Data type: PMIX_PROC_INFO\tValue:\n{p}\tPROC: {}:{}\n{p}\tHostname: {}\tExecutable: {}\n{p}\tPid: {}\tExit code: {}\tState: {}",
            i.proc.nspace,
            i.proc.rank,
            s_or(&i.hostname, "(null)"),
            s_or(&i.executable_name, "(null)"),
            i.pid as i32,
            i.exit_code,
            proc_state_string(i.state)
        ),
        Value::DataArray(a) => {
            let mut s = format!(
                "{p}Data type: PMIX_DATA_ARRAY\tType: {}\tSize: {}",
                data_type_string(a.elem_type().code()),
                a.size()
            );
            match &**a {
                DataArray::Typed { elements, .. } if elements.is_empty() => return err(-27),
                DataArray::Typed { elements, .. } => {
                    for e in elements {
                        s.push('\n');
                        s.push_str(p);
                        s.push_str(&member(p, e, true).map_err(fail)?);
                    }
                }
                DataArray::Undef { size: 0 } => return err(-27),
                DataArray::Undef { size } => {
                    for _ in 0..*size {
                        s.push('\n');
                        s.push_str(p);
                        s.push_str(&format!("{p}Data type: UNKNOWN(0)\tValue: UNPRINTABLE"));
                    }
                }
            }
            s
        }
        Value::ProcRank(r) => scalar(p, ty, rank_text(*r)),
        Value::Query(q) => {
            let mut s = format!("{p}Data type: PMIX_QUERY\tValue:");
            for k in &q.keys {
                s.push_str(&format!("\n{p}\tKey: {k}"));
            }
            let inner = format!("{p}\t");
            for i in &q.qualifiers {
                s.push('\n');
                s.push_str(&info_text(&inner, i).map_err(fail)?);
            }
            s
        }
        Value::AllocDirective(x) => scalar(p, ty, alloc_directive_string(*x)),
        Value::InfoArray(list) => {
            let mut s = format!("{p}Data type: PMIX_INFO_ARRAY\tSize: {}", list.len());
            for i in list {
                s.push('\n');
                s.push_str(&info_text(p, i).map_err(fail)?);
            }
            s
        }
        Value::IofChannel(x) => scalar(p, ty, iof_channel_string(*x)),
        Value::Envar(e) => {
            // libpmix shows a NUL separator as a space
            let sep = if e.separator == 0 { ' ' } else { e.separator as char };
            format!(
                "{p}Data type: PMIX_ENVAR\tName: {}\tValue: {}\tSeparator: {sep}",
                s_or(&e.envar, "NULL"),
                s_or(&e.value, "NULL")
            )
        }
        Value::Coord(c) => coord_text(p, c),
        Value::RegAttr(r) => format!(
            "{p}Data type: PMIX_REGATTR\tName: {}\tString: {}",
            s_or(&r.name, "NULL"),
            r.string
        ),
        // libpmix prints the bytes of the pointer here (garbage); we print the text
        Value::Regex(r) => format!(
            "{p}Data type: PMIX_REGEX\tName: {}",
            match &**r {
                Regex::Text(s) => s.to_string(),
                Regex::Packed(s) => s_or(s, "NULL"),
                Regex::Blob(b) => String::from_utf8_lossy(b).into_owned(),
            }
        ),
        Value::JobState(x) => scalar(p, ty, job_state_string(*x)),
        Value::LinkState(x) => scalar(p, ty, link_state_string(*x)),
        // libpmix 4.2.2 answers NOT_SUPPORTED for every cpuset, even one it
        // has just unpacked with source "hwloc" (codec/tests/libpmix_cpuset.rs)
        Value::ProcCpuset(_) => return err(-47),
        Value::Geometry(g) => {
            let mut s = format!(
                "{p}Data type: PMIX_GEOMETRY\tValue: Fabric: {} UUID: {} OSName: {}",
                g.fabric,
                s_or(&g.uuid, "NULL"),
                s_or(&g.osname, "NULL")
            );
            for c in &g.coordinates {
                s.push('\n');
                s.push_str(&coord_text(p, c));
            }
            s
        }
        Value::DeviceDist(d) => format!(
            "{p}Data type: PMIX_DEVICE_DIST\tValue: UUID: {} OSName: {} Type: {} Min: {} Max: {}",
            s_or(&d.uuid, "NULL"),
            s_or(&d.osname, "NULL"),
            device_type_string(d.devtype),
            d.mindist,
            d.maxdist
        ),
        Value::Endpoint(e) => format!(
            "{p}Data type: PMIX_ENDPOINT\tValue: {}({}) #bytes: {}",
            s_or(&e.uuid, "NULL"),
            s_or(&e.osname, "NULL"),
            e.endpt.len()
        ),
        Value::Topo(_) => return err(-47),
        Value::DevType(x) => format!("{p}Data type: PMIX_DEVICE_TYPE\tValue: {:p}", x as *const u64),
        Value::LocType(x) => format!("{p}Data type: PMIX_LOCALITY\tValue: {}", locality_string(*x)),
        Value::ProcNspace(n) => scalar(p, ty, n),
        Value::ProcStats(s) => format!(
            "{p}PMIX_PROC_STATS Node: {}\tProc: {}:{}\tPID: {}\tCmd: {}\tState: {}\n{p}Priority: {}\tNumThreads: {}\tPSS: {}\tVSize: {}\tRSS: {}\tProcessor: {}",
            s_or(&s.node, "NULL"),
            s.proc.nspace,
            rank_text(s.proc.rank),
            s.pid,
            s_or(&s.cmd, "NULL"),
            s.state as char,
            s.priority,
            s.num_threads,
            percent_f(s.pss as f64),
            percent_f(s.vsize as f64),
            percent_f(s.rss as f64),
            s.processor
        ),
        Value::DiskStats(d) => disk_text(p, d),
        Value::NetStats(n) => format!(
            "{p}PMIX_NET_STATS Interface: {}\n{p}NumBytesRecvd: {:x} NumPacketsRecv: {:x} NumRecvErrors: {:x}\n{p}NumBytesSent: {:x} NumPacketsSent: {:x} NumSendErrors: {:x}\n",
            s_or(&n.net_interface, "NULL"),
            n.num_bytes_recvd,
            n.num_packets_recvd,
            n.num_recv_errs,
            n.num_bytes_sent,
            n.num_packets_sent,
            n.num_send_errs
        ),
        Value::NodeStats(n) => format!(
            "{p}PMIX_NODE_STATS SAMPLED AT: {}.{:06}\tNode: {}\n{p}Total Mem: {} Free Mem: {} Buffers: {} Cached: {}\n{p}SwapCached: {} SwapTotal: {} SwapFree: {} Mapped: {}\n{p}\tla: {}\tla5: {}\tla15: {}\n",
            n.sample_time.sec,
            n.sample_time.usec,
            s_or(&n.node, "NULL"),
            percent_5_2f(n.total_mem as f64),
            percent_5_2f(n.free_mem as f64),
            percent_5_2f(n.buffers as f64),
            percent_5_2f(n.cached as f64),
            percent_5_2f(n.swap_cached as f64),
            percent_5_2f(n.swap_total as f64),
            percent_5_2f(n.swap_free as f64),
            percent_5_2f(n.mapped as f64),
            percent_5_2f(n.la as f64),
            percent_5_2f(n.la5 as f64),
            percent_5_2f(n.la15 as f64)
        ),
        Value::DataBuffer(b) => format!("{p}PMIX_DATA_BUFFER NumBytesUsed: {}", b.len()),
        Value::StorMedium(x) => scalar(p, ty, storage_medium_string(*x)),
        Value::StorAccess(x) => scalar(p, ty, storage_access_string(*x)),
        Value::StorPersist(x) => scalar(p, ty, storage_persistence_string(*x)),
        Value::StorAccessType(x) => scalar(p, ty, storage_access_type_string(*x)),
        // v6/v7 types: libpmix 4.2.2 does not know them
        Value::Device(_)
        | Value::ResBlockDirective(_)
        | Value::ResourceUnit(_)
        | Value::NodePid(_)
        | Value::Regex2(_)
        | Value::AllocInherit(_) => return err(-16),
    }))
}

fn disk_text(p: &str, d: &DiskStats) -> String {
    format!(
        "{p}PMIX_DISK_STATS Disk: {}\n{p}NumReadsCompleted: {:x} NumReadsMerged: {:x} NumSectorsRead: {:x} MillisecReading: {:x}\n{p}NumWritesCompleted: {:x} NumWritesMerged: {:x} NumSectorsWrote: {:x} MillisecWriting: {:x}\n{p}NumIOsInProgress: {:x} MillisecondsIO: {:x} WeightedMillisecsIO: {:x}\n",
        s_or(&d.disk, "NULL"),
        d.reads_completed,
        d.reads_merged,
        d.sectors_read,
        d.milliseconds_reading,
        d.writes_completed,
        d.writes_merged,
        d.sectors_written,
        d.milliseconds_writing,
        d.num_ios_in_progress,
        d.milliseconds_io,
        d.weighted_milliseconds_io
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bfrops_11_1_examples() {
        let p = |v: Value| print(&v, None).unwrap().unwrap();
        assert_eq!(p(Value::Bool(true)), " Data type: PMIX_BOOL\tValue: TRUE");
        assert_eq!(
            print(&Value::Bool(true), Some("PFX>")).unwrap().unwrap(),
            "PFX>Data type: PMIX_BOOL\tValue: TRUE"
        );
        assert_eq!(p(Value::Byte(0xab)), " Data type: PMIX_BYTE\tValue: ab");
        assert_eq!(
            p(Value::Timeval(Timeval { sec: 5, usec: 7 })),
            " Data type: PMIX_TIMEVAL\tValue: 5.000007"
        );
        assert_eq!(
            p(Value::Status(-46)),
            " Data type: PMIX_STATUS\tValue: NOT-FOUND"
        );
        assert_eq!(
            p(Value::Proc(Box::new(Proc::new("n", RANK_WILDCARD)))),
            " PROC: n:PMIX_RANK_WILDCARD"
        );
        assert_eq!(
            p(Value::Value(Box::new(Value::Size(3)))),
            " PMIX_VALUE:  Data type: PMIX_SIZE\tValue: 3"
        );
        let info = Info {
            key: "key".into(),
            flags: 1,
            value: Value::String(Some("val".into())),
        };
        assert_eq!(
            print(&Value::Info(Box::new(info)), Some("PFX>")).unwrap().unwrap(),
            "PFX>KEY: key\nPFX>\tPFX>Data type: PMIX_INFO_DIRECTIVES\tValue: REQUIRED\nPFX>\tPFX>PMIX_VALUE:  Data type: PMIX_STRING\tValue: val"
        );
        let arr = DataArray::new(DataType::Int32, vec![Value::Int32(1), Value::Int32(-1)]).unwrap();
        assert_eq!(
            p(Value::DataArray(Box::new(arr))),
            " Data type: PMIX_DATA_ARRAY\tType: PMIX_INT32\tSize: 2\n  Data type: PMIX_INT32\tValue: 1\n  Data type: PMIX_INT32\tValue: -1"
        );
        assert_eq!(print(&Value::App(Box::default()), None), Ok(None));
    }
}
