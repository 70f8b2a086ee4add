/* pmix-wire multi-node tests: a libpmix 4.2.2 client run as every rank of
 * one job spread over several nodes (pmixw/tests/live_slurm_pmi2.rs: `pmixw run`
 * under `srun --mpi=pmi2`, or Slurm's own `srun --mpi=pmix`). Written for
 * pmix-wire.
 *
 *   mn_client all    job data (size, nodes, each rank's node and local
 *                    rank), put/commit/fence(collect)/get of every rank,
 *                    then put/commit/fence(no data)/get of every rank
 *                    (direct modex), then an event from rank 0 that every
 *                    other rank must see; prints "ok <check> <value>" or
 *                    "fail <check> <why>", exits 1 on any failure
 *   mn_client abort  the last rank aborts with status 7 after a fence;
 *                    the others wait in a fence that never completes
 *   mn_client die    the last rank exits with status 3 without finalizing
 *                    while the others are in a fence
 *   mn_client scope collect|direct
 *                    every rank puts one key in each scope (sc.local.R
 *                    PMIX_LOCAL, sc.remote.R PMIX_REMOTE, sc.global.R
 *                    PMIX_GLOBAL), commits, fences (with PMIX_COLLECT_DATA
 *                    or without), then Gets every rank's three keys; one
 *                    line "scope ME PEER KIND STATUS MICROSECONDS" a Get,
 *                    then "scope_total ME MICROSECONDS"
 *   mn_client late   the last rank puts and commits "late.key" 4 s after
 *                    init (no fence); rank 0 Gets it meanwhile with
 *                    PMIX_IMMEDIATE, then with PMIX_TIMEOUT 1, then with
 *                    no attribute: one line "late WHAT STATUS
 *                    MILLISECONDS" each
 */
#include <pmix.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checks.h"

static pmix_proc_t me;
static void put_commit(const char *prefix) {
    char key[64], val[256];
    pmix_value_t v;
    snprintf(key, sizeof key, "%s.%u", prefix, me.rank);
    /* long enough that a node's share is several PMI-2 values */
    snprintf(val, sizeof val, "%s-of-%u-%0200d", prefix, me.rank, 0);
    PMIX_VALUE_LOAD(&v, val, PMIX_STRING);
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    PMIX_VALUE_DESTRUCT(&v);
    check("put", PMIX_SUCCESS == rc, "%s", key);
    check("commit", PMIX_SUCCESS == PMIx_Commit(), NULL);
}

static int get_all(const char *prefix, uint32_t n) {
    int good = 1;
    for (uint32_t r = 0; r < n; r++) {
        pmix_proc_t p;
        pmix_status_t rc;
        char key[64], want[256];
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        snprintf(key, sizeof key, "%s.%u", prefix, r);
        snprintf(want, sizeof want, "%s-of-%u-%0200d", prefix, r, 0);
        char *s = get_str(&p, key, &rc);
        if (!(PMIX_SUCCESS == rc && s && 0 == strcmp(s, want))) {
            printf("fail get %s of %u: %s\n", key, r, PMIx_Error_string(rc));
            good = 0;
        }
        free(s);
    }
    return good;
}

static pmix_status_t fence(int collect) {
    pmix_info_t info;
    bool yes = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(NULL, 0, collect ? &info : NULL, collect ? 1 : 0);
    PMIX_INFO_DESTRUCT(&info);
    return rc;
}

#define MN_EVENT (PMIX_EXTERNAL_ERR_BASE - 11)
static volatile int event_seen = 0;
static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void) id; (void) info; (void) ninfo; (void) results; (void) nresults;
    if (status == MN_EVENT && source && 0 == source->rank) {
        event_seen = 1;
    }
    if (cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}
static volatile int registered = 0;
static void on_reg(pmix_status_t s, size_t id, void *d) {
    (void) s; (void) id; (void) d;
    registered = 1;
}

static void all(void) {
    pmix_status_t rc;
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    uint32_t n = get_u32(&wild, PMIX_JOB_SIZE, &rc);
    check("job_size", PMIX_SUCCESS == rc, "%u", n);
    uint32_t nn = get_u32(&wild, PMIX_NUM_NODES, &rc);
    check("num_nodes", PMIX_SUCCESS == rc, "%u", nn);
    uint32_t ls = get_u32(&wild, PMIX_LOCAL_SIZE, &rc);
    check("local_size", PMIX_SUCCESS == rc, "%u", ls);
    char *peers = get_str(&wild, PMIX_LOCAL_PEERS, &rc);
    check("local_peers", PMIX_SUCCESS == rc && peers, "%s", peers ? peers : "?");
    free(peers);
    uint32_t lr = get_u32(&me, PMIX_LOCAL_RANK, &rc);
    check("local_rank", PMIX_SUCCESS == rc, "%u %u", me.rank, lr);
    uint32_t nr = get_u32(&me, PMIX_NODE_RANK, &rc);
    check("node_rank", PMIX_SUCCESS == rc, "%u %u", me.rank, nr);
    char *host = get_str(&me, PMIX_HOSTNAME, &rc);
    check("hostname", PMIX_SUCCESS == rc && host, "%u %s", me.rank, host ? host : "?");
    free(host);
    char *nodes = NULL;
    rc = PMIx_Resolve_nodes(me.nspace, &nodes);
    check("resolve_nodes", PMIX_SUCCESS == rc && nodes, "%s", nodes ? nodes : "?");
    free(nodes);
    /* every rank's node, as this rank sees it */
    char line[4096] = "";
    for (uint32_t r = 0; r < n; r++) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        char *h = get_str(&p, PMIX_HOSTNAME, &rc);
        uint32_t id = get_u32(&p, PMIX_NODEID, &rc);
        size_t l = strlen(line);
        snprintf(line + l, sizeof line - l, "%s%u:%s:%u", r ? " " : "", r, h ? h : "?", id);
        free(h);
    }
    check("peer_nodes", 1, "%u %s", me.rank, line);

    put_commit("mn.collect");
    rc = fence(1);
    check("fence_collect", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
    check("get_collected", get_all("mn.collect", n), "%u", n);

    put_commit("mn.direct");
    rc = fence(0);
    check("fence", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
    check("get_direct", get_all("mn.direct", n), "%u", n);

    pmix_status_t code = MN_EVENT;
    PMIx_Register_event_handler(&code, 1, NULL, 0, on_event, on_reg, NULL);
    for (int i = 0; i < 5000 && !registered; i++) {
        usleep(1000);
    }
    rc = fence(0);
    check("fence_events", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
    if (0 == me.rank) {
        rc = PMIx_Notify_event(code, &me, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL);
        check("notify", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
    } else {
        for (int i = 0; i < 20000 && !event_seen; i++) {
            usleep(1000);
        }
        check("event_delivered", event_seen, "%u", me.rank);
    }
    rc = fence(0);
    check("fence_final", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
}

static long long usec_since(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (long long) (t1.tv_sec - t0->tv_sec) * 1000000 + (t1.tv_nsec - t0->tv_nsec) / 1000;
}

static void scope(uint32_t n, int collect) {
    static const struct {
        const char *kind;
        pmix_scope_t scope;
    } kinds[] = {{"local", PMIX_LOCAL}, {"remote", PMIX_REMOTE}, {"global", PMIX_GLOBAL}};
    char key[64];
    for (size_t k = 0; k < 3; k++) {
        pmix_value_t v;
        snprintf(key, sizeof key, "sc.%s.%u", kinds[k].kind, me.rank);
        PMIX_VALUE_LOAD(&v, key, PMIX_STRING);
        pmix_status_t rc = PMIx_Put(kinds[k].scope, key, &v);
        PMIX_VALUE_DESTRUCT(&v);
        check("put", PMIX_SUCCESS == rc, "%s", key);
    }
    check("commit", PMIX_SUCCESS == PMIx_Commit(), NULL);
    pmix_status_t rc = fence(collect);
    check("fence", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
    struct timespec all0;
    clock_gettime(CLOCK_MONOTONIC, &all0);
    for (uint32_t r = 0; r < n; r++) {
        for (size_t k = 0; k < 3; k++) {
            pmix_proc_t p;
            pmix_value_t *v = NULL;
            struct timespec t0;
            PMIX_LOAD_PROCID(&p, me.nspace, r);
            snprintf(key, sizeof key, "sc.%s.%u", kinds[k].kind, r);
            clock_gettime(CLOCK_MONOTONIC, &t0);
            rc = PMIx_Get(&p, key, NULL, 0, &v);
            long long us = usec_since(&t0);
            /* a value found must be the one put */
            if (PMIX_SUCCESS == rc && !(v && PMIX_STRING == v->type && 0 == strcmp(v->data.string, key))) {
                rc = PMIX_ERR_BAD_PARAM;
            }
            printf("scope %u %u %s %s %lld\n", me.rank, r, kinds[k].kind, PMIx_Error_string(rc), us);
            if (v) {
                PMIX_VALUE_RELEASE(v);
            }
        }
    }
    printf("scope_total %u %lld\n", me.rank, usec_since(&all0));
    fflush(stdout);
    /* nobody finalizes while a peer may still ask for its data */
    rc = fence(0);
    check("fence_final", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
}

static void late(uint32_t n) {
    pmix_proc_t last;
    PMIX_LOAD_PROCID(&last, me.nspace, n - 1);
    if (me.rank == n - 1) {
        sleep(4);
        pmix_value_t v;
        PMIX_VALUE_LOAD(&v, "late-value", PMIX_STRING);
        check("put", PMIX_SUCCESS == PMIx_Put(PMIX_GLOBAL, "late.key", &v), NULL);
        PMIX_VALUE_DESTRUCT(&v);
        check("commit", PMIX_SUCCESS == PMIx_Commit(), NULL);
    } else if (0 == me.rank) {
        static const char *what[] = {"immediate", "timeout1", "plain"};
        for (int i = 0; i < 3; i++) {
            pmix_info_t info;
            bool yes = true;
            uint32_t one = 1;
            if (0 == i) {
                PMIX_INFO_LOAD(&info, PMIX_IMMEDIATE, &yes, PMIX_BOOL);
            } else if (1 == i) {
                PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &one, PMIX_UINT32);
            }
            pmix_value_t *v = NULL;
            struct timespec t0;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            pmix_status_t rc = PMIx_Get(&last, "late.key", i < 2 ? &info : NULL, i < 2 ? 1 : 0, &v);
            printf("late %s %s %lld\n", what[i], PMIx_Error_string(rc), usec_since(&t0) / 1000);
            fflush(stdout);
            if (i < 2) {
                PMIX_INFO_DESTRUCT(&info);
            }
            if (v) {
                PMIX_VALUE_RELEASE(v);
            }
        }
    }
    pmix_status_t rc = fence(0);
    check("fence_final", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "all";
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        printf("fail init %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    uint32_t n = get_u32(&wild, PMIX_JOB_SIZE, &rc);
    if (0 == strcmp(mode, "abort") || 0 == strcmp(mode, "die")) {
        rc = fence(0);
        check("first_fence", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
        if (me.rank == n - 1) {
            usleep(200000);
            if (0 == strcmp(mode, "abort")) {
                PMIx_Abort(7, "mn_client abort test", NULL, 0);
            }
            _exit(3);
        }
        rc = fence(0);
        /* not reached when the job ends as it should */
        check("second_fence_returned", 0, "%s", PMIx_Error_string(rc));
        PMIx_Finalize(NULL, 0);
        return 1;
    }
    if (0 == strcmp(mode, "late")) {
        late(n);
    } else if (0 == strcmp(mode, "scope")) {
        scope(n, argc > 2 && 0 == strcmp(argv[2], "collect"));
    } else {
        all();
    }
    rc = PMIx_Finalize(NULL, 0);
    check("finalize", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
    printf("rank %u: %d failures\n", me.rank, failures);
    return failures ? 1 : 0;
}
