/* pmix-capi's process-set client (capi/tests/libpmix_capi_server.rs):
 * under interop/c/capi_server.c with CAPI_SERVER_PSET=1, each rank asks
 * its server how many process sets there are, their names and the
 * membership of "capi-first", and prints the answers. Public API only.
 * Written for pmix-wire. */
#include <pmix.h>
#include <stdio.h>
#include <string.h>

static pmix_proc_t me;

static void ask(const char *key, const char *pset) {
    pmix_query_t *q;
    PMIX_QUERY_CREATE(q, 1);
    pmix_status_t arc;
    PMIX_ARGV_APPEND(arc, q[0].keys, key);
    (void) arc;
    if (pset) {
        PMIX_QUERY_QUALIFIERS_CREATE(&q[0], 1);
        PMIX_INFO_LOAD(&q[0].qualifiers[0], PMIX_PSET_NAME, pset, PMIX_STRING);
    }
    pmix_info_t *res = NULL;
    size_t nres = 0;
    pmix_status_t rc = PMIx_Query_info(q, 1, &res, &nres);
    printf("rank %u: query %s rc=%d n=%zu", me.rank, key, rc, nres);
    for (size_t i = 0; i < nres; i++) {
        pmix_value_t *v = &res[i].value;
        if (v->type == PMIX_SIZE) {
            printf(" [%s size %zu]", res[i].key, v->data.size);
        } else if (v->type == PMIX_UINT32) {
            printf(" [%s uint32 %u]", res[i].key, v->data.uint32);
        } else if (v->type == PMIX_STRING) {
            printf(" [%s string %s]", res[i].key, v->data.string ? v->data.string : "(null)");
        } else if (v->type == PMIX_DATA_ARRAY && v->data.darray && v->data.darray->type == PMIX_PROC) {
            pmix_proc_t *ps = (pmix_proc_t *) v->data.darray->array;
            printf(" [%s procs", res[i].key);
            for (size_t k = 0; k < v->data.darray->size; k++) {
                printf(" %u", ps[k].rank);
            }
            printf("]");
        } else {
            printf(" [%s type %u]", res[i].key, v->type);
        }
    }
    printf("\n");
    if (res) {
        PMIX_INFO_FREE(res, nres);
    }
    PMIX_QUERY_FREE(q, 1);
}

int main(void) {
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) {
        return 1;
    }
    ask(PMIX_QUERY_NUM_PSETS, NULL);
    ask(PMIX_QUERY_PSET_NAMES, NULL);
    ask(PMIX_QUERY_PSET_MEMBERSHIP, "capi-first");
    PMIx_Finalize(NULL, 0);
    return 0;
}
