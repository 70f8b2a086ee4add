"""A key-value store with the semantics of ``torch.distributed.Store``,
built on PMIx publish/lookup or, where the host refuses those (Slurm's
plugin), on put/commit/fence/get.

Publish/lookup mode (the default wherever the host answers lookups):

* every value is an immutable, versioned PMIx key
  ``pwstore.<nspace>.<name>.<key>#<n>``: a write publishes version
  ``n + 1`` of the key; a read finds the newest version by galloping
  lookups (no lock, no fence);
* writes (set, add, compare_set, delete_key) are serialised by Lamport's
  bakery lock: one register per rank (``…lock.<rank>``,
  "choosing,ticket,keys", keys: how many keys the rank created less how
  many it deleted, which ``num_keys`` sums),
  rewritten by unpublish + publish, read in one lookup of all ranks'
  registers. Hosts differ when a key is published twice (our server and
  Open MPI 4.1 keep the newest value, PRRTE 5 the first, none refuses it:
  spec-notes/python.md), so the lock does not rely on a refused publish,
  and no version key is ever published twice;
* ``get`` and ``wait`` block with a waiting lookup (``PMIX_WAIT``) on the
  next version, not by polling.

Limits (both modes):

* one namespace: every rank of the job must create the Store (the
  constructor is collective: a fence) with the same ``name``;
* the PMIx keys start with "pwstore.", not "pmix": libpmix's hash store
  refuses every key that starts with "pmix" (PMIX_ERR_BAD_PARAM on commit);
* keys are str of at most ``MAX_KEY`` bytes (PMIx keys are at most 511),
  without NUL; values are bytes (str is stored UTF-8 encoded);
* the published data lives until the host's job ends: deleted keys and old
  versions are not reclaimed (each write costs one published key);
* writes are serialised, a few round trips to the host each: fine for
  rendezvous, not a data-plane store;
* ``num_keys`` counts the keys set through this Store and not deleted.

Fence mode (``mode="fence"``): ``set``/``delete_key`` stage locally and
become visible to every rank at the next ``sync()``, which every rank must
call (a fence); ``get``/``check``/``wait``/``num_keys`` answer from the last
``sync()``: ``get`` of a key absent there raises ``NotFoundError`` at once
instead of blocking (nothing can arrive before the next collective).
``add`` and ``compare_set`` need an atomic primitive that fence/get does
not give and raise ``NotImplementedError``. When two ranks set the same key
in one epoch, the higher rank wins.
"""

from __future__ import annotations

import datetime
import time
from typing import Dict, List, Optional, Sequence, Tuple, Union

from ._native import Client, NotFoundError, PmixError, PmixTimeoutError

__all__ = ["Store", "MAX_KEY"]

#: The longest key a Store accepts (511-byte PMIx keys, less our prefix room).
MAX_KEY = 320

_VALUE = b"V"
_DELETED = b"D"

Timeout = Union[float, int, datetime.timedelta, None]


def _seconds(t: Timeout, default: float) -> float:
    if t is None:
        return default
    if isinstance(t, datetime.timedelta):
        return t.total_seconds()
    return float(t)


def _as_bytes(v: Union[str, bytes, bytearray]) -> bytes:
    if isinstance(v, str):
        return v.encode()
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    raise TypeError("a Store value is str or bytes, not %s" % type(v).__name__)


class Store:
    """A torch.distributed-style key-value store over PMIx.

    ``Store(client)`` is collective: every rank of the job creates it.
    ``mode`` is "publish" (publish/lookup), "fence" (put/fence/get), or
    "auto" (publish where the host answers lookups, else fence).
    ``timeout`` (seconds or timedelta, default 300) bounds get and wait.
    """

    def __init__(
        self,
        client: Client,
        name: str = "default",
        mode: str = "auto",
        timeout: Timeout = None,
    ) -> None:
        if "#" in name or "." in name or not name:
            raise ValueError("a Store name is non-empty, without '#' or '.'")
        self._c = client
        self._timeout = _seconds(timeout, 300.0)
        self._prefix = "pwstore.%s.%s." % (client.nspace, name)
        # newest version known of each key (versions only grow)
        self._known: Dict[str, int] = {}
        if mode == "auto":
            mode = "publish" if self._host_publishes() else "fence"
        if mode not in ("publish", "fence"):
            raise ValueError("mode is 'auto', 'publish' or 'fence'")
        self.mode = mode
        if mode == "publish":
            self._delta = 0
            self._write_register(0, 0)
        else:
            self._epoch = 0
            self._staged: Dict[str, Optional[bytes]] = {}
            self._mine: Dict[str, Tuple[int, Optional[bytes]]] = {}
            self._view: Dict[str, bytes] = {}
        self._c.fence(collect=False)

    # ----------------------------------------------------------------- common

    @property
    def timeout(self) -> datetime.timedelta:
        """The default timeout of get and wait."""
        return datetime.timedelta(seconds=self._timeout)

    def set_timeout(self, timeout: Timeout) -> None:
        """Change the default timeout of get and wait."""
        self._timeout = _seconds(timeout, self._timeout)

    def _key(self, key: str) -> str:
        if not isinstance(key, str):
            raise TypeError("a Store key is str")
        if not key or len(key.encode()) > MAX_KEY or "\0" in key or key[0] == "#":
            raise ValueError(
                "a Store key is 1 to %d bytes without NUL, not starting with '#'" % MAX_KEY
            )
        return key

    def _host_publishes(self) -> bool:
        """Does the host answer publish/lookup? (Slurm's plugin refuses.)"""
        probe = self._prefix + "probe.%d" % self._c.rank
        try:
            self._c.publish({probe: 1})
            return self._c.lookup(probe).get(probe) == 1
        except PmixError:
            return False

    # --------------------------------------------------- publish/lookup mode

    def _vkey(self, key: str, n: int) -> str:
        return "%s%s#%d" % (self._prefix, key, n)

    def _version(self, key: str, n: int) -> Optional[bytes]:
        """Version n of key, None if not published (yet)."""
        k = self._vkey(key, n)
        try:
            v = self._c.lookup(k).get(k)
        except NotFoundError:
            return None
        if not isinstance(v, bytes):
            raise PmixError("store: %s is not bytes" % k)
        return v

    def _latest(self, key: str) -> Tuple[int, Optional[bytes]]:
        """(newest version, its record) of key; (0, None) if never set.
        Versions are dense from 1: gallop past the newest known, then
        bisect."""
        lo = self._known.get(key, 0)
        rec = self._version(key, lo) if lo else None
        step = 1
        hi = lo + step
        while True:
            r = self._version(key, hi)
            if r is None:
                break
            lo, rec = hi, r
            step *= 2
            hi = lo + step
        while hi - lo > 1:
            mid = (lo + hi) // 2
            r = self._version(key, mid)
            if r is None:
                hi = mid
            else:
                lo, rec = mid, r
        self._known[key] = lo
        return lo, rec

    def _reg(self, rank: int) -> str:
        return "%slock.%d" % (self._prefix, rank)

    def _write_register(self, choosing: int, ticket: int) -> None:
        """Our register: "choosing,ticket,keys" where keys is how many keys
        this rank created less how many it deleted (num_keys sums them)."""
        k = self._reg(self._c.rank)
        # hosts disagree on a second publish of one key: unpublish first
        self._c.unpublish([k])
        self._c.publish({k: "%d,%d,%d" % (choosing, ticket, self._delta)})

    def _registers(self) -> List[Tuple[int, int, int]]:
        keys = [self._reg(r) for r in range(self._c.size)]
        delay = 0.0005
        while True:
            try:
                got = self._c.lookup(keys)
            except NotFoundError:
                got = {}
            if all(k in got for k in keys):
                out = []
                for k in keys:
                    c, t, d = str(got[k]).split(",")
                    out.append((int(c), int(t), int(d)))
                return out
            # a register is being rewritten (unpublish, then publish)
            time.sleep(delay)
            delay = min(delay * 2, 0.002)

    def _lock(self) -> None:
        me = self._c.rank
        self._write_register(1, 0)
        ticket = 1 + max(t for _, t, _ in self._registers())
        self._write_register(0, ticket)
        delay = 0.0005
        while True:
            regs = self._registers()
            if all(
                j == me or (c == 0 and (t == 0 or (t, j) > (ticket, me)))
                for j, (c, t, _) in enumerate(regs)
            ):
                return
            time.sleep(delay)
            delay = min(delay * 2, 0.002)

    def _unlock(self) -> None:
        self._write_register(0, 0)

    def _write(self, key: str, rec: bytes, n: int) -> None:
        k = self._vkey(key, n)
        self._c.publish({k: rec})
        self._known[key] = n

    def _update(self, key: str, f) -> bytes:
        """Under the lock: rec = f(current value or None); write it unless
        f returns None. Keeps our count of keys, which the unlock
        publishes. Returns f's result."""
        self._lock()
        try:
            n, rec = self._latest(key)
            old = rec[1:] if rec is not None and rec[:1] == _VALUE else None
            new = f(old)
            if new is not None:
                self._write(key, new, n + 1)
                created = old is None and new[:1] == _VALUE
                deleted = old is not None and new[:1] == _DELETED
                self._delta += created - deleted
            return new if new is not None else b""
        finally:
            self._unlock()

    def _get_now(self, key: str) -> Optional[bytes]:
        if self.mode == "fence":
            return self._view.get(key)
        _, rec = self._latest(key)
        if rec is not None and rec[:1] == _VALUE:
            return rec[1:]
        return None

    def _wait_for(self, key: str, deadline: float) -> bytes:
        while True:
            v = self._get_now(key)
            if v is not None:
                return v
            if self.mode == "fence":
                raise NotFoundError(
                    "store: %r is not set as of the last sync() (fence mode)" % key
                )
            left = deadline - time.monotonic()
            if left <= 0:
                raise PmixTimeoutError("store: timed out waiting for %r" % key)
            n = self._known.get(key, 0)
            k = self._vkey(key, n + 1)
            try:
                self._c.lookup(k, wait=True, timeout=max(1.0, min(left, 3600.0)))
            except PmixTimeoutError:
                pass

    # ------------------------------------------------------------ fence mode

    def sync(self) -> None:
        """Fence mode: make every rank's set/delete_key since the last
        sync visible to all (collective). Publish mode: a barrier."""
        if self.mode != "fence":
            self._c.fence(collect=False)
            return
        c = self._c
        self._epoch += 1
        for k, v in self._staged.items():
            self._mine[k] = (self._epoch, v)
        self._staged = {}
        index = "\n".join(
            "%d %d %s" % (e, 0 if v is None else 1, k) for k, (e, v) in self._mine.items()
        )
        # keys are new each epoch: a client keeps what it fetched, so a key
        # put again would read as its old value
        c.put("%sindex.%d" % (self._prefix, self._epoch), index)
        for k, (e, v) in self._mine.items():
            if v is not None and e == self._epoch:
                c.put("%sv.%d.%s" % (self._prefix, e, k), v)
        c.commit()
        c.fence(collect=True)
        best: Dict[str, Tuple[int, int, bool]] = {}
        for r in range(c.size):
            text = c.get(r, "%sindex.%d" % (self._prefix, self._epoch))
            for line in filter(None, str(text).split("\n")):
                e, live, k = line.split(" ", 2)
                cand = (int(e), r, live == "1")
                if k not in best or cand[:2] > best[k][:2]:
                    best[k] = cand
        view: Dict[str, bytes] = {}
        for k, (e, r, live) in best.items():
            if live:
                v = c.get(r, "%sv.%d.%s" % (self._prefix, e, k))
                view[k] = v if isinstance(v, bytes) else _as_bytes(v)
        self._view = view

    # ----------------------------------------------------------- the Store API

    def set(self, key: str, value: Union[str, bytes]) -> None:
        """Set key to value (str is stored UTF-8 encoded)."""
        key, value = self._key(key), _as_bytes(value)
        if self.mode == "fence":
            self._staged[key] = value
            return
        self._update(key, lambda old: _VALUE + value)

    def get(self, key: str) -> bytes:
        """The value of key, waiting up to the timeout for it to be set."""
        key = self._key(key)
        return self._wait_for(key, time.monotonic() + self._timeout)

    def check(self, keys: Sequence[str]) -> bool:
        """True if every key is set now (no waiting)."""
        return all(self._get_now(self._key(k)) is not None for k in keys)

    def wait(self, keys: Sequence[str], timeout: Timeout = None) -> None:
        """Wait until every key is set (PmixTimeoutError after timeout)."""
        deadline = time.monotonic() + _seconds(timeout, self._timeout)
        for k in keys:
            self._wait_for(self._key(k), deadline)

    def add(self, key: str, amount: int) -> int:
        """Atomically add amount to the integer value of key (0 if unset);
        the new value, which get returns as ASCII digits."""
        key = self._key(key)
        if self.mode == "fence":
            raise NotImplementedError("Store.add needs publish/lookup (fence mode)")
        new = self._update(key, lambda old: _VALUE + str(int(old or b"0") + int(amount)).encode())
        return int(new[1:])

    def compare_set(
        self, key: str, expected: Union[str, bytes], desired: Union[str, bytes]
    ) -> bytes:
        """Atomically set key to desired if its value is expected (or it is
        unset and expected is empty); the value after the call (for an
        unset key and a non-empty expected: expected)."""
        key = self._key(key)
        exp, des = _as_bytes(expected), _as_bytes(desired)
        if self.mode == "fence":
            raise NotImplementedError("Store.compare_set needs publish/lookup (fence mode)")
        seen: List[Optional[bytes]] = []

        def f(old: Optional[bytes]) -> Optional[bytes]:
            seen.append(old)
            if (old is None and exp == b"") or (old is not None and old == exp):
                return _VALUE + des
            return None

        self._update(key, f)
        old = seen[0]
        if (old is None and exp == b"") or (old is not None and old == exp):
            return des
        return exp if old is None else old

    def delete_key(self, key: str) -> bool:
        """Delete key; True if it was set."""
        key = self._key(key)
        if self.mode == "fence":
            had = key in self._view or self._staged.get(key) is not None
            self._staged[key] = None
            return had
        seen: List[bool] = []

        def f(old: Optional[bytes]) -> Optional[bytes]:
            seen.append(old is not None)
            return _DELETED if old is not None else None

        self._update(key, f)
        return seen[0]

    def num_keys(self) -> int:
        """How many keys are set (through this Store, not deleted)."""
        if self.mode == "fence":
            return len(self._view)
        return sum(d for _, _, d in self._registers())

    def __repr__(self) -> str:
        return "Store(%r, mode=%r)" % (self._prefix, self.mode)

