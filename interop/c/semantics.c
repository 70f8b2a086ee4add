/* pmix-wire: what real PMIx programs expect of their server (issue 12).
 * A libpmix 4.2.2 client run as every rank of a job under `pmixw run` and
 * under the reference launchers (Open MPI's mpirun, PRRTE's prterun) by
 * pmixw/tests/libpmix_server_semantics.rs. Written for pmix-wire. Prints one line per
 * check: "[rank] ok|fail <check> <value>".
 *
 *   semantics nskey   keys built from the namespace: put/commit/fence/get
 *                     and PMIx_Store_internal; prints the namespace
 *   semantics fail    every rank registers for all events; rank 1 exits
 *                     with status 3 before finalizing; the others report
 *                     the event they get, then wait to be ended
 *   semantics signal  as fail, rank 1 kills itself with SIGUSR1
 *   semantics abort   as fail, rank 1 calls PMIx_Abort(5)
 *   semantics query   rank 0 asks the standard's queries, one per call
 *   semantics attrs   rank 0 asks the host's functions and the attributes
 *                     PMIx_Job_control supports
 *   semantics group   ranks 0 and 1 of 3 construct group "grp12" asking
 *                     for a context id, fence across it, destruct it;
 *                     rank 2 finalizes at once (a non-member)
 *   semantics grpdie  ranks 0-2 construct "grpall"; rank 2 then exits;
 *                     the others report the event they get and destruct
 *                     the group without it
 *   semantics ckpt    rank 0 asks a checkpoint of rank 1 by event; rank 1
 *                     reports the event
 *   semantics pause   rank 0 pauses rank 1 for a while, then resumes it
 *   semantics sigctl  rank 0 sends SIGUSR2 to rank 1 via job control
 *   semantics lcid    the job constructs group "lcgrp" asking for a context
 *                     id, each rank giving its local context id (1234 +
 *                     rank) in PMIX_GROUP_INFO; each reads its right
 *                     neighbour's, qualified by the context id
 *   semantics invite  rank 0 invites ranks 1 and 2 to group "invgrp"
 *                     (PMIx_Group_invite); they accept from their
 *                     PMIX_GROUP_INVITED handler (PMIx_Group_join_nb);
 *                     rank 3, registered too, must not be invited
 *   semantics leave   ranks 0-2 construct "lvgrp"; rank 2 leaves it and
 *                     finalizes; 0 and 1 get PMIX_GROUP_LEFT and destruct
 *   semantics xgroup  rank 0 of this job and rank 0 of the job named by
 *                     SEM_PEER_NS construct group "xgrp", fence across
 *                     it, and each reads the key the other put
 *   semantics wait    every rank registers for all events and waits (a
 *                     tool attaches and ends rank 1)
 */
#include "checks.h"
#include <pmix.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pmix_proc_t me;
static volatile int got_event = 0;
static volatile int event_code = 0;
static char event_text[512];

static void on_event(size_t evhdlr_registration_id, pmix_status_t status,
                     const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                     pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void) evhdlr_registration_id;
    (void) results;
    (void) nresults;
    char more[400] = "";
    size_t used = 0;
    for (size_t i = 0; i < ninfo && used < sizeof more - 80; i++) {
        if (0 == strcmp(info[i].key, PMIX_EVENT_AFFECTED_PROC) && PMIX_PROC == info[i].value.type) {
            used += snprintf(more + used, sizeof more - used, " affected=%u",
                             info[i].value.data.proc->rank);
        } else if (0 == strcmp(info[i].key, PMIX_EXIT_CODE)) {
            used += snprintf(more + used, sizeof more - used, " exit=%d", info[i].value.data.integer);
        } else if (0 == strcmp(info[i].key, PMIX_JOB_CTRL_CHECKPOINT) && PMIX_STRING == info[i].value.type) {
            used += snprintf(more + used, sizeof more - used, " ckpt=%s", info[i].value.data.string);
        } else if (0 == strcmp(info[i].key, PMIX_GROUP_ID) && PMIX_STRING == info[i].value.type) {
            used += snprintf(more + used, sizeof more - used, " group=%s", info[i].value.data.string);
        }
    }
    if (!got_event) {
        snprintf(event_text, sizeof event_text, "%s source=%u%s", PMIx_Error_string(status),
                 source ? source->rank : 0, more);
        event_code = status;
        got_event = 1;
    }
    if (cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

static volatile int joined = 0;
static volatile pmix_status_t join_status = PMIX_ERROR;
static void join_done(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                      pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    (void) info;
    (void) ninfo;
    (void) cbdata;
    join_status = status;
    joined = 1;
    if (release_fn) {
        release_fn(release_cbdata);
    }
}

static void on_invited(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void) id;
    (void) status;
    (void) results;
    (void) nresults;
    const char *grp = "?";
    for (size_t i = 0; i < ninfo; i++) {
        if (0 == strcmp(info[i].key, PMIX_GROUP_ID) && PMIX_STRING == info[i].value.type) {
            grp = info[i].value.data.string;
        }
    }
    snprintf(event_text, sizeof event_text, "invited to %s by %u", grp, source ? source->rank : 0);
    got_event = 1;
    PMIx_Group_join_nb(grp, source, PMIX_GROUP_ACCEPT, NULL, 0, join_done, NULL);
    if (cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

static void reg_done(pmix_status_t status, size_t ref, void *cbdata) {
    (void) ref;
    *(volatile int *) cbdata = PMIX_SUCCESS == status ? 1 : -1;
}

static void register_all(void) {
    volatile int done = 0;
    PMIx_Register_event_handler(NULL, 0, NULL, 0, on_event, reg_done, (void *) &done);
    for (int i = 0; i < 2000 && !done; i++) {
        usleep(1000);
    }
    check("register_events", 1 == done, NULL);
}

static int wait_event(int seconds) {
    for (int i = 0; i < seconds * 100 && !got_event; i++) {
        usleep(10000);
    }
    return got_event;
}

static void query_q(const char *key, const char *qkey, const char *qval);
static int query_refresh;

/* one query key (with an optional nspace qualifier), its answer printed */
static void query_one(const char *key, int qualify) {
    query_q(key, qualify ? PMIX_NSPACE : NULL, me.nspace);
}

/* one query key with an optional string qualifier, its answer printed */
static void query_q(const char *key, const char *qkey, const char *qval) {
    pmix_query_t *q;
    pmix_info_t *res = NULL;
    size_t nres = 0;
    PMIX_QUERY_CREATE(q, 1);
    q->keys = calloc(2, sizeof(char *));
    q->keys[0] = strdup(key);
    if (qkey) {
        PMIX_INFO_CREATE(q->qualifiers, 1);
        q->nqual = 1;
        PMIX_INFO_LOAD(&q->qualifiers[0], qkey, qval, PMIX_STRING);
    }
    if (query_refresh) {
        /* as Open MPI 5 asks for process sets: past the client's cache */
        pmix_info_t *qi;
        PMIX_INFO_CREATE(qi, q->nqual + 1);
        for (size_t i = 0; i < q->nqual; i++) {
            PMIX_INFO_XFER(&qi[i], &q->qualifiers[i]);
        }
        bool yes = true;
        PMIX_INFO_LOAD(&qi[q->nqual], PMIX_QUERY_REFRESH_CACHE, &yes, PMIX_BOOL);
        q->qualifiers = qi;
        q->nqual++;
    }
    pmix_status_t rc = PMIx_Query_info(q, 1, &res, &nres);
    char val[600] = "";
    if (nres > 0) {
        pmix_value_t *v = &res[0].value;
        switch (v->type) {
        case PMIX_STRING:
            if (v->data.string) {
                snprintf(val, sizeof val, "string '%s'", v->data.string);
            } else {
                snprintf(val, sizeof val, "string NULL");
            }
            break;
        case PMIX_UINT32: snprintf(val, sizeof val, "u32 %u", v->data.uint32); break;
        case PMIX_SIZE: snprintf(val, sizeof val, "size %zu", v->data.size); break;
        case PMIX_STATUS: snprintf(val, sizeof val, "status %d", v->data.status); break;
        case PMIX_DATA_ARRAY: {
            pmix_data_array_t *a = v->data.darray;
            int n = snprintf(val, sizeof val, "array %zu", a ? a->size : 0);
            if (a && PMIX_INFO == a->type && a->size > 0) {
                pmix_info_t *in = (pmix_info_t *) a->array;
                size_t inner = PMIX_DATA_ARRAY == in[0].value.type && in[0].value.data.darray
                                   ? in[0].value.data.darray->size
                                   : 0;
                n += snprintf(val + n, sizeof val - n, " first %s:%zu", in[0].key, inner);
                for (size_t i = 0; i < a->size && n < 500; i++) {
                    if (PMIX_FLOAT == in[i].value.type) {
                        n += snprintf(val + n, sizeof val - n, " %s=%.1f", in[i].key,
                                      in[i].value.data.fval);
                    }
                }
            }
            if (a && PMIX_PROC == a->type) {
                pmix_proc_t *pp = (pmix_proc_t *) a->array;
                for (size_t i = 0; i < a->size && n < 500; i++) {
                    n += snprintf(val + n, sizeof val - n, " %s:%u",
                                  0 == strcmp(pp[i].nspace, me.nspace) ? "own" : pp[i].nspace,
                                  pp[i].rank);
                }
            }
            if (a && PMIX_PROC_INFO == a->type) {
                pmix_proc_info_t *pi = (pmix_proc_info_t *) a->array;
                for (size_t i = 0; i < a->size && n < 500; i++) {
                    n += snprintf(val + n, sizeof val - n, " %u:%s:%d", pi[i].proc.rank,
                                  pi[i].executable_name ? "exe" : "-", pi[i].pid > 0);
                }
            }
            break;
        }
        default: snprintf(val, sizeof val, "type %d", v->type);
        }
    }
    printf("[%u] query %s %s %s key=%s\n", me.rank, key, PMIx_Error_string(rc), val,
           nres > 0 ? res[0].key : "-");
    fflush(stdout);
}

/* the state letter of /proc/PID/stat, polled every 10 ms for up to 20 s
 * until it is (stopped != 0) or is not (stopped == 0) a stop: 'T'/'t' */
static char proc_state_until(unsigned pid, int stopped) {
    char path[64], st = '?';
    snprintf(path, sizeof path, "/proc/%u/stat", pid);
    for (int i = 0; i < 2000; i++) {
        FILE *f = fopen(path, "r");
        if (f) {
            char buf[512];
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            fclose(f);
            buf[n] = 0;
            const char *close = strrchr(buf, ')');
            if (close && close[1] == ' ') {
                st = close[2];
            }
        }
        if (stopped == ('T' == st || 't' == st)) {
            break;
        }
        usleep(10000);
    }
    return st;
}

static pmix_status_t jctrl(pmix_rank_t target, const char *key, pmix_data_type_t t, const void *val) {
    pmix_proc_t p;
    pmix_info_t info;
    pmix_info_t *res = NULL;
    size_t nres = 0;
    PMIX_LOAD_PROCID(&p, me.nspace, target);
    PMIX_INFO_LOAD(&info, key, val, t);
    return PMIx_Job_control(&p, 1, &info, 1, &res, &nres);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *mode = argc > 1 ? argv[1] : "nskey";
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    snprintf(check_prefix, sizeof check_prefix, "[%u] ", me.rank);
    check("init", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
    if (PMIX_SUCCESS != rc) {
        return 1;
    }
    if (0 == strcmp(mode, "nskey")) {
        char key[600];
        pmix_value_t v, *got = NULL;
        printf("[%u] nspace %s\n", me.rank, me.nspace);
        snprintf(key, sizeof key, "%s.k", me.nspace);
        PMIX_VALUE_LOAD(&v, &me.rank, PMIX_UINT32);
        rc = PMIx_Put(PMIX_GLOBAL, key, &v);
        check("put_nskey", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
        rc = PMIx_Store_internal(&me, key, &v);
        check("store_internal_nskey", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
        PMIx_Commit();
        PMIx_Fence(NULL, 0, NULL, 0);
        pmix_proc_t peer;
        PMIX_LOAD_PROCID(&peer, me.nspace, 0);
        rc = PMIx_Get(&peer, key, NULL, 0, &got);
        check("get_nskey", PMIX_SUCCESS == rc && got && 0 == got->data.uint32, "%s",
              PMIx_Error_string(rc));
    } else if (0 == strcmp(mode, "lcid")) {
        /* the local context id travels in PMIX_GROUP_INFO (what Open MPI 5
         * does); peers read it qualified by the group's context id */
        size_t lcid = 1234 + me.rank;
        pmix_proc_t all;
        PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
        pmix_info_t dir[2];
        bool yes = true;
        PMIX_INFO_LOAD(&dir[0], PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
        pmix_data_array_t da;
        PMIX_DATA_ARRAY_CONSTRUCT(&da, 1, PMIX_INFO);
        PMIX_INFO_LOAD(&((pmix_info_t *) da.array)[0], PMIX_GROUP_LOCAL_CID, &lcid, PMIX_SIZE);
        PMIX_INFO_LOAD(&dir[1], PMIX_GROUP_INFO, &da, PMIX_DATA_ARRAY);
        pmix_info_t *res = NULL;
        size_t nres = 0;
        rc = PMIx_Group_construct("lcgrp", &all, 1, dir, 2, &res, &nres);
        size_t ctx = SIZE_MAX;
        for (size_t i = 0; PMIX_SUCCESS == rc && i < nres; i++) {
            if (0 == strcmp(res[i].key, PMIX_GROUP_CONTEXT_ID)) {
                ctx = res[i].value.data.size;
            }
        }
        check("group_construct", PMIX_SUCCESS == rc && SIZE_MAX != ctx, "%s %zu",
              PMIx_Error_string(rc), ctx);
        uint32_t size = 0;
        pmix_value_t *sv = NULL, *got = NULL;
        if (PMIX_SUCCESS == PMIx_Get(&all, PMIX_JOB_SIZE, NULL, 0, &sv) && sv) {
            size = sv->data.uint32;
        }
        pmix_proc_t peer;
        PMIX_LOAD_PROCID(&peer, me.nspace, (me.rank + 1) % (size ? size : 1));
        pmix_info_t q;
        PMIX_INFO_LOAD(&q, PMIX_GROUP_CONTEXT_ID, &ctx, PMIX_SIZE);
        rc = PMIx_Get(&peer, PMIX_GROUP_LOCAL_CID, &q, 1, &got);
        check("peer_local_cid", PMIX_SUCCESS == rc && got && got->data.size == 1234 + peer.rank,
              "%s %zu", PMIx_Error_string(rc), PMIX_SUCCESS == rc && got ? got->data.size : 0);
        rc = PMIx_Group_destruct("lcgrp", NULL, 0);
        check("group_destruct", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
    } else if (0 == strcmp(mode, "invite")) {
        if (0 != me.rank) {
            volatile int done = 0;
            pmix_status_t code = PMIX_GROUP_INVITED;
            PMIx_Register_event_handler(&code, 1, NULL, 0, on_invited, reg_done, (void *) &done);
            for (int i = 0; i < 2000 && !done; i++) {
                usleep(1000);
            }
        }
        PMIx_Fence(NULL, 0, NULL, 0);
        if (0 == me.rank) {
            pmix_proc_t procs[2];
            PMIX_LOAD_PROCID(&procs[0], me.nspace, 1);
            PMIX_LOAD_PROCID(&procs[1], me.nspace, 2);
            pmix_info_t *res = NULL;
            size_t nres = 0;
            rc = PMIx_Group_invite("invgrp", procs, 2, NULL, 0, &res, &nres);
            check("group_invite", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
        } else if (me.rank > 2) {
            /* not invited: the event's custom range leaves us out */
            PMIx_Fence(NULL, 0, NULL, 0);
            check("not_invited", !got_event, "%s", got_event ? event_text : "");
            PMIx_Finalize(NULL, 0);
            return failures ? 1 : 0;
        } else {
            int got = wait_event(10);
            check("invited", got, "%s", event_text);
            for (int i = 0; i < 1000 && !joined; i++) {
                usleep(10000);
            }
            check("group_join", joined && PMIX_SUCCESS == join_status, "%s",
                  joined ? PMIx_Error_string(join_status) : "no answer");
        }
        PMIx_Fence(NULL, 0, NULL, 0);
    } else if (0 == strcmp(mode, "leave")) {
        register_all();
        pmix_proc_t all;
        PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
        pmix_info_t *res = NULL;
        size_t nres = 0;
        rc = PMIx_Group_construct("lvgrp", &all, 1, NULL, 0, &res, &nres);
        check("group_construct", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
        if (2 == me.rank) {
            rc = PMIx_Group_leave("lvgrp", NULL, 0);
            check("group_leave", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
        } else {
            int got = wait_event(10);
            check("left_event", got && PMIX_GROUP_LEFT == event_code, "%s", event_text);
            rc = PMIx_Group_destruct("lvgrp", NULL, 0);
            check("group_destruct", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
        }
    } else if (0 == strcmp(mode, "xgroup")) {
        const char *peer_ns = getenv("SEM_PEER_NS");
        char mine[64];
        snprintf(mine, sizeof mine, "from-%s", me.nspace);
        pmix_value_t v, *got = NULL;
        PMIX_VALUE_LOAD(&v, mine, PMIX_STRING);
        PMIx_Put(PMIX_GLOBAL, "xkey", &v);
        PMIx_Commit();
        pmix_proc_t procs[2];
        PMIX_LOAD_PROCID(&procs[0], me.nspace, 0);
        PMIX_LOAD_PROCID(&procs[1], peer_ns ? peer_ns : "?", 0);
        pmix_info_t *res = NULL;
        size_t nres = 0;
        rc = PMIx_Group_construct("xgrp", procs, 2, NULL, 0, &res, &nres);
        check("xgroup_construct", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
        pmix_proc_t grp;
        PMIX_LOAD_PROCID(&grp, "xgrp", PMIX_RANK_WILDCARD);
        rc = PMIx_Fence(&grp, 1, NULL, 0);
        check("xgroup_fence", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
        rc = PMIx_Get(&procs[1], "xkey", NULL, 0, &got);
        check("xgroup_get", PMIX_SUCCESS == rc && got && PMIX_STRING == got->type, "%s %s",
              PMIx_Error_string(rc), PMIX_SUCCESS == rc && got ? got->data.string : "");
        rc = PMIx_Group_destruct("xgrp", NULL, 0);
        check("xgroup_destruct", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
    } else if (0 == strcmp(mode, "wait")) {
        register_all();
        PMIx_Fence(NULL, 0, NULL, 0);
        int got = wait_event(60);
        check("event_before_end", got, "%s", event_text);
        sleep(60); /* the launcher ends us */
        return 0;
    } else if (0 == strcmp(mode, "fail") || 0 == strcmp(mode, "signal") ||
               0 == strcmp(mode, "abort")) {
        register_all();
        PMIx_Fence(NULL, 0, NULL, 0);
        if (1 == me.rank) {
            if (0 == strcmp(mode, "signal")) {
                kill(getpid(), SIGUSR1);
            }
            if (0 == strcmp(mode, "abort")) {
                PMIx_Abort(5, "semantics abort", NULL, 0);
            }
            _exit(3);
        }
        int got = wait_event(20);
        check("event_before_end", got, "%s", event_text);
        fflush(stdout);
        sleep(60); /* the launcher ends us */
        return 0;
    } else if (0 == strcmp(mode, "query")) {
        /* every rank is running first: a launcher knows a rank's process
         * only once it started it, and rank 0 may be up before rank 2 is */
        PMIx_Fence(NULL, 0, NULL, 0);
        if (0 == me.rank) {
            query_one(PMIX_QUERY_NAMESPACES, 0);
            query_one(PMIX_QUERY_JOB_STATUS, 1);
            query_one(PMIX_JOB_SIZE, 1);
            query_one(PMIX_QUERY_PROC_TABLE, 1);
            query_one(PMIX_QUERY_LOCAL_PROC_TABLE, 1);
            query_one(PMIX_QUERY_NUM_PSETS, 0);
            query_one(PMIX_QUERY_PSET_NAMES, 0);
            query_one(PMIX_QUERY_SPAWN_SUPPORT, 0);
            query_one(PMIX_QUERY_DEBUG_SUPPORT, 0);
            query_one(PMIX_QUERY_QUEUE_LIST, 0);
            query_one(PMIX_QUERY_MEMORY_USAGE, 1);
        }
        PMIx_Fence(NULL, 0, NULL, 0);
    } else if (0 == strcmp(mode, "psets")) {
        /* process sets (what MPI_Session_get_num_psets/get_nth_pset and
         * MPI_Group_from_session_pset rest on) are the launcher's, apart
         * from groups: a group exists while they are asked about */
        pmix_proc_t all;
        PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
        pmix_info_t *res = NULL;
        size_t nres = 0;
        rc = PMIx_Group_construct("psgrp", &all, 1, NULL, 0, &res, &nres);
        check("group_construct", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
        pmix_value_t *pv = NULL;
        rc = PMIx_Get(&me, PMIX_PSET_NAME, NULL, 0, &pv);
        printf("[%u] get pmix.pset.nm %s %s\n", me.rank, PMIx_Error_string(rc),
               PMIX_SUCCESS == rc && pv && PMIX_STRING == pv->type ? pv->data.string : "-");
        if (0 == me.rank) {
            const char *ps = argc > 2 ? argv[2] : "nopset";
            query_refresh = 1;
            query_one(PMIX_QUERY_NUM_PSETS, 0);
            query_one(PMIX_QUERY_PSET_NAMES, 0);
            query_q(PMIX_QUERY_PSET_MEMBERSHIP, PMIX_PSET_NAME, ps);
            query_q(PMIX_QUERY_PSET_MEMBERSHIP, PMIX_PSET_NAME, "psgrp");
            query_one(PMIX_QUERY_NUM_GROUPS, 0);
            query_one(PMIX_QUERY_GROUP_NAMES, 0);
            query_refresh = 0;
        }
        PMIx_Fence(NULL, 0, NULL, 0);
        rc = PMIx_Group_destruct("psgrp", NULL, 0);
        check("group_destruct", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
    } else if (0 == strcmp(mode, "attrs")) {
        /* what the host serves; kept apart: it kills Open MPI 4.1.4's mpirun */
        if (0 == me.rank) {
            query_one(PMIX_HOST_FUNCTIONS, 0);
            query_q(PMIX_QUERY_ATTRIBUTE_SUPPORT, PMIX_HOST_FUNCTIONS, "PMIx_Job_control");
        }
        PMIx_Fence(NULL, 0, NULL, 0);
    } else if (0 == strcmp(mode, "group") || 0 == strcmp(mode, "grpdie")) {
        int all = 0 == strcmp(mode, "grpdie");
        const char *gid = all ? "grpall" : "grp12";
        if (all) {
            register_all();
        }
        if (all || me.rank < 2) {
            pmix_proc_t procs[3];
            int n = all ? 3 : 2;
            for (int i = 0; i < n; i++) {
                PMIX_LOAD_PROCID(&procs[i], me.nspace, i);
            }
            pmix_info_t dir;
            bool yes = true;
            PMIX_INFO_LOAD(&dir, PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
            pmix_info_t *res = NULL;
            size_t nres = 0;
            rc = PMIx_Group_construct(gid, procs, n, &dir, 1, &res, &nres);
            size_t ctx = SIZE_MAX;
            for (size_t i = 0; PMIX_SUCCESS == rc && i < nres; i++) {
                if (0 == strcmp(res[i].key, PMIX_GROUP_CONTEXT_ID)) {
                    ctx = res[i].value.data.size;
                }
            }
            check("group_construct", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
            check("group_context_id", PMIX_SUCCESS == rc && SIZE_MAX != ctx, "%zu", ctx);
            if (all) {
                if (2 == me.rank) {
                    _exit(0);
                }
                int got = wait_event(10);
                check("member_failed_event", got && PMIX_GROUP_MEMBER_FAILED == event_code, "%s",
                      event_text);
                rc = PMIx_Group_destruct(gid, NULL, 0);
                check("group_destruct", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
            } else {
                pmix_proc_t grp;
                PMIX_LOAD_PROCID(&grp, gid, PMIX_RANK_WILDCARD);
                rc = PMIx_Fence(&grp, 1, NULL, 0);
                check("group_fence", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
                rc = PMIx_Group_destruct(gid, NULL, 0);
                check("group_destruct", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
            }
        }
    } else if (0 == strcmp(mode, "ckpt")) {
        if (1 == me.rank) {
            register_all();
        }
        PMIx_Fence(NULL, 0, NULL, 0);
        if (0 == me.rank) {
            rc = jctrl(1, PMIX_JOB_CTRL_CHECKPOINT, PMIX_STRING, "ck1");
            check("job_control_checkpoint", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
        } else if (1 == me.rank) {
            int got = wait_event(10);
            check("checkpoint_event", got && PMIX_JCTRL_CHECKPOINT == event_code, "%s", event_text);
        }
        PMIx_Fence(NULL, 0, NULL, 0);
    } else if (0 == strcmp(mode, "pause")) {
        /* rank 0 pauses rank 1 and watches its state in /proc (T: stopped),
         * then resumes it and watches it leave T: no clock is involved, so
         * no load can make a pause that happened look like none (a gap
         * measured by rank 1 itself missed a stop that came before its
         * first tick) */
        if (1 == me.rank) {
            pmix_value_t v;
            uint32_t pid = (uint32_t)getpid();
            PMIX_VALUE_LOAD(&v, &pid, PMIX_UINT32);
            PMIx_Put(PMIX_GLOBAL, "sem.pid", &v);
            PMIx_Commit();
        }
        PMIx_Fence(NULL, 0, NULL, 0);
        if (0 == me.rank) {
            pmix_proc_t peer;
            pmix_value_t *got = NULL;
            PMIX_LOAD_PROCID(&peer, me.nspace, 1);
            rc = PMIx_Get(&peer, "sem.pid", NULL, 0, &got);
            check("get_pid", PMIX_SUCCESS == rc && got, "%s", PMIx_Error_string(rc));
            unsigned pid = got ? got->data.uint32 : 0;
            bool yes = true;
            rc = jctrl(1, PMIX_JOB_CTRL_PAUSE, PMIX_BOOL, &yes);
            check("job_control_pause", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
            char st = proc_state_until(pid, 1);
            check("was_paused", 'T' == st || 't' == st, "state %c", st);
            rc = jctrl(1, PMIX_JOB_CTRL_RESUME, PMIX_BOOL, &yes);
            check("job_control_resume", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
            st = proc_state_until(pid, 0);
            check("was_resumed", 'T' != st && 't' != st, "state %c", st);
        }
        PMIx_Fence(NULL, 0, NULL, 0);
    } else if (0 == strcmp(mode, "sigctl")) {
        PMIx_Fence(NULL, 0, NULL, 0);
        if (0 == me.rank) {
            int sig = SIGUSR2;
            rc = jctrl(1, PMIX_JOB_CTRL_SIGNAL, PMIX_INT, &sig);
            check("job_control_signal", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
            PMIx_Finalize(NULL, 0);
            return failures ? 1 : 0;
        }
        if (1 == me.rank) {
            sleep(30); /* SIGUSR2's default action ends us */
        }
    }
    rc = PMIx_Finalize(NULL, 0);
    check("finalize", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
    return failures ? 1 : 0;
}
