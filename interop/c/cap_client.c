/* pmix-wire capture harness: a libpmix 4.2.2 client that sends every
 * request the 4.2.2 client library can send to its server, for
 * pmixw/tests/live_capture.rs. Written for pmix-wire.
 *
 *   cap_client all     every operation (run as ranks 0 and 1 of "capns")
 *   cap_client abort   init, then PMIx_Abort
 *
 * Prints one line "ok <what> <detail>" or "fail <what> <status>" per
 * operation; the test checks the values. Collectives (fence, connect,
 * disconnect, group construct/destruct) need both ranks. */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pmix_proc_t me;
static int failures = 0;

static void report(const char *what, pmix_status_t rc, const char *detail) {
    if (PMIX_SUCCESS == rc) {
        printf("ok %s %s\n", what, detail ? detail : "");
    } else {
        printf("fail %s %s\n", what, PMIx_Error_string(rc));
        failures++;
    }
    fflush(stdout);
}

/* status only: some upcalls are not offered by the server, and the reply
 * that says so is what the capture needs */
static void note(const char *what, pmix_status_t rc) {
    printf("rc %s %s\n", what, PMIx_Error_string(rc));
    fflush(stdout);
}

static volatile int event_seen = 0;

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void) id;
    (void) info;
    (void) ninfo;
    (void) results;
    (void) nresults;
    printf("event %d from %s:%u\n", status, source ? source->nspace : "?",
           source ? source->rank : 0);
    fflush(stdout);
    event_seen = 1;
    if (NULL != cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

static volatile int reg_done = 0;
static size_t reg_id = 0;
static void on_registered(pmix_status_t status, size_t id, void *cbdata) {
    (void) cbdata;
    (void) status;
    reg_id = id;
    reg_done = 1;
}

static void barrier(void) {
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        report("barrier", rc, NULL);
    }
}

static void put_string(pmix_scope_t scope, const char *key, const char *val) {
    pmix_value_t v;
    PMIX_VALUE_LOAD(&v, val, PMIX_STRING);
    report("put", PMIx_Put(scope, key, &v), key);
    PMIX_VALUE_DESTRUCT(&v);
}

static void get_string(int rank, const char *key) {
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    PMIX_LOAD_PROCID(&p, me.nspace, (pmix_rank_t) rank);
    pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &v);
    char detail[512];
    snprintf(detail, sizeof detail, "%s=%s", key,
             (PMIX_SUCCESS == rc && v && PMIX_STRING == v->type) ? v->data.string : "?");
    report("get", rc, detail);
    if (v) {
        PMIX_VALUE_RELEASE(v);
    }
}

static void all(void) {
    int peer = 1 - (int) me.rank;
    char key[64], val[64];
    pmix_proc_t wild, procs[2];
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&procs[0], me.nspace, 0);
    PMIX_LOAD_PROCID(&procs[1], me.nspace, 1);

    /* job info from the REQ reply */
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v);
    snprintf(val, sizeof val, "%u", (PMIX_SUCCESS == rc && v) ? v->data.uint32 : 0);
    report("job_size", rc, val);
    if (v) {
        PMIX_VALUE_RELEASE(v);
        v = NULL;
    }

    /* put and commit, then get the peer's key before any fence: the get
     * crosses the socket and the server answers once the peer committed */
    snprintf(key, sizeof key, "cap.global.%u", me.rank);
    snprintf(val, sizeof val, "global-from-%u", me.rank);
    put_string(PMIX_GLOBAL, key, val);
    snprintf(key, sizeof key, "cap.local.%u", me.rank);
    snprintf(val, sizeof val, "local-from-%u", me.rank);
    put_string(PMIX_LOCAL, key, val);
    report("commit", PMIx_Commit(), NULL);
    snprintf(key, sizeof key, "cap.global.%d", peer);
    get_string(peer, key);

    /* fence with data, then without; then the peer's keys are local */
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    report("fence_collect", PMIx_Fence(procs, 2, &collect, 1), NULL);
    report("fence", PMIx_Fence(NULL, 0, NULL, 0), NULL);
    snprintf(key, sizeof key, "cap.local.%d", peer);
    get_string(peer, key);
    snprintf(key, sizeof key, "cap.remote.%u", me.rank);
    put_string(PMIX_REMOTE, key, "remote-scope");
    report("commit", PMIx_Commit(), NULL);

    /* publish / lookup / unpublish */
    if (0 == me.rank) {
        pmix_info_t pi;
        PMIX_INFO_LOAD(&pi, "cap.service", "port-1234", PMIX_STRING);
        report("publish", PMIx_Publish(&pi, 1), NULL);
        PMIX_INFO_DESTRUCT(&pi);
    }
    barrier();
    if (1 == me.rank) {
        pmix_pdata_t pd;
        PMIX_PDATA_CONSTRUCT(&pd);
        PMIX_LOAD_KEY(pd.key, "cap.service");
        rc = PMIx_Lookup(&pd, 1, NULL, 0);
        report("lookup", rc,
               (PMIX_SUCCESS == rc && PMIX_STRING == pd.value.type) ? pd.value.data.string : "?");
        PMIX_PDATA_DESTRUCT(&pd);
        PMIX_PDATA_CONSTRUCT(&pd);
        PMIX_LOAD_KEY(pd.key, "cap.missing");
        note("lookup_missing", PMIx_Lookup(&pd, 1, NULL, 0));
        PMIX_PDATA_DESTRUCT(&pd);
    }
    barrier();
    if (0 == me.rank) {
        char *keys[] = {"cap.service", NULL};
        report("unpublish", PMIx_Unpublish(keys, NULL, 0), keys[0]);
    }

    /* events: register, notify the namespace, see it delivered, deregister */
    pmix_status_t code = PMIX_EXTERNAL_ERR_BASE - 1;
    PMIx_Register_event_handler(&code, 1, NULL, 0, on_event, on_registered, NULL);
    for (int i = 0; i < 5000 && !reg_done; i++) {
        usleep(1000);
    }
    report("register_event", reg_done ? PMIX_SUCCESS : PMIX_ERR_TIMEOUT, NULL);
    barrier();
    if (0 == me.rank) {
        pmix_info_t ei;
        PMIX_INFO_LOAD(&ei, "cap.event.info", "hello", PMIX_STRING);
        report("notify", PMIx_Notify_event(code, &me, PMIX_RANGE_NAMESPACE, &ei, 1, NULL, NULL),
               NULL);
        PMIX_INFO_DESTRUCT(&ei);
    }
    for (int i = 0; i < 5000 && !event_seen; i++) {
        usleep(1000);
    }
    report("event_delivered", event_seen ? PMIX_SUCCESS : PMIX_ERR_TIMEOUT, NULL);
    barrier();
    report("deregister_event", PMIx_Deregister_event_handler(reg_id, NULL, NULL), NULL);

    /* query */
    pmix_query_t *q;
    PMIX_QUERY_CREATE(q, 1);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_NAMESPACES);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    rc = PMIx_Query_info(q, 1, &results, &nresults);
    report("query", rc,
           (PMIX_SUCCESS == rc && nresults > 0 && PMIX_STRING == results[0].value.type)
               ? results[0].value.data.string
               : "?");
    if (results) {
        PMIX_INFO_FREE(results, nresults);
    }
    PMIX_QUERY_FREE(q, 1);

    /* log */
    pmix_info_t li;
    PMIX_INFO_LOAD(&li, PMIX_LOG_STDOUT, "cap log line\n", PMIX_STRING);
    note("log", PMIx_Log(&li, 1, NULL, 0));
    PMIX_INFO_DESTRUCT(&li);

    /* spawn (the host hands out "capspawn" and starts nothing) */
    if (0 == me.rank) {
        pmix_app_t *app;
        PMIX_APP_CREATE(app, 1);
        app->cmd = strdup("/bin/true");
        PMIX_ARGV_APPEND(rc, app->argv, "/bin/true");
        app->maxprocs = 1;
        char nspace[PMIX_MAX_NSLEN + 1] = "";
        rc = PMIx_Spawn(NULL, 0, app, 1, nspace);
        report("spawn", rc, nspace);
        PMIX_APP_FREE(app, 1);
    }
    barrier();

    /* connect / disconnect, group construct / destruct: collectives */
    report("connect", PMIx_Connect(procs, 2, NULL, 0), NULL);
    report("disconnect", PMIx_Disconnect(procs, 2, NULL, 0), NULL);
    pmix_info_t *ginfo = NULL;
    size_t nginfo = 0;
    report("group_construct", PMIx_Group_construct("capgrp", procs, 2, NULL, 0, &ginfo, &nginfo),
           NULL);
    if (ginfo) {
        PMIX_INFO_FREE(ginfo, nginfo);
    }
    if (1 == me.rank) {
        /* GROUP_LEAVE reaches the server, whose 4.2.2 switchyard has no
         * case for it: the reply is a lone error STATUS */
        note("group_leave", PMIx_Group_leave("capgrp", NULL, 0));
    }
    report("group_destruct", PMIx_Group_destruct("capgrp", NULL, 0), NULL);

    if (0 == me.rank) {
        /* job control */
        pmix_info_t jc;
        PMIX_INFO_LOAD(&jc, PMIX_JOB_CTRL_PAUSE, &yes, PMIX_BOOL);
        note("job_control", PMIx_Job_control(&procs[1], 1, &jc, 1, NULL, NULL));
        PMIX_INFO_DESTRUCT(&jc);
        /* allocation and monitoring: not offered by this host */
        pmix_info_t ai;
        uint64_t n = 1;
        PMIX_INFO_LOAD(&ai, PMIX_ALLOC_NUM_NODES, &n, PMIX_UINT64);
        results = NULL;
        nresults = 0;
        note("allocate", PMIx_Allocation_request(PMIX_ALLOC_EXTEND, &ai, 1, &results, &nresults));
        PMIX_INFO_DESTRUCT(&ai);
        pmix_info_t mi;
        PMIX_INFO_LOAD(&mi, PMIX_MONITOR_HEARTBEAT, NULL, PMIX_POINTER);
        note("monitor", PMIx_Process_monitor(&mi, PMIX_MONITOR_HEARTBEAT_ALERT, NULL, 0, NULL,
                                             NULL));
        /* credentials */
        pmix_byte_object_t cred;
        PMIX_BYTE_OBJECT_CONSTRUCT(&cred);
        rc = PMIx_Get_credential(NULL, 0, &cred);
        report("get_credential", rc, cred.bytes ? cred.bytes : "?");
        if (PMIX_SUCCESS == rc) {
            note("validate_credential", PMIx_Validate_credential(&cred, NULL, 0, NULL, NULL));
        }
        PMIX_BYTE_OBJECT_DESTRUCT(&cred);
    }
    barrier();
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 2) {
        fprintf(stderr, "usage: cap_client all|abort\n");
        return 2;
    }
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    report("init", rc, me.nspace);
    if (PMIX_SUCCESS != rc) {
        return 1;
    }
    if (0 == strcmp(argv[1], "abort")) {
        note("abort", PMIx_Abort(3, "cap abort test", NULL, 0));
    } else {
        all();
    }
    report("finalize", PMIx_Finalize(NULL, 0), NULL);
    return failures ? 1 : 0;
}
