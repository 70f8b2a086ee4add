/* PMIx_Query_info of the keys libpmix 4.2.2 answers itself
 * (PMIX_QUERY_STABLE_ABI_VERSION, PMIX_QUERY_PROVISIONAL_ABI_VERSION), one
 * per query, two in one query and beside PMIX_QUERY_NAMESPACES, before
 * PMIx_Init, after it and after PMIx_Finalize, printed so that the same
 * program linked to libpmix and to pmix-wire's libpmix can be compared
 * line by line (capi/tests/libpmix_capi_query.rs). Run as a singleton
 * and as the one rank of `pmixw run -n 1` (where two ABI keys in one
 * query after init are not asked: libpmix 4.2.2 waits for ever on them).
 * Written for pmix-wire. */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>

static void query(const char *what, const char *k1, const char *k2)
{
    pmix_query_t *q;
    pmix_info_t *info = NULL;
    size_t ninfo = 0, i;
    pmix_status_t rc;

    PMIX_QUERY_CREATE(q, 1);
    PMIX_ARGV_APPEND(rc, q[0].keys, k1);
    if (NULL != k2) {
        PMIX_ARGV_APPEND(rc, q[0].keys, k2);
    }
    rc = PMIx_Query_info(q, 1, &info, &ninfo);
    printf("%s rc=%d n=%zu", what, rc, ninfo);
    for (i = 0; PMIX_SUCCESS == rc && i < ninfo; i++) {
        if (PMIX_STRING != info[i].value.type) {
            printf(" %s:type=%d", info[i].key, info[i].value.type);
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_QUERY_NAMESPACES)) {
            /* the job's name is the launcher's: only whether there is one */
            printf(" %s=%s", info[i].key, NULL == info[i].value.data.string ? "(null)" : "(set)");
        } else {
            printf(" %s=%s", info[i].key, info[i].value.data.string);
        }
    }
    printf("\n");
    fflush(stdout);
    if (NULL != info) {
        PMIX_INFO_FREE(info, ninfo);
    }
    PMIX_QUERY_FREE(q, 1);
}

static void all(const char *when, int two_in_one)
{
    char label[64];
    snprintf(label, sizeof(label), "%s stable", when);
    query(label, PMIX_QUERY_STABLE_ABI_VERSION, NULL);
    snprintf(label, sizeof(label), "%s provisional", when);
    query(label, PMIX_QUERY_PROVISIONAL_ABI_VERSION, NULL);
    if (two_in_one) {
        snprintf(label, sizeof(label), "%s two-in-one", when);
        query(label, PMIX_QUERY_STABLE_ABI_VERSION, PMIX_QUERY_PROVISIONAL_ABI_VERSION);
    }
    snprintf(label, sizeof(label), "%s mixed", when);
    query(label, PMIX_QUERY_STABLE_ABI_VERSION, PMIX_QUERY_NAMESPACES);
    snprintf(label, sizeof(label), "%s namespaces", when);
    query(label, PMIX_QUERY_NAMESPACES, NULL);
}

int main(void)
{
    pmix_proc_t me;
    int launched = NULL != getenv("PMIX_RANK");
    pmix_status_t rc;

    all("before", 1);
    rc = PMIx_Init(&me, NULL, 0);
    printf("init rc=%d\n", rc);
    all("after init", !launched);
    PMIx_Finalize(NULL, 0);
    all("after finalize", 1);
    return 0;
}
