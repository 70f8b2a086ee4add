/* pmix-capi's querying client (capi/tests/libpmix_capi_server.rs):
 * init, put and commit one key; rank 0 asks PMIx_Query_info for the
 * scheduler's queue list (PMIX_QUERY_QUEUE_LIST, a key neither server
 * answers itself: capi_server.c's query upcall, CAPI_SERVER_QUERY=1,
 * does) and then for a queue's status (which that upcall refuses with
 * PMIX_ERR_NOT_FOUND), printing each status and what came back;
 * finalize. Written for pmix-wire; public API only. */
#include <pmix.h>
#include <stdio.h>

static void ask(pmix_rank_t me, const char *key) {
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    char *keys[] = {(char *) key, NULL};
    q.keys = keys;
    pmix_info_t *res = NULL;
    size_t n = 0;
    pmix_status_t rc = PMIx_Query_info(&q, 1, &res, &n);
    printf("rank %u: query %s %s n=%zu", me, key, PMIx_Error_string(rc), n);
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
    if (PMIx_Put(PMIX_GLOBAL, "capi.qry", &v) != PMIX_SUCCESS) return 11;
    if (PMIx_Commit() != PMIX_SUCCESS) return 12;
    if (me.rank == 0) {
        ask(me.rank, PMIX_QUERY_QUEUE_LIST);
        ask(me.rank, PMIX_QUERY_QUEUE_STATUS);
    }
    fflush(stdout);
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 13;
}
