/* pmix-capi's tool program (capi/tests/live_capi_client.rs): run as the
 * one "rank" of `pmixw run -n 1`, it connects back to that server as a
 * tool, once on libpmix 4.2.2 and once on pmix-capi's libpmix.so.2, and
 * must print the same. Public API only.
 *
 *   capi_tool uri    PMIX_SERVER_URI: the URI of the job's environment
 *   capi_tool pid    PMIX_SERVER_PIDINFO: the server's pid (our parent),
 *                    found through its rendezvous file */
#include <pmix_tool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capi_query.h"

int main(int argc, char **argv) {
    const char *how = argc > 1 ? argv[1] : "uri";
    pmix_info_t info;
    pmix_proc_t me;
    if (0 == strcmp(how, "pid")) {
        pid_t server = getppid();
        PMIX_INFO_LOAD(&info, PMIX_SERVER_PIDINFO, &server, PMIX_PID);
    } else {
        PMIX_INFO_LOAD(&info, PMIX_SERVER_URI, getenv("PMIX_SERVER_URI41"), PMIX_STRING);
    }
    pmix_status_t rc = PMIx_tool_init(&me, &info, 1);
    printf("%s: tool_init rc=%d initialized=%d\n", how, rc, PMIx_Initialized());
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) return 1;
    query_namespaces(how);
    rc = PMIx_tool_finalize();
    printf("%s: tool_finalize rc=%d initialized=%d\n", how, rc, PMIx_Initialized());
    return 0;
}
