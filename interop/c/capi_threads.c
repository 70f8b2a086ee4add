/* pmix-capi's threads program (capi/tests/live_capi_client.rs): under
 * `pmixw run -n 2`, each rank runs four threads at once, each doing 200
 * PMIx_Get of job-level keys and of its own put keys, while the main
 * thread puts, commits and fences; every answer must be right, on
 * libpmix 4.2.2 and on pmix-capi's libpmix.so.2 alike (whose calls share
 * one lock: spec-notes/capi.md, "Threading"). Public API only. */
#include <pmix.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define THREADS 4
#define ROUNDS 200

static pmix_proc_t me;
static int wrong[THREADS];

static void *getter(void *arg) {
    int t = (int)(long)arg;
    pmix_proc_t job;
    PMIX_PROC_LOAD(&job, me.nspace, PMIX_RANK_WILDCARD);
    for (int i = 0; i < ROUNDS; i++) {
        pmix_value_t *v = NULL;
        if (PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &v) != PMIX_SUCCESS || v->type != PMIX_UINT32 ||
            v->data.uint32 != 2)
            wrong[t]++;
        if (v) PMIX_VALUE_RELEASE(v);
        v = NULL;
        if (PMIx_Get(&me, PMIX_LOCAL_RANK, NULL, 0, &v) != PMIX_SUCCESS || v->data.uint16 != me.rank) wrong[t]++;
        if (v) PMIX_VALUE_RELEASE(v);
    }
    return NULL;
}

int main(void) {
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 10;
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, getter, (void *)t);
    int bad = 0;
    for (int i = 0; i < 20; i++) {
        char key[32];
        snprintf(key, sizeof key, "thr-%d", i);
        pmix_value_t v;
        v.type = PMIX_UINT32;
        v.data.uint32 = 100 * me.rank + i;
        bad |= PMIx_Put(PMIX_GLOBAL, key, &v) != PMIX_SUCCESS;
    }
    bad |= PMIx_Commit() != PMIX_SUCCESS;
    bad |= PMIx_Fence(NULL, 0, NULL, 0) != PMIX_SUCCESS;
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    pmix_proc_t peer;
    PMIX_PROC_LOAD(&peer, me.nspace, 1 - me.rank);
    pmix_value_t *v = NULL;
    if (PMIx_Get(&peer, "thr-19", NULL, 0, &v) != PMIX_SUCCESS || v->data.uint32 != 100u * peer.rank + 19) bad = 1;
    if (v) PMIX_VALUE_RELEASE(v);
    int w = 0;
    for (int t = 0; t < THREADS; t++) w += wrong[t];
    printf("rank %u: %d threads x %d rounds, %d wrong, main %s\n", me.rank, THREADS, ROUNDS, w, bad ? "WRONG" : "ok");
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return w || bad;
}
