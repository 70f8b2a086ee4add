//! The contract every sans-IO core of this crate keeps, and the small types
//! they share (issue 33): the PMIx server core ([`crate::server::Server`]),
//! the PMI server core ([`crate::pmi::server::Server`]), the PMIx client
//! core ([`crate::client::Core`]) and the PMI-2 client
//! ([`crate::pmi::client::Client`]).
//!
//! A core owns no thread, socket, clock or file. Its driver gives it bytes
//! and the time (`handle_input(…, now)`), asks it what to write
//! (`poll_transmit`) and what to tell the host (`poll_event`), and when to
//! wake it next (`poll_timeout`), then wakes it then (`handle_timeout(now)`).
//! Time only ever comes in as an argument, so a test drives a core on a
//! virtual clock. `tests/core_layout.rs` checks that every core offers
//! these verbs.

#![forbid(unsafe_code)]
// `Output`, `Outbox` and `Deadlines` serve the two server cores; a build
// with the client role alone has none
#![cfg_attr(not(feature = "server"), allow(dead_code))]

use std::collections::{BTreeSet, VecDeque};
use std::time::Instant;

/// A connection, as a server's driver names it.
pub type ConnId = u64;

/// What a server's driver must do on a connection (`poll_transmit`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transmit<B> {
    /// Write these bytes to the connection.
    Send(ConnId, B),
    /// Close the connection (after writing what was queued for it).
    Close(ConnId),
}

/// What a server core's parts queue, sorted into the two queues its driver
/// drains: [`Transmit`]s and the host's events `E`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Output<E, B> {
    /// Write these bytes to the connection.
    Send(ConnId, B),
    /// Close the connection (after writing what was queued for it).
    Close(ConnId),
    /// Something the host must know or act on.
    Host(E),
}

/// A server core's two output queues.
#[derive(Debug)]
pub(crate) struct Outbox<E, B> {
    pub(crate) transmits: VecDeque<Transmit<B>>,
    pub(crate) events: VecDeque<E>,
}

impl<E, B> Default for Outbox<E, B> {
    fn default() -> Self {
        Outbox {
            transmits: VecDeque::new(),
            events: VecDeque::new(),
        }
    }
}

impl<E, B> Outbox<E, B> {
    /// Queue one output where it belongs.
    pub(crate) fn push_back(&mut self, o: Output<E, B>) {
        match o {
            Output::Send(c, b) => self.transmits.push_back(Transmit::Send(c, b)),
            Output::Close(c) => self.transmits.push_back(Transmit::Close(c)),
            Output::Host(e) => self.events.push_back(e),
        }
    }
}

/// Deadlines by the thing they are for, soonest first: one set per kind of
/// wait, so that `poll_timeout` is the first of each set's [`first`].
///
/// [`first`]: Deadlines::first
#[derive(Clone, Debug)]
pub(crate) struct Deadlines<K: Ord + Copy> {
    set: BTreeSet<(Instant, K)>,
}

impl<K: Ord + Copy> Default for Deadlines<K> {
    fn default() -> Self {
        Deadlines {
            set: BTreeSet::new(),
        }
    }
}

impl<K: Ord + Copy> Deadlines<K> {
    /// `key` is due at `at`.
    pub(crate) fn insert(&mut self, at: Instant, key: K) {
        self.set.insert((at, key));
    }

    /// `key`'s wait ended before its deadline (a handshake done, a
    /// connection gone).
    pub(crate) fn remove(&mut self, at: Instant, key: K) {
        self.set.remove(&(at, key));
    }

    /// The soonest deadline.
    pub(crate) fn first(&self) -> Option<Instant> {
        self.set.first().map(|d| d.0)
    }

    /// How many waits are set.
    pub(crate) fn len(&self) -> usize {
        self.set.len()
    }

    /// Take out the next key due by `now`, soonest first.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<K> {
        match self.set.first() {
            Some(&(at, k)) if at <= now => {
                self.set.remove(&(at, k));
                Some(k)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn deadlines_come_due_soonest_first_and_only_when_due() {
        let t0 = Instant::now();
        let mut d = Deadlines::default();
        d.insert(t0 + Duration::from_secs(3), 7u64);
        d.insert(t0 + Duration::from_secs(1), 9u64);
        d.insert(t0 + Duration::from_secs(2), 8u64);
        d.remove(t0 + Duration::from_secs(2), 8);
        assert_eq!(d.first(), Some(t0 + Duration::from_secs(1)));
        assert_eq!(d.pop_due(t0), None);
        let now = t0 + Duration::from_secs(5);
        assert_eq!(d.pop_due(now), Some(9));
        assert_eq!(d.pop_due(now), Some(7));
        assert_eq!(d.pop_due(now), None);
        assert_eq!((d.first(), d.len()), (None, 0));
    }

    #[test]
    fn the_outbox_sorts_bytes_and_host_events_into_their_queues() {
        let mut o: Outbox<&str, Vec<u8>> = Outbox::default();
        o.push_back(Output::Send(1, b"a".to_vec()));
        o.push_back(Output::Host("ev"));
        o.push_back(Output::Close(1));
        assert_eq!(
            o.transmits.drain(..).collect::<Vec<_>>(),
            [Transmit::Send(1, b"a".to_vec()), Transmit::Close(1)]
        );
        assert_eq!(o.events.pop_front(), Some("ev"));
    }
}
