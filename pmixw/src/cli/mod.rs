//! Command-line front end. Each subcommand is a small function over the
//! library; arguments are parsed by clap (derive): one struct per
//! subcommand, so each has its own `--help`.

mod debug;
mod dvm;
mod guard;
mod host;
mod output;
mod probe;
mod procgroup;
mod query;
mod run;
mod run_joint;
mod run_pmi;
mod run_pmi2;
mod run_pmix;
mod wake;

use clap::{Args, CommandFactory, Parser, Subcommand};
use pmix_codec::{BufferType, Dialect, Format};
use pmix_types::{DataType, Value};
use std::io::{Read, Write};
use std::process::ExitCode;

// `interop --hosts`: issue 13's live matrix
mod hosts;

const ABOUT_TAIL: &str =
    "TYPE is a type name with or without PMIX_, any case (BOOL, pmix_info), or its code.
D is one of v12 v20 v21 v3 v4 v41 v51 v61 v7 (default v41).

Across nodes: started once per node by srun --mpi=pmi2 (PMI_FD set), `pmixw run -n N`
runs one job of N ranks over all the nodes, block placement or `--cyclic`.";

/// pmixw: the pmix-wire command line (PMIx codec, wire debugging, launcher).
#[derive(Parser)]
#[command(name = "pmixw", version, after_help = ABOUT_TAIL, arg_required_else_help = true)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Unpack units of TYPE until the input is exhausted; print one JSON array
    /// (--infer: propose the unit layouts that consume a non-described buffer)
    Decode(DecodeArgs),
    /// Read a JSON array of TYPE values; write one pack unit (raw bytes, or hex with --hex)
    Encode(EncodeArgs),
    /// Print each value as PMIx_Data_print does
    Print(PrintArgs),
    /// The type table (code, name, which dialect registers which type), or --keys
    Types(TypesArgs),
    /// Decode one connection from the raw bytes each side sent, or a capture (--pcap)
    Inspect(InspectArgs),
    /// Forward PMIx connections and log each decoded message live
    Relay(RelayArgs),
    /// Launch N ranks of PROG on this node under a pmix-wire PMIx server
    Run(RunArgs),
    /// Serve jobs on this node until SIGINT/SIGTERM, one PMIx server for all (submit with `pmixw run --dvm`)
    Dvm,
    /// Run as each rank of a job under any PMIx launcher: check that PMIx works
    Probe(ProbeArgs),
    /// Connect to a PMIx server as a tool and print its answers
    Query(QueryArgs),
    /// Which PMIx server this environment reaches, what it is, what conflicts
    Doctor(DoctorArgs),
    /// Run the interop matrix against a libpmix (or, with --hosts, the live matrix)
    Interop(InteropArgs),
    /// Print a shell completion script for pmixw
    Completions {
        /// bash, elvish, fish, powershell or zsh
        shell: clap_complete::Shell,
    },
}

fn data_type(s: &str) -> Result<DataType, String> {
    DataType::parse(s).ok_or_else(|| format!("unknown data type {s:?}"))
}

fn dialect(s: &str) -> Result<Dialect, String> {
    Dialect::parse(s).ok_or_else(|| format!("unknown dialect {s:?}"))
}

/// How units are packed: shared by decode, encode and print.
#[derive(Args)]
struct CodecArgs {
    /// The dialect (v12 v20 v21 v3 v4 v41 v51 v61 v7); default v41
    #[arg(short = 'd', long = "dialect", value_name = "D", value_parser = dialect)]
    dialect: Option<Dialect>,
    /// Fully described buffer (each value carries its type)
    #[arg(long, visible_alias = "fully-described")]
    described: bool,
    /// psquash native: fixed-size integers (v4 and v41 only)
    #[arg(long)]
    fixed_ints: bool,
    /// The input (or output) is hex text
    #[arg(long)]
    hex: bool,
    /// Input file; `-` or none: stdin
    #[arg(value_name = "FILE")]
    file: Option<String>,
}

#[derive(Args)]
struct DecodeArgs {
    /// The type of every unit
    #[arg(short = 't', long = "type", value_name = "TYPE", value_parser = data_type)]
    ty: Option<DataType>,
    /// Propose unit layouts (type and count of each) instead of decoding one type
    #[arg(long)]
    infer: bool,
    /// --infer: print the candidates as JSON
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    codec: CodecArgs,
}

#[derive(Args)]
struct EncodeArgs {
    /// The type of every value
    #[arg(short = 't', long = "type", value_name = "TYPE", value_parser = data_type)]
    ty: Option<DataType>,
    #[command(flatten)]
    codec: CodecArgs,
}

#[derive(Args)]
struct PrintArgs {
    /// The type of every unit
    #[arg(short = 't', long = "type", value_name = "TYPE", value_parser = data_type)]
    ty: Option<DataType>,
    /// The input is a JSON array of values, not packed bytes
    #[arg(long)]
    json: bool,
    /// Prefix handed to PMIx_Data_print
    #[arg(long, value_name = "P")]
    prefix: Option<String>,
    #[command(flatten)]
    codec: CodecArgs,
}

#[derive(Args)]
struct TypesArgs {
    /// The standard's reserved keys: macro, string, value type, level
    #[arg(long)]
    keys: bool,
    /// JSON output
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct InspectArgs {
    /// The bytes the client sent
    #[arg(long, value_name = "FILE")]
    client: Option<String>,
    /// The bytes the server sent
    #[arg(long, value_name = "FILE")]
    server: Option<String>,
    /// A tcpdump/libpcap or pcapng capture: find and decode every PMIx connection
    #[arg(long, value_name = "FILE")]
    pcap: Option<String>,
    /// A ds21 shared-memory store (a pmix_dstor_ds21_* directory, or a copy):
    /// its namespaces, lock segment, and every rank's keys and values
    #[arg(long, value_name = "DIR")]
    dstore: Option<String>,
    /// Check that every message decodes typed and re-encodes byte for byte
    #[arg(long)]
    verify: bool,
    /// JSON output
    #[arg(long)]
    json: bool,
    /// The files hold hex text
    #[arg(long)]
    hex: bool,
}

#[derive(Args)]
struct RelayArgs {
    /// Where to listen (loopback only unless --any-address)
    #[arg(long, value_name = "HOST:PORT")]
    listen: String,
    /// The PMIx server to forward to
    #[arg(long, value_name = "HOST:PORT")]
    to: String,
    /// Log JSON lines
    #[arg(long)]
    json: bool,
    /// Allow a non-loopback listen address
    #[arg(long)]
    any_address: bool,
    /// Append each side of connection N to DIR/conn-N.client and DIR/conn-N.server
    #[arg(long, value_name = "DIR")]
    dump: Option<String>,
}

/// `pmixw run`: the options, then the program and its arguments (which may
/// look like flags; `--` before the program is optional).
#[derive(Args)]
pub(crate) struct RunArgs {
    /// Number of ranks
    #[arg(short = 'n', long = "np", value_name = "N")]
    pub n: u32,
    /// The job's namespace (default: the program name, our pid and a number drawn per run)
    #[arg(long, value_name = "NAME")]
    pub nspace: Option<String>,
    /// The server's dialect: v41 v4 v3 v21 v20
    #[arg(long, value_name = "D")]
    pub dialect: Option<String>,
    /// End the job after SECONDS
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<String>,
    /// After a rank fails, SECONDS before the others are killed (default 1)
    #[arg(long, value_name = "SECONDS")]
    pub grace: Option<String>,
    /// A failed rank does not end the job
    #[arg(long)]
    pub keep_going: bool,
    /// Also serve tools as the system server (pmix.sys rendezvous)
    #[arg(long)]
    pub system: bool,
    /// Print wire-up timing and memory figures
    #[arg(long)]
    pub stats: bool,
    /// Offer libpmix 4.2.x clients a ds21 shared-memory store for job and
    /// peer data (PMIx programs, on one node or each node of a PMI-2
    /// launch; also PMIXW_DSTORE=1)
    #[arg(long)]
    pub dstore: bool,
    /// Across nodes (PMI-2): rank r on node r % nodes instead of blocks
    #[arg(long)]
    pub cyclic: bool,
    /// Log refused and dropped peers with their reasons (RUST_LOG also works)
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// What the ranks see: pmix, pmi1, pmi2 or auto (MPICH programs, and Python with MPICH's mpi4py, PMI-1; others PMIx); default $PMIXW_MPI, else auto
    #[arg(long, value_name = "WIRE")]
    pub mpi: Option<String>,
    /// PMI-1/PMI-2: give the ranks PMI_PORT and PMI_ID instead of a PMI_FD each
    #[arg(long)]
    pub pmi_port: bool,
    /// Submit the job to this node's `pmixw dvm` and wait for it (PMIx programs; -n, --timeout and PROG only)
    #[arg(long)]
    pub dvm: bool,
    /// The program and its arguments. A bare `:` starts another application
    /// of the same job (`PROG ARGS : -n M --mpi WIRE PROG2 ARGS2`, mpiexec's
    /// MPMD form; -n and --mpi above are the first one's, a later one has
    /// its own or 1 rank and auto): ranks are numbered across the
    /// applications, each served its own wire, and the PMI ranks' KVS and
    /// the PMIx ranks' store are one store, their barrier and fence one
    /// collective (one node, no spawn)
    #[arg(value_name = "PROG", required = true, trailing_var_arg = true)]
    pub prog: Vec<String>,
}

#[derive(Args)]
pub(crate) struct ProbeArgs {
    /// Also check an event round trip
    #[arg(long)]
    pub events: bool,
    /// Rank 0 calls PMIx_Abort with STATUS once every rank has fenced
    #[arg(long, value_name = "STATUS", allow_negative_numbers = true)]
    pub abort: Option<i32>,
}

#[derive(Args)]
pub(crate) struct QueryArgs {
    /// The server of the process PID
    #[arg(long, value_name = "PID", conflicts_with_all = ["nspace", "uri", "system"])]
    pub pid: Option<u32>,
    /// The server hosting namespace NS
    #[arg(long, value_name = "NS", conflicts_with_all = ["uri", "system"])]
    pub nspace: Option<String>,
    /// The server at URI (or file:PATH, a rendezvous file)
    #[arg(long, conflicts_with = "system")]
    pub uri: Option<String>,
    /// The system server
    #[arg(long)]
    pub system: bool,
    /// Wait up to SECS for the server's rendezvous file to appear and the
    /// server to accept (a launcher just started); with --pid, only while
    /// that process runs
    #[arg(long, value_name = "SECS", default_value_t = pmix_wire::tool::WAIT.as_secs_f64())]
    pub wait: f64,
    /// The keys to query (e.g. pmix.qry.ns)
    #[arg(value_name = "KEY")]
    pub keys: Vec<String>,
}

#[derive(Args)]
struct DoctorArgs {
    /// One JSON object
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct InteropArgs {
    /// The live matrix: our roles under every PMIx host and client kind found here
    #[arg(long, conflicts_with_all = ["dialect", "fixed_ints", "save_vectors", "lib"])]
    hosts: bool,
    /// Only the cells whose name contains TEXT (--hosts), or the types whose
    /// name does (the codec matrix: STRING, INFO, …; any case)
    #[arg(long, value_name = "TEXT")]
    only: Option<String>,
    /// JSON output
    #[arg(long)]
    json: bool,
    /// A dialect to test, both buffer types (repeatable; default v41)
    #[arg(short = 'd', long = "dialect", value_name = "D", value_parser = dialect)]
    dialect: Vec<Dialect>,
    /// psquash native fixed-size integers
    #[arg(long)]
    fixed_ints: bool,
    /// Write the vectors to DIR
    #[arg(long, value_name = "DIR")]
    save_vectors: Option<String>,
    /// Another libpmix file, driven through 4.2.2's headers
    #[arg(long, value_name = "PATH")]
    lib: Option<String>,
}

/// Parsed common options.
struct Opts {
    ty: Option<DataType>,
    format: Format,
    hex: bool,
    json: bool,
    prefix: Option<String>,
    dialects: Vec<Dialect>,
    file: Option<String>,
    save: Option<String>,
    lib: Option<String>,
    client: Option<String>,
    server: Option<String>,
    listen: Option<String>,
    to: Option<String>,
    any_address: bool,
    dump: Option<String>,
    verify: bool,
    pcap: Option<String>,
    dstore: Option<String>,
    keys: bool,
    infer: bool,
}

impl Opts {
    fn new() -> Self {
        Opts {
            ty: None,
            format: Format::V41,
            hex: false,
            json: false,
            prefix: None,
            dialects: Vec::new(),
            file: None,
            save: None,
            lib: None,
            client: None,
            server: None,
            listen: None,
            to: None,
            any_address: false,
            dump: None,
            verify: false,
            pcap: None,
            dstore: None,
            keys: false,
            infer: false,
        }
    }

    fn codec(ty: Option<DataType>, c: CodecArgs) -> Result<Self, String> {
        let mut o = Opts::new();
        o.ty = ty;
        if let Some(d) = c.dialect {
            o.format.dialect = d;
            o.dialects.push(d);
        }
        if c.described {
            o.format.buffer_type = BufferType::FullyDesc;
        }
        o.format.fixed_ints = c.fixed_ints;
        o.hex = c.hex;
        o.file = c.file;
        if o.format.fixed_ints && !matches!(o.format.dialect, Dialect::V4 | Dialect::V41) {
            return Err("--fixed-ints (psquash native) exists only for v4 and v41".into());
        }
        Ok(o)
    }
}

/// Write to stdout; a closed pipe (`pmixw types | head`) ends quietly.
fn emit(text: &str) -> Result<(), String> {
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(format!("writing output: {e}")),
        _ => Ok(()),
    }
}

fn read_input(file: &Option<String>) -> Result<Vec<u8>, String> {
    let mut buf = Vec::new();
    match file.as_deref() {
        None | Some("-") => std::io::stdin().read_to_end(&mut buf).map(|_| ()),
        Some(p) => std::fs::File::open(p).and_then(|mut f| f.read_to_end(&mut buf).map(|_| ())),
    }
    .map_err(|e| format!("reading {}: {e}", file.as_deref().unwrap_or("stdin")))?;
    Ok(buf)
}

fn input_bytes(o: &Opts) -> Result<Vec<u8>, String> {
    let raw = read_input(&o.file)?;
    if o.hex {
        let text = String::from_utf8(raw).map_err(|_| "hex input is not text".to_string())?;
        pmix_types::hex::decode(&text)
    } else {
        Ok(raw)
    }
}

fn need_type(o: &Opts) -> Result<DataType, String> {
    o.ty.ok_or_else(|| "--type TYPE is required (pmixw help)".to_string())
}

/// JSON array of bare values → values of `ty`.
fn values_from_json(ty: DataType, text: &[u8]) -> Result<Vec<Value>, String> {
    let j: serde_json::Value =
        serde_json::from_slice(text).map_err(|e| format!("input is not JSON: {e}"))?;
    let arr = j.as_array().ok_or("input must be a JSON array of values")?;
    arr.iter()
        .enumerate()
        .map(|(i, v)| {
            Value::from_bare_json(ty, v.clone())
                .map_err(|e| format!("element {i}: not a {ty}: {e}"))
        })
        .collect()
}

fn values_to_json(values: &[Value]) -> String {
    let list: Vec<serde_json::Value> = values.iter().map(Value::to_bare_json).collect();
    serde_json::to_string_pretty(&list).expect("JSON values serialise")
}

fn decode_cmd(o: &Opts) -> Result<ExitCode, String> {
    if o.infer {
        return debug::infer_cmd(o);
    }
    let ty = need_type(o)?;
    let bytes = input_bytes(o)?;
    let values = decode_v61_of_any_release(&o.format, ty, &bytes)
        .map_err(|e| format!("decode failed: {e}"))?;
    emit(&(values_to_json(&values) + "\n"))?;
    Ok(ExitCode::SUCCESS)
}

/// `v61` names 6.1's component and 7.0's alike: the bytes are read as
/// 6.1's, and if they hold a type only 7.0's v61 has (REGEX2, ALLOC_INHERIT)
/// they can only be 7.0's, and are read as 7.0's (`Dialect::V7`:
/// spec-notes/pmix7.md).
fn decode_v61_of_any_release(
    fmt: &pmix_codec::Format,
    ty: DataType,
    bytes: &[u8],
) -> pmix_codec::Result<Vec<Value>> {
    use pmix_codec::ErrorKind::{NotRegistered, ValueTypeNotRegistered};
    let first = pmix_codec::decode(fmt, ty, bytes);
    let only_7_0 = |t: &DataType| matches!(t, DataType::Regex2 | DataType::AllocInherit);
    match &first {
        Err(e)
            if fmt.dialect == Dialect::V61
                && matches!(&e.kind, NotRegistered { ty, .. } | ValueTypeNotRegistered { ty, .. } if only_7_0(ty)) =>
        {
            let v7 = pmix_codec::Format {
                dialect: Dialect::V7,
                ..*fmt
            };
            pmix_codec::decode(&v7, ty, bytes)
        }
        _ => first,
    }
}

fn encode_cmd(o: &Opts) -> Result<ExitCode, String> {
    let ty = need_type(o)?;
    let values = values_from_json(ty, &read_input(&o.file)?)?;
    let bytes =
        pmix_codec::encode(&o.format, ty, &values).map_err(|e| format!("encode failed: {e}"))?;
    let mut out = std::io::stdout().lock();
    if o.hex {
        writeln!(out, "{}", pmix_types::hex::encode(&bytes))
    } else {
        out.write_all(&bytes)
    }
    .map_err(|e| format!("writing output: {e}"))?;
    Ok(ExitCode::SUCCESS)
}

fn print_cmd(o: &Opts) -> Result<ExitCode, String> {
    let ty = need_type(o)?;
    let values = if o.json {
        values_from_json(ty, &read_input(&o.file)?)?
    } else {
        pmix_codec::decode(&o.format, ty, &input_bytes(o)?)
            .map_err(|e| format!("decode failed: {e}"))?
    };
    debug::warn_wrong_types(
        &serde_json::Value::Array(values.iter().map(Value::to_bare_json).collect()),
        "",
    );
    let mut out = String::new();
    for v in &values {
        match pmix_codec::print(v, o.prefix.as_deref()) {
            Ok(Some(text)) => out.push_str(&text),
            Ok(None) => out.push_str(&format!("(libpmix prints no text for {ty})")),
            Err(e) => return Err(format!("print failed: {e}")),
        }
        out.push('\n');
    }
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

fn types_cmd(o: &Opts) -> Result<ExitCode, String> {
    if o.keys {
        return debug::keys_cmd(o);
    }
    if o.json {
        let rows: Vec<serde_json::Value> = DataType::ALL
            .iter()
            .map(|t| {
                let regs: Vec<&str> = Dialect::ALL
                    .iter()
                    .filter(|d| d.registers(*t))
                    .map(|d| d.name())
                    .collect();
                serde_json::json!({"code": t.code(), "name": t.name(), "dialects": regs})
            })
            .collect();
        emit(&(serde_json::to_string_pretty(&rows).expect("JSON") + "\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut s = format!("{:>4}  {:<30}", "code", "name");
    for d in Dialect::ALL {
        s.push_str(&format!(" {:>3}", d.name()));
    }
    s.push('\n');
    for t in DataType::ALL {
        s.push_str(&format!("{:>4}  {:<30}", t.code(), t.name()));
        for d in Dialect::ALL {
            s.push_str(&format!(" {:>3}", if d.registers(*t) { "x" } else { "." }));
        }
        s.push('\n');
    }
    emit(&s)?;
    Ok(ExitCode::SUCCESS)
}

/// Log through `tracing` to stderr: the filter RUST_LOG gives, else `default`.
pub(crate) fn log_to_stderr(default: &str) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

pub fn run(args: &[String]) -> Result<ExitCode, String> {
    // a run's guard (guard.rs): not a command of its own
    if args.first().map(String::as_str) == Some("__guard") {
        return Ok(guard::main(&args[1..]));
    }
    if std::env::var_os("RUST_LOG").is_some() {
        log_to_stderr("warn");
    }
    let cli =
        match Cli::try_parse_from(std::iter::once("pmixw".to_string()).chain(args.iter().cloned()))
        {
            Ok(c) => c,
            // --help and --version exit 0 on stdout; a usage error exits 2 on stderr
            Err(e) => {
                let _ = e.print();
                return Ok(ExitCode::from(e.exit_code().clamp(0, 255) as u8));
            }
        };
    match cli.cmd {
        Cmd::Decode(a) => {
            let mut o = Opts::codec(a.ty, a.codec)?;
            o.infer = a.infer;
            o.json = a.json;
            decode_cmd(&o)
        }
        Cmd::Encode(a) => encode_cmd(&Opts::codec(a.ty, a.codec)?),
        Cmd::Print(a) => {
            let mut o = Opts::codec(a.ty, a.codec)?;
            o.json = a.json;
            o.prefix = a.prefix;
            print_cmd(&o)
        }
        Cmd::Types(a) => types_cmd(&Opts {
            keys: a.keys,
            json: a.json,
            ..Opts::new()
        }),
        Cmd::Inspect(a) => inspect_cmd(&Opts {
            client: a.client,
            server: a.server,
            pcap: a.pcap,
            dstore: a.dstore,
            verify: a.verify,
            json: a.json,
            hex: a.hex,
            ..Opts::new()
        }),
        Cmd::Relay(a) => relay_cmd(&Opts {
            listen: Some(a.listen),
            to: Some(a.to),
            json: a.json,
            any_address: a.any_address,
            dump: a.dump,
            ..Opts::new()
        }),
        Cmd::Interop(a) if a.hosts => hosts::hosts_cmd(a.json, a.only),
        Cmd::Interop(a) => {
            let mut o = Opts {
                json: a.json,
                save: a.save_vectors,
                lib: a.lib,
                ..Opts::new()
            };
            o.format.fixed_ints = a.fixed_ints;
            if let Some(d) = a.dialect.last() {
                o.format.dialect = *d;
            }
            o.dialects = a.dialect;
            if o.format.fixed_ints && !matches!(o.format.dialect, Dialect::V4 | Dialect::V41) {
                return Err("--fixed-ints (psquash native) exists only for v4 and v41".into());
            }
            interop_cmd(&o, a.only.as_deref())
        }
        Cmd::Run(a) => run::run(a),
        Cmd::Dvm => dvm::dvm(),
        Cmd::Probe(a) => probe::probe_cmd(a),
        Cmd::Query(a) => query::query_cmd(a),
        Cmd::Doctor(a) => debug::doctor_cmd(&Opts {
            json: a.json,
            ..Opts::new()
        }),
        Cmd::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "pmixw", &mut out);
            emit(&String::from_utf8_lossy(&out))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn inspect_cmd(o: &Opts) -> Result<ExitCode, String> {
    if let Some(p) = &o.pcap {
        return debug::pcap_cmd(o, p);
    }
    if let Some(d) = &o.dstore {
        return debug::dstore_cmd(o, d);
    }
    let side = |f: &Option<String>, name: &str| -> Result<Vec<u8>, String> {
        let f = f
            .as_ref()
            .ok_or_else(|| format!("inspect needs --{name} FILE"))?;
        let raw = std::fs::read(f).map_err(|e| format!("{f}: {e}"))?;
        if o.hex {
            let text: String = String::from_utf8_lossy(&raw)
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
            pmix_types::hex::decode(&text).map_err(|e| format!("{f}: not hex: {e}"))
        } else {
            Ok(raw)
        }
    };
    let c = side(&o.client, "client")?;
    let s = side(&o.server, "server")?;
    if o.verify {
        return match pmixw::verify::verify(&c, &s) {
            Ok(v) => {
                emit(&format!(
                    "verified: {} messages (requests {:?}, replies {:?}, {} events, {} IOF) decode typed and re-encode byte for byte\n",
                    v.messages, v.requests, v.replies, v.events, v.iof
                ))?;
                emit(&debug::garbage_text(&v))?;
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                eprintln!("pmixw inspect --verify: {e}");
                Ok(ExitCode::FAILURE)
            }
        };
    }
    let conv = pmixw::inspect::inspect(&c, &s, pmix_codec::frame::DEFAULT_MAX_MESSAGE);
    debug::warn_entries(&conv.entries);
    if o.json {
        emit(&(serde_json::to_string_pretty(&conv).expect("JSON") + "\n"))?;
    } else {
        emit(&pmixw::inspect::render_text(&conv))?;
        emit(&pmixw::infer::explain(&conv, &c, &s))?;
    }
    Ok(if conv.errors() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn relay_cmd(o: &Opts) -> Result<ExitCode, String> {
    use pmixw::relay;
    let listen = o.listen.as_ref().ok_or("relay needs --listen HOST:PORT")?;
    let to = o.to.as_ref().ok_or("relay needs --to HOST:PORT")?;
    let l = std::net::TcpListener::bind(listen).map_err(|e| format!("{listen}: {e}"))?;
    let addr = l.local_addr().map_err(|e| e.to_string())?;
    relay::check_listen(&addr, o.any_address)?;
    eprintln!("pmixw relay: listening on {addr}, forwarding to {to}");
    let raw = match &o.dump {
        Some(d) => {
            std::fs::create_dir_all(d).map_err(|e| format!("{d}: {e}"))?;
            Some(relay::dump_sink(d.into()))
        }
        None => None,
    };
    relay::serve_recording(
        l,
        to,
        relay::stdout_sink(o.json),
        raw,
        pmix_codec::frame::DEFAULT_MAX_MESSAGE,
        None,
    )
    .map_err(|e| e.to_string())?;
    Ok(ExitCode::SUCCESS)
}

fn interop_cmd(o: &Opts, only: Option<&str>) -> Result<ExitCode, String> {
    use pmix_interop::interop;
    let mut formats = if o.dialects.is_empty() {
        interop::default_formats()
    } else {
        o.dialects
            .iter()
            .flat_map(|d| {
                [
                    Format::new(*d, BufferType::NonDesc),
                    Format::new(*d, BufferType::FullyDesc),
                ]
            })
            .collect()
    };
    for f in &mut formats {
        f.fixed_ints = o.format.fixed_ints;
    }
    if let Some(dir) = &o.save {
        for p in interop::save_vectors(std::path::Path::new(dir), &formats)? {
            eprintln!("wrote {}", p.display());
        }
    }
    let m = match &o.lib {
        // another libpmix file (e.g. 5.0.11's), with 4.2.2's headers
        Some(lib) => interop::run_matrix_with(
            &interop::Tools::build_with_lib(std::path::Path::new(lib))?,
            &formats,
        )?,
        None => interop::run_matrix(&formats)?,
    };
    let mut m = m;
    if let Some(t) = only {
        m.cases
            .retain(|c| c.ty.to_ascii_lowercase().contains(&t.to_ascii_lowercase()));
        if m.cases.is_empty() {
            return Err(format!(
                "--only {t}: no type of the matrix has that in its name"
            ));
        }
    }
    if o.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&m).map_err(|e| e.to_string())?
        );
    } else {
        print!("{}", m.table());
    }
    let problems = m.problems();
    for p in &problems {
        eprintln!("{p}");
    }
    Ok(if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
