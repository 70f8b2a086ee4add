//! The hostile peers of issue #11, shared by tests/libpmix_server_hostile.rs (which
//! asserts each is refused for its own reason) and benches/server_hostile.rs
//! (which measures the server's memory beside them). The attack comes in
//! two halves around the launch of the good clients: [`Attack::before`]
//! (idle connections, forged claims of ranks not yet connected, a liar
//! about its uid, garbage, oversized and truncated frames) and
//! [`Attack::during`] (slowloris, connect/close churn, forged claims of
//! ranks by then connected).

#![allow(dead_code)]

use pmix_codec::frame::{frame, HeaderOrder};
use pmix_codec::handshake::ConnectRequest;
use pmix_wire::server::net::{self, Options};
use pmix_wire::server::{JobSpec, Limits};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::thread::JoinHandle;
use std::time::Duration;

/// This process's (uid, gid), from /proc/self/status.
pub fn my_ids() -> (u32, u32) {
    let st = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let f = |name: &str| {
        st.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (f("Uid:"), f("Gid:"))
}

/// A libpmix 4.2.2 client's handshake for `ns:rank` with a native
/// credential naming `uid` (as PMIx_Init sends it on x86-64, v41,
/// non-described; the credential's bytes are those of every host of ours:
/// spec-notes/heterogeneous.md).
pub fn claim(ns: &str, rank: u32, uid: u32) -> Vec<u8> {
    let cred = pmix_wire::link::native_credential(uid, my_ids().1);
    connect_frame(ns, rank, cred.to_vec())
}

/// A libpmix 4.2.2 client's framed connect request for rank `rank` of `ns`
/// (v41, non-described) carrying `credential`.
pub fn connect_frame(ns: &str, rank: u32, credential: Vec<u8>) -> Vec<u8> {
    connect_frame_gds(ns, rank, credential, "hash")
}

/// [`connect_frame`] announcing the gds module `gds` ("ds21": a libpmix
/// 4.2.2 client that took its server's shared-memory store).
pub fn connect_frame_gds(ns: &str, rank: u32, credential: Vec<u8>, gds: &str) -> Vec<u8> {
    let req = ConnectRequest {
        psec: "native".into(),
        credential: bytes::Bytes::from(credential),
        flag: 0,
        uid_gid: None,
        proc: Some(pmix_types::Proc::new(ns, rank)),
        version: "4.2.2".into(),
        bfrops: Some("v41".into()),
        buffer_type: Some(1),
        gds: Some(gds.into()),
        info: None,
        trailing: bytes::Bytes::new(),
    };
    frame(-1, u32::MAX, &req.encode().unwrap(), HeaderOrder::Little).unwrap()
}

/// A request as a v41 client frames it after its handshake, with tag `t`.
pub fn request_frame(t: u32, r: &pmix_codec::msg::Request) -> Vec<u8> {
    let payload = r.encode(&pmix_codec::Format::V41).unwrap();
    pmix_codec::frame::frame(0, t, &payload, pmix_codec::frame::HeaderOrder::Network).unwrap()
}

/// Our server for one job `ns` of `n` ranks on this host, with a 3 s
/// handshake deadline (so that the idle attackers are cut off soon).
pub fn server(ns: &str, n: u32) -> net::Running {
    net::start_opts(
        vec![JobSpec {
            nspace: ns.into(),
            nprocs: n,
            hostname: net::hostname(),
            info: vec![],
        }],
        Options {
            limits: Limits {
                handshake_timeout: Duration::from_secs(3),
                ..Limits::default()
            },
            ..Options::default()
        },
    )
    .expect("our server")
}

/// The real ranks: `n` processes of `client` as ranks of `ns` under
/// `server`, each registered as the host would (`pmixw run` does), stdout
/// piped for [`crate::process::finish`].
pub fn ranks(
    server: &net::Running,
    client: &std::path::Path,
    ns: &str,
    n: u32,
) -> Vec<crate::process::Kill> {
    (0..n)
        .map(|r| {
            let k = crate::process::Kill(
                std::process::Command::new(client)
                    .envs(server.client_env(ns, r))
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::inherit())
                    .spawn()
                    .expect("a client"),
            );
            let (pid, ns) = (k.0.id(), ns.to_string());
            server.call(move |s| s.set_rank_pid(&ns, r, pid));
            k
        })
        .collect()
}

/// How many idle connections [`Attack::before`] opens.
pub const IDLE: usize = 320;

/// The attackers' open sockets; dropping it closes them all.
pub struct Attack {
    addr: String,
    ns: String,
    n: u32,
    uid: u32,
    /// never say a word
    pub idle: Vec<TcpStream>,
    /// forged claims of every rank, before any rank is launched
    pub early: Vec<TcpStream>,
    /// a claim whose credential names another uid than the socket's owner
    pub liar: TcpStream,
    /// garbage, an oversized frame, a truncated handshake
    pub bad: Vec<TcpStream>,
    /// forged claims of every rank, after the good clients were launched
    pub late: Vec<TcpStream>,
    slow: Option<JoinHandle<bool>>,
}

impl Attack {
    /// The attackers that come before the good clients of a job `ns` of `n` ranks.
    pub fn before(addr: &str, ns: &str, n: u32) -> Attack {
        let (uid, _) = my_ids();
        let connect = || TcpStream::connect(addr).unwrap();
        let idle = (0..IDLE).map(|_| connect()).collect();
        let early = (0..n)
            .map(|r| {
                let mut s = connect();
                s.write_all(&claim(ns, r, uid)).unwrap();
                s
            })
            .collect();
        let mut liar = connect();
        liar.write_all(&claim(ns, 0, uid.wrapping_add(4242)))
            .unwrap();
        let mut garbage = vec![0u8; 16];
        garbage[8..12].copy_from_slice(&16u32.to_le_bytes());
        garbage.extend_from_slice(b"\xff\xfe\xfd\xfc garbage bytes");
        let mut huge = vec![0u8; 16];
        huge[8..12].copy_from_slice(&(1u32 << 30).to_le_bytes());
        let truncated = claim(ns, 3, uid)[..40].to_vec();
        let bad = [garbage, huge, truncated]
            .into_iter()
            .map(|bytes| {
                let mut s = connect();
                s.write_all(&bytes).unwrap();
                s
            })
            .collect();
        Attack {
            addr: addr.into(),
            ns: ns.into(),
            n,
            uid,
            idle,
            early,
            liar,
            bad,
            late: Vec::new(),
            slow: None,
        }
    }

    /// The attackers that come while the good clients wire up: slowloris
    /// (in a thread of its own; see [`Attack::slowloris_cut_off`]), 300
    /// connect/close, then forged claims of ranks that are (by now, mostly)
    /// connected.
    pub fn during(&mut self) {
        let hello = claim(&self.ns, 5.min(self.n - 1), self.uid);
        let slow_addr = self.addr.clone();
        self.slow = Some(std::thread::spawn(move || {
            let mut s = TcpStream::connect(&slow_addr).unwrap();
            for b in hello.iter().take(30) {
                if s.write_all(&[*b]).is_err() {
                    return true;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            // cut off by the handshake deadline: EOF or reset
            s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
            let mut buf = [0u8; 64];
            matches!(s.read(&mut buf), Ok(0) | Err(_))
        }));
        for _ in 0..300 {
            drop(TcpStream::connect(&self.addr).unwrap());
        }
        std::thread::sleep(Duration::from_millis(200));
        for r in 0..self.n {
            let mut s = TcpStream::connect(&self.addr).unwrap();
            s.write_all(&claim(&self.ns, r, self.uid)).unwrap();
            self.late.push(s);
        }
    }

    /// Whether the slowloris was cut off by the server (waits for it).
    pub fn slowloris_cut_off(&mut self) -> bool {
        self.slow.take().map(|h| h.join().unwrap()).unwrap_or(false)
    }
}
