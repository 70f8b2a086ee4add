/* pmix-capi's abort program (capi/tests/live_capi_client.rs): under
 * `pmixw run -n 2`, rank 1 calls PMIx_Abort(7, ...) for the whole job
 * while rank 0 waits in a fence it never completes; the launcher must end
 * the job with the abort's status, on libpmix 4.2.2 and on pmix-capi's
 * libpmix.so.2 alike. Public API only. */
#include <pmix.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
    pmix_proc_t me;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 10;
    printf("rank %u up\n", me.rank);
    fflush(stdout);
    if (me.rank == 1) {
        pmix_status_t rc = PMIx_Abort(7, "capi abort test", NULL, 0);
        /* the host kills the job; if it returns, say so */
        printf("rank %u: abort returned %d\n", me.rank, rc);
        fflush(stdout);
        pause();
    }
    PMIx_Fence(NULL, 0, NULL, 0);
    printf("rank %u: fence passed (wrong)\n", me.rank);
    return 0;
}
