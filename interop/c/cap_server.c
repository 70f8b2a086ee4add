/* pmix-wire capture harness: a PMIx server on libpmix 4.2.2 whose clients'
 * conversations are recorded through our relay (pmixw/tests/live_capture.rs).
 * Written for pmix-wire.
 *
 *   cap_server NPROCS TMPDIR
 *
 * Registers namespace "capns" with NPROCS local ranks, "capspawn" (the
 * namespace its spawn upcall hands out) and "capabort" (one rank, for the
 * client that aborts), prints for every client the variables
 * PMIx_server_setup_fork adds as lines "env <nspace> <rank> <KEY=VALUE>",
 * then "ready", and serves until its stdin closes. Every host upcall a
 * 4.2.2 client can trigger answers at once, on one node: fence returns the
 * local data, publish/lookup/unpublish keep a small table, query answers
 * namespaces, credentials are a fixed byte string. Upcalls it does not
 * offer (allocate, monitor, fabric) make libpmix answer with a lone
 * STATUS, which is part of what the capture has to show. */
#include <pmix.h>
#include <pmix_server.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define MAXPUB 32
static struct {
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_value_t value;
    pmix_proc_t owner;
    int used;
} pub[MAXPUB];

/* Some 4.2.2 upcalls (log, notify) hang the server when their callback
 * runs inside the upcall; a real host answers from its own thread, and so
 * does this one for those. */
struct deferred {
    pmix_op_cbfunc_t cb;
    void *cbdata;
};

static void *run_deferred(void *arg) {
    struct deferred *x = (struct deferred *) arg;
    x->cb(PMIX_SUCCESS, x->cbdata);
    free(x);
    return NULL;
}

static void op_later(pmix_op_cbfunc_t cb, void *cbdata) {
    if (NULL == cb) {
        return;
    }
    struct deferred *x = malloc(sizeof *x);
    x->cb = cb;
    x->cbdata = cbdata;
    pthread_t t;
    if (0 != pthread_create(&t, NULL, run_deferred, x)) {
        run_deferred(x);
        return;
    }
    pthread_detach(t);
}

static pmix_status_t op_done(pmix_op_cbfunc_t cbfunc, void *cbdata) {
    if (NULL != cbfunc) {
        cbfunc(PMIX_SUCCESS, cbdata);
    }
    return PMIX_SUCCESS;
}

static pmix_status_t h_connected(const pmix_proc_t *p, void *o, pmix_op_cbfunc_t cb, void *d) {
    (void) p;
    (void) o;
    return op_done(cb, d);
}

static pmix_status_t h_finalized(const pmix_proc_t *p, void *o, pmix_op_cbfunc_t cb, void *d) {
    (void) p;
    (void) o;
    return op_done(cb, d);
}

static pmix_status_t h_abort(const pmix_proc_t *p, void *o, int status, const char msg[],
                             pmix_proc_t procs[], size_t nprocs, pmix_op_cbfunc_t cb, void *d) {
    (void) o;
    (void) procs;
    fprintf(stderr, "cap_server: abort from %s:%u status %d: %s (%zu procs)\n", p->nspace,
            p->rank, status, msg ? msg : "(null)", nprocs);
    return op_done(cb, d);
}

static pmix_status_t h_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                             size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cb,
                             void *d) {
    (void) procs;
    (void) nprocs;
    (void) info;
    (void) ninfo;
    /* one node: the collected local data is everything */
    cb(PMIX_SUCCESS, data, ndata, d, NULL, NULL);
    return PMIX_SUCCESS;
}

static pmix_status_t h_dmodex(const pmix_proc_t *p, const pmix_info_t info[], size_t ninfo,
                              pmix_modex_cbfunc_t cb, void *d) {
    (void) p;
    (void) info;
    (void) ninfo;
    (void) cb;
    (void) d;
    return PMIX_ERR_NOT_SUPPORTED;
}

static pmix_status_t h_publish(const pmix_proc_t *p, const pmix_info_t info[], size_t ninfo,
                               pmix_op_cbfunc_t cb, void *d) {
    for (size_t i = 0; i < ninfo; i++) {
        if (0 == strncmp(info[i].key, "pmix.", 5)) {
            continue; /* directives such as pmix.euid, added by the server */
        }
        for (int j = 0; j < MAXPUB; j++) {
            if (!pub[j].used) {
                pub[j].used = 1;
                PMIX_LOAD_KEY(pub[j].key, info[i].key);
                PMIx_Value_xfer(&pub[j].value, &info[i].value);
                PMIX_LOAD_PROCID(&pub[j].owner, p->nspace, p->rank);
                break;
            }
        }
    }
    return op_done(cb, d);
}

static pmix_status_t h_lookup(const pmix_proc_t *p, char **keys, const pmix_info_t info[],
                              size_t ninfo, pmix_lookup_cbfunc_t cb, void *d) {
    (void) p;
    (void) info;
    (void) ninfo;
    pmix_pdata_t out[MAXPUB];
    size_t n = 0;
    for (size_t k = 0; NULL != keys && NULL != keys[k]; k++) {
        for (int j = 0; j < MAXPUB; j++) {
            if (pub[j].used && 0 == strcmp(pub[j].key, keys[k])) {
                PMIX_PDATA_CONSTRUCT(&out[n]);
                PMIX_LOAD_PROCID(&out[n].proc, pub[j].owner.nspace, pub[j].owner.rank);
                PMIX_LOAD_KEY(out[n].key, pub[j].key);
                PMIx_Value_xfer(&out[n].value, &pub[j].value);
                n++;
            }
        }
    }
    cb(0 == n ? PMIX_ERR_NOT_FOUND : PMIX_SUCCESS, out, n, d);
    for (size_t i = 0; i < n; i++) {
        PMIX_PDATA_DESTRUCT(&out[i]);
    }
    return PMIX_SUCCESS;
}

static pmix_status_t h_unpublish(const pmix_proc_t *p, char **keys, const pmix_info_t info[],
                                 size_t ninfo, pmix_op_cbfunc_t cb, void *d) {
    (void) p;
    (void) info;
    (void) ninfo;
    for (size_t k = 0; NULL != keys && NULL != keys[k]; k++) {
        for (int j = 0; j < MAXPUB; j++) {
            if (pub[j].used && 0 == strcmp(pub[j].key, keys[k])) {
                pub[j].used = 0;
                PMIX_VALUE_DESTRUCT(&pub[j].value);
            }
        }
    }
    return op_done(cb, d);
}

static pmix_status_t h_spawn(const pmix_proc_t *p, const pmix_info_t job_info[], size_t ninfo,
                             const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cb,
                             void *d) {
    (void) p;
    (void) job_info;
    (void) ninfo;
    (void) apps;
    (void) napps;
    /* nothing is started: the namespace was registered at start-up */
    cb(PMIX_SUCCESS, "capspawn", d);
    return PMIX_SUCCESS;
}

static pmix_status_t h_connect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                               size_t ninfo, pmix_op_cbfunc_t cb, void *d) {
    (void) procs;
    (void) nprocs;
    (void) info;
    (void) ninfo;
    return op_done(cb, d);
}

static pmix_status_t h_regevents(pmix_status_t *codes, size_t ncodes, const pmix_info_t info[],
                                 size_t ninfo, pmix_op_cbfunc_t cb, void *d) {
    (void) codes;
    (void) ncodes;
    (void) info;
    (void) ninfo;
    return op_done(cb, d);
}

static pmix_status_t h_deregevents(pmix_status_t *codes, size_t ncodes, pmix_op_cbfunc_t cb,
                                   void *d) {
    (void) codes;
    (void) ncodes;
    return op_done(cb, d);
}

static pmix_status_t h_notify(pmix_status_t code, const pmix_proc_t *source,
                              pmix_data_range_t range, pmix_info_t info[], size_t ninfo,
                              pmix_op_cbfunc_t cb, void *d) {
    (void) code;
    (void) source;
    (void) range;
    (void) info;
    (void) ninfo;
    (void) cb;
    (void) d;
    /* one node: libpmix has already delivered to the local clients */
    return PMIX_OPERATION_SUCCEEDED;
}

static void free_infos(void *cbdata) {
    pmix_info_t *info = (pmix_info_t *) cbdata;
    PMIX_INFO_FREE(info, 1);
}

static pmix_status_t h_query(pmix_proc_t *p, pmix_query_t *queries, size_t nqueries,
                             pmix_info_cbfunc_t cb, void *d) {
    (void) p;
    (void) queries;
    (void) nqueries;
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, 1);
    PMIX_INFO_LOAD(&info[0], PMIX_QUERY_NAMESPACES, "capns,capspawn", PMIX_STRING);
    cb(PMIX_SUCCESS, info, 1, d, free_infos, info);
    return PMIX_SUCCESS;
}

static void h_log(const pmix_proc_t *client, const pmix_info_t data[], size_t ndata,
                  const pmix_info_t directives[], size_t ndirs, pmix_op_cbfunc_t cb, void *d) {
    (void) client;
    (void) data;
    (void) ndata;
    (void) directives;
    (void) ndirs;
    op_later(cb, d);
}

static pmix_status_t h_jctrl(const pmix_proc_t *requestor, const pmix_proc_t targets[],
                             size_t ntargets, const pmix_info_t directives[], size_t ndirs,
                             pmix_info_cbfunc_t cb, void *d) {
    (void) requestor;
    (void) targets;
    (void) ntargets;
    (void) directives;
    (void) ndirs;
    cb(PMIX_SUCCESS, NULL, 0, d, NULL, NULL);
    return PMIX_SUCCESS;
}

static pmix_status_t h_getcred(const pmix_proc_t *p, const pmix_info_t directives[], size_t ndirs,
                               pmix_credential_cbfunc_t cb, void *d) {
    (void) p;
    (void) directives;
    (void) ndirs;
    static char bytes[] = "capcred";
    pmix_byte_object_t bo = {bytes, sizeof bytes - 1};
    cb(PMIX_SUCCESS, &bo, NULL, 0, d);
    return PMIX_SUCCESS;
}

static pmix_status_t h_validcred(const pmix_proc_t *p, const pmix_byte_object_t *cred,
                                 const pmix_info_t directives[], size_t ndirs,
                                 pmix_validation_cbfunc_t cb, void *d) {
    (void) p;
    (void) cred;
    (void) directives;
    (void) ndirs;
    cb(PMIX_SUCCESS, NULL, 0, d);
    return PMIX_SUCCESS;
}

static pmix_status_t h_iof(const pmix_proc_t procs[], size_t nprocs,
                           const pmix_info_t directives[], size_t ndirs,
                           pmix_iof_channel_t channels, pmix_op_cbfunc_t cb, void *d) {
    (void) procs;
    (void) nprocs;
    (void) directives;
    (void) ndirs;
    (void) channels;
    /* done at once: libpmix sends the reply itself (a callback from
     * another thread never produced one in 4.2.2) */
    (void) cb;
    (void) d;
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t h_stdin(const pmix_proc_t *source, const pmix_proc_t targets[],
                             size_t ntargets, const pmix_info_t directives[], size_t ndirs,
                             const pmix_byte_object_t *bo, pmix_op_cbfunc_t cb, void *d) {
    (void) source;
    (void) targets;
    (void) ntargets;
    (void) directives;
    (void) ndirs;
    (void) bo;
    return op_done(cb, d);
}

static pmix_status_t h_group(pmix_group_operation_t op, char grp[], const pmix_proc_t procs[],
                             size_t nprocs, const pmix_info_t directives[], size_t ndirs,
                             pmix_info_cbfunc_t cb, void *d) {
    (void) op;
    (void) grp;
    (void) procs;
    (void) nprocs;
    (void) directives;
    (void) ndirs;
    cb(PMIX_SUCCESS, NULL, 0, d, NULL, NULL);
    return PMIX_SUCCESS;
}

static void h_tool(pmix_info_t *info, size_t ninfo, pmix_tool_connection_cbfunc_t cb, void *d) {
    (void) info;
    (void) ninfo;
    static int n = 0;
    pmix_proc_t tool;
    char ns[PMIX_MAX_NSLEN];
    snprintf(ns, sizeof ns, "captool-%d", n++);
    PMIX_LOAD_PROCID(&tool, ns, 0);
    cb(PMIX_SUCCESS, &tool, d);
}

static pmix_server_module_t module = {
    .client_connected = h_connected,
    .client_finalized = h_finalized,
    .abort = h_abort,
    .fence_nb = h_fence,
    .direct_modex = h_dmodex,
    .publish = h_publish,
    .lookup = h_lookup,
    .unpublish = h_unpublish,
    .spawn = h_spawn,
    .connect = h_connect,
    .disconnect = h_connect,
    .register_events = h_regevents,
    .deregister_events = h_deregevents,
    .notify_event = h_notify,
    .query = h_query,
    .tool_connected = h_tool,
    .log = h_log,
    .job_control = h_jctrl,
    .get_credential = h_getcred,
    .validate_credential = h_validcred,
    .iof_pull = h_iof,
    .push_stdin = h_stdin,
    .group = h_group,
};

static void wait_for(volatile int *flag) {
    for (int i = 0; i < 10000 && !*flag; i++) {
        usleep(1000);
    }
}

static void register_nspace(const char *ns, int nprocs, const char *host) {
    char *nodes = NULL, *ppn = NULL, peers[256] = "";
    PMIx_generate_regex(host, &nodes);
    for (int r = 0; r < nprocs; r++) {
        snprintf(peers + strlen(peers), sizeof peers - strlen(peers), "%s%d", r ? "," : "", r);
    }
    PMIx_generate_ppn(peers, &ppn);
    size_t ninfo = 7 + (size_t) nprocs;
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, ninfo);
    uint32_t size = (uint32_t) nprocs;
    PMIX_INFO_LOAD(&info[0], PMIX_UNIV_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[1], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[2], PMIX_LOCAL_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[3], PMIX_NODE_MAP, nodes, PMIX_REGEX);
    PMIX_INFO_LOAD(&info[4], PMIX_PROC_MAP, ppn, PMIX_REGEX);
    PMIX_INFO_LOAD(&info[5], PMIX_LOCAL_PEERS, peers, PMIX_STRING);
    uint32_t appnum = 0;
    PMIX_INFO_LOAD(&info[6], PMIX_APPNUM, &appnum, PMIX_UINT32);
    for (int r = 0; r < nprocs; r++) {
        pmix_data_array_t *arr;
        PMIX_DATA_ARRAY_CREATE(arr, 4, PMIX_INFO);
        pmix_info_t *pi = (pmix_info_t *) arr->array;
        pmix_rank_t rank = (pmix_rank_t) r;
        uint16_t lr = (uint16_t) r;
        PMIX_INFO_LOAD(&pi[0], PMIX_RANK, &rank, PMIX_PROC_RANK);
        PMIX_INFO_LOAD(&pi[1], PMIX_LOCAL_RANK, &lr, PMIX_UINT16);
        PMIX_INFO_LOAD(&pi[2], PMIX_NODE_RANK, &lr, PMIX_UINT16);
        PMIX_INFO_LOAD(&pi[3], PMIX_HOSTNAME, host, PMIX_STRING);
        PMIX_INFO_LOAD(&info[7 + r], PMIX_PROC_DATA, arr, PMIX_DATA_ARRAY);
        PMIX_DATA_ARRAY_FREE(arr);
    }
    volatile int done = 0;
    pmix_status_t rc =
        PMIx_server_register_nspace(ns, nprocs, info, ninfo, done_cb, (void *) &done);
    if (PMIX_SUCCESS == rc) {
        wait_for(&done);
    } else if (PMIX_OPERATION_SUCCEEDED != rc) {
        fprintf(stderr, "cap_server: register_nspace %s: %s\n", ns, PMIx_Error_string(rc));
        exit(1);
    }
    PMIX_INFO_FREE(info, ninfo);
    free(nodes);
    free(ppn);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: cap_server NPROCS TMPDIR\n");
        return 2;
    }
    int nprocs = atoi(argv[1]);
    /* the job data must cross the socket: only the hash store */
    setenv("PMIX_MCA_gds", "hash", 1);
    pmix_info_t sinfo[3];
    bool yes = true;
    PMIX_INFO_LOAD(&sinfo[0], PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&sinfo[1], PMIX_SERVER_TMPDIR, argv[2], PMIX_STRING);
    PMIX_INFO_LOAD(&sinfo[2], PMIX_SYSTEM_TMPDIR, argv[2], PMIX_STRING);
    pmix_status_t rc = PMIx_server_init(&module, sinfo, 3);
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "cap_server: PMIx_server_init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    char host[256];
    gethostname(host, sizeof host);
    register_nspace("capns", nprocs, host);
    register_nspace("capspawn", 1, host);
    register_nspace("capabort", 1, host);
    for (int r = 0; r <= nprocs; r++) {
        /* the ranks of capns, then the single rank of capabort */
        const char *ns = r < nprocs ? "capns" : "capabort";
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, ns, (pmix_rank_t) (r < nprocs ? r : 0));
        volatile int done = 0;
        rc = PMIx_server_register_client(&p, getuid(), getgid(), NULL, done_cb, (void *) &done);
        if (PMIX_SUCCESS == rc) {
            wait_for(&done);
        }
        char **env = NULL;
        rc = PMIx_server_setup_fork(&p, &env);
        if (PMIX_SUCCESS != rc) {
            fprintf(stderr, "cap_server: setup_fork: %s\n", PMIx_Error_string(rc));
            return 1;
        }
        for (int i = 0; NULL != env && NULL != env[i]; i++) {
            printf("env %s %u %s\n", p.nspace, p.rank, env[i]);
            free(env[i]);
        }
        free(env);
    }
    printf("ready\n");
    fflush(stdout);
    char buf[256];
    while (NULL != fgets(buf, sizeof buf, stdin)) {
    }
    PMIx_server_finalize();
    return 0;
}
