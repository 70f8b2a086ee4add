/* pmix-capi's program for the non-blocking and job-control forms
 * (capi/tests/live_capi_client.rs): under `pmixw run -n 2`, once on
 * libpmix 4.2.2 and once on pmix-capi's libpmix.so.2, it must print the
 * same lines. Public API only. Each call with its callback, one line
 * each: what it returned and what its callback got. Rank 0
 * PMIx_Publish_nb's a key, rank 1 PMIx_Lookup_nb's it, rank 0
 * PMIx_Unpublish_nb's it and rank 1 looks it up again; every rank
 * PMIx_Query_info_nb (the namespaces: its status and whether any came
 * back), PMIx_Log_nb (to stderr), PMIx_Connect_nb and PMIx_Disconnect_nb
 * with the whole job, PMIx_Job_control_nb and PMIx_Job_control (a
 * self-declaration the server accepts, a provisioning it refuses, no
 * directives), PMIx_Process_monitor_nb and PMIx_Process_monitor (a
 * heartbeat monitor, its cancel, one without a window, a file monitor);
 * rank 0 PMIx_Notify_event's one code with PMIX_EVENT_NON_DEFAULT and
 * another without, which rank 1's handlers count: the first reaches
 * its handler of that code only, not its default handler (no codes),
 * the second the default one; rank 0 PMIx_Spawn_nb's one rank of this
 * program ("child"), which says it knows its parent. Namespaces and host names are not printed.
 * Written for pmix-wire. */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "waits.h"

static size_t w_n;
static char w_text[128];
static pmix_rank_t w_rank;
static char w_ns[PMIX_MAX_NSLEN + 1];

static void lookup_cb(pmix_status_t st, pmix_pdata_t pdata[], size_t ndata, void *cbdata) {
    (void) cbdata;
    w_status = st;
    w_n = ndata;
    w_text[0] = '\0';
    w_rank = PMIX_RANK_UNDEF;
    if (ndata > 0 && pdata[0].value.type == PMIX_STRING) {
        snprintf(w_text, sizeof w_text, "%s", pdata[0].value.data.string);
        w_rank = pdata[0].proc.rank;
    }
    w_done = 1;
}

static void infos_cb(pmix_status_t st, pmix_info_t *info, size_t ninfo, void *cbdata,
                     pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    (void) info;
    (void) cbdata;
    w_status = st;
    w_n = ninfo;
    if (release_fn) {
        release_fn(release_cbdata);
    }
    w_done = 1;
}

static void spawn_cb(pmix_status_t st, pmix_nspace_t nspace, void *cbdata) {
    (void) cbdata;
    w_status = st;
    snprintf(w_ns, sizeof w_ns, "%s", nspace ? nspace : "");
    w_done = 1;
}

static pmix_proc_t me;

/* the notices rank 1 counts (custom codes) */
#define CAPI_EV_NONDEF (PMIX_EXTERNAL_ERR_BASE - 41)
#define CAPI_EV_PLAIN (PMIX_EXTERNAL_ERR_BASE - 42)
static volatile int ev_specific, ev_default_nondef, ev_default_plain;

static void ev_default(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                       size_t ninfo, pmix_info_t results[], size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void) id; (void) source; (void) info; (void) ninfo; (void) results; (void) nresults;
    if (CAPI_EV_NONDEF == status) __atomic_add_fetch(&ev_default_nondef, 1, __ATOMIC_SEQ_CST);
    if (CAPI_EV_PLAIN == status) __atomic_add_fetch(&ev_default_plain, 1, __ATOMIC_SEQ_CST);
    if (cbfunc) cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static void ev_one(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                   size_t ninfo, pmix_info_t results[], size_t nresults,
                   pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void) id; (void) source; (void) info; (void) ninfo; (void) results; (void) nresults;
    if (CAPI_EV_NONDEF == status) __atomic_add_fetch(&ev_specific, 1, __ATOMIC_SEQ_CST);
    if (cbfunc) cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static void events(void) {
    pmix_status_t code = CAPI_EV_NONDEF;
    w_arm();
    PMIx_Register_event_handler(NULL, 0, NULL, 0, ev_default, w_reg_cb, NULL);
    w_wait(PMIX_SUCCESS, 60000);
    w_arm();
    PMIx_Register_event_handler(&code, 1, NULL, 0, ev_one, w_reg_cb, NULL);
    w_wait(PMIX_SUCCESS, 60000);
    PMIx_Fence(NULL, 0, NULL, 0);
    if (0 == me.rank) {
        bool yes = true;
        pmix_info_t nd;
        PMIX_INFO_LOAD(&nd, PMIX_EVENT_NON_DEFAULT, &yes, PMIX_BOOL);
        PMIx_Notify_event(CAPI_EV_NONDEF, &me, PMIX_RANGE_NAMESPACE, &nd, 1, NULL, NULL);
        PMIx_Notify_event(CAPI_EV_PLAIN, &me, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL);
        PMIX_INFO_DESTRUCT(&nd);
    } else {
        /* the two come in order: once the second is seen, the first was dealt with */
        for (int i = 0; i < 60000 && !(ev_specific && ev_default_plain); i++) usleep(1000);
        printf("rank %u: non-default notice: its handler %d, the default %d; plain notice: the default %d\n",
               me.rank, ev_specific, ev_default_nondef, ev_default_plain);
    }
    PMIx_Fence(NULL, 0, NULL, 0);
}

static void line(const char *what, pmix_status_t rc) {
    if (PMIX_SUCCESS == rc) {
        printf("rank %u: %s ret=0 cb=%d\n", me.rank, what, w_wait(rc, 60000));
    } else {
        printf("rank %u: %s ret=%d\n", me.rank, what, rc);
    }
}

static void fence(void) {
    PMIx_Fence(NULL, 0, NULL, 0);
}

static void lookup(const char *what) {
    char *keys[] = {"capi.nb.key", NULL};
    w_arm();
    w_n = 0;
    w_text[0] = '\0';
    pmix_status_t rc = PMIx_Lookup_nb(keys, NULL, 0, lookup_cb, NULL);
    line(what, rc);
    if (PMIX_SUCCESS == rc) {
        printf("rank %u: %s n=%zu by=%d [%s]\n", me.rank, what, w_n, (int) w_rank, w_text);
    }
}

static void job_control(const char *what, pmix_info_t *dirs, size_t n) {
    pmix_proc_t self = me;
    w_arm();
    w_n = 0;
    pmix_status_t rc = PMIx_Job_control_nb(&self, 1, dirs, n, infos_cb, NULL);
    line(what, rc);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    rc = PMIx_Job_control(&self, 1, dirs, n, &results, &nresults);
    printf("rank %u: %s (blocking) ret=%d nresults=%zu\n", me.rank, what, rc, nresults);
    if (results) {
        PMIX_INFO_FREE(results, nresults);
    }
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (argc > 1 && 0 == strcmp(argv[1], "child")) {
        pmix_value_t *v = NULL;
        pmix_status_t prc = PMIx_Get(&me, PMIX_PARENT_ID, NULL, 0, &v);
        printf("child rank %u: init ret=%d parent ret=%d\n", me.rank, rc, prc);
        if (v) {
            PMIX_VALUE_RELEASE(v);
        }
        PMIx_Finalize(NULL, 0);
        return 0;
    }
    if (PMIX_SUCCESS != rc) {
        printf("init failed: %d\n", rc);
        return 1;
    }

    /* publish, lookup, unpublish */
    if (0 == me.rank) {
        pmix_info_t d;
        PMIX_INFO_LOAD(&d, "capi.nb.key", "nb value", PMIX_STRING);
        w_arm();
        line("publish_nb", PMIx_Publish_nb(&d, 1, w_op_cb, NULL));
        PMIX_INFO_DESTRUCT(&d);
    }
    fence();
    if (1 == me.rank) {
        lookup("lookup_nb");
    }
    fence();
    if (0 == me.rank) {
        char *keys[] = {"capi.nb.key", NULL};
        w_arm();
        line("unpublish_nb", PMIx_Unpublish_nb(keys, NULL, 0, w_op_cb, NULL));
    }
    fence();
    if (1 == me.rank) {
        lookup("lookup_nb(after unpublish)");
    }

    /* query */
    pmix_query_t *q;
    PMIX_QUERY_CREATE(q, 1);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_NAMESPACES);
    w_arm();
    w_n = 0;
    rc = PMIx_Query_info_nb(q, 1, infos_cb, NULL);
    line("query_info_nb", rc);
    if (PMIX_SUCCESS == rc) {
        printf("rank %u: query_info_nb answered=%d\n", me.rank, w_n > 0);
    }
    PMIX_QUERY_FREE(q, 1);

    /* log */
    pmix_info_t ld;
    PMIX_INFO_LOAD(&ld, PMIX_LOG_STDERR, "capi nb log line", PMIX_STRING);
    w_arm();
    line("log_nb", PMIx_Log_nb(&ld, 1, NULL, 0, w_op_cb, NULL));
    PMIX_INFO_DESTRUCT(&ld);

    /* connect, disconnect */
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    w_arm();
    line("connect_nb", PMIx_Connect_nb(&all, 1, NULL, 0, w_op_cb, NULL));
    w_arm();
    line("disconnect_nb", PMIx_Disconnect_nb(&all, 1, NULL, 0, w_op_cb, NULL));

    /* job control */
    pmix_info_t jc;
    bool yes = true;
    PMIX_INFO_LOAD(&jc, PMIX_JOB_CTRL_PREEMPTIBLE, &yes, PMIX_BOOL);
    job_control("job_control_nb(preemptible)", &jc, 1);
    PMIX_INFO_DESTRUCT(&jc);
    PMIX_INFO_LOAD(&jc, PMIX_JOB_CTRL_PROVISION, "node[1-2]", PMIX_STRING);
    job_control("job_control_nb(provision)", &jc, 1);
    PMIX_INFO_DESTRUCT(&jc);
    job_control("job_control_nb(none)", NULL, 0);

    /* process monitor */
    pmix_info_t mon, md[3];
    uint32_t window = 600, drops = 1;
    PMIX_INFO_LOAD(&mon, PMIX_MONITOR_HEARTBEAT, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&md[0], PMIX_MONITOR_HEARTBEAT_TIME, &window, PMIX_UINT32);
    PMIX_INFO_LOAD(&md[1], PMIX_MONITOR_HEARTBEAT_DROPS, &drops, PMIX_UINT32);
    PMIX_INFO_LOAD(&md[2], PMIX_MONITOR_ID, "capi-beat", PMIX_STRING);
    w_arm();
    w_n = 0;
    line("process_monitor_nb(heartbeat)",
         PMIx_Process_monitor_nb(&mon, PMIX_MONITOR_HEARTBEAT_ALERT, md, 3, infos_cb, NULL));
    pmix_info_t cancel;
    PMIX_INFO_LOAD(&cancel, PMIX_MONITOR_CANCEL, "capi-beat", PMIX_STRING);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    rc = PMIx_Process_monitor(&cancel, PMIX_MONITOR_HEARTBEAT_ALERT, NULL, 0, &results, &nresults);
    printf("rank %u: process_monitor(cancel) ret=%d nresults=%zu\n", me.rank, rc, nresults);
    if (results) {
        PMIX_INFO_FREE(results, nresults);
    }
    window = 0;
    PMIX_INFO_DESTRUCT(&md[0]);
    PMIX_INFO_LOAD(&md[0], PMIX_MONITOR_HEARTBEAT_TIME, &window, PMIX_UINT32);
    results = NULL;
    nresults = 0;
    rc = PMIx_Process_monitor(&mon, PMIX_MONITOR_HEARTBEAT_ALERT, md, 2, &results, &nresults);
    printf("rank %u: process_monitor(no window) ret=%d nresults=%zu\n", me.rank, rc, nresults);
    if (results) {
        PMIX_INFO_FREE(results, nresults);
    }
    pmix_info_t fmon;
    PMIX_INFO_LOAD(&fmon, PMIX_MONITOR_FILE, "/nonexistent/capi-file", PMIX_STRING);
    w_arm();
    line("process_monitor_nb(file)",
         PMIx_Process_monitor_nb(&fmon, PMIX_MONITOR_FILE_ALERT, NULL, 0, infos_cb, NULL));
    PMIX_INFO_DESTRUCT(&fmon);
    PMIX_INFO_DESTRUCT(&cancel);
    PMIX_INFO_DESTRUCT(&mon);
    for (int i = 0; i < 3; i++) {
        PMIX_INFO_DESTRUCT(&md[i]);
    }

    events();

    /* spawn */
    fence();
    if (0 == me.rank) {
        pmix_app_t *app;
        PMIX_APP_CREATE(app, 1);
        app[0].cmd = strdup(argv[0]);
        PMIX_ARGV_APPEND(rc, app[0].argv, argv[0]);
        PMIX_ARGV_APPEND(rc, app[0].argv, "child");
        app[0].maxprocs = 1;
        w_arm();
        w_ns[0] = '\0';
        rc = PMIx_Spawn_nb(NULL, 0, app, 1, spawn_cb, NULL);
        line("spawn_nb", rc);
        if (PMIX_SUCCESS == rc) {
            printf("rank %u: spawn_nb new namespace=%d\n", me.rank,
                   w_ns[0] != '\0' && 0 != strcmp(w_ns, me.nspace));
        }
        PMIX_APP_FREE(app, 1);
    }
    fence();
    rc = PMIx_Finalize(NULL, 0);
    printf("rank %u: finalize ret=%d\n", me.rank, rc);
    return 0;
}
