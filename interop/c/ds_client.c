/* pmix-wire shared-store client (pmixw/tests/live_dstore.rs). Written for
 * pmix-wire. One rank: init; read job-level and own rank-level keys; put
 * "ds.num" (uint32 rank*7) and "ds.str.<rank>" (a string) GLOBAL; commit;
 * fence with data; read every peer's two keys, and a key the peer did not
 * put (PMIX_OPTIONAL: must be PMIX_ERR_NOT_FOUND); finalize. Prints "ok <check> ..." or
 * "fail <check> ..." per check and "rank R: F failures" at the end. The
 * test reads libpmix's verbose output (stderr) to see where each get was
 * answered. An argument L: L ranks a node in blocks (rank r is local rank
 * r % L); without it, every rank on this node. */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
static pmix_proc_t me;

#define CHECK(cond, name, ...)                                 \
    do {                                                       \
        if (cond) {                                            \
            printf("ok " name "\n", ##__VA_ARGS__);            \
        } else {                                               \
            printf("fail " name " (rank %u)\n", ##__VA_ARGS__, me.rank); \
            failures++;                                        \
        }                                                      \
    } while (0)

static uint32_t get_u32(const pmix_proc_t *p, const char *key, pmix_status_t *rc) {
    pmix_value_t *v = NULL;
    uint32_t out = 0xFFFFFFFF;
    *rc = PMIx_Get(p, key, NULL, 0, &v);
    if (PMIX_SUCCESS == *rc && NULL != v) {
        if (PMIX_UINT32 == v->type) {
            out = v->data.uint32;
        } else if (PMIX_UINT16 == v->type) {
            out = v->data.uint16;
        } else {
            *rc = PMIX_ERR_TYPE_MISMATCH;
        }
        PMIX_VALUE_RELEASE(v);
    }
    return out;
}

int main(int argc, char **argv) {
    pmix_proc_t wild, p;
    pmix_status_t rc;
    char key[64], val[96];
    if (PMIX_SUCCESS != PMIx_Init(&me, NULL, 0)) {
        printf("fail init\n");
        return 1;
    }
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    uint32_t n = get_u32(&wild, PMIX_JOB_SIZE, &rc);
    CHECK(PMIX_SUCCESS == rc, "job_size %u", n);
    uint32_t u = get_u32(&wild, PMIX_UNIV_SIZE, &rc);
    CHECK(PMIX_SUCCESS == rc && u == n, "univ_size %u", u);
    uint32_t ls = get_u32(&wild, PMIX_LOCAL_SIZE, &rc);
    uint32_t per = argc > 1 ? (uint32_t) strtoul(argv[1], NULL, 10) : n;
    CHECK(PMIX_SUCCESS == rc && ls == per, "local_size %u", ls);
    uint32_t lr = get_u32(&me, PMIX_LOCAL_RANK, &rc);
    CHECK(PMIX_SUCCESS == rc && per > 0 && lr == me.rank % per, "local_rank %u", lr);

    pmix_value_t x;
    uint32_t num = me.rank * 7;
    PMIX_VALUE_LOAD(&x, &num, PMIX_UINT32);
    PMIx_Put(PMIX_GLOBAL, "ds.num", &x);
    PMIX_VALUE_DESTRUCT(&x);
    snprintf(key, sizeof key, "ds.str.%u", me.rank);
    snprintf(val, sizeof val, "string-of-rank-%u", me.rank);
    PMIX_VALUE_LOAD(&x, val, PMIX_STRING);
    PMIx_Put(PMIX_GLOBAL, key, &x);
    PMIX_VALUE_DESTRUCT(&x);
    CHECK(PMIX_SUCCESS == PMIx_Commit(), "commit");

    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    CHECK(PMIX_SUCCESS == PMIx_Fence(NULL, 0, &collect, 1), "fence");

    uint32_t good = 0;
    for (uint32_t r = 0; r < n; r++) {
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        uint32_t got = get_u32(&p, "ds.num", &rc);
        CHECK(PMIX_SUCCESS == rc && got == r * 7, "peer_num %u %u", r, got);
        pmix_value_t *v = NULL;
        snprintf(key, sizeof key, "ds.str.%u", r);
        snprintf(val, sizeof val, "string-of-rank-%u", r);
        rc = PMIx_Get(&p, key, NULL, 0, &v);
        int same = PMIX_SUCCESS == rc && NULL != v && PMIX_STRING == v->type &&
                   0 == strcmp(v->data.string, val);
        CHECK(same, "peer_str %u", r);
        if (NULL != v) {
            PMIX_VALUE_RELEASE(v);
        }
        good += same && got == r * 7;
    }
    CHECK(good == n, "all_peers %u", good);
    /* DS_SNAPSHOT=DIR: rank 0 copies the store, every rank's data in it,
     * to DIR (for a byte comparison of two servers' stores) */
    const char *snap = getenv("DS_SNAPSHOT");
    const char *base = getenv("PMIX_DSTORE_21_BASE_PATH");
    if (0 == me.rank && NULL != snap && NULL != base) {
        char cmd[4096];
        snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", base, snap);
        CHECK(0 == system(cmd), "snapshot");
    }
    /* a key the peer did not put (its neighbour's string key), asked
     * PMIX_OPTIONAL: answered from what this process holds, without asking
     * the server (which would wait for the peer to commit it) */
    uint32_t peer = (me.rank + 1) % n;
    PMIX_LOAD_PROCID(&p, me.nspace, peer);
    snprintf(key, sizeof key, "ds.str.%u", (peer + 1) % n);
    pmix_value_t *v = NULL;
    pmix_info_t optional;
    PMIX_INFO_LOAD(&optional, PMIX_OPTIONAL, &yes, PMIX_BOOL);
    rc = PMIx_Get(&p, key, &optional, 1, &v);
    CHECK(PMIX_ERR_NOT_FOUND == rc, "not_found %u %s %s", peer, key, PMIx_Error_string(rc));
    if (NULL != v) {
        PMIX_VALUE_RELEASE(v);
    }
    CHECK(PMIX_SUCCESS == PMIx_Finalize(NULL, 0), "finalize");
    printf("rank %u: %d failures\n", me.rank, failures);
    return failures ? 1 : 0;
}
