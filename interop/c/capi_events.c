/* pmix-capi's registering client (capi/tests/libpmix_capi_server.rs):
 * init, put and commit one key; rank 0 registers an event handler for
 * PMIX_EVENT_NODE_DOWN (an environmental code, which only the host can
 * raise: capi_server.c's register_events upcall, CAPI_SERVER_EVENTS=1,
 * is told), then one for PMIX_EVENT_JOB_END (a code of the library's
 * own: the host is not told), each named with PMIX_EVENT_HDLR_NAME,
 * printing whether each registered; deregisters both; finalize.
 * Written for pmix-wire; public API only. */
#include <pmix.h>
#include <stdio.h>

static void handler(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t results[], size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void) id; (void) status; (void) source; (void) info; (void) ninfo; (void) results; (void) nresults;
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static int reg(pmix_rank_t me, pmix_status_t code, const char *name) {
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_EVENT_HDLR_NAME, name, PMIX_STRING);
    int rc = PMIx_Register_event_handler(&code, 1, &info, 1, handler, NULL, NULL);
    printf("rank %u: register %s %s\n", me, name, rc >= 0 ? "registered" : PMIx_Error_string(rc));
    return rc;
}

int main(void) {
    pmix_proc_t me;
    pmix_value_t v;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 10;
    PMIX_VALUE_LOAD(&v, "here", PMIX_STRING);
    if (PMIx_Put(PMIX_GLOBAL, "capi.ev", &v) != PMIX_SUCCESS) return 11;
    if (PMIx_Commit() != PMIX_SUCCESS) return 12;
    if (me.rank == 0) {
        int a = reg(me.rank, PMIX_EVENT_NODE_DOWN, "capi-node-down");
        int b = reg(me.rank, PMIX_EVENT_JOB_END, "capi-job-end");
        if (a >= 0) PMIx_Deregister_event_handler(a, NULL, NULL);
        if (b >= 0) PMIx_Deregister_event_handler(b, NULL, NULL);
    }
    fflush(stdout);
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 13;
}
