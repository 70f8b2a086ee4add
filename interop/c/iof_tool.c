/* The tool of interop/c/capi_iof.c (capi/tests/libpmix_capi_server.rs)
 * and of `pmixw run`'s forwarded output (pmixw/tests/libpmix_run_iof.rs):
 * connects to the server it is given, pulls the stdout and stderr of
 * every rank of a namespace, prints each delivery it gets, and once it
 * has the ones it waits for, pushes a line of stdin to rank 0,
 * deregisters its pull and finalizes. Public API only; written for
 * pmix-wire.
 *
 *   iof_tool URI|pid:PID [NSPACE [COUNT]]
 *
 * The server by its URI, or by its pid (PMIX_SERVER_PIDINFO: its
 * rendezvous file); NSPACE capi-iof and COUNT 4 by default. */
#include <pmix_tool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "waits.h"

static const char *NS = "capi-iof";
static int WANT = 4;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int got = 0, pulled = 0;
static volatile size_t pull_id = (size_t) -1;

static void on_output(size_t iofhdlr, pmix_iof_channel_t channel, pmix_proc_t *source,
                      pmix_byte_object_t *payload, pmix_info_t info[], size_t ninfo) {
    pthread_mutex_lock(&lock);
    int len = payload ? (int) payload->size : 0;
    /* the bytes end with a newline: printed without it */
    if (len > 0 && payload->bytes[len - 1] == '\n') len--;
    printf("tool got %s from %s:%u handler %s \"%.*s\" ninfo %zu",
           PMIx_IOF_channel_string(channel), source ? source->nspace : "?",
           source ? source->rank : 0, iofhdlr == pull_id ? "ok" : "wrong", len,
           payload && payload->bytes ? payload->bytes : "", ninfo);
    for (size_t i = 0; i < ninfo; i++)
        printf(" %s=%s", info[i].key,
               PMIX_STRING == info[i].value.type ? info[i].value.data.string : "?");
    printf("\n");
    got++;
    pthread_mutex_unlock(&lock);
}

static void on_pull(pmix_status_t status, size_t refid, void *cbdata) {
    (void) cbdata;
    pthread_mutex_lock(&lock);
    pull_id = refid;
    pulled = PMIX_SUCCESS == status ? 1 : -1;
    pthread_mutex_unlock(&lock);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: iof_tool URI|pid:PID [NSPACE [COUNT]]\n");
        return 2;
    }
    if (argc > 2) NS = argv[2];
    if (argc > 3) WANT = atoi(argv[3]);
    pmix_proc_t me;
    pmix_info_t info;
    if (0 == strncmp(argv[1], "pid:", 4)) {
        pid_t server = (pid_t) atoi(argv[1] + 4);
        PMIX_INFO_LOAD(&info, PMIX_SERVER_PIDINFO, &server, PMIX_PID);
    } else {
        PMIX_INFO_LOAD(&info, PMIX_SERVER_URI, argv[1], PMIX_STRING);
    }
    pmix_status_t rc = PMIx_tool_init(&me, &info, 1);
    printf("tool init %s\n", PMIx_Error_string(rc));
    if (PMIX_SUCCESS != rc) return 1;

    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, NS, PMIX_RANK_WILDCARD);
    pmix_info_t dir;
    bool yes = true;
    PMIX_INFO_LOAD(&dir, PMIX_IOF_TAG_OUTPUT, &yes, PMIX_BOOL);
    rc = PMIx_IOF_pull(&job, 1, &dir, 1, PMIX_FWD_STDOUT_CHANNEL | PMIX_FWD_STDERR_CHANNEL,
                       on_output, on_pull, NULL);
    for (int i = 0; i < 60000 && !pulled; i++) usleep(1000);
    printf("tool pull %s registered %d\n", PMIx_Error_string(rc), pulled);
    if (1 != pulled) return 1;
    for (int i = 0; i < 60000 && got < WANT; i++) usleep(1000);
    pthread_mutex_lock(&lock);
    printf("tool deliveries %d\n", got);
    pthread_mutex_unlock(&lock);

    pmix_proc_t r0;
    PMIX_LOAD_PROCID(&r0, NS, 0);
    pmix_byte_object_t bo;
    bo.bytes = (char *) "tool stdin\n";
    bo.size = strlen(bo.bytes);
    w_arm();
    rc = w_wait(PMIx_IOF_push(&r0, 1, &bo, NULL, 0, w_op_cb, NULL), 60000);
    printf("tool push %s\n", PMIx_Error_string(rc));
    w_arm();
    rc = w_wait(PMIx_IOF_deregister(pull_id, NULL, 0, w_op_cb, NULL), 60000);
    printf("tool deregister %s\n", PMIx_Error_string(rc));
    rc = PMIx_tool_finalize();
    printf("tool finalize %s\n", PMIx_Error_string(rc));
    return got == WANT ? 0 : 1;
}
