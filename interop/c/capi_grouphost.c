/* pmix-capi's group client for the server differential
 * (capi/tests/libpmix_capi_server.rs): init, put and commit one key, then
 * PMIx_Group_construct of "gctx" over every rank of its namespace asking
 * for a context id (PMIX_GROUP_ASSIGN_CONTEXT_ID), and of "gloc" over the
 * same without one; each construct's status and results (key, type, a
 * SIZE's value) printed, and, when it succeeded, PMIx_Group_destruct's
 * status; finalize (CAPI_GROUP_ONLY=<group>: that step alone). Run by capi_server.c, whose group upcall
 * (CAPI_SERVER_GROUP) prints what it is handed. Written for pmix-wire;
 * public API only. */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pmix_proc_t me;

static void step(const char *grp, int ctxid) {
    pmix_proc_t all;
    pmix_info_t info;
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    char line[1024];
    PMIX_PROC_LOAD(&all, me.nspace, PMIX_RANK_WILDCARD);
    PMIX_INFO_LOAD(&info, PMIX_GROUP_ASSIGN_CONTEXT_ID, NULL, PMIX_BOOL);
    pmix_status_t rc = PMIx_Group_construct(grp, &all, 1, ctxid ? &info : NULL, ctxid ? 1 : 0, &results, &nresults);
    size_t at = (size_t) snprintf(line, sizeof line, "rank %u: construct %s %s results", me.rank, grp,
                                  PMIx_Error_string(rc));
    for (size_t i = 0; i < nresults && at < sizeof line; i++) {
        at += (size_t) snprintf(line + at, sizeof line - at, " %s(%s)", results[i].key,
                                PMIx_Data_type_string(results[i].value.type));
        if (results[i].value.type == PMIX_SIZE && at < sizeof line)
            at += (size_t) snprintf(line + at, sizeof line - at, "=%zu", results[i].value.data.size);
    }
    printf("%s\n", line);
    if (results) PMIX_INFO_FREE(results, nresults);
    if (rc == PMIX_SUCCESS) {
        rc = PMIx_Group_destruct(grp, NULL, 0);
        printf("rank %u: destruct %s %s\n", me.rank, grp, PMIx_Error_string(rc));
    }
    fflush(stdout);
}

int main(void) {
    pmix_value_t v;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 10;
    PMIX_VALUE_LOAD(&v, "here", PMIX_STRING);
    if (PMIx_Put(PMIX_GLOBAL, "capi.grp", &v) != PMIX_SUCCESS) return 11;
    if (PMIx_Commit() != PMIX_SUCCESS) return 12;
    /* CAPI_GROUP_ONLY=gctx: that step alone (after a construct its host
     * refused, libpmix 4.2.2's server hangs in the next destruct) */
    const char *only = getenv("CAPI_GROUP_ONLY");
    if (!only || strcmp(only, "gctx") == 0) step("gctx", 1);
    if (!only || strcmp(only, "gloc") == 0) step("gloc", 0);
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 13;
}
