//! A PMI-2 client, sans-IO: the text protocol a task speaks with Slurm's
//! `mpi/pmi2` plugin (slurmstepd) on the socket it inherits as `PMI_FD`
//! (`srun --mpi=pmi2`). [`Client`] turns typed [`Request`]s into bytes and
//! the bytes the server sends into typed [`Response`]s or a typed
//! [`Error`], with the verbs of every core ([`crate::sansio`]): `send` /
//! `send_by` (with a deadline for the answer), `poll_transmit`,
//! `handle_input(bytes, now)`, `poll_event`, `poll_timeout` and
//! `handle_timeout(now)`; [`fd::Conn`] is the thin blocking driver that
//! moves the bytes and the time. Wire facts and their evidence:
//! spec-notes/pmi2.md.
//!
//! ```
//! use pmix_wire::pmi::client::{Client, Request, Response};
//! use std::time::Instant;
//! let mut c = Client::new();
//! c.send(&Request::Init).unwrap();
//! assert_eq!(c.poll_transmit().unwrap(), b"cmd=init pmi_version=2 pmi_subversion=0\n");
//! c.handle_input(b"cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n", Instant::now());
//! assert_eq!(c.poll_event().unwrap().unwrap(), Response::Init);
//! c.send(&Request::KvsFence).unwrap();
//! assert_eq!(c.poll_transmit().unwrap(), b"14    cmd=kvs-fence;");
//! c.handle_input(b"28    cmd=kvs-fence-response;rc=0;", Instant::now());
//! assert_eq!(c.poll_event().unwrap().unwrap(), Response::KvsFence);
//! ```

pub mod fd;

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Longest key Slurm's PMI-2 accepts (`PMI2_MAX_KEYLEN`).
pub const MAX_KEY: usize = 64;
/// Longest value (`PMI2_MAX_VALLEN`); larger data is split by the caller
/// ([`split_value`]).
pub const MAX_VALUE: usize = 1024;
/// The length prefix: six ASCII characters, decimal, left-aligned and
/// space-padded (`%-6d`), so a message body is at most 999 999 bytes.
pub const MAX_MESSAGE: usize = 999_999;

/// What went wrong, and where.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The server sent bytes that are not a PMI-2 message.
    #[error("PMI-2: malformed {what} from the server: {detail}")]
    Malformed {
        /// What was being read (`"length prefix"` …).
        what: &'static str,
        /// What is wrong with it.
        detail: String,
    },
    /// The server answered with another command than the request's answer.
    #[error("PMI-2: the server answered {got:?} to {sent}")]
    Unexpected {
        /// The request sent.
        sent: &'static str,
        /// The command received.
        got: String,
    },
    #[error("PMI-2: {cmd} failed with rc={rc}{}", msg.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    /// The server answered with `rc` other than 0.
    Failed {
        /// The request.
        cmd: &'static str,
        /// The answer's `rc`.
        rc: i32,
        /// The answer's `errmsg`, if any.
        msg: Option<String>,
    },
    /// A request field the protocol cannot carry (`;`, `=` in a key, newline, too long).
    #[error("PMI-2: cannot send {what}: {detail}")]
    BadRequest {
        /// The field.
        what: &'static str,
        /// What is wrong with it.
        detail: String,
    },
    /// No answer within the driver's timeout.
    #[error("PMI-2: no answer to {cmd} within {secs} s")]
    Timeout {
        /// The request.
        cmd: &'static str,
        /// The timeout in seconds.
        secs: u64,
    },
    /// The server closed the socket before answering.
    #[error("PMI-2: the server closed the connection during {cmd}")]
    Closed {
        /// The request.
        cmd: &'static str,
    },
    /// Reading or writing the socket failed.
    #[error("PMI-2: {0}")]
    Io(String),
    /// The environment has no PMI-2 server (`PMI_FD` and friends missing).
    #[error("PMI-2: no PMI-2 server here: {0}")]
    NoServer(String),
}

/// A request to the PMI-2 server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// The PMI-1 style greeting that selects version 2.0.
    Init,
    /// `fullinit`: this task's PMI jobid and rank (from the environment).
    FullInit {
        /// `PMI_JOBID`.
        jobid: String,
        /// `PMI_RANK`.
        rank: u32,
    },
    /// `job-getid`.
    JobGetId,
    /// `info-getjobattr` (for example `PMI_process_mapping`).
    JobAttr {
        /// The attribute's name.
        key: String,
    },
    /// `kvs-put`: visible to every task after the next fence.
    KvsPut {
        /// The key.
        key: String,
        /// The value (no `;`, no newline).
        value: String,
    },
    /// `kvs-fence`: every task of the step calls it; then every put is visible.
    KvsFence,
    /// `kvs-get` of a key of this job.
    KvsGet {
        /// The job whose key space is read.
        jobid: String,
        /// The key.
        key: String,
    },
    /// `abort`: the server answers nothing (with `world`, it kills the step).
    Abort {
        /// Abort the whole step, not just this task.
        world: bool,
        /// The message the server logs.
        message: String,
    },
    /// `finalize`.
    Finalize,
    /// `name-publish`: `name` names `port` for every task of the step
    /// (srun's name service).
    NamePublish {
        /// The service name.
        name: String,
        /// Its port.
        port: String,
    },
    /// `name-unpublish`.
    NameUnpublish {
        /// The service name.
        name: String,
    },
    /// `name-lookup`: the port, or `rc≠0` when nobody published it.
    NameLookup {
        /// The service name.
        name: String,
    },
}

/// A typed answer.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Response {
    /// `response_to_init`: version 2.0 accepted.
    Init,
    /// `fullinit-response`.
    FullInit {
        /// This task's rank.
        rank: u32,
        /// The job's size.
        size: u32,
        /// This task's application number.
        appnum: i32,
    },
    /// `job-getid-response`: the job id.
    JobId(String),
    /// The attribute's value, if the server knows it.
    JobAttr(Option<String>),
    /// `kvs-put-response`: stored.
    KvsPut,
    /// `kvs-fence-response`: every task's puts are visible.
    KvsFence,
    /// The value, if the key exists.
    KvsGet(Option<String>),
    /// `finalize-response`.
    Finalize,
    /// `name-publish-response` or `name-unpublish-response`: done.
    Named,
    /// `name-lookup-response`: the port (Slurm sends it as `value`,
    /// MPICH's servers as `port`).
    NameLookup(String),
    /// A request the server does not answer (abort) was sent.
    Sent,
}

impl Request {
    /// The command's name, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Request::Init => "init",
            Request::FullInit { .. } => "fullinit",
            Request::JobGetId => "job-getid",
            Request::JobAttr { .. } => "info-getjobattr",
            Request::KvsPut { .. } => "kvs-put",
            Request::KvsFence => "kvs-fence",
            Request::KvsGet { .. } => "kvs-get",
            Request::Abort { .. } => "abort",
            Request::Finalize => "finalize",
            Request::NamePublish { .. } => "name-publish",
            Request::NameUnpublish { .. } => "name-unpublish",
            Request::NameLookup { .. } => "name-lookup",
        }
    }

    /// The command its answer carries (`None`: no answer).
    fn answer(&self) -> Option<&'static str> {
        Some(match self {
            Request::Init => "response_to_init",
            Request::FullInit { .. } => "fullinit-response",
            Request::JobGetId => "job-getid-response",
            Request::JobAttr { .. } => "info-getjobattr-response",
            Request::KvsPut { .. } => "kvs-put-response",
            Request::KvsFence => "kvs-fence-response",
            Request::KvsGet { .. } => "kvs-get-response",
            Request::Abort { .. } => return None,
            Request::Finalize => "finalize-response",
            Request::NamePublish { .. } => "name-publish-response",
            Request::NameUnpublish { .. } => "name-unpublish-response",
            Request::NameLookup { .. } => "name-lookup-response",
        })
    }
}

/// One field of a request: the server splits on '=' then ';', so a key
/// holds neither and a value no ';'; neither may hold a newline.
fn field(what: &'static str, s: &str, key: bool, max: usize) -> Result<(), Error> {
    let bad = |detail: String| Err(Error::BadRequest { what, detail });
    if s.len() > max {
        return bad(format!("{} bytes, more than {max}", s.len()));
    }
    if let Some(c) = s
        .chars()
        .find(|c| *c == ';' || *c == '\n' || *c == '\0' || (key && *c == '='))
    {
        return bad(format!("{c:?} in {s:?}"));
    }
    Ok(())
}

/// A parsed message: the grammar is shared with the PMI server
/// ([`crate::pmi::wire`]).
pub use crate::pmi::wire::Message;

impl From<crate::pmi::wire::Malformed> for Error {
    fn from(m: crate::pmi::wire::Malformed) -> Error {
        Error::Malformed {
            what: m.what,
            detail: m.detail,
        }
    }
}

/// When an awaited answer is due, and the limit that made it so.
type Due = (Instant, Duration);

/// The client side of one PMI-2 connection, sans-IO.
#[derive(Default)]
pub struct Client {
    buf: Vec<u8>,
    /// Requests sent and not yet answered, oldest first: the answer's
    /// command, the request's, and its deadline with the limit it was given.
    waiting: VecDeque<(&'static str, &'static str, Option<Due>)>,
    /// Bytes to write to the server.
    out: Vec<u8>,
    /// The init answer has arrived: further messages carry a length prefix.
    framed: bool,
    /// A protocol error ends the connection: every later poll repeats it.
    broken: Option<Error>,
}

impl Client {
    /// A client that has sent nothing yet.
    pub fn new() -> Client {
        Client::default()
    }

    /// Queue a request ([`Client::poll_transmit`]); its answer is awaited
    /// (answers come in order) with no deadline of the core's.
    pub fn send(&mut self, r: &Request) -> Result<(), Error> {
        let bytes = self.encode(r, None)?;
        self.out.extend_from_slice(&bytes);
        Ok(())
    }

    /// As [`Client::send`], its answer due within `limit` of `now`: past
    /// that, [`Client::handle_timeout`] ends the connection with
    /// [`Error::Timeout`].
    pub fn send_by(&mut self, r: &Request, now: Instant, limit: Duration) -> Result<(), Error> {
        let bytes = self.encode(r, Some((now + limit, limit)))?;
        self.out.extend_from_slice(&bytes);
        Ok(())
    }

    /// Bytes to write to the server (drained), if any.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        (!self.out.is_empty()).then(|| std::mem::take(&mut self.out))
    }

    /// When [`Client::handle_timeout`] should next be called: the soonest
    /// deadline of an awaited answer.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.waiting.iter().filter_map(|w| w.2.map(|d| d.0)).min()
    }

    /// An awaited answer past its deadline by `now` ends the connection:
    /// every later [`Client::poll_event`] is [`Error::Timeout`] for it.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.broken.is_some() {
            return;
        }
        if let Some((cmd, (_, limit))) = self
            .waiting
            .iter()
            .filter_map(|(_, c, d)| d.map(|d| (*c, d)))
            .find(|(_, (at, _))| *at <= now)
        {
            self.broken = Some(Error::Timeout {
                cmd,
                secs: limit.as_secs(),
            });
        }
    }

    /// The bytes of a request; its answer is awaited (in order).
    fn encode(&mut self, r: &Request, due: Option<Due>) -> Result<Vec<u8>, Error> {
        let body = match r {
            Request::Init => {
                if let Some(a) = r.answer() {
                    self.waiting.push_back((a, r.name(), due));
                }
                return Ok(b"cmd=init pmi_version=2 pmi_subversion=0\n".to_vec());
            }
            Request::FullInit { jobid, rank } => {
                field("pmijobid", jobid, false, MAX_KEY)?;
                format!("cmd=fullinit;pmijobid={jobid};pmirank={rank};threaded=FALSE;")
            }
            Request::JobGetId => "cmd=job-getid;".into(),
            Request::JobAttr { key } => {
                field("key", key, true, MAX_KEY)?;
                format!("cmd=info-getjobattr;key={key};")
            }
            Request::KvsPut { key, value } => {
                field("key", key, true, MAX_KEY)?;
                field("value", value, false, MAX_VALUE)?;
                format!("cmd=kvs-put;key={key};value={value};")
            }
            Request::KvsFence => "cmd=kvs-fence;".into(),
            Request::KvsGet { jobid, key } => {
                field("jobid", jobid, false, MAX_KEY)?;
                field("key", key, true, MAX_KEY)?;
                format!("cmd=kvs-get;jobid={jobid};srcid=-1;key={key};")
            }
            Request::Abort { world, message } => {
                let m: String = message
                    .chars()
                    .map(|c| if c == ';' || c == '\n' { ',' } else { c })
                    .take(MAX_VALUE)
                    .collect();
                let w = if *world { "TRUE" } else { "FALSE" };
                format!("cmd=abort;isworld={w};msg={m};")
            }
            Request::Finalize => "cmd=finalize;".into(),
            Request::NamePublish { name, port } => {
                field("name", name, false, MAX_VALUE)?;
                field("port", port, false, MAX_VALUE)?;
                format!("cmd=name-publish;name={name};port={port};")
            }
            Request::NameUnpublish { name } => {
                field("name", name, false, MAX_VALUE)?;
                format!("cmd=name-unpublish;name={name};")
            }
            Request::NameLookup { name } => {
                field("name", name, false, MAX_VALUE)?;
                format!("cmd=name-lookup;name={name};")
            }
        };
        if body.len() > MAX_MESSAGE {
            return Err(Error::BadRequest {
                what: r.name(),
                detail: format!("{} bytes", body.len()),
            });
        }
        if let Some(a) = r.answer() {
            self.waiting.push_back((a, r.name(), due));
        }
        let mut out = format!("{:<6}", body.len()).into_bytes();
        out.extend_from_slice(body.as_bytes());
        Ok(out)
    }

    /// Whether an answer is still awaited.
    pub fn waiting(&self) -> bool {
        !self.waiting.is_empty()
    }

    /// Bytes from the server, at `now`: a deadline `now` has passed
    /// expires first ([`Client::handle_timeout`]), as in every core, so an
    /// answer that comes late is late whether or not the driver woke the
    /// core at its deadline.
    pub fn handle_input(&mut self, data: &[u8], now: Instant) {
        self.handle_timeout(now);
        self.buf.extend_from_slice(data);
    }

    /// The next answer, once its bytes are all here.
    pub fn poll_event(&mut self) -> Option<Result<Response, Error>> {
        if let Some(e) = &self.broken {
            return Some(Err(e.clone()));
        }
        let r = self.next()?;
        // a well-formed answer with rc≠0 (a lookup of an unknown name) is
        // no protocol error: later answers still parse
        if let Err(e) = &r {
            if !matches!(e, Error::Failed { .. }) {
                self.broken = Some(e.clone());
            }
        }
        Some(r)
    }

    fn next(&mut self) -> Option<Result<Response, Error>> {
        if self.buf.is_empty() {
            return None;
        }
        let Some(&(sent, _, _)) = self.waiting.front() else {
            let got = String::from_utf8_lossy(&self.buf).into_owned();
            return Some(Err(Error::Unexpected {
                sent: "nothing",
                got,
            }));
        };
        let (body, used) = if !self.framed {
            // the PMI-1 init answer: one line, no prefix
            let nl = match self.buf.iter().position(|b| *b == b'\n') {
                Some(i) => i,
                None if self.buf.len() > MAX_VALUE => {
                    return Some(Err(Error::Malformed {
                        what: "init answer",
                        detail: format!("no newline in {} bytes", self.buf.len()),
                    }))
                }
                None => return None,
            };
            (self.buf[..nl].to_vec(), nl + 1)
        } else {
            if self.buf.len() < 6 {
                return None;
            }
            let prefix = String::from_utf8_lossy(&self.buf[..6]).into_owned();
            let Ok(len) = prefix.trim_end_matches(' ').parse::<usize>() else {
                return Some(Err(Error::Malformed {
                    what: "length prefix",
                    detail: format!("{prefix:?}"),
                }));
            };
            if self.buf.len() < 6 + len {
                return None;
            }
            (self.buf[6..6 + len].to_vec(), 6 + len)
        };
        self.buf.drain(..used);
        self.waiting.pop_front();
        let Ok(text) = String::from_utf8(body) else {
            return Some(Err(Error::Malformed {
                what: sent,
                detail: "not UTF-8".into(),
            }));
        };
        let seps: &[char] = if self.framed { &[';'] } else { &[' ', '\n'] };
        let m = match Message::parse(&text, seps) {
            Ok(m) => m,
            Err(e) => return Some(Err(e.into())),
        };
        self.framed = true;
        Some(Self::typed(sent, m))
    }

    fn typed(sent: &'static str, m: Message) -> Result<Response, Error> {
        if m.cmd != sent {
            return Err(Error::Unexpected {
                sent,
                got: m.cmd.clone(),
            });
        }
        let int = |key: &str| -> Result<i64, Error> {
            let v = m.get(key).ok_or_else(|| Error::Malformed {
                what: sent,
                detail: format!("no {key}"),
            })?;
            v.trim().parse().map_err(|_| Error::Malformed {
                what: sent,
                detail: format!("{key}={v:?} is not a number"),
            })
        };
        let rc = int("rc")?;
        if rc != 0 {
            return Err(Error::Failed {
                cmd: sent,
                rc: rc as i32,
                msg: m.get("errmsg").or(m.get("msg")).map(str::to_string),
            });
        }
        let found =
            || -> Result<Option<String>, Error> {
                match m.get("found") {
                    Some("TRUE") => m.get("value").map(|v| Some(v.to_string())).ok_or_else(|| {
                        Error::Malformed {
                            what: sent,
                            detail: "found=TRUE without a value".into(),
                        }
                    }),
                    Some("FALSE") => Ok(None),
                    other => Err(Error::Malformed {
                        what: sent,
                        detail: format!("found={other:?}"),
                    }),
                }
            };
        let u32_of = |key: &str| -> Result<u32, Error> {
            let v = int(key)?;
            u32::try_from(v).map_err(|_| Error::Malformed {
                what: sent,
                detail: format!("{key}={v} out of range"),
            })
        };
        Ok(match sent {
            "response_to_init" => {
                let (v, s) = (int("pmi_version")?, int("pmi_subversion")?);
                if (v, s) != (2, 0) {
                    return Err(Error::Malformed {
                        what: sent,
                        detail: format!("version {v}.{s}, not 2.0"),
                    });
                }
                Response::Init
            }
            "fullinit-response" => Response::FullInit {
                rank: u32_of("rank")?,
                size: u32_of("size")?,
                appnum: int("appnum").unwrap_or(-1) as i32,
            },
            "job-getid-response" => Response::JobId(
                m.get("jobid")
                    .ok_or_else(|| Error::Malformed {
                        what: sent,
                        detail: "no jobid".into(),
                    })?
                    .to_string(),
            ),
            "info-getjobattr-response" => Response::JobAttr(found()?),
            "kvs-put-response" => Response::KvsPut,
            "kvs-fence-response" => Response::KvsFence,
            "kvs-get-response" => Response::KvsGet(found()?),
            "finalize-response" => Response::Finalize,
            "name-publish-response" | "name-unpublish-response" => Response::Named,
            "name-lookup-response" => Response::NameLookup(
                m.get("value")
                    .or(m.get("port"))
                    .ok_or_else(|| Error::Malformed {
                        what: sent,
                        detail: "no value".into(),
                    })?
                    .to_string(),
            ),
            _ => unreachable!("every awaited answer is listed"),
        })
    }
}

/// `PMI_process_mapping` (`(vector,(first,nodes,tasks),…)`): the node
/// index of every task, in task order; None if it does not parse or names
/// more tasks than `max`.
pub fn parse_mapping(s: &str, max: usize) -> Option<Vec<u32>> {
    let inner = s.trim().strip_prefix("(vector")?.strip_suffix(')')?;
    let mut out = Vec::new();
    for block in inner.split("(").skip(1) {
        let nums: Vec<u64> = block
            .trim_end_matches([')', ','])
            .split(',')
            .map(|x| x.trim().parse().ok())
            .collect::<Option<_>>()?;
        let [first, nodes, tasks] = nums[..] else {
            return None;
        };
        // every node below yields a task, so the loop ends by `max`
        if tasks == 0 || nodes == 0 {
            continue;
        }
        for node in first..first.checked_add(nodes)? {
            for _ in 0..tasks {
                if out.len() >= max {
                    return None;
                }
                out.push(u32::try_from(node).ok()?);
            }
        }
    }
    Some(out)
}

/// The value characters blobs are encoded with (base64, standard alphabet
/// with padding: no ';', '=' only as padding at the end).
pub fn encode_blob(data: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(data)
}

/// The inverse of [`encode_blob`].
pub fn decode_blob(s: &str) -> Result<Vec<u8>, Error> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .map_err(|e| Error::Malformed {
            what: "blob value",
            detail: e.to_string(),
        })
}

/// An encoded blob cut into values of at most [`MAX_VALUE`] bytes.
pub fn split_value(encoded: &str) -> Vec<&str> {
    // base64 is ASCII: any byte offset is a character boundary
    (0..encoded.len())
        .step_by(MAX_VALUE)
        .map(|i| &encoded[i..(i + MAX_VALUE).min(encoded.len())])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes a request goes out as.
    fn request(c: &mut Client, r: &Request) -> Result<Vec<u8>, Error> {
        c.send(r)?;
        Ok(c.poll_transmit().unwrap_or_default())
    }

    fn answer(c: &mut Client, r: Request, body: &str) -> Result<Response, Error> {
        request(c, &r).unwrap();
        c.handle_input(
            format!("{:<6}{body}", body.len()).as_bytes(),
            Instant::now(),
        );
        c.poll_event().unwrap()
    }

    fn ready() -> Client {
        let mut c = Client::new();
        request(&mut c, &Request::Init).unwrap();
        c.handle_input(
            b"cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n",
            Instant::now(),
        );
        assert_eq!(c.poll_event(), Some(Ok(Response::Init)));
        c
    }

    #[test]
    fn requests_are_slurms_syntax() {
        let mut c = ready();
        let b = request(
            &mut c,
            &Request::FullInit {
                jobid: "5.0".into(),
                rank: 3,
            },
        )
        .unwrap();
        assert_eq!(
            b,
            b"51    cmd=fullinit;pmijobid=5.0;pmirank=3;threaded=FALSE;"
        );
        let b = request(
            &mut c,
            &Request::KvsGet {
                jobid: "5.0".into(),
                key: "k".into(),
            },
        )
        .unwrap();
        assert_eq!(b, b"37    cmd=kvs-get;jobid=5.0;srcid=-1;key=k;");
        // abort: no answer awaited; a ';' in the message cannot cross
        let mut c = ready();
        let b = request(
            &mut c,
            &Request::Abort {
                world: true,
                message: "a;b".into(),
            },
        )
        .unwrap();
        assert_eq!(b, b"31    cmd=abort;isworld=TRUE;msg=a,b;");
        assert!(!c.waiting());
    }

    #[test]
    fn answers_are_typed() {
        let mut c = ready();
        let r = answer(
            &mut c,
            Request::FullInit { jobid: "5.0".into(), rank: 1 },
            "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=1;size=2;appnum=-1;debugged=FALSE;pmiverbose=FALSE;",
        );
        assert_eq!(
            r,
            Ok(Response::FullInit {
                rank: 1,
                size: 2,
                appnum: -1
            })
        );
        let r = answer(
            &mut c,
            Request::KvsGet {
                jobid: "5.0".into(),
                key: "a".into(),
            },
            "cmd=kvs-get-response;rc=0;found=TRUE;value=x=y;",
        );
        assert_eq!(r, Ok(Response::KvsGet(Some("x=y".into()))));
        let r = answer(
            &mut c,
            Request::JobAttr { key: "nope".into() },
            "cmd=info-getjobattr-response;rc=0;found=FALSE;",
        );
        assert_eq!(r, Ok(Response::JobAttr(None)));
        // Slurm's lookup answer names the port `value` (nameserv via srun)
        let r = answer(
            &mut c,
            Request::NameLookup { name: "svc".into() },
            "cmd=name-lookup-response;rc=0;value=tag#0$;",
        );
        assert_eq!(r, Ok(Response::NameLookup("tag#0$".into())));
        let r = answer(
            &mut c,
            Request::NameLookup { name: "svc".into() },
            "cmd=name-lookup-response;rc=1;",
        );
        assert!(matches!(r, Err(Error::Failed { rc: 1, .. })), "{r:?}");
        // and the connection goes on
        let r = answer(&mut c, Request::KvsFence, "cmd=kvs-fence-response;rc=0;");
        assert_eq!(r, Ok(Response::KvsFence));
        let mut c = ready();
        let r = answer(
            &mut c,
            Request::NamePublish {
                name: "svc".into(),
                port: "p".into(),
            },
            "cmd=name-publish-response;rc=0;",
        );
        assert_eq!(r, Ok(Response::Named));
    }

    #[test]
    fn bad_answers_are_typed_errors_and_stay_errors() {
        let mut c = ready();
        let r = answer(
            &mut c,
            Request::KvsFence,
            "cmd=kvs-fence-response;rc=14;errmsg=boom;",
        );
        assert_eq!(
            r,
            Err(Error::Failed {
                cmd: "kvs-fence-response",
                rc: 14,
                msg: Some("boom".into())
            })
        );
        let mut c = ready();
        let r = answer(&mut c, Request::KvsFence, "cmd=kvs-get-response;rc=0;");
        assert!(matches!(r, Err(Error::Unexpected { .. })), "{r:?}");
        let mut c = ready();
        request(&mut c, &Request::KvsFence).unwrap();
        c.handle_input(b"12x   cmd=kvs-fence-response;rc=0;", Instant::now());
        assert!(matches!(c.poll_event(), Some(Err(Error::Malformed { .. }))));
        assert!(matches!(c.poll_event(), Some(Err(Error::Malformed { .. }))));
        let mut c = ready();
        let r = answer(&mut c, Request::KvsFence, "rc=0;");
        assert!(matches!(r, Err(Error::Malformed { .. })), "{r:?}");
        let mut c = ready();
        let r = answer(
            &mut c,
            Request::KvsGet {
                jobid: "1".into(),
                key: "k".into(),
            },
            "cmd=kvs-get-response;rc=0;found=TRUE;",
        );
        assert!(matches!(r, Err(Error::Malformed { .. })), "{r:?}");
        // an answer nobody asked for
        let mut c = ready();
        c.handle_input(b"5     cmd=x;", Instant::now());
        assert!(matches!(
            c.poll_event(),
            Some(Err(Error::Unexpected { .. }))
        ));
    }

    #[test]
    fn partial_bytes_wait_for_the_rest() {
        let mut c = ready();
        request(&mut c, &Request::KvsFence).unwrap();
        let all = b"28    cmd=kvs-fence-response;rc=0;";
        for b in &all[..all.len() - 1] {
            c.handle_input(&[*b], Instant::now());
            assert_eq!(c.poll_event(), None);
        }
        c.handle_input(&all[all.len() - 1..], Instant::now());
        assert_eq!(c.poll_event(), Some(Ok(Response::KvsFence)));
    }

    #[test]
    fn requests_slurm_could_not_parse_are_refused() {
        let mut c = ready();
        for (k, v) in [("a;b", "v"), ("a=b", "v"), ("k", "v;w"), ("k", "v\n")] {
            let r = request(
                &mut c,
                &Request::KvsPut {
                    key: k.into(),
                    value: v.into(),
                },
            );
            assert!(matches!(r, Err(Error::BadRequest { .. })), "{k} {v}");
        }
        let long = "x".repeat(MAX_VALUE + 1);
        assert!(request(
            &mut c,
            &Request::KvsPut {
                key: "k".into(),
                value: long
            }
        )
        .is_err());
        assert!(!c.waiting());
    }

    proptest::proptest! {
        /// Whatever the server sends: an answer, None or an error, never a
        /// panic; and no allocation beyond the bytes given.
        #[test]
        fn any_bytes_are_an_answer_or_an_error(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300)) {
            let mut c = ready();
            request(&mut c, &Request::KvsGet { jobid: "1".into(), key: "k".into() }).unwrap();
            c.handle_input(&data, Instant::now());
            let _ = c.poll_event();
            let mut fresh = Client::new();
            request(&mut fresh, &Request::Init).unwrap();
            fresh.handle_input(&data, Instant::now());
            let _ = fresh.poll_event();
            let _ = parse_mapping(&String::from_utf8_lossy(&data), 64);
        }
    }

    #[test]
    fn mappings_and_blobs() {
        assert_eq!(parse_mapping("(vector,(0,2,1))", 64), Some(vec![0, 1]));
        assert_eq!(
            parse_mapping("(vector,(0,2,2))", 64),
            Some(vec![0, 0, 1, 1])
        );
        assert_eq!(
            parse_mapping("(vector,(0,1,3),(1,1,1))", 64),
            Some(vec![0, 0, 0, 1])
        );
        assert_eq!(parse_mapping("(vector,(0,99999999,99999999))", 64), None);
        assert_eq!(parse_mapping("(vector,(0,2))", 64), None);
        // no work from a count alone
        let huge = format!("(vector,(0,{},0),(0,1,1))", u64::MAX - 1);
        assert_eq!(parse_mapping(&huge, 64), Some(vec![0]));
        assert_eq!(parse_mapping("garbage", 64), None);
        let data: Vec<u8> = (0..5000u32).map(|i| (i * 7) as u8).collect();
        let enc = encode_blob(&data);
        let parts = split_value(&enc);
        assert!(parts
            .iter()
            .all(|p| p.len() <= MAX_VALUE && !p.contains(';')));
        assert_eq!(decode_blob(&parts.concat()).unwrap(), data);
        assert!(decode_blob("!!").is_err());
    }

    /// An answer due by a deadline: none before it, the connection ended
    /// with a Timeout naming the request once it passes; a request sent
    /// without one sets none; the answer in time clears it.
    #[test]
    fn an_answer_past_its_deadline_ends_the_connection() {
        let t0 = Instant::now();
        let mut c = ready();
        c.send(&Request::KvsFence).unwrap();
        assert_eq!(c.poll_timeout(), None);
        c.handle_input(b"28    cmd=kvs-fence-response;rc=0;", t0);
        assert_eq!(c.poll_event(), Some(Ok(Response::KvsFence)));
        let limit = Duration::from_secs(30);
        c.send_by(&Request::KvsFence, t0, limit).unwrap();
        assert_eq!(c.poll_timeout(), Some(t0 + limit));
        c.handle_timeout(t0 + limit - Duration::from_millis(1));
        assert_eq!(c.poll_event(), None);
        c.handle_timeout(t0 + limit);
        let timeout = Some(Err(Error::Timeout {
            cmd: "kvs-fence",
            secs: 30,
        }));
        assert_eq!(c.poll_event(), timeout);
        // the late answer changes nothing: the connection is over
        c.handle_input(b"28    cmd=kvs-fence-response;rc=0;", t0 + limit);
        assert_eq!(c.poll_event(), timeout);
        // an answer that comes after its deadline is late even when the
        // driver did not wake the core at the deadline
        let mut c = ready();
        c.send_by(&Request::KvsFence, t0, limit).unwrap();
        c.handle_input(b"28    cmd=kvs-fence-response;rc=0;", t0 + limit);
        assert_eq!(c.poll_event(), timeout);
    }
}
