/* pmix-capi's connecting client (capi/tests/libpmix_capi_server.rs):
 * init, put and commit one key, PMIx_Connect with every rank of its
 * namespace (a PMIX_COLLECTIVE_ALGO attribute for the host to see; not
 * PMIX_TIMEOUT: libpmix 4.2.2's server then spins in
 * PMIx_server_finalize, spec-notes/divergences.md), then
 * PMIx_Disconnect the same, printing each status; finalize. Run by
 * capi_server.c with ranks of its namespace on another node
 * (CAPI_SERVER_FAR), the connect spans nodes and reaches the host's
 * connect and disconnect upcalls. Written for pmix-wire; public API
 * only. */
#include <pmix.h>
#include <stdio.h>

int main(void) {
    pmix_proc_t me, all;
    pmix_value_t v;
    pmix_info_t info;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 10;
    PMIX_VALUE_LOAD(&v, "here", PMIX_STRING);
    if (PMIx_Put(PMIX_GLOBAL, "capi.conn", &v) != PMIX_SUCCESS) return 11;
    if (PMIx_Commit() != PMIX_SUCCESS) return 12;
    PMIX_PROC_LOAD(&all, me.nspace, PMIX_RANK_WILDCARD);
    PMIX_INFO_LOAD(&info, PMIX_COLLECTIVE_ALGO, "capi-ring", PMIX_STRING);
    pmix_status_t rc = PMIx_Connect(&all, 1, &info, 1);
    printf("rank %u: connect %s\n", me.rank, PMIx_Error_string(rc));
    rc = PMIx_Disconnect(&all, 1, NULL, 0);
    printf("rank %u: disconnect %s\n", me.rank, PMIx_Error_string(rc));
    fflush(stdout);
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 13;
}
