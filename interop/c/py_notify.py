# pmix-wire live tests: a python3-pmix client that notifies one event
# (code 3131) in the range named by its argument ("local" or "custom":
# PMIX_RANGE_CUSTOM naming its own namespace), then finalizes; the control
# for what a server-side default handler sees (pmixw/tests/live_hosts.rs).
# Written for pmix-wire.
import sys
import time
from pmix import PMIxClient, PMIX_RANGE_LOCAL, PMIX_RANGE_CUSTOM, \
    PMIX_EVENT_CUSTOM_RANGE, PMIX_PROC, PMIX_RANK_WILDCARD, PMIX_DATA_ARRAY

c = PMIxClient()
rc, me = c.init([])
if rc != 0:
    sys.exit(1)
info = []
rng = PMIX_RANGE_LOCAL
if sys.argv[1] == "custom":
    rng = PMIX_RANGE_CUSTOM
    ours = [{'nspace': me['nspace'], 'rank': PMIX_RANK_WILDCARD}]
    info = [{'key': PMIX_EVENT_CUSTOM_RANGE, 'val_type': PMIX_DATA_ARRAY,
             'value': {'type': PMIX_PROC, 'array': ours}}]
rc = c.notify_event(3131, me, rng, info)
print("notify", sys.argv[1], rc, flush=True)
# the server's handler runs on its own thread: give it time to print
time.sleep(1)
c.finalize([])
sys.exit(0 if rc == 0 else 1)
