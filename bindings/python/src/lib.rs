//! `pmixwire._native`: the PMIx client of pmix-wire (`src/client`) for
//! Python. No libpmix: the wire protocol is pmix-wire's own.
//!
//! Blocking calls release the GIL while they wait on the socket. Event
//! notices are queued by the client and handed to the registered Python
//! handlers after every call and in `process_events`.

use pmix_types::status::{status_from_name, status_name};
use pmix_types::{Info, Proc, Value, RANK_WILDCARD};
use pmix_types::enums::{DataRange, Scope};
use pmix_wire::client::{Client as RClient, ClientError, FenceOpts, GetOpts, LookupOpts, Publish};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyString, PyTuple};
use pyo3::IntoPyObjectExt;
use std::time::Duration;

create_exception!(
    _native,
    PmixError,
    PyException,
    "A PMIx operation failed: `status` is the PMIx status code, `name` its macro name (PMIX_ERR_…), `op` the operation."
);
create_exception!(
    _native,
    NotFoundError,
    PmixError,
    "PMIX_ERR_NOT_FOUND (-46): no such key, or nothing published under it; also a lookup that found only some of its keys (PMIX_ERR_PARTIAL_SUCCESS, -52)."
);
create_exception!(
    _native,
    PmixTimeoutError,
    PmixError,
    "PMIX_ERR_TIMEOUT (-24): the operation did not complete in time."
);

/// A PmixError (or subclass) carrying status, name and op.
fn pmix_err(py: Python<'_>, op: &str, code: i32, msg: String) -> PyErr {
    let e = match code {
        // PARTIAL_SUCCESS: a lookup found some of its keys (PRRTE)
        -46 | -52 => NotFoundError::new_err(msg),
        -24 => PmixTimeoutError::new_err(msg),
        _ => PmixError::new_err(msg),
    };
    let v = e.value(py);
    let name = status_name(code).unwrap_or("PMIX_ERROR");
    // setting attributes on a fresh exception instance cannot fail
    let _ = v.setattr("status", code);
    let _ = v.setattr("name", name);
    let _ = v.setattr("op", op);
    e
}

fn client_err(py: Python<'_>, e: ClientError) -> PyErr {
    let op = e.op().unwrap_or_default().to_string();
    let code = e.status();
    let msg = format!(
        "{e} [{}, status {code}]",
        status_name(code).unwrap_or("PMIX_ERROR")
    );
    pmix_err(py, &op, code, msg)
}

fn closed(py: Python<'_>, op: &str) -> PyErr {
    // PMIX_ERR_INIT (-31): not initialised (or already finalized)
    pmix_err(
        py,
        op,
        -31,
        format!("{op}: the client is finalized [PMIX_ERR_INIT, status -31]"),
    )
}

/// A Python value as a PMIx value: bool, int (INT64, or UINT64 above
/// i64::MAX), float (DOUBLE), str (STRING), bytes/bytearray (BYTE_OBJECT).
fn to_value(v: &Bound<'_, PyAny>) -> PyResult<Value> {
    if v.is_instance_of::<PyBool>() {
        return Ok(Value::Bool(v.extract()?));
    }
    if v.is_instance_of::<PyInt>() {
        if let Ok(i) = v.extract::<i64>() {
            return Ok(Value::Int64(i));
        }
        return v
            .extract::<u64>()
            .map(Value::Uint64)
            .map_err(|_| PyValueError::new_err("int out of the range of INT64/UINT64"));
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(Value::Double(pmix_types::F64(v.extract()?)));
    }
    if let Ok(s) = v.downcast::<PyString>() {
        let s = s.to_cow()?;
        if s.contains('\0') {
            return Err(PyValueError::new_err("a PMIx string cannot contain NUL"));
        }
        return Ok(Value::String(Some(s.as_ref().into())));
    }
    if let Ok(b) = v.downcast::<PyBytes>() {
        return Ok(Value::ByteObject(b.as_bytes().into()));
    }
    if let Ok(b) = v.downcast::<PyByteArray>() {
        return Ok(Value::ByteObject(b.to_vec().as_slice().into()));
    }
    Err(PyTypeError::new_err(format!(
        "cannot map {} to a PMIx type (str, bytes, int, float, bool)",
        v.get_type().name()?
    )))
}

/// A PMIx value as a Python value: integers of every width as int, BOOL,
/// FLOAT/DOUBLE as float, STRING as str (None for a NULL string),
/// BYTE_OBJECT as bytes, PROC as (nspace, rank), STATUS as int; anything
/// else as its documented JSON form (spec-notes/json.md) decoded by `json`.
fn from_value(py: Python<'_>, v: &Value) -> PyResult<PyObject> {
    match v {
        Value::Bool(b) => b.into_py_any(py),
        Value::Byte(x) | Value::Uint8(x) => x.into_py_any(py),
        Value::Size(x) | Value::Uint64(x) | Value::Time(x) => x.into_py_any(py),
        Value::Pid(x) | Value::Uint(x) | Value::Uint32(x) | Value::ProcRank(x) => x.into_py_any(py),
        Value::Int(x) | Value::Int32(x) | Value::Status(x) => x.into_py_any(py),
        Value::Int8(x) => x.into_py_any(py),
        Value::Int16(x) => x.into_py_any(py),
        Value::Int64(x) => x.into_py_any(py),
        Value::Uint16(x) => x.into_py_any(py),
        Value::Float(x) => (x.0 as f64).into_py_any(py),
        Value::Double(x) => x.0.into_py_any(py),
        Value::String(None) => Ok(py.None()),
        Value::String(Some(s)) => s.to_string_lossy().into_py_any(py),
        Value::ByteObject(b) => PyBytes::new(py, b).into_py_any(py),
        Value::Proc(p) => (p.nspace.to_string(), p.rank).into_py_any(py),
        Value::Value(inner) => from_value(py, inner),
        other => {
            let text = other.to_bare_json().to_string();
            py.import("json")?
                .call_method1("loads", (text,))?
                .into_py_any(py)
        }
    }
}

fn infos(d: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<Info>> {
    let mut out = Vec::new();
    if let Some(d) = d {
        for (k, v) in d.iter() {
            let k: String = k.extract()?;
            out.push(Info::new(&k, to_value(&v)?));
        }
    }
    Ok(out)
}

fn info_dict<'py>(py: Python<'py>, info: &[Info]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for i in info {
        d.set_item(i.key.to_string(), from_value(py, &i.value)?)?;
    }
    Ok(d)
}

fn parse_range(r: &Bound<'_, PyAny>) -> PyResult<DataRange> {
    if let Ok(n) = r.extract::<u8>() {
        return Ok(DataRange::from(n));
    }
    let s: String = r.extract()?;
    Ok(DataRange::from(match s.to_ascii_lowercase().as_str() {
        "undef" => 0,
        "rm" => 1,
        "local" => 2,
        "namespace" => 3,
        "session" => 4,
        "global" => 5,
        "custom" => 6,
        "proc_local" => 7,
        _ => return Err(PyValueError::new_err(format!("unknown PMIx range {s:?}"))),
    }))
}

/// An event notification handed to a handler.
#[pyclass(module = "pmixwire._native", frozen, get_all)]
struct Event {
    /// The PMIx status code of the event.
    status: i32,
    /// Its macro name, or None for a code libpmix does not name.
    name: Option<String>,
    /// The process that raised it: (nspace, rank).
    source: (String, u32),
    /// The info that came with it.
    info: PyObject,
}

#[pymethods]
impl Event {
    fn __repr__(&self) -> String {
        format!(
            "Event(status={}, name={:?}, source=({:?}, {}))",
            self.status,
            self.name.as_deref().unwrap_or("None"),
            self.source.0,
            self.source.1
        )
    }
}

struct Handler {
    id: u64,
    codes: Vec<i32>,
    callback: PyObject,
}

/// A PMIx client (PMIx_Init … PMIx_Finalize), initialised from the
/// environment a PMIx launcher gives its processes. One per process; use
/// it from one thread at a time (a call made while another thread's call
/// is in progress raises RuntimeError). A context manager: `with
/// Client() as c:` finalizes on exit.
#[pyclass(module = "pmixwire._native", name = "Client")]
struct PyClient {
    inner: Option<RClient>,
    handlers: Vec<Handler>,
    next_handler: u64,
    #[pyo3(get)]
    rank: u32,
    #[pyo3(get)]
    size: u32,
    #[pyo3(get)]
    nspace: String,
    /// local_rank, local_size, node_id, hostname, appnum: fetched on
    /// first use (init does only the handshake and the job info)
    attrs: Option<Attrs>,
    /// The host answers lookups of several keys wrongly (Open MPI 4.1)
    split_lookups: bool,
}

#[derive(Clone)]
struct Attrs {
    local_rank: Option<u32>,
    local_size: Option<u32>,
    node_id: Option<u32>,
    hostname: Option<String>,
    appnum: Option<u32>,
}

impl Attrs {
    fn fetch(c: &mut RClient) -> Attrs {
        let me = c.proc().clone();
        let nspace = me.nspace.to_string();
        let job = Proc::new(&nspace, RANK_WILDCARD);
        Attrs {
            local_rank: try_get(c, &me, "pmix.lrank").as_ref().and_then(as_u32),
            local_size: try_get(c, &job, "pmix.local.size")
                .as_ref()
                .and_then(as_u32)
                .or_else(|| c.resolve_peers(&nspace).ok().map(|p| p.len() as u32)),
            node_id: try_get(c, &me, "pmix.nodeid").as_ref().and_then(as_u32),
            hostname: match try_get(c, &me, "pmix.hname") {
                Some(Value::String(Some(s))) => Some(s.to_string_lossy().into_owned()),
                _ => None,
            },
            appnum: try_get(c, &me, "pmix.appnum")
                .or_else(|| try_get(c, &job, "pmix.appnum"))
                .as_ref()
                .and_then(as_u32),
        }
    }
}

fn as_u32(v: &Value) -> Option<u32> {
    match *v {
        Value::Uint32(x) | Value::Uint(x) | Value::ProcRank(x) | Value::Pid(x) => Some(x),
        Value::Uint16(x) => Some(x.into()),
        Value::Uint8(x) | Value::Byte(x) => Some(x.into()),
        Value::Size(x) | Value::Uint64(x) => u32::try_from(x).ok(),
        Value::Int(x) | Value::Int32(x) => u32::try_from(x).ok(),
        Value::Int64(x) => u32::try_from(x).ok(),
        Value::Int16(x) => u32::try_from(x).ok(),
        _ => None,
    }
}

/// Value of `key` for `proc`, None when the host does not provide it.
fn try_get(c: &mut RClient, proc: &Proc, key: &str) -> Option<Value> {
    c.get(proc, key).ok()
}

impl PyClient {
    fn attrs(&mut self, py: Python<'_>) -> PyResult<Attrs> {
        if self.attrs.is_none() {
            let c = self.client(py, "attributes")?;
            let a = py.allow_threads(|| Attrs::fetch(c));
            self.attrs = Some(a);
        }
        Ok(self.attrs.clone().expect("set above"))
    }

    fn client(&mut self, py: Python<'_>, op: &str) -> PyResult<&mut RClient> {
        self.inner.as_mut().ok_or_else(|| closed(py, op))
    }

    /// Run `f` on the client without the GIL, with the reply timeout set
    /// to `timeout` seconds (if given) for this call only; then hand any
    /// queued events to the handlers.
    fn call<T: Send>(
        &mut self,
        py: Python<'_>,
        op: &str,
        timeout: Option<f64>,
        f: impl FnOnce(&mut RClient) -> Result<T, ClientError> + Send,
    ) -> PyResult<T> {
        let c = self.client(py, op)?;
        let saved = c.timeout;
        if let Some(t) = timeout {
            if !(t >= 0.0 && t.is_finite()) {
                return Err(PyValueError::new_err(
                    "timeout must be a finite number >= 0",
                ));
            }
            c.timeout = Duration::from_secs_f64(t);
        }
        let r = py.allow_threads(|| f(c));
        c.timeout = saved;
        let r = r.map_err(|e| client_err(py, e));
        self.dispatch(py, Duration::ZERO)?;
        r
    }

    /// Hand queued event notices (and those arriving within `wait`) to the
    /// handlers; the number of notices handled.
    fn dispatch(&mut self, py: Python<'_>, wait: Duration) -> PyResult<usize> {
        if self.handlers.is_empty() {
            return Ok(0);
        }
        let mut n = 0;
        let mut wait = wait;
        loop {
            let Some(c) = self.inner.as_mut() else {
                return Ok(n);
            };
            let r = py.allow_threads(|| c.next_event(&[], wait));
            wait = Duration::ZERO;
            let notice = match r {
                Ok(x) => x,
                Err(ClientError::Timeout(_)) => return Ok(n),
                Err(e) => return Err(client_err(py, e)),
            };
            n += 1;
            let ev = Py::new(
                py,
                Event {
                    status: notice.status,
                    name: status_name(notice.status).map(String::from),
                    source: (notice.source.nspace.to_string(), notice.source.rank),
                    info: info_dict(py, &notice.info)?.into_any().unbind(),
                },
            )?;
            let targets: Vec<PyObject> = self
                .handlers
                .iter()
                .filter(|h| h.codes.is_empty() || h.codes.contains(&notice.status))
                .map(|h| h.callback.clone_ref(py))
                .collect();
            for cb in targets {
                cb.call1(py, (ev.clone_ref(py),))?;
            }
        }
    }

    fn proc_of(&self, rank: u32, nspace: Option<String>) -> Proc {
        Proc::new(nspace.as_deref().unwrap_or(&self.nspace), rank)
    }

    fn procs(&self, procs: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<Proc>> {
        let Some(procs) = procs else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for p in procs.try_iter()? {
            let p = p?;
            if let Ok(r) = p.extract::<u32>() {
                out.push(self.proc_of(r, None));
            } else {
                let (ns, r): (String, u32) = p.extract().map_err(|_| {
                    PyTypeError::new_err("a proc is a rank (int) or an (nspace, rank) tuple")
                })?;
                out.push(Proc::new(&ns, r));
            }
        }
        Ok(out)
    }
}

#[pymethods]
impl PyClient {
    /// PMIx_Init from the environment (PMIX_NAMESPACE, PMIX_RANK,
    /// PMIX_SERVER_URI*): connects to the launcher's PMIx server.
    /// `timeout` (seconds, default 60) bounds every later call that does
    /// not give its own.
    #[new]
    #[pyo3(signature = (timeout = None))]
    fn new(py: Python<'_>, timeout: Option<f64>) -> PyResult<Self> {
        let mut c = py
            .allow_threads(RClient::init)
            .map_err(|e| client_err(py, e))?;
        if let Some(t) = timeout {
            if !(t > 0.0 && t.is_finite()) {
                return Err(PyValueError::new_err("timeout must be a finite number > 0"));
            }
            c.timeout = Duration::from_secs_f64(t);
        }
        let me = c.proc().clone();
        let nspace = me.nspace.to_string();
        let job = Proc::new(&nspace, RANK_WILDCARD);
        let size = py.allow_threads(|| {
            try_get(&mut c, &job, "pmix.job.size")
                .or_else(|| try_get(&mut c, &job, "pmix.univ.size"))
                .as_ref()
                .and_then(as_u32)
        });
        let size = size.ok_or_else(|| {
            pmix_err(
                py,
                "init",
                -46,
                "init: the host gives no pmix.job.size [PMIX_ERR_NOT_FOUND, status -46]".into(),
            )
        })?;
        Ok(PyClient {
            inner: Some(c),
            handlers: Vec::new(),
            next_handler: 1,
            rank: me.rank,
            size,
            nspace,
            attrs: None,
            split_lookups: false,
        })
    }

    /// Our rank on this node (pmix.lrank), None if the host gives none.
    #[getter]
    fn local_rank(&mut self, py: Python<'_>) -> PyResult<Option<u32>> {
        Ok(self.attrs(py)?.local_rank)
    }

    /// How many processes of our job run on this node (pmix.local.size,
    /// else the length of pmix.lpeers).
    #[getter]
    fn local_size(&mut self, py: Python<'_>) -> PyResult<Option<u32>> {
        Ok(self.attrs(py)?.local_size)
    }

    /// Our node's id (pmix.nodeid).
    #[getter]
    fn node_id(&mut self, py: Python<'_>) -> PyResult<Option<u32>> {
        Ok(self.attrs(py)?.node_id)
    }

    /// Our node's name as the host knows it (pmix.hname).
    #[getter]
    fn hostname(&mut self, py: Python<'_>) -> PyResult<Option<String>> {
        Ok(self.attrs(py)?.hostname)
    }

    /// Our application's number in the job (pmix.appnum).
    #[getter]
    fn appnum(&mut self, py: Python<'_>) -> PyResult<Option<u32>> {
        Ok(self.attrs(py)?.appnum)
    }

    /// True until finalize().
    #[getter]
    fn initialized(&self) -> bool {
        self.inner.is_some()
    }

    /// The PMIx dialect this connection speaks (e.g. "v41"), chosen from
    /// the server's URI variable.
    #[getter]
    fn dialect(&self, py: Python<'_>) -> PyResult<String> {
        let c = self.inner.as_ref().ok_or_else(|| closed(py, "dialect"))?;
        Ok(c.core().format().dialect.module_name().to_string())
    }

    /// PMIx_Get: the value of `key` for `rank` of `nspace` (default: ours).
    /// Job-level keys take rank=WILDCARD. Raises NotFoundError when the
    /// key does not exist, PmixTimeoutError after `timeout` seconds.
    #[pyo3(signature = (rank, key, timeout = None, nspace = None))]
    fn get(
        &mut self,
        py: Python<'_>,
        rank: u32,
        key: &str,
        timeout: Option<f64>,
        nspace: Option<String>,
    ) -> PyResult<PyObject> {
        let proc = self.proc_of(rank, nspace);
        let mut opts = GetOpts::new();
        if let Some(t) = timeout {
            // the server's own deadline (whole seconds, at least 1): it
            // answers PMIX_ERR_TIMEOUT instead of keeping the request
            opts = opts.timeout(Duration::from_secs(t.ceil().max(1.0) as u64));
        }
        let key = key.to_string();
        let v: Value = self.call(py, "get", timeout.map(|t| t + 1.0), move |c| {
            c.get_with(&proc, &key, opts)
        })?;
        from_value(py, &v)
    }

    /// PMIx_Put: stage `value` (str, bytes, int, float or bool) under `key`
    /// with scope "global" (default), "local" or "remote".
    #[pyo3(signature = (key, value, scope = "global"))]
    fn put(
        &mut self,
        py: Python<'_>,
        key: &str,
        value: &Bound<'_, PyAny>,
        scope: &str,
    ) -> PyResult<()> {
        let sc = match scope {
            "global" => Scope::GLOBAL,
            "local" => Scope::LOCAL,
            "remote" => Scope::REMOTE,
            _ => return Err(PyValueError::new_err(format!("unknown scope {scope:?}"))),
        };
        if key.is_empty() || key.len() > 511 || key.contains('\0') {
            return Err(PyValueError::new_err(
                "a PMIx key is 1 to 511 bytes without NUL",
            ));
        }
        let v = to_value(value)?;
        self.client(py, "put")?.put(sc, key, v);
        Ok(())
    }

    /// PMIx_Commit: send the staged puts to the server.
    fn commit(&mut self, py: Python<'_>) -> PyResult<()> {
        self.call(py, "commit", None, |c| c.commit())
    }

    /// PMIx_Fence over `procs` (ranks of our namespace, or (nspace, rank)
    /// tuples; default: every process of our namespace). With `collect`
    /// the committed data of every participant is gathered.
    #[pyo3(signature = (collect = true, procs = None, timeout = None))]
    fn fence(
        &mut self,
        py: Python<'_>,
        collect: bool,
        procs: Option<&Bound<'_, PyAny>>,
        timeout: Option<f64>,
    ) -> PyResult<()> {
        let procs = self.procs(procs)?;
        let mut opts = FenceOpts::new().procs(procs).collect_data(collect);
        if let Some(t) = timeout {
            opts = opts.timeout(Duration::from_secs(t.ceil().max(1.0) as u64));
        }
        self.call(py, "fence", timeout.map(|t| t + 1.0), move |c| c.fence(opts))
    }

    /// PMIx_Publish every item of `data` (key -> str/bytes/int/float/bool).
    fn publish(&mut self, py: Python<'_>, data: &Bound<'_, PyDict>) -> PyResult<()> {
        let inf = infos(Some(data))?;
        let data = inf
            .into_iter()
            .fold(Publish::new(), |p, i| p.put(&i.key.to_string(), i.value));
        self.call(py, "publish", None, move |c| c.publish(data))
    }

    /// PMIx_Lookup: {key: value} for `keys` (a str or a list of str).
    /// Without `wait`, raises NotFoundError unless every key is published
    /// (status -46, or -52 PMIX_ERR_PARTIAL_SUCCESS where the host says so);
    /// with it, waits for them (up to `timeout` seconds).
    #[pyo3(signature = (keys, wait = false, timeout = None))]
    fn lookup<'py>(
        &mut self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        wait: bool,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let keys: Vec<String> = if let Ok(s) = keys.extract::<String>() {
            vec![s]
        } else {
            keys.extract()?
        };
        let mut extra = LookupOpts::new();
        if wait {
            // PMIX_WAIT as a bool, as the hosts this binding met take it
            extra = extra.info(Info::new("pmix.wait", Value::Bool(true)));
            if let Some(t) = timeout {
                extra = extra.timeout(Duration::from_secs(t.ceil().max(1.0) as u64));
            }
        }
        // a waiting lookup has no reply deadline of ours unless one is given
        let local_t = match (wait, timeout) {
            (_, Some(t)) => Some(t + 1.0),
            (true, None) => Some(365.0 * 86400.0),
            (false, None) => None,
        };
        let split = self.split_lookups;
        let (data, split) = self.call(py, "lookup", local_t, move |c| {
            let k: Vec<&str> = keys.iter().map(String::as_str).collect();
            let mut data = if split && keys.len() > 1 {
                Vec::new()
            } else {
                c.lookup(&k, extra.clone())?
            };
            // Open MPI 4.1's host answers a lookup with its data in the
            // wrong slots (an empty extra entry for one key, some keys
            // missing for several: spec-notes/python.md); where a key is
            // missing from a successful answer, ask for each key alone
            data.retain(|p| !p.key.as_bytes().is_empty());
            let missing = |d: &[pmix_types::Pdata]| {
                keys.iter()
                    .any(|k| !d.iter().any(|p| p.key.as_bytes() == k.as_bytes()))
            };
            let split = split || (keys.len() > 1 && missing(&data));
            if split && keys.len() > 1 {
                data.clear();
                for k in &keys {
                    let one = c.lookup(&[k.as_str()], extra.clone())?;
                    data.extend(one.into_iter().filter(|p| p.key.as_bytes() == k.as_bytes()));
                }
                if missing(&data) {
                    return Err(ClientError::Status {
                        op: "lookup",
                        code: -46,
                    });
                }
            }
            Ok((data, split))
        })?;
        // once a host has answered so, ask it for each key alone from then on
        self.split_lookups = split;
        let d = PyDict::new(py);
        for p in &data {
            d.set_item(p.key.to_string(), from_value(py, &p.value)?)?;
        }
        Ok(d)
    }

    /// PMIx_Unpublish `keys` (None: everything this process published).
    #[pyo3(signature = (keys = None))]
    fn unpublish(&mut self, py: Python<'_>, keys: Option<Vec<String>>) -> PyResult<()> {
        let keys = keys.unwrap_or_default();
        self.call(py, "unpublish", None, move |c| {
            let k: Vec<&str> = keys.iter().map(String::as_str).collect();
            c.unpublish(&k, LookupOpts::new())
        })
    }

    /// PMIx_Register_event_handler: call `callback(event)` for events whose
    /// status is in `codes` (None: every event). Returns an id for
    /// deregister_event_handler. Handlers run in this thread, after each
    /// client call and in process_events().
    #[pyo3(signature = (callback, codes = None))]
    fn register_event_handler(
        &mut self,
        py: Python<'_>,
        callback: PyObject,
        codes: Option<Vec<i32>>,
    ) -> PyResult<u64> {
        if !callback.bind(py).is_callable() {
            return Err(PyTypeError::new_err("callback must be callable"));
        }
        let codes = codes.unwrap_or_default();
        let c2 = codes.clone();
        self.call(py, "register event handler", None, move |c| {
            c.register_events(&c2, &[])
        })?;
        let id = self.next_handler;
        self.next_handler += 1;
        self.handlers.push(Handler {
            id,
            codes,
            callback,
        });
        Ok(id)
    }

    /// Remove the handler `id`; False if there was none.
    fn deregister_event_handler(&mut self, id: u64) -> bool {
        let n = self.handlers.len();
        self.handlers.retain(|h| h.id != id);
        n != self.handlers.len()
    }

    /// PMIx_Notify_event: raise `status` (an int, e.g. below -3000 for an
    /// application event) to `range` ("namespace", "session", "global",
    /// "local", … or the PMIX_RANGE_* number; default "session") with
    /// `info`. Open MPI 4.1's mpirun never answers a range wider than
    /// "local": there the call times out (spec-notes/client.md).
    #[pyo3(signature = (status, range = None, info = None))]
    fn notify(
        &mut self,
        py: Python<'_>,
        status: i32,
        range: Option<&Bound<'_, PyAny>>,
        info: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        let range = match range {
            Some(r) => parse_range(r)?,
            None => DataRange::SESSION,
        };
        let inf = infos(info)?;
        self.call(py, "notify", None, move |c| c.notify(status, range, &inf))
    }

    /// Wait up to `timeout` seconds (0: just what already arrived) for
    /// event notices and hand them to the handlers; how many were handled.
    #[pyo3(signature = (timeout = 0.0))]
    fn process_events(&mut self, py: Python<'_>, timeout: f64) -> PyResult<usize> {
        if !(timeout >= 0.0 && timeout.is_finite()) {
            return Err(PyValueError::new_err(
                "timeout must be a finite number >= 0",
            ));
        }
        self.client(py, "process events")?;
        self.dispatch(py, Duration::from_secs_f64(timeout))
    }

    /// PMIx_Abort: ask the host to kill `procs` (default: our namespace)
    /// with exit status `status`, logging `msg`.
    #[pyo3(signature = (status = 1, msg = "", procs = None))]
    fn abort(
        &mut self,
        py: Python<'_>,
        status: i32,
        msg: &str,
        procs: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let procs = self.procs(procs)?;
        let msg = msg.to_string();
        self.call(py, "abort", None, move |c| c.abort(status, &msg, &procs))
    }

    /// PMIx_Finalize. Later calls raise PmixError (PMIX_ERR_INIT); a second
    /// finalize does nothing.
    fn finalize(&mut self, py: Python<'_>) -> PyResult<()> {
        self.handlers.clear();
        match self.inner.take() {
            Some(c) => py
                .allow_threads(|| c.finalize())
                .map_err(|e| client_err(py, e)),
            None => Ok(()),
        }
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&mut self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> PyResult<bool> {
        self.finalize(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!(
            "Client(nspace={:?}, rank={}, size={}{})",
            self.nspace,
            self.rank,
            self.size,
            if self.inner.is_some() {
                ""
            } else {
                ", finalized"
            }
        )
    }
}

/// The macro name of a PMIx status code (e.g. -46 -> "PMIX_ERR_NOT_FOUND"),
/// None if libpmix does not name it.
#[pyfunction]
fn status_string(code: i32) -> Option<&'static str> {
    status_name(code)
}

/// The code of a PMIx status macro name, with or without "PMIX_".
#[pyfunction]
fn status_code(name: &str) -> PyResult<i32> {
    status_from_name(name).ok_or_else(|| PyValueError::new_err(format!("no PMIx status {name:?}")))
}

/// The PMIx type a Python value would be put/published as ("PMIX_INT64", …).
#[pyfunction]
fn pmix_type_of(v: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(to_value(v)?.data_type().name().to_string())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<PyClient>()?;
    m.add_class::<Event>()?;
    m.add("PmixError", py.get_type::<PmixError>())?;
    m.add("NotFoundError", py.get_type::<NotFoundError>())?;
    m.add("PmixTimeoutError", py.get_type::<PmixTimeoutError>())?;
    m.add("WILDCARD", RANK_WILDCARD)?;
    m.add_function(wrap_pyfunction!(status_string, m)?)?;
    m.add_function(wrap_pyfunction!(status_code, m)?)?;
    m.add_function(wrap_pyfunction!(pmix_type_of, m)?)?;
    Ok(())
}
