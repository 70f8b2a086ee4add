/* pmix-capi's allocating and monitoring client
 * (capi/tests/libpmix_capi_server.rs): init, put and commit one key;
 * rank 0 asks PMIx_Allocation_request for a new allocation of two nodes
 * (capi_server.c's allocate upcall, CAPI_SERVER_ALLOC=1, answers with an
 * allocation id) and PMIx_Process_monitor for a monitor of a kind no
 * PMIx library runs itself ("capi.monitor.gpu": the host's monitor
 * upcall takes it), printing each status and what came back; finalize.
 * Written for pmix-wire; public API only. */
#include <pmix.h>
#include <stdio.h>

static void show(pmix_rank_t me, const char *what, pmix_status_t rc, pmix_info_t *res, size_t n) {
    printf("rank %u: %s %s n=%zu", me, what, PMIx_Error_string(rc), n);
    for (size_t i = 0; i < n; i++) {
        printf(" %s", res[i].key);
        if (res[i].value.type == PMIX_STRING) printf("=%s", res[i].value.data.string);
    }
    printf("\n");
    if (res) PMIX_INFO_FREE(res, n);
}

int main(void) {
    pmix_proc_t me;
    pmix_value_t v;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 10;
    PMIX_VALUE_LOAD(&v, "here", PMIX_STRING);
    if (PMIx_Put(PMIX_GLOBAL, "capi.alloc", &v) != PMIX_SUCCESS) return 11;
    if (PMIx_Commit() != PMIX_SUCCESS) return 12;
    if (me.rank == 0) {
        pmix_info_t want[2];
        uint64_t nodes = 2;
        PMIX_INFO_LOAD(&want[0], PMIX_ALLOC_NUM_NODES, &nodes, PMIX_UINT64);
        PMIX_INFO_LOAD(&want[1], PMIX_ALLOC_REQ_ID, "capi-req", PMIX_STRING);
        pmix_info_t *res = NULL;
        size_t n = 0;
        pmix_status_t rc = PMIx_Allocation_request(PMIX_ALLOC_NEW, want, 2, &res, &n);
        show(me.rank, "allocate", rc, res, n);

        pmix_info_t mon, dir;
        PMIX_INFO_LOAD(&mon, "capi.monitor.gpu", "gpu0", PMIX_STRING);
        PMIX_INFO_LOAD(&dir, PMIX_MONITOR_ID, "capi-mon", PMIX_STRING);
        res = NULL;
        n = 0;
        rc = PMIx_Process_monitor(&mon, PMIX_MONITOR_FILE_ALERT, &dir, 1, &res, &n);
        show(me.rank, "monitor", rc, res, n);
    }
    fflush(stdout);
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 13;
}
