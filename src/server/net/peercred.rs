//! Who is at the other end of a loopback TCP connection, from /proc
//! (Linux): the socket's owner uid and inode from `/proc/net/tcp{,6}`, and
//! whether the process holding that socket is a given process or one of
//! its descendants (`/proc/<pid>/fd`, `/proc/<pid>/task/*/children`).
//! libpmix trusts the credential inside the handshake; these checks are
//! what lets our server refuse a forged one (spec-notes/server.md, "Threat
//! model"). Everything here answers `None` where /proc cannot tell.

use crate::server::{PeerInfo, Verify};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
#[cfg(target_os = "linux")]
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// [`Verify`] through /proc.
#[derive(Default)]
pub struct ProcVerify;

impl Verify for ProcVerify {
    fn descends(&mut self, inode: u64, launched: u32) -> Option<bool> {
        let want = format!("socket:[{inode}]");
        // the launched process itself, then its descendants, breadth first
        let mut queue = vec![launched];
        let mut seen = 0usize;
        let mut first = true;
        while let Some(pid) = queue.pop() {
            seen += 1;
            if seen > 4096 {
                return None;
            }
            if first && !crate::procfs::alive(pid) {
                // the rank's process is gone: nothing can claim it now
                return Some(false);
            }
            match holds(pid, &want) {
                Some(true) => return Some(true),
                None if first => return None,
                _ => {}
            }
            first = false;
            queue.extend(children(pid));
        }
        Some(false)
    }
}

/// Whether `pid` has an fd on `link` (`None`: its fds cannot be read).
fn holds(pid: u32, link: &str) -> Option<bool> {
    let dir = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    Some(dir.flatten().any(|e| {
        std::fs::read_link(e.path())
            .map(|t| t.as_os_str() == link)
            .unwrap_or(false)
    }))
}

fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for t in tasks.flatten() {
        if let Ok(s) = std::fs::read_to_string(t.path().join("children")) {
            out.extend(s.split_whitespace().filter_map(|v| v.parse::<u32>().ok()));
        }
    }
    out
}

/// One line of /proc/net/tcp{,6}: local and remote address, uid, inode
/// (`swapped`: the kernel's byte order is not ours, see [`parse_addr`]).
fn parse_line(line: &str, swapped: bool) -> Option<(SocketAddr, SocketAddr, u32, u64)> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() < 10 {
        return None;
    }
    let local = parse_addr(f[1], swapped)?;
    let remote = parse_addr(f[2], swapped)?;
    let uid = f[7].parse().ok()?;
    let inode = f[9].parse().ok()?;
    Some((local, remote, uid, inode))
}

/// `0100007F:1F90` (IPv4) or 32 hex digits (IPv6): the kernel prints each
/// 32-bit word of the address as the integer its own byte order makes of
/// the address bytes (127.0.0.1 is `0100007F` on x86-64, `7F000001` on
/// s390x), the port as a number. `swapped`: the kernel's order is not
/// ours (a big-endian build of ours under qemu-user on an x86-64 kernel).
fn parse_addr(s: &str, swapped: bool) -> Option<SocketAddr> {
    let (a, p) = s.split_once(':')?;
    let port = u16::from_str_radix(p, 16).ok()?;
    let word = |i: usize| -> Option<[u8; 4]> {
        let w = u32::from_str_radix(a.get(i * 8..i * 8 + 8)?, 16).ok()?;
        Some(if swapped { w.swap_bytes() } else { w }.to_ne_bytes())
    };
    let ip = match a.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(0)?)),
        32 => {
            let mut b = [0u8; 16];
            for i in 0..4 {
                b[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            IpAddr::V6(Ipv6Addr::from(b))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// The peers of one listening address, from /proc/net/tcp{,6}, read again
/// only when a peer is not in the last reading (a burst of connections
/// costs one reading, not one each).
pub struct TcpTable {
    server: SocketAddr,
    cache: HashMap<SocketAddr, (u32, u64)>,
    /// The sock_diag socket, kept for the next query: a netlink socket
    /// opened and closed per connection was 2 of the ~22 syscalls the
    /// server spends on a client in benches/server_load.
    diag: Diag,
    /// The kernel printed the tables in the other byte order last time.
    swapped: bool,
}

impl TcpTable {
    /// For connections accepted on `server` (the listener's address).
    pub fn new(server: SocketAddr) -> TcpTable {
        TcpTable {
            server,
            cache: HashMap::new(),
            diag: Diag::default(),
            swapped: false,
        }
    }

    /// Owner uid and inode of the socket at `peer` connected to us: one
    /// exact sock_diag query, or /proc/net/tcp{,6} where netlink is denied.
    pub fn lookup(&mut self, peer: SocketAddr) -> PeerInfo {
        self.lookup_all(&[peer]).pop().unwrap_or_default()
    }

    /// [`TcpTable::lookup`] for several peers at once (a burst of accepted
    /// connections): one sock_diag round for all of them.
    pub fn lookup_all(&mut self, peers: &[SocketAddr]) -> Vec<PeerInfo> {
        // None: the kernel knows no such socket (the peer is gone
        // already); Err: netlink denied, read the tables instead
        if let Ok(infos) = sock_diag(&mut self.diag, peers, self.server) {
            return infos.into_iter().map(Option::unwrap_or_default).collect();
        }
        peers.iter().map(|p| self.in_tables(*p)).collect()
    }

    /// Owner uid and inode of `peer` from /proc/net/tcp{,6}.
    fn in_tables(&mut self, peer: SocketAddr) -> PeerInfo {
        if !self.cache.contains_key(&peer) {
            self.reload();
        }
        match self.cache.remove(&peer) {
            Some((uid, inode)) => PeerInfo {
                uid: Some(uid),
                inode: Some(inode),
            },
            None => PeerInfo::default(),
        }
    }

    fn reload(&mut self) {
        let text: String = ["/proc/net/tcp", "/proc/net/tcp6"]
            .iter()
            .filter_map(|f| std::fs::read_to_string(f).ok())
            .collect();
        self.load(&text);
    }

    /// The peers of our listener in the tables' `text`. The kernel prints
    /// addresses in its own byte order (see [`parse_addr`]); our order
    /// first, and only when no line names our listener the other: the
    /// right order is the one in which our own peers appear.
    fn load(&mut self, text: &str) {
        self.cache.clear();
        for swapped in [self.swapped, !self.swapped] {
            for l in text.lines() {
                if let Some((local, remote, uid, inode)) = parse_line(l, swapped) {
                    if remote == self.server && inode != 0 {
                        self.cache.insert(local, (uid, inode));
                    }
                }
            }
            if !self.cache.is_empty() {
                self.swapped = swapped;
                return;
            }
        }
    }
}

/// Exact sock_diag requests sent in one `send()` (and answered by one
/// `recvmmsg()`); a burst of accepted connections larger than this takes
/// several rounds. 64 answers fit the netlink socket's default receive
/// buffer many times over.
#[cfg(target_os = "linux")]
const DIAG_BATCH: usize = 64;

/// The kernel's own answers for TCP sockets (each `src` → `dst`), through
/// NETLINK_SOCK_DIAG (linux/inet_diag.h): one request per socket naming
/// its exact 4-tuple with no cookie, all sent in one `send()`, each
/// answered by one `inet_diag_msg` whose `uid` and `inode` fields are what
/// /proc/net/tcp prints, all read by one `recvmmsg()`. O(1) per socket,
/// where re-reading /proc/net/tcp costs O(connections) per peer; two
/// syscalls per burst of accepted connections, not two per connection.
/// `Err` where netlink cannot be used at all (or the answers did not come
/// at once: the socket is then closed, and opened anew next time); an
/// answer `None` for no such socket.
#[cfg(target_os = "linux")]
fn sock_diag(
    diag: &mut Diag,
    srcs: &[SocketAddr],
    dst: SocketAddr,
) -> Result<Vec<Option<PeerInfo>>, ()> {
    let mut all = Vec::with_capacity(srcs.len());
    for chunk in srcs.chunks(DIAG_BATCH) {
        all.extend(sock_diag_batch(diag, chunk, dst)?);
    }
    Ok(all)
}

#[cfg(target_os = "linux")]
const SOCK_DIAG_BY_FAMILY: u16 = 20;
/// nlmsghdr (16) + inet_diag_req_v2 (56)
#[cfg(target_os = "linux")]
const DIAG_REQ: usize = 72;
/// Room for one answer (nlmsghdr + inet_diag_msg: 88 bytes, or an error).
#[cfg(target_os = "linux")]
const DIAG_ANSWER: usize = 512;

/// One exact request for `src` → `dst` under sequence number `seq`.
#[cfg(target_os = "linux")]
fn diag_request(req: &mut Vec<u8>, seq: u32, src: SocketAddr, dst: SocketAddr) -> Result<(), ()> {
    let family = match (src, dst) {
        (SocketAddr::V4(_), SocketAddr::V4(_)) => libc::AF_INET,
        (SocketAddr::V6(_), SocketAddr::V6(_)) => libc::AF_INET6,
        _ => return Err(()),
    };
    let words = |a: &SocketAddr| -> [u8; 16] {
        match a.ip() {
            IpAddr::V4(v) => {
                let mut b = [0u8; 16];
                b[..4].copy_from_slice(&v.octets());
                b
            }
            IpAddr::V6(v) => v.octets(),
        }
    };
    req.extend_from_slice(&(DIAG_REQ as u32).to_ne_bytes());
    req.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    req.extend_from_slice(&(libc::NLM_F_REQUEST as u16).to_ne_bytes());
    req.extend_from_slice(&seq.to_ne_bytes());
    req.extend_from_slice(&0u32.to_ne_bytes());
    req.extend_from_slice(&[family as u8, libc::IPPROTO_TCP as u8, 0, 0]);
    req.extend_from_slice(&u32::MAX.to_ne_bytes()); // every state
    req.extend_from_slice(&src.port().to_be_bytes());
    req.extend_from_slice(&dst.port().to_be_bytes());
    req.extend_from_slice(&words(&src));
    req.extend_from_slice(&words(&dst));
    req.extend_from_slice(&0u32.to_ne_bytes()); // interface
    req.extend_from_slice(&[0xff; 8]); // INET_DIAG_NOCOOKIE
    Ok(())
}

/// One answer: its sequence number and what it says.
#[cfg(target_os = "linux")]
fn diag_answer(answer: &[u8]) -> Option<(u32, Result<Option<PeerInfo>, ()>)> {
    let word = |o: usize| -> Option<u32> {
        Some(u32::from_ne_bytes(answer.get(o..o + 4)?.try_into().ok()?))
    };
    let seq = word(8)?;
    // nlmsghdr, then inet_diag_msg: family, state, timer, retrans,
    // sockid (48), expires, rqueue, wqueue, uid, inode; or NLMSG_ERROR
    // (ENOENT: no such socket)
    let ty = u16::from_ne_bytes(answer.get(4..6)?.try_into().ok()?);
    if ty == libc::NLMSG_ERROR as u16 {
        let errno = word(16).map(|e| -(e as i32));
        return Some((
            seq,
            if errno == Some(libc::ENOENT) {
                Ok(None)
            } else {
                Err(())
            },
        ));
    }
    if ty != SOCK_DIAG_BY_FAMILY || answer.len() < 16 + 72 {
        return Some((seq, Err(())));
    }
    let info = match (word(16 + 64), word(16 + 68)) {
        (Some(uid), Some(inode)) => Ok((inode != 0).then_some(PeerInfo {
            uid: Some(uid),
            inode: Some(inode as u64),
        })),
        _ => Err(()),
    };
    Some((seq, info))
}

#[cfg(target_os = "linux")]
fn sock_diag_batch(
    diag: &mut Diag,
    srcs: &[SocketAddr],
    dst: SocketAddr,
) -> Result<Vec<Option<PeerInfo>>, ()> {
    let k = srcs.len();
    if k == 0 {
        return Ok(Vec::new());
    }
    // sequence numbers first..first+k name the answers; older answers (a
    // batch given up on) are skipped
    let first = diag.seq.wrapping_add(1);
    diag.seq = diag.seq.wrapping_add(k as u32);
    let mut req = Vec::with_capacity(k * DIAG_REQ);
    for (i, src) in srcs.iter().enumerate() {
        diag_request(&mut req, first.wrapping_add(i as u32), *src, dst)?;
    }
    let fd = match &diag.fd {
        Some(fd) => fd.as_raw_fd(),
        None => {
            // SAFETY: socket(2) with constant arguments; the descriptor is
            // owned by the OwnedFd from here on
            let fd = unsafe {
                libc::socket(
                    libc::AF_NETLINK,
                    libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
                    libc::NETLINK_SOCK_DIAG,
                )
            };
            if fd < 0 {
                return Err(());
            }
            // SAFETY: a descriptor we just opened and own alone
            diag.fd = Some(unsafe { OwnedFd::from_raw_fd(fd) });
            fd
        }
    };
    let mut answers: Vec<Option<Option<PeerInfo>>> = vec![None; k];
    let mut missing = k;
    let mut bufs = vec![[0u8; DIAG_ANSWER]; k];
    // SAFETY: plain syscalls on a descriptor we own, with buffers whose
    // lengths we pass and which outlive the calls. The kernel answers exact
    // sock_diag requests within send(), so the answers are queued when
    // recvmmsg() looks without waiting.
    let sent = unsafe { libc::send(fd, req.as_ptr().cast(), req.len(), 0) };
    let mut failed = sent != req.len() as isize;
    // answers to an earlier, abandoned batch may come first: a few rounds
    for _ in 0..4 {
        if failed || missing == 0 {
            break;
        }
        let mut iov: Vec<libc::iovec> = bufs
            .iter_mut()
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr().cast(),
                iov_len: b.len(),
            })
            .collect();
        // SAFETY: zeroed mmsghdr is valid (null name, no control)
        let mut msgs: Vec<libc::mmsghdr> = iov
            .iter_mut()
            .map(|v| {
                let mut m: libc::mmsghdr = unsafe { std::mem::zeroed() };
                m.msg_hdr.msg_iov = v;
                m.msg_hdr.msg_iovlen = 1;
                m
            })
            .collect();
        // SAFETY: msgs and the buffers they point into live across the call
        let got = unsafe {
            libc::recvmmsg(
                fd,
                msgs.as_mut_ptr(),
                missing as libc::c_uint,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        let Ok(got) = usize::try_from(got) else {
            failed = true;
            break;
        };
        if got == 0 {
            failed = true;
            break;
        }
        for (m, b) in msgs.iter().zip(bufs.iter()).take(got) {
            let len = (m.msg_len as usize).min(b.len());
            let Some((seq, what)) = diag_answer(&b[..len]) else {
                continue;
            };
            let i = seq.wrapping_sub(first) as usize;
            if i >= k || answers[i].is_some() {
                // an answer to an earlier batch
                continue;
            }
            match what {
                Ok(info) => {
                    answers[i] = Some(info);
                    missing -= 1;
                }
                Err(()) => failed = true,
            }
        }
    }
    if failed || missing != 0 {
        // start afresh next time
        diag.fd = None;
        return Err(());
    }
    Ok(answers.into_iter().map(Option::flatten).collect())
}

#[cfg(not(target_os = "linux"))]
fn sock_diag(_: &mut Diag, _: &[SocketAddr], _: SocketAddr) -> Result<Vec<Option<PeerInfo>>, ()> {
    Err(())
}

/// The sock_diag netlink socket of a [`TcpTable`] and its last sequence
/// number.
#[derive(Default)]
struct Diag {
    #[cfg(target_os = "linux")]
    fd: Option<OwnedFd>,
    seq: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_as_the_kernel_prints_them() {
        // 127.0.0.1:8080 as /proc/net/tcp shows it on x86-64 and on s390x
        let (x86, s390x) = ("0100007F:1F90", "7F000001:1F90");
        let (ours, other) = if cfg!(target_endian = "little") {
            (x86, s390x)
        } else {
            (s390x, x86)
        };
        let want: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        assert_eq!(parse_addr(ours, false), Some(want));
        assert_eq!(parse_addr(other, true), Some(want));
        assert_ne!(parse_addr(other, false), Some(want));
        // ::1 port 80: four words, each in the kernel's order
        let v6 = if cfg!(target_endian = "little") {
            "00000000000000000000000001000000:0050"
        } else {
            "00000000000000000000000000000001:0050"
        };
        assert_eq!(parse_addr(v6, false), Some("[::1]:80".parse().unwrap()));
        assert_eq!(parse_addr("0100007F", false), None);
        assert_eq!(parse_addr("zz:1", false), None);
    }

    #[test]
    fn a_table_in_the_other_byte_order_is_read_by_our_peers_lines() {
        // /proc/net/tcp of the other byte order (an x86-64 kernel under a
        // big-endian build, or the reverse): a peer 127.0.0.1:40000 of our
        // listener 127.0.0.1:8080, uid 1000, inode 4242
        let (listen, peer) = if cfg!(target_endian = "little") {
            ("7F000001:1F90", "7F000001:9C40")
        } else {
            ("0100007F:1F90", "0100007F:9C40")
        };
        let text = format!(
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
             0: {listen} 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 17 1 0 100 0 0 10 0\n\
             1: {peer} {listen} 01 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0 20 4 30 10 -1\n"
        );
        let mut t = TcpTable::new("127.0.0.1:8080".parse().unwrap());
        t.load(&text);
        assert!(t.swapped);
        assert_eq!(
            t.cache.get(&"127.0.0.1:40000".parse().unwrap()),
            Some(&(1000, 4242))
        );
        // the same table in our order: found without swapping
        let ours = text.replace(listen, "L").replace(peer, "P");
        let (l, p) = if cfg!(target_endian = "little") {
            ("0100007F:1F90", "0100007F:9C40")
        } else {
            ("7F000001:1F90", "7F000001:9C40")
        };
        t.load(&ours.replace('L', l).replace('P', p));
        assert!(!t.swapped);
        assert_eq!(t.cache.len(), 1);
    }

    /// Whether a NETLINK_SOCK_DIAG socket can be opened at all.
    fn netlink_sock_diag_opens() -> bool {
        // SAFETY: socket(2) with constant arguments, closed at once
        unsafe {
            let fd = libc::socket(libc::AF_NETLINK, libc::SOCK_DGRAM, libc::NETLINK_SOCK_DIAG);
            fd >= 0 && libc::close(fd) == 0
        }
    }

    #[test]
    fn our_own_loopback_connection_is_found_with_our_uid() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (_s, peer) = l.accept().unwrap();
        assert_eq!(peer, c.local_addr().unwrap());
        let mut t = TcpTable::new(l.local_addr().unwrap());
        let info = t.lookup(peer);
        if std::path::Path::new("/proc/net/tcp").exists() {
            let uid = std::fs::read_to_string("/proc/self/status")
                .unwrap()
                .lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()));
            assert_eq!(info.uid, uid);
            let inode = info.inode.unwrap();
            // netlink and /proc/net/tcp agree
            let mut t = TcpTable::new(l.local_addr().unwrap());
            t.reload();
            let via_proc = t.cache.get(&peer).copied();
            assert_eq!(via_proc, Some((uid.unwrap(), inode)));
            // qemu-user passes only NETLINK_ROUTE, _KOBJECT_UEVENT and
            // _AUDIT sockets to the kernel (EPROTONOSUPPORT for the rest):
            // under a cross-endian emulator (the table came in the other
            // byte order) the server reads /proc/net/tcp, checked above
            let emulated = t.swapped && !netlink_sock_diag_opens();
            if emulated {
                eprintln!(
                    "skipped: the sock_diag half (a cross-endian qemu-user: no NETLINK_SOCK_DIAG sockets)"
                );
            }
            if cfg!(target_os = "linux") && !emulated {
                let mut d = Diag::default();
                let at = l.local_addr().unwrap();
                assert_eq!(sock_diag(&mut d, &[peer], at), Ok(vec![Some(info)]));
                // a socket that does not exist: known absent, not an error
                let gone: SocketAddr = "127.0.0.1:1".parse().unwrap();
                assert_eq!(sock_diag(&mut d, &[gone], at), Ok(vec![None]));
                // the kept netlink socket answers the next query, and the
                // answer is the one to it (sequence numbers)
                assert_eq!(sock_diag(&mut d, &[peer], at), Ok(vec![Some(info)]));
                assert!(d.fd.is_some());
                assert_eq!(d.seq, 3);
                // a burst: more connections than one batch, a gone one
                // among them; every answer in its peer's place
                let mut held = Vec::new();
                let mut peers = Vec::new();
                for _ in 0..DIAG_BATCH + 6 {
                    let c = std::net::TcpStream::connect(at).unwrap();
                    let (s, p) = l.accept().unwrap();
                    peers.push(p);
                    held.push((c, s));
                }
                peers.insert(7, gone);
                let infos = sock_diag(&mut d, &peers, at).unwrap();
                assert_eq!(infos.len(), peers.len());
                assert_eq!(infos[7], None);
                let mut inodes = std::collections::HashSet::new();
                for (i, info) in infos.iter().enumerate().filter(|(i, _)| *i != 7) {
                    let info = info.unwrap_or_else(|| panic!("peer {i} not found"));
                    assert_eq!(info.uid, uid);
                    inodes.insert(info.inode.unwrap());
                    // the same answer as one query of its own
                    assert_eq!(sock_diag(&mut d, &[peers[i]], at), Ok(vec![Some(info)]));
                }
                assert_eq!(inodes.len(), DIAG_BATCH + 6, "one socket each");
                // and through the table, as the driver asks
                let mut t = TcpTable::new(at);
                let all = t.lookup_all(&peers);
                assert_eq!(all[7], PeerInfo::default());
                assert_eq!(all[0], infos[0].unwrap());
            }
            // and this process (the launched one) holds it
            assert_eq!(ProcVerify.descends(inode, std::process::id()), Some(true));
            // a process of ours that does not hold it: not the rank
            let mut child = std::process::Command::new("sleep")
                .arg("5")
                .spawn()
                .unwrap();
            // until it has exec'd it holds our descriptors (CLOEXEC):
            // qemu-user's posix_spawn returns from a plain fork before
            // the exec, the kernel's after it
            let comm = format!("/proc/{}/comm", child.id());
            let t0 = std::time::Instant::now();
            while std::fs::read_to_string(&comm).is_ok_and(|c| c.trim() != "sleep") {
                assert!(t0.elapsed().as_secs() < 600, "hung: sleep never exec'd");
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            assert_eq!(ProcVerify.descends(inode, child.id()), Some(false));
            let _ = child.kill();
            let _ = child.wait();
            // nor one that is gone
            assert_eq!(ProcVerify.descends(inode, child.id()), Some(false));
        }
    }
}
