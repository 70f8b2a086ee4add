# pmix-wire: a python3-pmix (libpmix 4.2.2) client run as every rank under
# `pmixw run` by pmixw/tests/libpmix_server_semantics.rs (issue 12): namespace, queries
# and a group with a context id. Prints "[rank] ok|fail <check> <value>".
# Written for pmix-wire.
import sys

import pmix

c = pmix.PMIxClient()
rc, me = c.init([])
rank = me["rank"] if rc == 0 else -1
failures = 0


def check(what, good, value=""):
    global failures
    print("[%d] %s %s %s" % (rank, "ok" if good else "fail", what, value), flush=True)
    failures += 0 if good else 1


check("init", rc == 0, rc)
if rc != 0:
    sys.exit(1)
ns = me["nspace"]
check("nspace", not ns.lower().startswith("pmix"), ns)
qual = [{"key": pmix.PMIX_NSPACE, "value": ns, "val_type": pmix.PMIX_STRING}]
rc, res = c.query([{"keys": [pmix.PMIX_QUERY_NAMESPACES], "qualifiers": []}])
check("query_namespaces", rc == 0 and res and ns in res[0]["value"].split(","), res)
rc, res = c.query([{"keys": [pmix.PMIX_QUERY_PROC_TABLE], "qualifiers": qual}])
table = res[0]["value"]["array"] if rc == 0 and res else []
check("query_proc_table", len(table) == 2 and all(p["pid"] > 0 for p in table), len(table))
rc, res = c.query([{"keys": [pmix.PMIX_QUERY_JOB_STATUS], "qualifiers": qual}])
check("query_job_status", rc == 0 and res and res[0]["value"] == 0, res)
procs = [{"nspace": ns, "rank": r} for r in range(2)]
rc, res = c.group_construct(
    "pygrp",
    procs,
    [{"key": pmix.PMIX_GROUP_ASSIGN_CONTEXT_ID, "value": True, "val_type": pmix.PMIX_BOOL}],
)
ctx = [i["value"] for i in res if i["key"] == "pmix.grp.ctxid"] if rc == 0 else []
check("group_context_id", rc == 0 and len(ctx) == 1 and ctx[0] != 2**64 - 1, ctx)
rc = c.group_destruct("pygrp", [])
check("group_destruct", rc == 0, rc)
rc = c.finalize([])
check("finalize", rc == 0, rc)
sys.exit(1 if failures else 0)
