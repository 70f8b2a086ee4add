//! Command-line front end. Each subcommand is a small function over the
//! library; argument parsing is hand-written (a handful of flags).

mod debug;
mod probe;
mod query;
mod run;
mod run_pmi2;

use pmix_codec::{BufferType, Dialect, Format};
use pmix_types::{DataType, Value};
use std::io::{Read, Write};
use std::process::ExitCode;

// `interop --hosts`: issue 13's live matrix
mod hosts;

const USAGE: &str = "usage: pmixw <command> [options]

commands:
  decode --type TYPE [--dialect D] [--described] [--fixed-ints] [--hex] [FILE|-]
        unpack units of TYPE until the input is exhausted; print one JSON array
  decode --infer [--dialect D] [--hex] [--json] [FILE|-]
        propose the unit layouts (type and count of each) that consume a non-described buffer
  encode --type TYPE [--dialect D] [--described] [--fixed-ints] [--hex] [FILE|-]
        read a JSON array of TYPE values; write one pack unit (raw bytes, or hex with --hex)
  print  --type TYPE [--dialect D] [--described] [--fixed-ints] [--hex|--json] [--prefix P] [FILE|-]
        print each value as PMIx_Data_print does
  types  [--json]
        the type table: code, name, and which dialect registers which type
  types  --keys [--json]
        the standard's reserved keys: macro, string, value type, level
  inspect --client FILE --server FILE [--json] [--hex]
        decode one connection from the raw bytes each side sent (--hex: files hold hex text)
  relay  --listen HOST:PORT --to HOST:PORT [--json] [--any-address] [--dump DIR]
        forward PMIx connections and log each decoded message live (loopback only by default);
        --dump appends each side of connection N to DIR/conn-N.client and DIR/conn-N.server
  inspect --verify --client FILE --server FILE
        check that every message decodes typed and re-encodes byte for byte
  inspect --pcap FILE [--json] [--verify]
        find the PMIx connections in a tcpdump/pcapng capture and decode (or verify) each
  run    -n N [--dialect D] [--timeout S] [--stats] PROG [ARGS...]
        launch N ranks of PROG on this node under a pmix-wire PMIx server
        [--nspace NAME] [--grace S] [--keep-going] [--system]: the job's namespace, failure
        handling and tool access (pmixw run --help)
  probe  [--events] [--abort STATUS]
        run as each rank of a job under any PMIx launcher: check that PMIx works, one line per check
  query  [--pid PID | --nspace NS | --uri URI | --system] KEY...
        connect to a PMIx server as a tool and print its answers
  doctor [--json]
        which PMIx server this environment reaches, what it is, what conflicts; one-line verdict
  interop [--json] [--dialect D]... [--fixed-ints] [--save-vectors DIR]
        run the interop matrix against the system libpmix (and keep its vectors)
  interop --lib PATH [options as above]
        the same matrix against that libpmix file, through 4.2.2's headers
  interop --hosts [--json] [--only TEXT]
        the live matrix: our client under every PMIx host found here, our server
        under every client kind found here; pass / fail / absent with the reason

TYPE is a type name with or without PMIX_, any case (BOOL, pmix_info), or its code.
D is one of v12 v20 v21 v3 v4 v41 v51 v61 v7 (default v41).

Across nodes: started once per node by srun --mpi=pmi2 (PMI_FD set), `pmixw run -n N`
runs one job of N ranks over all the nodes, block placement or `--cyclic`.";

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
    keys: bool,
    infer: bool,
}

fn parse(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
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
        keys: false,
        infer: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match a.as_str() {
            "--type" | "-t" => {
                let v = val("--type")?;
                o.ty = Some(DataType::parse(&v).ok_or_else(|| format!("unknown data type {v:?}"))?);
            }
            "--dialect" | "-d" => {
                let v = val("--dialect")?;
                let d = Dialect::parse(&v).ok_or_else(|| format!("unknown dialect {v:?}"))?;
                o.format.dialect = d;
                o.dialects.push(d);
            }
            "--described" | "--fully-described" => o.format.buffer_type = BufferType::FullyDesc,
            "--fixed-ints" => o.format.fixed_ints = true,
            "--hex" => o.hex = true,
            "--json" => o.json = true,
            "--prefix" => o.prefix = Some(val("--prefix")?),
            "--save-vectors" => o.save = Some(val("--save-vectors")?),
            "--lib" => o.lib = Some(val("--lib")?),
            "--listen" => o.listen = Some(val("--listen")?),
            "--to" => o.to = Some(val("--to")?),
            "--any-address" => o.any_address = true,
            "--dump" => o.dump = Some(val("--dump")?),
            "--verify" => o.verify = true,
            "--pcap" => o.pcap = Some(val("--pcap")?),
            "--keys" => o.keys = true,
            "--infer" => o.infer = true,
            "--client" => o.client = Some(val("--client")?),
            "--server" => o.server = Some(val("--server")?),
            "-" => o.file = Some("-".into()),
            s if s.starts_with('-') => return Err(format!("unknown option {s}\n{USAGE}")),
            s => {
                if o.file.replace(s.to_string()).is_some() {
                    return Err("more than one input file".into());
                }
            }
        }
    }
    if o.format.fixed_ints && !matches!(o.format.dialect, Dialect::V4 | Dialect::V41) {
        return Err("--fixed-ints (psquash native) exists only for v4 and v41".into());
    }
    Ok(o)
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
    o.ty.ok_or_else(|| format!("--type is required\n{USAGE}"))
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
    let values =
        pmix_codec::decode(&o.format, ty, &bytes).map_err(|e| format!("decode failed: {e}"))?;
    emit(&(values_to_json(&values) + "\n"))?;
    Ok(ExitCode::SUCCESS)
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
    if std::env::var_os("RUST_LOG").is_some() {
        log_to_stderr("warn");
    }
    let Some((cmd, rest)) = args.split_first() else {
        return Err(USAGE.to_string());
    };
    match cmd.as_str() {
        "decode" => decode_cmd(&parse(rest)?),
        "encode" => encode_cmd(&parse(rest)?),
        "print" => print_cmd(&parse(rest)?),
        "types" => types_cmd(&parse(rest)?),
        "interop" if rest.iter().any(|a| a == "--hosts") => hosts::hosts_cmd(rest),
        "interop" => interop_cmd(&parse(rest)?),
        "inspect" => inspect_cmd(&parse(rest)?),
        "relay" => relay_cmd(&parse(rest)?),
        "run" => run::run(rest),
        "probe" => probe::probe_cmd(rest),
        "query" => query::query_cmd(rest),
        "doctor" => debug::doctor_cmd(&parse(rest)?),
        "help" | "--help" | "-h" => {
            println!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        other => Err(format!("unknown command {other:?}\n{USAGE}")),
    }
}

fn inspect_cmd(o: &Opts) -> Result<ExitCode, String> {
    if let Some(p) = &o.pcap {
        return debug::pcap_cmd(o, p);
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
        return match pmix_wire::verify::verify(&c, &s) {
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
    let conv = pmix_wire::inspect::inspect(&c, &s, pmix_codec::frame::DEFAULT_MAX_MESSAGE);
    debug::warn_entries(&conv.entries);
    if o.json {
        emit(&(serde_json::to_string_pretty(&conv).expect("JSON") + "\n"))?;
    } else {
        emit(&pmix_wire::inspect::render_text(&conv))?;
        emit(&pmix_wire::infer::explain(&conv, &c, &s))?;
    }
    Ok(if conv.errors() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn relay_cmd(o: &Opts) -> Result<ExitCode, String> {
    use pmix_wire::relay;
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

fn interop_cmd(o: &Opts) -> Result<ExitCode, String> {
    use pmix_wire::interop;
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
