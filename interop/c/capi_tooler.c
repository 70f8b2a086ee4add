/* pmix-capi's tool under capi_server.c (capi/tests/libpmix_capi_server.rs):
 * started by the host as a rank would be, it forgets the rank's identity
 * (PMIX_NAMESPACE, PMIX_RANK) and connects as a tool that needs one
 * (PMIx_tool_init with PMIX_SERVER_URI, the URI setup_fork gave), so
 * that the host's tool_connected upcall names it; prints the name it
 * was given (or the failure), finalizes and exits 3 (the host waits for
 * no client finalize of it). Written for pmix-wire; public API only. */
#include <pmix_tool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void) {
    const char *uri = getenv("PMIX_SERVER_URI41");
    if (!uri) uri = getenv("PMIX_SERVER_URI4");
    if (!uri) return 20;
    char *u = strdup(uri);
    unsetenv("PMIX_NAMESPACE");
    unsetenv("PMIX_RANK");
    pmix_proc_t me;
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_SERVER_URI, u, PMIX_STRING);
    pmix_status_t rc = PMIx_tool_init(&me, &info, 1);
    if (rc != PMIX_SUCCESS) {
        printf("rank tool: init %s\n", PMIx_Error_string(rc));
        fflush(stdout);
        _exit(3);
    }
    printf("rank tool: named %s:%u\n", me.nspace, me.rank);
    fflush(stdout);
    PMIx_tool_finalize();
    _exit(3);
}
