"""One rank of the benchmark (bench.py starts it under a launcher):
times init-to-first-get and a 128-byte all-to-all exchange with either
pmixwire or python3-pmix (the libpmix-based bindings), and prints one JSON
line per rank.

Usage: python rank_bench.py pmixwire|libpmix ROUNDS
"""

import json
import sys
import time

IMPL, ROUNDS = sys.argv[1], int(sys.argv[2])


def val(rank, i):
    return ("%02x" % ((rank + i) % 256)) * 64  # 128 characters


def run_pmixwire():
    t0 = time.perf_counter()
    import pmixwire

    t_import = time.perf_counter() - t0
    t1 = time.perf_counter()
    c = pmixwire.Client()
    size = c.get(pmixwire.WILDCARD, "pmix.job.size")
    t_init = time.perf_counter() - t1
    rank = c.rank
    ex = []
    for i in range(ROUNDS):
        t = time.perf_counter()
        c.put("bench.%d" % i, val(rank, i))
        c.commit()
        c.fence()
        for r in range(size):
            assert c.get(r, "bench.%d" % i) == val(r, i)
        ex.append(time.perf_counter() - t)
    st = []
    store = pmixwire.Store(c, name="bench")
    for i in range(ROUNDS):
        t = time.perf_counter()
        store.set("k%d.%d" % (i, rank), val(rank, i))
        for r in range(size):
            assert store.get("k%d.%d" % (i, r)) == val(r, i).encode()
        st.append(time.perf_counter() - t)
        c.fence(collect=False)
    c.finalize()
    return rank, t_import, t_init, ex, st, 0


def run_libpmix():
    t0 = time.perf_counter()
    import pmix

    t_import = time.perf_counter() - t0
    t1 = time.perf_counter()
    c = pmix.PMIxClient()
    rc, me = c.init([])
    assert rc == 0, rc
    wild = {"nspace": me["nspace"], "rank": pmix.PMIX_RANK_WILDCARD}
    rc, size = c.get(wild, pmix.PMIX_JOB_SIZE, [])
    assert rc == 0, rc
    t_init = time.perf_counter() - t1
    size = size["value"] if isinstance(size, dict) else size
    rank = me["rank"]
    wrong = 0
    ex = []
    for i in range(ROUNDS):
        t = time.perf_counter()
        rc = c.put(pmix.PMIX_GLOBAL, "bench.%d" % i, {"value": val(rank, i), "val_type": pmix.PMIX_STRING})
        assert rc == 0, rc
        assert c.commit() == 0
        rc = c.fence([], [])
        assert rc == 0, (rc, c.error_string(rc))
        for r in range(size):
            rc, v = c.get({"nspace": me["nspace"], "rank": r}, "bench.%d" % i, [])
            assert rc == 0, rc
            v = v["value"] if isinstance(v, dict) else v
            # python3-pmix 4.2.2 under mpirun sometimes returns another
            # rank's value here (bench.md): counted, not fatal
            wrong += v != val(r, i)
        ex.append(time.perf_counter() - t)
    # the libpmix bindings have no Store: publish own, lookup everyone's
    # (waiting), the same rendezvous pattern
    st = []
    for i in range(ROUNDS):
        t = time.perf_counter()
        key = "bk%d.%s.%d" % (i, me["nspace"], rank)
        rc = c.publish([{"key": key, "value": val(rank, i), "val_type": pmix.PMIX_STRING}])
        assert rc == 0, rc
        for r in range(size):
            k = "bk%d.%s.%d" % (i, me["nspace"], r)
            rc, pdata = c.lookup([{"key": k}], [{"key": pmix.PMIX_WAIT, "value": True, "val_type": pmix.PMIX_BOOL}])
            assert rc == 0, rc
        st.append(time.perf_counter() - t)
        assert c.fence([], []) == 0
    c.finalize([])
    return rank, t_import, t_init, ex, st, wrong


rank, t_import, t_init, ex, st, wrong = run_pmixwire() if IMPL == "pmixwire" else run_libpmix()
print(json.dumps({"impl": IMPL, "rank": rank, "import": t_import, "init_first_get": t_init,
                  "exchange": ex, "store": st, "wrong": wrong}), flush=True)
