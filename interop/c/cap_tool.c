/* pmix-wire capture harness: a libpmix 4.2.2 tool that connects to the
 * capture server by URI and queries it, for pmixw/tests/live_capture.rs.
 * Written for pmix-wire.
 *
 *   cap_tool URI      URI as the server advertises it (nspace.rank;tcp4://...)
 */
#include <pmix_tool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile int pulled = 0;
static size_t pull_id = 0;

static void on_output(size_t iofhdlr, pmix_iof_channel_t channel, pmix_proc_t *source,
                      pmix_byte_object_t *payload, pmix_info_t info[], size_t ninfo) {
    (void) iofhdlr;
    (void) info;
    (void) ninfo;
    printf("output %s:%u channel %u: %.*s", source ? source->nspace : "?",
           source ? source->rank : 0, (unsigned) channel, payload ? (int) payload->size : 0,
           payload ? payload->bytes : "");
    fflush(stdout);
}

static volatile int op_flag = 0;
static volatile pmix_status_t op_status = PMIX_ERROR;
static void on_op(pmix_status_t status, void *cbdata) {
    (void) cbdata;
    op_status = status;
    op_flag = 1;
}

/* start a non-blocking operation and wait (bounded) for its callback */
static pmix_status_t op_wait(pmix_status_t rc) {
    if (PMIX_SUCCESS != rc) {
        op_flag = 0;
        return rc;
    }
    for (int i = 0; i < 5000 && !op_flag; i++) {
        usleep(1000);
    }
    rc = op_flag ? op_status : PMIX_ERR_TIMEOUT;
    op_flag = 0;
    return rc;
}

static void on_pull(pmix_status_t status, size_t refid, void *cbdata) {
    (void) cbdata;
    pull_id = refid;
    pulled = PMIX_SUCCESS == status ? 1 : -1;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 2) {
        fprintf(stderr, "usage: cap_tool URI\n");
        return 2;
    }
    pmix_proc_t me;
    pmix_info_t info[2];
    bool yes = true;
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_URI, argv[1], PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_TOOL_CONNECT_OPTIONAL, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_tool_init(&me, info, 2);
    if (PMIX_SUCCESS != rc) {
        printf("fail tool_init %s\n", PMIx_Error_string(rc));
        return 1;
    }
    printf("ok tool_init %s:%u\n", me.nspace, me.rank);
    pmix_query_t *q;
    PMIX_QUERY_CREATE(q, 1);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_NAMESPACES);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    rc = PMIx_Query_info(q, 1, &results, &nresults);
    printf("%s query %s\n", PMIX_SUCCESS == rc ? "ok" : "fail",
           (PMIX_SUCCESS == rc && nresults > 0 && PMIX_STRING == results[0].value.type)
               ? results[0].value.data.string
               : PMIx_Error_string(rc));
    int failed = PMIX_SUCCESS != rc;
    if (results) {
        PMIX_INFO_FREE(results, nresults);
    }
    PMIX_QUERY_FREE(q, 1);

    /* register for capns's stdout (the IOF_PULL request and its reply) */
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, "capns", PMIX_RANK_WILDCARD);
    rc = PMIx_IOF_pull(&job, 1, NULL, 0, PMIX_FWD_STDOUT_CHANNEL, on_output, on_pull, NULL);
    for (int i = 0; i < 5000 && !pulled; i++) {
        usleep(1000);
    }
    printf("%s iof_pull %s\n", 1 == pulled ? "ok" : "fail", PMIx_Error_string(rc));
    failed |= 1 != pulled;

    /* stdin for capns: one chunk (IOF_PUSH); then drop the pull
     * registration (IOF_DEREG). PMIx_IOF_push with no byte object never
     * reaches the wire in 4.2.2 (it only handles the PMIX_IOF_PUSH_STDIN
     * directive locally), so there is no EOF form to send from here. */
    pmix_byte_object_t bo;
    bo.bytes = (char *) "stdin line\n";
    bo.size = strlen(bo.bytes);
    rc = op_wait(PMIx_IOF_push(&job, 1, &bo, NULL, 0, on_op, NULL));
    printf("%s iof_push %s\n", PMIX_SUCCESS == rc ? "ok" : "fail", PMIx_Error_string(rc));
    failed |= PMIX_SUCCESS != rc;
    if (1 == pulled) {
        rc = op_wait(PMIx_IOF_deregister(pull_id, NULL, 0, on_op, NULL));
        printf("%s iof_deregister %s\n", PMIX_SUCCESS == rc ? "ok" : "fail",
               PMIx_Error_string(rc));
        failed |= PMIX_SUCCESS != rc;
    }

    rc = PMIx_tool_finalize();
    printf("%s tool_finalize %s\n", PMIX_SUCCESS == rc ? "ok" : "fail", PMIx_Error_string(rc));
    return failed || PMIX_SUCCESS != rc;
}
