/* pmix-wire server tests: a libpmix 4.2.2 client run as every rank of a
 * job under `pmixw run` (pmixw/tests/libpmix_server_role.rs). Written for pmix-wire.
 *
 *   srv_client all      the battery below; prints "ok <check> <value>"
 *                       or "fail <check> <why>", exits 1 on any failure
 *   srv_client abort    init, then rank 0 aborts with status 7 while the
 *                       others wait in a fence that never completes
 *   srv_client init     init and finalize only
 *   srv_client die      rank 1 exits without finalizing; the others'
 *                       fence must fail instead of hanging
 *   srv_client spawn    rank 0 spawns two ranks of "srv_client child",
 *                       a new job that wires up on its own
 *   srv_client child    (the spawned job) exchanges a key with its peer
 *   srv_client jctrl    rank 0 kills rank 1 (which waits forever) with
 *                       PMIx_Job_control, then finalizes
 *   srv_client xconnect PMIx_Connect with every rank of its own job and of
 *                       the job named by SRV_PEER_NS, then reads that
 *                       job's size
 */
#include <pmix.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checks.h"

static pmix_proc_t me;
static volatile int event_seen = 0;
static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void) id;
    (void) info;
    (void) ninfo;
    (void) results;
    (void) nresults;
    if (status == PMIX_EXTERNAL_ERR_BASE - 7 && source && 0 == source->rank) {
        event_seen = 1;
    }
    if (cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}
static volatile int registered = 0;
static void on_reg(pmix_status_t s, size_t id, void *d) {
    (void) s;
    (void) id;
    (void) d;
    registered = 1;
}

static void battery(void) {
    pmix_status_t rc;
    pmix_proc_t wild, p;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    uint32_t n = get_u32(&wild, PMIX_JOB_SIZE, &rc);
    check("job_size", PMIX_SUCCESS == rc && n >= 1, "%u", n);
    uint32_t x = get_u32(&wild, PMIX_UNIV_SIZE, &rc);
    check("univ_size", PMIX_SUCCESS == rc && x == n, "%u", x);
    x = get_u32(&wild, PMIX_LOCAL_SIZE, &rc);
    check("local_size", PMIX_SUCCESS == rc && x == n, "%u", x);
    x = get_u32(&me, PMIX_LOCAL_RANK, &rc);
    check("local_rank", PMIX_SUCCESS == rc && x == me.rank, "%u", x);
    x = get_u32(&me, PMIX_NODE_RANK, &rc);
    check("node_rank", PMIX_SUCCESS == rc && x == me.rank, "%u", x);
    x = get_u32(&me, PMIX_APPNUM, &rc);
    check("appnum", PMIX_SUCCESS == rc && x == 0, "%u", x);
    char *s = get_str(&wild, PMIX_LOCAL_PEERS, &rc);
    check("local_peers", PMIX_SUCCESS == rc && s, "%s", s ? s : "?");
    free(s);
    s = get_str(&me, PMIX_HOSTNAME, &rc);
    check("hostname", PMIX_SUCCESS == rc && s, "%s", s ? s : "?");
    free(s);

    /* put/commit, then every peer's key before any fence: the gets wait
     * on the server until that peer has committed */
    char key[64], val[64];
    pmix_value_t v;
    snprintf(key, sizeof key, "srv.key.%u", me.rank);
    snprintf(val, sizeof val, "value-of-%u", me.rank);
    PMIX_VALUE_LOAD(&v, val, PMIX_STRING);
    rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    PMIX_VALUE_DESTRUCT(&v);
    check("put", PMIX_SUCCESS == rc, "%s", key);
    check("commit", PMIX_SUCCESS == PMIx_Commit(), NULL);
    int good = 1;
    for (uint32_t r = 0; r < n; r++) {
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        snprintf(key, sizeof key, "srv.key.%u", r);
        snprintf(val, sizeof val, "value-of-%u", r);
        s = get_str(&p, key, &rc);
        good &= PMIX_SUCCESS == rc && s && 0 == strcmp(s, val);
        free(s);
    }
    check("get_all_peers", good, "%u", n);

    /* fences with and without data */
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    check("fence_collect", PMIX_SUCCESS == PMIx_Fence(NULL, 0, &collect, 1), NULL);
    check("fence", PMIX_SUCCESS == PMIx_Fence(NULL, 0, NULL, 0), NULL);

    /* a key nobody put: the server waits for it (as libpmix's does) until
     * the request's PMIX_TIMEOUT, then says so; it never hangs */
    PMIX_LOAD_PROCID(&p, me.nspace, 0);
    pmix_info_t tmo;
    int one_s = 1;
    PMIX_INFO_LOAD(&tmo, PMIX_TIMEOUT, &one_s, PMIX_INT);
    pmix_value_t *mv = NULL;
    rc = PMIx_Get(&p, "srv.missing", &tmo, 1, &mv);
    check("get_missing", PMIX_ERR_TIMEOUT == rc || PMIX_ERR_NOT_FOUND == rc, "%s",
          PMIx_Error_string(rc));
    if (mv) {
        PMIX_VALUE_RELEASE(mv);
    }

    /* publish by rank 0; lookup with wait by everybody */
    if (0 == me.rank) {
        pmix_info_t pi;
        PMIX_INFO_LOAD(&pi, "srv.service", "svc-addr", PMIX_STRING);
        check("publish", PMIX_SUCCESS == PMIx_Publish(&pi, 1), NULL);
        PMIX_INFO_DESTRUCT(&pi);
    }
    pmix_pdata_t pd;
    PMIX_PDATA_CONSTRUCT(&pd);
    PMIX_LOAD_KEY(pd.key, "srv.service");
    pmix_info_t wait;
    PMIX_INFO_LOAD(&wait, PMIX_WAIT, NULL, PMIX_BOOL);
    rc = PMIx_Lookup(&pd, 1, &wait, 1);
    check("lookup", PMIX_SUCCESS == rc && PMIX_STRING == pd.value.type &&
                        0 == strcmp(pd.value.data.string, "svc-addr") && 0 == pd.proc.rank,
          "%s", PMIX_STRING == pd.value.type ? pd.value.data.string : PMIx_Error_string(rc));
    PMIX_PDATA_DESTRUCT(&pd);
    PMIx_Fence(NULL, 0, NULL, 0);

    /* events: everybody registers, rank 0 notifies, the others see it */
    pmix_status_t code = PMIX_EXTERNAL_ERR_BASE - 7;
    PMIx_Register_event_handler(&code, 1, NULL, 0, on_event, on_reg, NULL);
    for (int i = 0; i < 5000 && !registered; i++) {
        usleep(1000);
    }
    check("register_event", registered, NULL);
    PMIx_Fence(NULL, 0, NULL, 0);
    if (0 == me.rank) {
        check("notify",
              PMIX_SUCCESS == PMIx_Notify_event(code, &me, PMIX_RANGE_NAMESPACE, NULL, 0, NULL,
                                                NULL),
              NULL);
    } else {
        for (int i = 0; i < 10000 && !event_seen; i++) {
            usleep(1000);
        }
        check("event_delivered", event_seen, NULL);
    }
    PMIx_Fence(NULL, 0, NULL, 0);

    /* query the namespaces */
    pmix_query_t *q;
    PMIX_QUERY_CREATE(q, 1);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_NAMESPACES);
    pmix_info_t *res = NULL;
    size_t nres = 0;
    rc = PMIx_Query_info(q, 1, &res, &nres);
    check("query_namespaces",
          PMIX_SUCCESS == rc && nres == 1 && PMIX_STRING == res[0].value.type &&
              NULL != strstr(res[0].value.data.string, me.nspace),
          "%s", (PMIX_SUCCESS == rc && nres) ? res[0].value.data.string : PMIx_Error_string(rc));
    if (res) {
        PMIX_INFO_FREE(res, nres);
    }
    PMIX_QUERY_FREE(q, 1);

    /* an operation this host does not offer answers NOT_SUPPORTED */
    pmix_info_t ai;
    uint64_t one = 1;
    PMIX_INFO_LOAD(&ai, PMIX_ALLOC_NUM_NODES, &one, PMIX_UINT64);
    res = NULL;
    nres = 0;
    rc = PMIx_Allocation_request(PMIX_ALLOC_EXTEND, &ai, 1, &res, &nres);
    check("allocate_not_supported", PMIX_ERR_NOT_SUPPORTED == rc, "%s", PMIx_Error_string(rc));

    /* resolve the job's peers on this node, and the job's nodes */
    char host[256] = "";
    s = get_str(&me, PMIX_HOSTNAME, &rc);
    if (s) {
        snprintf(host, sizeof host, "%s", s);
        free(s);
    }
    pmix_proc_t *peers = NULL;
    size_t npeers = 0;
    rc = PMIx_Resolve_peers(host, me.nspace, &peers, &npeers);
    check("resolve_peers", PMIX_SUCCESS == rc && npeers == n, "%zu", npeers);
    if (peers) {
        PMIX_PROC_FREE(peers, npeers);
    }
    char *nodes = NULL;
    rc = PMIx_Resolve_nodes(me.nspace, &nodes);
    check("resolve_nodes", PMIX_SUCCESS == rc && nodes && 0 == strcmp(nodes, host), "%s",
          nodes ? nodes : PMIx_Error_string(rc));
    free(nodes);

    /* a native credential, which validates */
    pmix_byte_object_t cred;
    PMIX_BYTE_OBJECT_CONSTRUCT(&cred);
    rc = PMIx_Get_credential(NULL, 0, &cred);
    check("get_credential", PMIX_SUCCESS == rc && 8 == cred.size, "%zu", cred.size);
    if (PMIX_SUCCESS == rc) {
        rc = PMIx_Validate_credential(&cred, NULL, 0, NULL, NULL);
        check("validate_credential", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
    }
    PMIX_BYTE_OBJECT_DESTRUCT(&cred);

    /* connect / disconnect, group construct / destruct over the job */
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    check("connect", PMIX_SUCCESS == PMIx_Connect(&job, 1, NULL, 0), NULL);
    check("disconnect", PMIX_SUCCESS == PMIx_Disconnect(&job, 1, NULL, 0), NULL);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *mode = argc > 1 ? argv[1] : "all";
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    check("init", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
    if (PMIX_SUCCESS != rc) {
        return 1;
    }
    if (0 == strcmp(mode, "abort")) {
        if (0 == me.rank) {
            usleep(200000);
            PMIx_Abort(7, "srv_client abort test", NULL, 0);
        }
        PMIx_Fence(NULL, 0, NULL, 0);
        sleep(30);
        return 0;
    }
    if (0 == strcmp(mode, "die")) {
        if (1 == me.rank) {
            _exit(3);
        }
        rc = PMIx_Fence(NULL, 0, NULL, 0);
        check("fence_fails_when_a_rank_dies", PMIX_SUCCESS != rc, "%s", PMIx_Error_string(rc));
    }
    if (0 == strcmp(mode, "spawn") && 0 == me.rank) {
        pmix_app_t *app;
        PMIX_APP_CREATE(app, 1);
        app->cmd = strdup(argv[0]);
        PMIX_ARGV_APPEND(rc, app->argv, argv[0]);
        PMIX_ARGV_APPEND(rc, app->argv, "child");
        app->maxprocs = 2;
        pmix_nspace_t child;
        rc = PMIx_Spawn(NULL, 0, app, 1, child);
        check("spawn", PMIX_SUCCESS == rc && 0 != strcmp(child, me.nspace), "%s",
              PMIX_SUCCESS == rc ? child : PMIx_Error_string(rc));
        PMIX_APP_FREE(app, 1);
    }
    if (0 == strcmp(mode, "child")) {
        pmix_proc_t wild, peer;
        PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
        uint32_t n = get_u32(&wild, PMIX_JOB_SIZE, &rc);
        pmix_value_t v;
        char val[64];
        snprintf(val, sizeof val, "child-%u", me.rank);
        PMIX_VALUE_LOAD(&v, val, PMIX_STRING);
        PMIx_Put(PMIX_GLOBAL, "srv.child", &v);
        PMIX_VALUE_DESTRUCT(&v);
        PMIx_Commit();
        PMIx_Fence(NULL, 0, NULL, 0);
        PMIX_LOAD_PROCID(&peer, me.nspace, 1 - me.rank);
        char *s = get_str(&peer, "srv.child", &rc);
        check("child", n == 2 && s != NULL, "%s %u of %u got %s", me.nspace, me.rank, n,
              s ? s : PMIx_Error_string(rc));
        free(s);
    }
    if (0 == strcmp(mode, "jctrl")) {
        if (1 == me.rank) {
            printf("waiting to be killed\n");
            sleep(60);
            return 0;
        }
        pmix_proc_t victim;
        PMIX_LOAD_PROCID(&victim, me.nspace, 1);
        pmix_info_t kill;
        bool yes = true;
        PMIX_INFO_LOAD(&kill, PMIX_JOB_CTRL_KILL, &yes, PMIX_BOOL);
        rc = PMIx_Job_control(&victim, 1, &kill, 1, NULL, NULL);
        check("job_control_kill", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
    }
    if (0 == strcmp(mode, "xconnect")) {
        const char *other = getenv("SRV_PEER_NS");
        pmix_proc_t both[2], theirs;
        PMIX_LOAD_PROCID(&both[0], me.nspace, PMIX_RANK_WILDCARD);
        PMIX_LOAD_PROCID(&both[1], other ? other : "?", PMIX_RANK_WILDCARD);
        rc = PMIx_Connect(both, 2, NULL, 0);
        check("xconnect", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
        PMIX_LOAD_PROCID(&theirs, other ? other : "?", PMIX_RANK_WILDCARD);
        uint32_t n = get_u32(&theirs, PMIX_JOB_SIZE, &rc);
        check("xconnect_size", PMIX_SUCCESS == rc, "%u", n);
        rc = PMIx_Disconnect(both, 2, NULL, 0);
        check("xdisconnect", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
    }
    if (0 == strcmp(mode, "all")) {
        battery();
    }
    rc = PMIx_Finalize(NULL, 0);
    check("finalize", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
    printf("rank %u: %d failures\n", me.rank, failures);
    return failures ? 1 : 0;
}
