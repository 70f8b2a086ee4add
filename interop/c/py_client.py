# pmix-wire live tests: a python3-pmix (OpenPMIx 4.2.2's Python bindings)
# client run as every rank of a job under our server (interop/src/hosts/grid.rs).
# Written for pmix-wire. Prints "ok <check> <value>" or "fail <check> <why>"
# per check; exits 1 on any failure.
import sys
from pmix import PMIxClient, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, PMIX_GLOBAL, \
    PMIX_UINT32, PMIX_COLLECT_DATA, PMIX_BOOL

failures = 0


def check(what, good, value):
    global failures
    print(("ok" if good else "fail"), what, value, flush=True)
    failures += 0 if good else 1


c = PMIxClient()
rc, me = c.init([])
check("init", rc == 0, rc)
if rc != 0:
    sys.exit(1)
ns, rank = me['nspace'], me['rank']
rc, v = c.get({'nspace': ns, 'rank': PMIX_RANK_WILDCARD}, PMIX_JOB_SIZE, [])
size = v['value'] if rc == 0 and v else 0
check("job_size", rc == 0 and size > rank, size)
rc = c.put(PMIX_GLOBAL, "py.rank", {'value': 500 + rank, 'val_type': PMIX_UINT32})
check("put", rc == 0, rc)
check("commit", c.commit() == 0, "")
rc = c.fence([], [{'key': PMIX_COLLECT_DATA, 'value': True, 'val_type': PMIX_BOOL}])
check("fence", rc == 0, rc)
for p in range(size):
    rc, v = c.get({'nspace': ns, 'rank': p}, "py.rank", [])
    got = v['value'] if rc == 0 and v else None
    check("get_rank_%d" % p, got == 500 + p, got)
# a reserved key nobody registered: answered locally, NOT_FOUND (-46)
rc, v = c.get({'nspace': ns, 'rank': rank}, "pmix.no.such.key", [])
check("absent_reserved_key", rc == -46, rc)
check("finalize", c.finalize([]) == 0, "")
print("rank %d: %d failures" % (rank, failures), flush=True)
sys.exit(1 if failures else 0)
