/* A minimal PMIx server for the tool tests: PMIx_server_init with tool
 * support (so it writes pmix.<host>.tool.<pid> rendezvous files in the
 * tmpdir given as argv[1]), a tool_connected upcall that assigns
 * namespace "clitool" with rank n, and a query upcall answering
 * pmix.qry.ns with "cli-job" and pmix.qry.psetnum with 0; a query with
 * no key it knows is PMIX_ERR_NOT_FOUND.
 * Prints "ready <pid>" when listening, exits when stdin closes. */
#include <pmix.h>
#include <pmix_server.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int ntools = 0;

static void tool_connected(pmix_info_t *info, size_t ninfo,
                           pmix_tool_connection_cbfunc_t cbfunc, void *cbdata)
{
    pmix_proc_t p;
    (void)info; (void)ninfo;
    PMIX_LOAD_PROCID(&p, "clitool", (pmix_rank_t)ntools++);
    cbfunc(PMIX_SUCCESS, &p, cbdata);
}

static pmix_status_t query(pmix_proc_t *proct, pmix_query_t *queries, size_t nqueries,
                           pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    size_t i, j, n = 0;
    pmix_info_t *out;
    (void)proct;
    for (i = 0; i < nqueries; i++)
        for (j = 0; NULL != queries[i].keys[j]; j++)
            n++;
    PMIX_INFO_CREATE(out, n);
    n = 0;
    for (i = 0; i < nqueries; i++) {
        for (j = 0; NULL != queries[i].keys[j]; j++) {
            const char *k = queries[i].keys[j];
            if (0 == strcmp(k, PMIX_QUERY_NAMESPACES)) {
                PMIX_INFO_LOAD(&out[n], k, "cli-job", PMIX_STRING);
                n++;
            } else if (0 == strcmp(k, PMIX_QUERY_NUM_PSETS)) {
                size_t z = 0;
                PMIX_INFO_LOAD(&out[n], k, &z, PMIX_SIZE);
                n++;
            }
        }
    }
    /* the info array is leaked on purpose: the server copies it out */
    cbfunc(0 == n ? PMIX_ERR_NOT_FOUND : PMIX_SUCCESS, out, n, cbdata, NULL, NULL);
    return PMIX_SUCCESS;
}

int main(int argc, char **argv)
{
    pmix_server_module_t mod;
    pmix_info_t info[3];
    bool yes = true;
    char buf[64];
    pmix_status_t rc;
    if (argc < 2) {
        fprintf(stderr, "usage: cli_server TMPDIR\n");
        return 2;
    }
    memset(&mod, 0, sizeof(mod));
    mod.tool_connected = tool_connected;
    mod.query = query;
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_SERVER_TMPDIR, argv[1], PMIX_STRING);
    PMIX_INFO_LOAD(&info[2], PMIX_SYSTEM_TMPDIR, argv[1], PMIX_STRING);
    rc = PMIx_server_init(&mod, info, 3);
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "PMIx_server_init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    while (fgets(buf, sizeof buf, stdin) != NULL) {
    }
    PMIx_server_finalize();
    return 0;
}
