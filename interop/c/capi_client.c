/* pmix-capi's live client program (capi/tests/live_capi_client.rs): run
 * under `pmixw run -n 2` once on libpmix 4.2.2 and once on pmix-capi's
 * libpmix.so.2, it must print the same lines. Public API only. Each rank:
 * init, job size, its node's peers, the job's nodes, put, commit, fence
 * (non-blocking, callback), the other rank's key (non-blocking get),
 * rank 0 publishes and rank 1 looks up (waiting for it), a query, a log,
 * connect and disconnect with the whole job, an event handler for one
 * code (rank 0 raises it, rank 1 hears it with its info), finalize. Namespaces and
 * host names are not printed (they differ from run to run). */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capi_query.h"

static volatile int fence_done = 0, get_done = 0;
static pmix_status_t fence_rc, get_rc;
static char got_text[128];

static void fence_cb(pmix_status_t status, void *cbdata) {
    (void)cbdata;
    fence_rc = status;
    __atomic_store_n(&fence_done, 1, __ATOMIC_SEQ_CST);
}

static void get_cb(pmix_status_t status, pmix_value_t *kv, void *cbdata) {
    (void)cbdata;
    get_rc = status;
    if (status == PMIX_SUCCESS && kv && kv->type == PMIX_STRING)
        snprintf(got_text, sizeof got_text, "%s", kv->data.string);
    __atomic_store_n(&get_done, 1, __ATOMIC_SEQ_CST);
}

static volatile int reg_done = 0, event_seen = 0;
static pmix_status_t reg_rc, event_status;
static size_t reg_ref;
static pmix_rank_t event_source;
static char event_text[64];

static void reg_cb(pmix_status_t status, size_t ref, void *cbdata) {
    (void)cbdata;
    reg_rc = status;
    reg_ref = ref;
    __atomic_store_n(&reg_done, 1, __ATOMIC_SEQ_CST);
}

static void handler(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                    pmix_info_t results[], size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id; (void)results; (void)nresults;
    event_status = status;
    event_source = source ? source->rank : PMIX_RANK_UNDEF;
    for (size_t i = 0; i < ninfo; i++)
        if (0 == strcmp(info[i].key, "capi.event.text") && info[i].value.type == PMIX_STRING)
            snprintf(event_text, sizeof event_text, "%s", info[i].value.data.string);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    __atomic_store_n(&event_seen, 1, __ATOMIC_SEQ_CST);
}

static void wait_for(volatile int *flag) {
    struct timespec ts = {0, 1000000};
    while (!__atomic_load_n(flag, __ATOMIC_SEQ_CST)) nanosleep(&ts, NULL);
}

int main(void) {
    pmix_proc_t me, job, peer;
    pmix_value_t v, *got = NULL;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    printf("rank %u: init rc=%d initialized=%d\n", me.rank, rc, PMIx_Initialized());
    if (rc != PMIX_SUCCESS) return 1;
    PMIX_PROC_LOAD(&job, me.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &got);
    uint32_t size = rc == PMIX_SUCCESS ? got->data.uint32 : 0;
    printf("rank %u: job size rc=%d type=%d size=%u\n", me.rank, rc, rc == PMIX_SUCCESS ? got->type : -1, size);
    if (got) PMIX_VALUE_RELEASE(got);
    got = NULL;
    rc = PMIx_Get(&me, PMIX_LOCAL_RANK, NULL, 0, &got);
    printf("rank %u: local rank rc=%d value=%u\n", me.rank, rc, rc == PMIX_SUCCESS ? got->data.uint16 : 0);
    if (got) PMIX_VALUE_RELEASE(got);
    got = NULL;
    rc = PMIx_Get(&job, "not.a.key", NULL, 0, &got);
    printf("rank %u: missing key rc=%d\n", me.rank, rc);

    pmix_proc_t *peers = NULL;
    size_t npeers = 0;
    rc = PMIx_Resolve_peers(NULL, me.nspace, &peers, &npeers);
    printf("rank %u: resolve peers rc=%d n=%zu", me.rank, rc, npeers);
    for (size_t i = 0; i < npeers; i++)
        printf(" %u%s", peers[i].rank, 0 == strcmp(peers[i].nspace, me.nspace) ? "" : "(other ns)");
    printf("\n");
    free(peers);
    char *nodes = NULL;
    rc = PMIx_Resolve_nodes(me.nspace, &nodes);
    printf("rank %u: resolve nodes rc=%d count=%d\n", me.rank, rc,
           nodes ? 1 + (int)(strchr(nodes, ',') != NULL) : 0);
    free(nodes);

    char key[64], want[64];
    snprintf(key, sizeof key, "capi-%u", me.rank);
    snprintf(want, sizeof want, "hello from %u", me.rank);
    v.type = PMIX_STRING;
    v.data.string = want;
    printf("rank %u: put rc=%d\n", me.rank, PMIx_Put(PMIX_GLOBAL, key, &v));
    printf("rank %u: commit rc=%d\n", me.rank, PMIx_Commit());
    pmix_info_t info;
    bool collect = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    rc = PMIx_Fence_nb(&job, 1, &info, 1, fence_cb, NULL);
    if (rc == PMIX_SUCCESS) wait_for(&fence_done);
    printf("rank %u: fence_nb rc=%d cb rc=%d\n", me.rank, rc, fence_rc);
    PMIX_INFO_DESTRUCT(&info);

    PMIX_PROC_LOAD(&peer, me.nspace, (me.rank + 1) % size);
    snprintf(key, sizeof key, "capi-%u", peer.rank);
    rc = PMIx_Get_nb(&peer, key, NULL, 0, get_cb, NULL);
    if (rc == PMIX_SUCCESS) wait_for(&get_done);
    printf("rank %u: get_nb rc=%d cb rc=%d [%s]\n", me.rank, rc, get_rc, got_text);

    if (me.rank == 0) {
        pmix_info_t pub;
        PMIX_INFO_LOAD(&pub, "capi-published", "the value", PMIX_STRING);
        printf("rank %u: publish rc=%d\n", me.rank, PMIx_Publish(&pub, 1));
        PMIX_INFO_DESTRUCT(&pub);
    } else {
        pmix_pdata_t pd;
        PMIX_PDATA_CONSTRUCT(&pd);
        PMIX_LOAD_KEY(pd.key, "capi-published");
        pmix_info_t w;
        int n = 1;
        PMIX_INFO_LOAD(&w, PMIX_WAIT, &n, PMIX_INT);
        rc = PMIx_Lookup(&pd, 1, &w, 1);
        printf("rank %u: lookup rc=%d by rank %u type=%d [%s]\n", me.rank, rc, pd.proc.rank, pd.value.type,
               pd.value.type == PMIX_STRING ? pd.value.data.string : "");
        PMIX_PDATA_DESTRUCT(&pd);
        PMIX_INFO_DESTRUCT(&w);
    }
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    printf("rank %u: fence rc=%d\n", me.rank, rc);
    if (me.rank == 0) {
        char *keys[] = {"capi-published", NULL};
        printf("rank %u: unpublish rc=%d\n", me.rank, PMIx_Unpublish(keys, NULL, 0));
    }

    char label[32];
    snprintf(label, sizeof label, "rank %u", me.rank);
    query_namespaces(label);

    pmix_info_t msg;
    PMIX_INFO_LOAD(&msg, PMIX_LOG_STDERR, "capi log line\n", PMIX_STRING);
    printf("rank %u: log rc=%d\n", me.rank, PMIx_Log(&msg, 1, NULL, 0));
    PMIX_INFO_DESTRUCT(&msg);

    printf("rank %u: connect rc=%d\n", me.rank, PMIx_Connect(&job, 1, NULL, 0));
    printf("rank %u: disconnect rc=%d\n", me.rank, PMIx_Disconnect(&job, 1, NULL, 0));

    /* events: both register for one code, rank 0 raises it, rank 1 hears it */
    pmix_status_t code = PMIX_EXTERNAL_ERR_BASE - 7;
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, handler, reg_cb, NULL);
    if (rc == PMIX_SUCCESS) wait_for(&reg_done);
    printf("rank %u: register rc=%d cb rc=%d\n", me.rank, rc, reg_rc);
    printf("rank %u: fence rc=%d\n", me.rank, PMIx_Fence(NULL, 0, NULL, 0));
    if (me.rank == 0) {
        pmix_info_t ev;
        PMIX_INFO_LOAD(&ev, "capi.event.text", "raised by 0", PMIX_STRING);
        printf("rank %u: notify rc=%d\n", me.rank, PMIx_Notify_event(code, &me, PMIX_RANGE_NAMESPACE, &ev, 1, NULL, NULL));
        PMIX_INFO_DESTRUCT(&ev);
    } else {
        wait_for(&event_seen);
        printf("rank %u: event %d from rank %u [%s]\n", me.rank, event_status - PMIX_EXTERNAL_ERR_BASE, event_source,
               event_text);
    }
    printf("rank %u: fence rc=%d\n", me.rank, PMIx_Fence(NULL, 0, NULL, 0));
    printf("rank %u: deregister rc=%d\n", me.rank, PMIx_Deregister_event_handler(reg_ref, NULL, NULL));

    rc = PMIx_Finalize(NULL, 0);
    printf("rank %u: finalize rc=%d initialized=%d\n", me.rank, rc, PMIx_Initialized());
    return 0;
}
