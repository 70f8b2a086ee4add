"""pmixwire under live PMIx hosts: 4 ranks run rank_checks.py (identity,
a 128-byte exchange through put/commit/fence/get and through the Store,
publish/lookup, events, errors) under each launcher found.

Hosts: our `pmixw run` (PMIXW_BIN, or pmixw on PATH), Open MPI's `mpirun`
(PATH), PRRTE's `prterun` (PMIXW_PRRTE_BIN, PATH, or a prefix under
target/ that .ci/setup installs), and Slurm's `srun --mpi=pmix` on one
node and on two nodes of the private cluster that pmixw/tests/live_python.rs
starts (interop/src/slurm; PMIXW_SLURM_CONF, PMIXW_SRUN_BIN). A host that is absent
is skipped, and fails the suite when CI=true.
"""

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import find_exe, missing

RANKS = 4
# Slurm hosts: srun --mpi=pmix over this many nodes
SLURM = {"srun-1node": 1, "srun-2nodes": 2}
HOSTS = ["pmixw", "mpirun", "prterun"] + list(SLURM)
SCRIPT = str(Path(__file__).with_name("rank_checks.py"))
# a hang guard, not a timed assertion: the ranks' own waits are 60 s at most
GUARD = 600


def launcher(host):
    """(argv prefix that starts RANKS copies of what follows, extra env)."""
    root = os.geteuid() == 0
    if host == "pmixw":
        exe = find_exe("pmixw", "PMIXW_BIN")
        if not exe:
            missing("pmixw (set PMIXW_BIN)")
        return [exe, "run", "-n", str(RANKS)], {}
    if host == "mpirun":
        exe = find_exe("mpirun", "PMIXW_MPIRUN_BIN")
        if not exe:
            missing("Open MPI mpirun")
        argv = [exe, "--oversubscribe", "-n", str(RANKS)]
        return argv[:1] + (["--allow-run-as-root"] if root else []) + argv[1:], {}
    if host == "prterun":
        exe = find_exe("prterun", "PMIXW_PRRTE_BIN", under_target=True)
        if not exe:
            missing("PRRTE prterun (set PMIXW_PRRTE_BIN)")
        env = {"PRTE_ALLOW_RUN_AS_ROOT": "1", "PRTE_ALLOW_RUN_AS_ROOT_CONFIRM": "1"} if root else {}
        return [exe, "--map-by", ":OVERSUBSCRIBE", "-n", str(RANKS)], env
    if host in SLURM:
        conf = os.environ.get("PMIXW_SLURM_CONF")
        exe = os.environ.get("PMIXW_SRUN_BIN") or find_exe("srun")
        if not conf or not exe:
            missing("a Slurm cluster (pmixw/tests/live_python.rs starts one: PMIXW_SLURM_CONF)")
        # 4 tasks spread evenly over SLURM[host] nodes (left to itself,
        # Slurm packs 3 + 1: the cluster's nodes have 256 CPUs each)
        nodes = SLURM[host]
        per_node = "--ntasks-per-node=%d" % (RANKS // nodes)
        return [exe, "--mpi=pmix", "-N", str(nodes), "-n", str(RANKS), per_node], {
            "SLURM_CONF": conf
        }
    raise ValueError(host)


def launch(argv, env):
    """Run argv; (exit code, output). The hang guard kills exactly what we
    started: the launcher's own process group."""
    p = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    try:
        text, _ = p.communicate(timeout=GUARD)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        text, _ = p.communicate()
        pytest.fail("%s did not finish:\n%s" % (argv[0], text.decode(errors="replace")))
    return p.returncode, text.decode(errors="replace")


def run_ranks(host, *args):
    argv, extra = launcher(host)
    with tempfile.TemporaryDirectory(prefix="pmixwire-py-") as out:
        env = dict(os.environ, PMIXWIRE_TEST_OUT=out, PYTHONUNBUFFERED="1", **extra)
        code, text = launch(argv + [sys.executable, SCRIPT] + list(args), env)
        logs = {}
        for r in range(RANKS):
            f = Path(out) / ("rank-%d.log" % r)
            logs[r] = f.read_text().splitlines() if f.exists() else []
    return code, text, logs


def expected(host, mode):
    """(checks every rank must pass, the Store mode it must end up in)."""
    slurm = host in SLURM
    # Slurm's plugin refuses publish/lookup: auto falls back to fence
    store_mode = "fence" if mode == "fence" or slurm else "publish"
    names = ["identity", "exchange 128 bytes put/commit/fence/get"]
    if mode == "auto":
        names += [
            "get of a missing key raises",
            "second thread refused while a call waits",
            "fence over a subset",
        ]
        names += ["publish refused"] if slurm else ["publish/lookup", "events"]
    names.append("exchange 128 bytes through the Store")
    if store_mode == "publish":
        names.append("store add/compare_set/delete/num_keys/blocking get")
    else:
        names.append("store (fence mode) delete/num_keys")
    names.append("finalized client refuses")
    return names, store_mode


@pytest.mark.parametrize("mode", ["auto", "fence"])
@pytest.mark.parametrize("host", HOSTS)
def test_ranks_under_host(host, mode):
    # Slurm's plugin refuses publish/lookup, and cancels the step on any
    # event a client raises (spec-notes/python.md): no events check there
    args = ["--store-mode", mode] + (["--no-publish", "--skip-events"] if host in SLURM else [])
    code, text, logs = run_ranks(host, *args)
    names, store_mode = expected(host, mode)
    report = "\n".join("[%d] %s" % (r, l) for r in logs for l in logs[r])
    for r in range(RANKS):
        lines = logs[r]
        assert not [l for l in lines if l.startswith("FAIL")], report + "\n" + text
        for name in names:
            assert any(l.startswith("ok " + name) for l in lines), (
                "rank %d lacks %r\n%s\n%s" % (r, name, report, text)
            )
        assert "done, 0 failed" in lines, report + "\n" + text
        mode_line = [l for l in lines if l.startswith("store mode ")]
        assert mode_line == ["store mode %s" % store_mode], lines
    if host in SLURM:
        # the job really spans SLURM[host] nodes (one slurmstepd each), and
        # every rank's local_size is the number of ranks on its node
        ids = {}
        for r in range(RANKS):
            f = dict(w.split("=", 1) for w in logs[r][0].split()[1:])
            ids.setdefault(f["node_id"], []).append(int(f["local_size"]))
        per = RANKS // SLURM[host]
        assert sorted(ids.values()) == [[per] * per] * SLURM[host], (ids, report)
    assert code == 0, "%s exited %s\n%s" % (host, code, text)


ABORT_SCRIPT = """
import sys, time, pmixwire
c = pmixwire.Client()
if c.rank == 0:
    c.abort(3, "pmixwire abort test")
    time.sleep(30)
    print("abort returned and rank 0 lived on", flush=True)
else:
    time.sleep(30)
    print("rank %d survived the abort" % c.rank, flush=True)
"""


@pytest.mark.parametrize("host", HOSTS)
def test_abort_ends_the_job(host):
    argv, extra = launcher(host)
    env = dict(os.environ, PYTHONUNBUFFERED="1", **extra)
    code, text = launch(argv + [sys.executable, "-c", ABORT_SCRIPT], env)
    assert code != 0, text
    if host in SLURM:
        # srun exits with the status rank 0 gave PMIx_Abort
        assert code == 3, (code, text)
    assert "survived" not in text and "lived on" not in text, text
