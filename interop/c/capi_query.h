/* pmix-capi's C programs (capi_client.c, capi_tool.c, capi_tools.c): the
 * query of the active namespaces, and one such query printed after
 * `label` as
 *   query rc=N n=N key=K type=T
 * (no namespace names: they differ from run to run). Written for
 * pmix-wire. */
#ifndef PMIXW_CAPI_QUERY_H
#define PMIXW_CAPI_QUERY_H
#include <pmix.h>
#include <stdio.h>

/* PMIx_Query_info of the active namespaces: the answers in *res (for
 * PMIX_INFO_FREE), their count in *n */
static pmix_status_t ask_namespaces(pmix_info_t **res, size_t *n) {
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    char *keys[] = {PMIX_QUERY_NAMESPACES, NULL};
    q.keys = keys;
    *res = NULL;
    *n = 0;
    return PMIx_Query_info(&q, 1, res, n);
}

static void query_namespaces(const char *label) {
    pmix_info_t *res;
    size_t n;
    pmix_status_t rc = ask_namespaces(&res, &n);
    printf("%s: query rc=%d n=%zu key=%s type=%d\n", label, rc, n, n ? res[0].key : "-", n ? res[0].value.type : -1);
    if (res) PMIX_INFO_FREE(res, n);
}
#endif
