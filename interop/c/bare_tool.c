/* pmix-wire: a tool that attaches with no attributes at all,
 * PMIx_tool_init(&proc, NULL, 0), as a user's own tool does when one job
 * runs (issue #36 item 1); for libpmix 4.2.2 and 5.0.11. Written for
 * pmix-wire.
 *
 *   bare_tool         attach, then query the namespaces (PMIX_QUERY_NAMESPACES)
 *                     and, of each that has a size (rank WILDCARD), resolve
 *                     its nodes and read rank 0's appnum
 *
 * One line per check: "ok tool_init NSPACE:RANK SERVER", "ok namespaces
 * LIST", "ok job_size NS N", "ok resolve_nodes NS LIST", "ok appnum NS 0 N" or
 * "fail CHECK ...".
 */
#include <pmix_tool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_tool_init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        printf("fail tool_init %s\n", PMIx_Error_string(rc));
        return 1;
    }
    /* the server this tool reached (libpmix keeps its URI as the tool's own
     * PMIX_SERVER_URI) */
    pmix_value_t *v = NULL;
    char server[512] = "?";
    if (PMIX_SUCCESS == PMIx_Get(&me, PMIX_SERVER_URI, NULL, 0, &v) && v &&
        PMIX_STRING == v->type) {
        snprintf(server, sizeof server, "%s", v->data.string);
    }
    if (v) {
        PMIX_VALUE_RELEASE(v);
    }
    printf("ok tool_init %s:%u %s\n", me.nspace, me.rank, server);

    pmix_query_t *q;
    PMIX_QUERY_CREATE(q, 1);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_NAMESPACES);
    pmix_info_t *res = NULL;
    size_t nres = 0;
    rc = PMIx_Query_info(q, 1, &res, &nres);
    PMIX_QUERY_FREE(q, 1);
    if (PMIX_SUCCESS != rc || 0 == nres || PMIX_STRING != res[0].value.type ||
        NULL == res[0].value.data.string) {
        printf("fail namespaces %s\n", PMIx_Error_string(rc));
        PMIx_tool_finalize();
        return 1;
    }
    char *list = strdup(res[0].value.data.string);
    PMIX_INFO_FREE(res, nres);
    printf("ok namespaces %s\n", list);
    for (char *save = NULL, *ns = strtok_r(list, ",", &save); ns; ns = strtok_r(NULL, ",", &save)) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, ns, PMIX_RANK_WILDCARD);
        v = NULL;
        rc = PMIx_Get(&p, PMIX_JOB_SIZE, NULL, 0, &v);
        if (PMIX_SUCCESS == rc && v && PMIX_UINT32 == v->type) {
            printf("ok job_size %s %u\n", ns, v->data.uint32);
        } else {
            /* a launcher's own namespace (prterun's daemon job) may have
             * no size: reported, not failed */
            printf("none job_size %s %s\n", ns, PMIx_Error_string(rc));
            if (v) {
                PMIX_VALUE_RELEASE(v);
            }
            continue;
        }
        PMIX_VALUE_RELEASE(v);
        /* the job's nodes (a 5.0.11 tool asks its server) */
        char *nodes = NULL;
        rc = PMIx_Resolve_nodes(ns, &nodes);
        printf("%s resolve_nodes %s %s\n", PMIX_SUCCESS == rc && nodes ? "ok" : "fail", ns,
               PMIX_SUCCESS == rc ? (nodes ? nodes : "(null)") : PMIx_Error_string(rc));
        free(nodes);
        p.rank = 0;
        v = NULL;
        rc = PMIx_Get(&p, PMIX_APPNUM, NULL, 0, &v);
        if (PMIX_SUCCESS == rc && v && PMIX_UINT32 == v->type) {
            printf("ok appnum %s 0 %u\n", ns, v->data.uint32);
        } else {
            /* prterun 5.0.11 answers a 4.2.2 tool NOT_FOUND for its
             * job's ranks: reported, the caller judges */
            printf("fail appnum %s 0 %s\n", ns, PMIx_Error_string(rc));
        }
        if (v) {
            PMIX_VALUE_RELEASE(v);
        }
    }
    free(list);
    PMIx_tool_finalize();
    printf("done\n");
    return 0;
}
