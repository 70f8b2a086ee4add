/* pmix-capi's C programs (capi_client.c, capi_tool.c): one query of the
 * active namespaces, printed after `label` as
 *   query rc=N n=N key=K type=T
 * (no namespace names: they differ from run to run). Written for
 * pmix-wire. */
#ifndef PMIXW_CAPI_QUERY_H
#define PMIXW_CAPI_QUERY_H
#include <pmix.h>
#include <stdio.h>

static void query_namespaces(const char *label) {
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    char *keys[] = {PMIX_QUERY_NAMESPACES, NULL};
    q.keys = keys;
    pmix_info_t *res = NULL;
    size_t n = 0;
    pmix_status_t rc = PMIx_Query_info(&q, 1, &res, &n);
    printf("%s: query rc=%d n=%zu key=%s type=%d\n", label, rc, n, n ? res[0].key : "-", n ? res[0].value.type : -1);
    if (res) PMIX_INFO_FREE(res, n);
}
#endif
