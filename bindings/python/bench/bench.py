"""pmixwire against python3-pmix (libpmix 4.2.2's own bindings) in the same
run, under the same launcher and Python interpreter: init-to-first-get
(PMIx_Init + the job size) and a 4-rank exchange of 128-byte values, once
through put/commit/fence/get and once through a rendezvous (our Store's
set/get; python3-pmix has no Store, so publish + waiting lookups).

    nice -n 19 python bench.py [--host pmixw|mpirun] [--runs 5] [--rounds 20]

Run it with the Python that has pmixwire installed; the ranks run under
PMIXW_BENCH_PYTHON (default /usr/bin/python3, where Debian's python3-pmix
lives) with pmixwire's directory on PYTHONPATH (the wheel is abi3).
Prints medians over runs (per run: the slowest rank) and ours/libpmix.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pmixwire

HERE = Path(__file__).resolve().parent
RANKS = 4


def launcher(host):
    if host == "pmixw":
        exe = os.environ.get("PMIXW_BIN") or shutil.which("pmixw")
        return [exe, "run", "-n", str(RANKS)]
    exe = shutil.which("mpirun")
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    return [exe] + root + ["--oversubscribe", "-n", str(RANKS)]


def one(host, impl, rounds, py):
    env = dict(os.environ, PYTHONPATH=str(Path(pmixwire.__file__).parent.parent))
    out = subprocess.run(
        launcher(host) + [py, str(HERE / "rank_bench.py"), impl, str(rounds)],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600,
    )
    # launchers may glue the ranks' lines together: decode every object
    rows, dec, text, i = [], json.JSONDecoder(), out.stdout, out.stdout.find("{")
    while i >= 0:
        try:
            obj, end = dec.raw_decode(text, i)
            rows.append(obj)
            i = text.find("{", end)
        except ValueError:
            i = text.find("{", i + 1)
    # python3-pmix exits 1 after printing (its progress thread at exit):
    # a run counts when every rank reported
    if len(rows) != RANKS:
        raise SystemExit("%s/%s failed:\n%s\n%s" % (host, impl, out.stdout, out.stderr))
    # the job is as fast as its slowest rank; skip round 0 (warm-up)
    return {
        "wrong": sum(r["wrong"] for r in rows),
        "init_first_get": max(r["init_first_get"] for r in rows),
        "import": max(r["import"] for r in rows),
        "exchange": statistics.median(max(r["exchange"][i] for r in rows) for i in range(1, rounds)),
        "store": statistics.median(max(r["store"][i] for r in rows) for i in range(1, rounds)),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", action="append", choices=["pmixw", "mpirun"])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=20)
    a = ap.parse_args()
    py = os.environ.get("PMIXW_BENCH_PYTHON", "/usr/bin/python3")
    for host in a.host or ["mpirun", "pmixw"]:
        res = {"pmixwire": [], "libpmix": []}
        for _ in range(a.runs):
            for impl in res:  # alternate, so drift hits both alike
                res[impl].append(one(host, impl, a.rounds, py))
        print("host %s, %d ranks, %d runs x %d rounds, median:" % (host, RANKS, a.runs, a.rounds))
        print("  %-22s %12s %12s %10s" % ("", "pmixwire", "python3-pmix", "ours/C"))
        for m, label in [("import", "import"), ("init_first_get", "init to first get"),
                         ("exchange", "put/commit/fence/get"), ("store", "rendezvous (Store)")]:
            ours = statistics.median(r[m] for r in res["pmixwire"])
            theirs = statistics.median(r[m] for r in res["libpmix"])
            print("  %-22s %10.2f ms %10.2f ms %9.2fx" % (label, ours * 1e3, theirs * 1e3, ours / theirs))
        print("  wrong values returned by get: pmixwire %d, python3-pmix %d (of %d)" % (
            sum(r["wrong"] for r in res["pmixwire"]), sum(r["wrong"] for r in res["libpmix"]),
            a.runs * a.rounds * RANKS * RANKS))


if __name__ == "__main__":
    main()
