//! The host loop's sleep ([`host::drive`](super::host::drive)): it waits
//! on one self-pipe until something has work for it, instead of waking
//! every millisecond to look. What writes to the pipe: the server's
//! thread when it has queued host events ([`net::EventHook`]), the
//! bridge's threads when they have a message for the loop, and the
//! signals the loop acts on (SIGCHLD for a rank's end, the caught and the
//! forwarded ones), through signal-hook's self-pipe action. A wait that
//! nothing wakes ends at the loop's next deadline, or after
//! [`IDLE_WAIT`].
//!
//! The 1 ms poll it replaced cost `pmixw run` ~27 ms of CPU per second of
//! wall when the job did nothing (`pmixw run -n 1 sleep 3`: 80 ms; 9–18 %
//! of its own CPU per node in `wireup_scale`, spec-notes/bench.md).

use pmix_wire::server::net;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::Duration;

/// The longest the loop sleeps when nothing wakes it and no deadline of
/// its is nearer: a bound on what a source that does not wake it (a
/// PMI-1 driver's, a stray deadline) waits for.
pub(super) const IDLE_WAIT: Duration = Duration::from_millis(100);

/// The loop's end of the self-pipe, and the signal actions writing to it.
pub(super) struct Wake {
    read: UnixStream,
    write: Arc<UnixStream>,
    signals: Vec<signal_hook::SigId>,
}

/// What wakes the loop; cheap to clone, usable from any thread.
#[derive(Clone)]
pub(super) struct Waker(Arc<UnixStream>);

impl Waker {
    /// Wake the loop (a byte into the pipe; a full pipe has woken it
    /// already).
    pub(super) fn wake(&self) {
        let _ = (&*self.0).write(&[1]);
    }

    /// The server's hook: wake the loop when it queued host events.
    pub(super) fn hook(&self) -> net::EventHook {
        let w = self.clone();
        net::EventHook::new(move || w.wake())
    }
}

impl Wake {
    /// A new pipe, both ends non-blocking and close-on-exec (ranks do not
    /// inherit them).
    pub(super) fn new() -> std::io::Result<Wake> {
        let (read, write) = UnixStream::pair()?;
        read.set_nonblocking(true)?;
        write.set_nonblocking(true)?;
        Ok(Wake {
            read,
            write: Arc::new(write),
            signals: Vec::new(),
        })
    }

    /// What wakes this loop.
    pub(super) fn waker(&self) -> Waker {
        Waker(self.write.clone())
    }

    /// Each of `signals` wakes the loop too (besides the flags it sets
    /// elsewhere). False if one could not be registered: the loop then
    /// must not sleep long on its own.
    pub(super) fn on_signals(&mut self, signals: &[i32]) -> bool {
        let mut all = true;
        for &s in signals {
            let id = self
                .write
                .try_clone()
                .ok()
                .and_then(|w| signal_hook::low_level::pipe::register(s, w).ok());
            match id {
                Some(id) => self.signals.push(id),
                None => all = false,
            }
        }
        all
    }

    /// Sleep until woken or for `max`, then take every byte the pipe
    /// holds (one wake may stand for many).
    pub(super) fn wait(&self, max: Duration) {
        let mut p = libc::pollfd {
            fd: self.read.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // rounded up: a deadline 0.3 ms away is not a busy loop
        let ms = max.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
        // SAFETY: one pollfd of ours, for the call
        unsafe { libc::poll(&mut p, 1, ms) };
        let mut b = [0u8; 256];
        loop {
            match (&self.read).read(&mut b) {
                Ok(n) if n == b.len() => continue,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                _ => break,
            }
        }
    }
}

impl Drop for Wake {
    fn drop(&mut self) {
        for id in self.signals.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// Whether the pipe holds nothing (every wake taken).
    fn empty(w: &Wake) -> bool {
        let mut b = [0u8; 1];
        matches!((&w.read).read(&mut b), Err(e) if e.kind() == ErrorKind::WouldBlock)
    }

    #[test]
    fn a_wait_takes_every_wake_at_once() {
        let w = Wake::new().unwrap();
        for _ in 0..5000 {
            w.waker().wake();
        }
        assert!(!empty(&w));
        w.wait(Duration::ZERO);
        assert!(empty(&w));
    }

    #[test]
    fn a_wake_from_another_thread_ends_the_wait() {
        let w = Wake::new().unwrap();
        let k = w.waker();
        let h = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            k.wake();
        });
        let t = Instant::now();
        // not woken, it would sleep the whole minute
        w.wait(Duration::from_secs(60));
        assert!(t.elapsed() < Duration::from_secs(60));
        h.join().unwrap();
        assert!(empty(&w));
    }

    #[test]
    fn a_registered_signal_wakes_the_wait() {
        let mut w = Wake::new().unwrap();
        assert!(w.on_signals(&[libc::SIGURG]));
        let h = std::thread::spawn(|| {
            std::thread::sleep(Duration::from_millis(20));
            signal_hook::low_level::raise(libc::SIGURG).unwrap();
        });
        let t = Instant::now();
        w.wait(Duration::from_secs(60));
        assert!(t.elapsed() < Duration::from_secs(60));
        h.join().unwrap();
    }
}
