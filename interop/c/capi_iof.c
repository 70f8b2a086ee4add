/* pmix-capi's IO-forwarding differential (capi/tests/libpmix_capi_server.rs):
 * a PMIx host that forwards output to a tool, written against the
 * standard's server API, built once with libpmix 4.2.2 and once with
 * pmix-capi. Written for pmix-wire.
 *
 * usage: capi_iof <tmpdir> <tool>
 *
 * Starts the server (tool support, no local output of forwarded IO, a
 * module with iof_pull, push_stdin and tool_connected), registers one
 * namespace of one rank, delivers one line of that rank's stdout before
 * any tool is there (kept until someone pulls it), then starts <tool>
 * with the server's URI as its argument. The tool pulls the job's stdout
 * and stderr; once the host has seen the pull it delivers: a stdout
 * line, a stderr line, a stderr line of another namespace (not pulled),
 * a stddiag line (a channel not pulled), a stdin "delivery" (refused), a
 * last stdout line with one info. The tool prints what it gets, pushes
 * a line of stdin (the push_stdin upcall), deregisters (iof_pull with
 * PMIX_IOF_STOP) and exits. The host prints each deliver's status and
 * callback, then what its upcalls saw; lines that depend neither on
 * timing nor on either library's identities. */
#define _GNU_SOURCE
#include <pmix.h>
#include <pmix_server.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capi_host.h"

#define NS "capi-iof"


/* what the upcalls saw, printed by the main thread at the end */
static int pulls, stops;
static char pull_seen[512], stop_seen[512], push_seen[512];

static void keys_of(char *out, size_t n, const pmix_info_t dirs[], size_t ndirs) {
    for (size_t i = 0; i < ndirs; i++)
        snprintf(out + strlen(out), n - strlen(out), " %s", dirs[i].key);
}

static pmix_status_t h_iof(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t dirs[],
                           size_t ndirs, pmix_iof_channel_t channels, pmix_op_cbfunc_t cb,
                           void *d) {
    (void) cb;
    (void) d;
    int stop = 0;
    for (size_t i = 0; i < ndirs; i++)
        if (PMIX_CHECK_KEY(&dirs[i], PMIX_IOF_STOP)) stop = 1;
    pthread_mutex_lock(&lock);
    char *out = stop ? stop_seen : pull_seen;
    snprintf(out, 512, "nprocs %zu", nprocs);
    for (size_t i = 0; i < nprocs; i++)
        snprintf(out + strlen(out), 512 - strlen(out), " %s:%s", procs[i].nspace,
                 PMIX_RANK_WILDCARD == procs[i].rank ? "*" : "n");
    snprintf(out + strlen(out), 512 - strlen(out), " channels %s directives",
             PMIx_IOF_channel_string(channels));
    keys_of(out, 512, dirs, ndirs);
    if (stop)
        stops++;
    else
        pulls++;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    /* done at once: libpmix 4.2.2 sends the reply itself only then (a
     * callback called later never produced one: spec-notes/commands.md) */
    return PMIX_OPERATION_SUCCEEDED;
}

static int pushes;
static pmix_status_t h_stdin(const pmix_proc_t *source, const pmix_proc_t targets[],
                             size_t ntargets, const pmix_info_t dirs[], size_t ndirs,
                             const pmix_byte_object_t *bo, pmix_op_cbfunc_t cb, void *d) {
    (void) source;
    (void) dirs;
    pthread_mutex_lock(&lock);
    snprintf(push_seen, sizeof push_seen, "ntargets %zu", ntargets);
    for (size_t i = 0; i < ntargets; i++)
        snprintf(push_seen + strlen(push_seen), sizeof push_seen - strlen(push_seen), " %s:%u",
                 targets[i].nspace, targets[i].rank);
    snprintf(push_seen + strlen(push_seen), sizeof push_seen - strlen(push_seen),
             " directives %zu data %.*s", ndirs, bo ? (int) bo->size : 0,
             bo && bo->bytes ? bo->bytes : "");
    /* the bytes end with a newline: keep the line one line */
    size_t l = strlen(push_seen);
    if (l && push_seen[l - 1] == '\n') push_seen[l - 1] = '\0';
    pushes++;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (cb) cb(PMIX_SUCCESS, d);
    return PMIX_SUCCESS;
}

static void h_tool(pmix_info_t *info, size_t ninfo, pmix_tool_connection_cbfunc_t cb, void *d) {
    (void) info;
    (void) ninfo;
    pmix_proc_t tool;
    PMIX_LOAD_PROCID(&tool, "capi-iof-tool", 0);
    cb(PMIX_SUCCESS, &tool, d);
}

static pmix_server_module_t module = {
    .tool_connected = h_tool,
    .iof_pull = h_iof,
    .push_stdin = h_stdin,
};

/* one PMIx_server_IOF_deliver with a callback: its status, then the callback's */
static void deliver(const char *what, const char *ns, pmix_rank_t rank, pmix_iof_channel_t ch,
                    const char *text, const pmix_info_t *info, size_t ninfo) {
    pmix_proc_t src;
    PMIX_LOAD_PROCID(&src, ns, rank);
    pmix_byte_object_t bo;
    bo.bytes = (char *) text;
    bo.size = strlen(text);
    struct done d = {0, 0};
    pmix_status_t rc = PMIx_server_IOF_deliver(&src, ch, &bo, info, ninfo, done_cb, &d);
    if (PMIX_SUCCESS == rc) wait_for(&d.fired, 1);
    printf("deliver %s %s callback %d %s\n", what, PMIx_Error_string(rc), d.fired,
           d.fired ? PMIx_Error_string(d.rc) : "-");
    fflush(stdout);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 3) {
        fprintf(stderr, "usage: capi_iof <tmpdir> <tool>\n");
        return 2;
    }
    bool yes = true, no = false;
    pmix_info_t sinfo[4];
    PMIX_INFO_LOAD(&sinfo[0], PMIX_SERVER_TMPDIR, argv[1], PMIX_STRING);
    PMIX_INFO_LOAD(&sinfo[1], PMIX_SYSTEM_TMPDIR, argv[1], PMIX_STRING);
    PMIX_INFO_LOAD(&sinfo[2], PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&sinfo[3], PMIX_IOF_LOCAL_OUTPUT, &no, PMIX_BOOL);
    pmix_status_t rc = PMIx_server_init(&module, sinfo, 4);
    printf("server_init %s\n", PMIx_Error_string(rc));
    if (rc != PMIX_SUCCESS) return 3;

    uint32_t size = 1;
    pmix_info_t info[2];
    PMIX_INFO_LOAD(&info[0], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[1], PMIX_LOCAL_SIZE, &size, PMIX_UINT32);
    pmix_nspace_t ns_name;
    PMIX_LOAD_NSPACE(ns_name, NS);
    struct done reg = {0, 0};
    rc = PMIx_server_register_nspace(ns_name, 1, info, 2, done_cb, &reg);
    if (rc == PMIX_SUCCESS) wait_for(&reg.fired, 1);
    printf("register_nspace %s callback %d %s\n", PMIx_Error_string(rc), reg.fired,
           PMIx_Error_string(reg.rc));
    pmix_proc_t p0;
    PMIX_PROC_LOAD(&p0, NS, 0);
    struct done cl = {0, 0};
    rc = PMIx_server_register_client(&p0, getuid(), getgid(), NULL, done_cb, &cl);
    if (rc == PMIX_SUCCESS) wait_for(&cl.fired, 1);
    printf("register_client %s callback %d\n", PMIx_Error_string(rc), cl.fired);

    /* before any tool: nobody pulls it yet */
    deliver("early stdout", NS, 0, PMIX_FWD_STDOUT_CHANNEL, "early line\n", NULL, 0);

    /* the server's URI, as rank 0's environment has it */
    char **env = calloc(1, sizeof(char *));
    rc = PMIx_server_setup_fork(&p0, &env);
    const char *uri = getenv_in(env, "PMIX_SERVER_URI41");
    printf("setup_fork %s uri %s\n", PMIx_Error_string(rc), uri ? "set" : "(none)");
    if (!uri) return 4;
    char *uri_copy = strdup(uri);
    for (char **e = env; *e; e++) free(*e);
    free(env);

    /* the tool: our environment, without LD_LIBRARY_PATH (it loads the
     * system libpmix, or CLIENT_LD_LIBRARY_PATH's) */
    extern char **environ;
    size_t ne = 0;
    while (environ[ne]) ne++;
    char **tenv = calloc(ne + 2, sizeof(char *));
    size_t k = 0;
    for (size_t i = 0; i < ne; i++)
        if (strncmp(environ[i], "LD_LIBRARY_PATH=", 16) != 0) tenv[k++] = environ[i];
    const char *cld = getenv("CLIENT_LD_LIBRARY_PATH");
    char *ld = NULL;
    if (cld) {
        ld = malloc(strlen(cld) + 17);
        sprintf(ld, "LD_LIBRARY_PATH=%s", cld);
        tenv[k++] = ld;
    }
    tenv[k] = NULL;
    pid_t tool = fork();
    if (tool == 0) {
        char *targv[] = {argv[2], uri_copy, NULL};
        execve(argv[2], targv, tenv);
        _exit(127);
    }

    wait_for(&pulls, 1);
    printf("pulled %d\n", pulls);
    deliver("stdout", NS, 0, PMIX_FWD_STDOUT_CHANNEL, "line one\n", NULL, 0);
    deliver("stderr", NS, 0, PMIX_FWD_STDERR_CHANNEL, "error one\n", NULL, 0);
    deliver("other-nspace", "capi-iof-other", 0, PMIX_FWD_STDERR_CHANNEL, "not pulled\n", NULL,
            0);
    deliver("stddiag", NS, 0, PMIX_FWD_STDDIAG_CHANNEL, "diag line\n", NULL, 0);
    deliver("stdin", NS, 0, PMIX_FWD_STDIN_CHANNEL, "into stdin\n", NULL, 0);
    pmix_info_t note;
    PMIX_INFO_LOAD(&note, "capi.iof.note", "last", PMIX_STRING);
    deliver("last", NS, 0, PMIX_FWD_STDOUT_CHANNEL, "line two\n", &note, 1);
    PMIX_INFO_DESTRUCT(&note);

    int status;
    waitpid(tool, &status, 0);
    printf("the tool exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    pthread_mutex_lock(&lock);
    printf("iof_pull upcalls %d: %s\n", pulls, pull_seen);
    printf("iof_pull stop upcalls %d: %s\n", stops, stop_seen);
    printf("push_stdin upcalls %d: %s\n", pushes, push_seen);
    pthread_mutex_unlock(&lock);

    struct done dereg = {0, 0};
    PMIx_server_deregister_nspace(ns_name, done_cb, &dereg);
    wait_for(&dereg.fired, 1);
    rc = PMIx_server_finalize();
    printf("server_finalize %s\n", PMIx_Error_string(rc));
    free(ld);
    free(tenv);
    free(uri_copy);
    return 0;
}
