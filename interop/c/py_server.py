# pmix-wire live tests: a minimal python3-pmix (OpenPMIx 4.2.2's Python
# bindings) server hosting one job of N ranks of a command, as a host that
# registers the least job data (size, maps; no appnum) and offers no
# publish, lookup or spawn (interop/src/hosts/grid.rs). Written for pmix-wire.
#
#   python3 py_server.py [--int-appnum] [--default-handler] N COMMAND [ARGS...]
#
# --int-appnum registers pmix.appnum (job level) as PMIX_INT, as Slurm's
# plugin sends it, where the standard says PMIX_UINT32.
# --default-handler registers a server-side handler for every event code,
# as Slurm's plugin does (it cancels the step on any event); this one
# prints "server handler saw <code>" instead.
#
# Prints "server <step> <status>" lines; exits with the highest exit code
# of the ranks (or 1 when the server itself fails).
import os
import socket
import subprocess
import sys
import threading
from pmix import PMIxServer, PMIX_SUCCESS, PMIX_OPERATION_SUCCEEDED, \
    PMIX_JOB_SIZE, PMIX_UNIV_SIZE, PMIX_LOCAL_SIZE, PMIX_NODE_MAP, \
    PMIX_PROC_MAP, PMIX_UINT32, PMIX_STRING, PMIX_APPNUM, PMIX_INT, \
    PMIX_EVENT_ACTION_COMPLETE, PMIX_ERR_NOT_SUPPORTED


def fine(*_):
    return PMIX_SUCCESS


def no_spawn(*_):
    # without a spawn upcall the bindings' own trampoline raises
    # UnboundLocalError, the request is never answered, and the server
    # has been seen to die later (spec-notes/divergences.md): say "not
    # supported", as libpmix itself does for a host without spawn
    return PMIX_ERR_NOT_SUPPORTED, ""


def saw(_id, code, *_):
    print("server handler saw", code, flush=True)
    return PMIX_EVENT_ACTION_COMPLETE, []


def step(what, rc):
    print("server", what, rc, flush=True)
    if rc not in (PMIX_SUCCESS, PMIX_OPERATION_SUCCEEDED):
        sys.exit(1)


args = sys.argv[1:]
flags = set()
while args and args[0].startswith("--"):
    flags.add(args.pop(0))
int_appnum = "--int-appnum" in flags
n = int(args[0])
cmd = args[1:]
s = PMIxServer()
step("init", s.init([], {'clientconnected': fine, 'clientfinalized': fine,
                         'fencenb': fine, 'spawn': no_spawn}))
if "--default-handler" in flags:
    rc, _ = s.register_event_handler([], [], saw)
    step("register_event_handler", rc)
ns = "pysrv-%d" % os.getpid()
rc, nodes = s.generate_regex([socket.gethostname()])
step("regex", rc)
rc, ppn = s.generate_ppn([",".join(str(r) for r in range(n))])
step("ppn", rc)
job = [
    {'key': PMIX_NODE_MAP, 'value': nodes, 'val_type': PMIX_STRING},
    {'key': PMIX_PROC_MAP, 'value': ppn, 'val_type': PMIX_STRING},
    {'key': PMIX_JOB_SIZE, 'value': n, 'val_type': PMIX_UINT32},
    {'key': PMIX_UNIV_SIZE, 'value': n, 'val_type': PMIX_UINT32},
    {'key': PMIX_LOCAL_SIZE, 'value': n, 'val_type': PMIX_UINT32},
]
if int_appnum:
    job.append({'key': PMIX_APPNUM, 'value': 0, 'val_type': PMIX_INT})
step("register_nspace", s.register_nspace(ns, n, job))
# Every rank is registered before the first one starts: the bindings call
# PMIx_server_register_client holding the GIL and wait in it for libpmix's
# progress thread, while that thread, accepting a rank that already runs,
# waits for the GIL in the bindings' upcall: a deadlock whenever a rank
# connects during a later rank's registration (seen under load: rank 0
# stuck in init, rank 1 never started; gdb shows both threads waiting).
envs = []
for r in range(n):
    env = os.environ.copy()
    step("register_client", s.register_client({'nspace': ns, 'rank': r},
                                              os.getuid(), os.getgid()))
    step("setup_fork", s.setup_fork({'nspace': ns, 'rank': r}, env))
    envs.append(env)
ranks = [subprocess.Popen(cmd, env=env) for env in envs]
codes = [p.wait() for p in ranks]
print("server exit codes", codes, flush=True)
# PMIx_server_finalize on a thread of its own, given 10 s: the exit status
# is the ranks', whatever the bindings' teardown does
done = threading.Thread(target=s.finalize, daemon=True)
done.start()
done.join(10)
sys.stdout.flush()
os._exit(max(c if c >= 0 else 1 for c in codes))
