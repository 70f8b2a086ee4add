/* pmix-capi's lost client (capi/tests/libpmix_capi_server.rs): connects,
 * puts and commits one key, then exits 3 without PMIx_Finalize, so that
 * its server sees the connection end before any finalize (a non-zero
 * status: capi_server.c waits for the finalize of a client that exits 0).
 * What the host hears of it must be what libpmix 4.2.2's server tells it.
 * Public API only. */
#include <pmix.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
    pmix_proc_t me;
    pmix_value_t v;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 10;
    PMIX_VALUE_LOAD(&v, "lost", PMIX_STRING);
    if (PMIx_Put(PMIX_GLOBAL, "capi.lost", &v) != PMIX_SUCCESS) return 11;
    if (PMIx_Commit() != PMIX_SUCCESS) return 12;
    printf("rank %u: leaving without finalize\n", me.rank);
    fflush(stdout);
    _exit(3);
}
