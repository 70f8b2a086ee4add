/* pmix-wire server tests: dynamic jobs as Open MPI 5 drives them (issue
 * #24 item 3), for libpmix 4.2.2 and 5.0.11 clients. Written for
 * pmix-wire. Every process prints "ok <check> <value>" or "fail <check>
 * <why>" lines and exits 1 on any failure.
 *
 *   spawn_conn connect   (a job of any size) rank 0 spawns 2 ranks of
 *                        "spawn_conn child 2"; the parent's ranks learn the
 *                        child namespace by a fence, then every rank of
 *                        both jobs calls PMIx_Connect over both namespaces,
 *                        reads the other job's size and a key the other
 *                        side committed, and PMIx_Disconnect
 *   spawn_conn multiple  the same with two apps in one spawn (1 and 2
 *                        ranks, "child 3 A" and "child 3 B"): the children
 *                        check their appnum and app size
 *   spawn_conn loop      (one rank) 20 spawns of 1 rank in turn, each
 *                        connected to and disconnected from
 *   spawn_conn dump      rank 0 spawns 1 rank of "child 1 dump", which
 *                        prints what it finds of its parent and its app
 *                        ("have KEY VALUE" / "none KEY STATUS")
 *   spawn_conn child N LABEL P  (a spawned job of N ranks whose parent
 *                        job has P; LABEL: "", A, B or dump) checks
 *                        PMIX_PARENT_ID names a rank of another namespace
 *                        (a child without one would spawn again: the bug
 *                        this guards), then connects as above
 *
 * Rank 0 of a parent also waits for each child job's PMIX_EVENT_JOB_END
 * (the launcher reports a spawned job's end to the session).
 *
 * Both sides Put a key before connecting; after the connect each reads the
 * other side's rank 0 key from the server (the modex across jobs).
 *
 * SPAWN_CONN_CHILD_ENV=NAME=value (optional) is added to each spawned
 * app's environment (capi/tests/live_capi_prterun_spawn.rs gives
 * PMIX_MCA_gds=hash, the store hint our client adds itself).
 */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"

static pmix_proc_t me;

/* the namespaces whose PMIX_EVENT_JOB_END arrived (the last 32) */
static char ended[32][PMIX_MAX_NSLEN + 1];
static volatile int nended = 0, ev_registered = 0;
static void on_job_end(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void) id;
    (void) status;
    (void) results;
    (void) nresults;
    const char *ns = source ? source->nspace : "";
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && PMIX_PROC == info[i].value.type) {
            ns = info[i].value.data.proc->nspace;
        }
    }
    strncpy(ended[nended % 32], ns, PMIX_MAX_NSLEN);
    nended++;
    if (cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}
static void on_ev_reg(pmix_status_t s, size_t ref, void *d) {
    (void) s;
    (void) ref;
    (void) d;
    ev_registered = 1;
}

/* Wait (bounded: the job must end first) for the end of job `ns`. */
static void await_end(const char *ns, const char *tag) {
    int seen = 0;
    for (int i = 0; i < 60000 && !seen; i++) {
        for (int k = 0; k < nended && k < 32 && !seen; k++) {
            seen = 0 == strcmp(ended[k], ns);
        }
        if (!seen) {
            usleep(1000);
        }
    }
    char what[64];
    snprintf(what, sizeof what, "%s_job_end", tag);
    check(what, seen, "%s", ns);
}
/* this job's size, as its children are told it (argv[4]) */
static char parent_size[16] = "0";

/* PMIX_PARENT_ID of this rank, if the server gave one */
static int parent_of(pmix_proc_t *parent, pmix_status_t *rc) {
    pmix_value_t *v = NULL;
    *rc = PMIx_Get(&me, PMIX_PARENT_ID, NULL, 0, &v);
    int found = PMIX_SUCCESS == *rc && v && PMIX_PROC == v->type;
    if (found) {
        PMIX_LOAD_PROCID(parent, v->data.proc->nspace, v->data.proc->rank);
    } else if (PMIX_SUCCESS == *rc) {
        *rc = PMIX_ERR_TYPE_MISMATCH;
    }
    if (v) {
        PMIX_VALUE_RELEASE(v);
    }
    return found;
}

/* Connect with every rank of `other`, read its size and its rank 0's key
 * `key` (expecting `want`), disconnect. */
static void connect_with(const char *other, uint32_t other_size, const char *key,
                         const char *want, const char *tag) {
    pmix_status_t rc;
    pmix_proc_t both[2], theirs, zero;
    char what[64];
    /* the same order on both sides, as Open MPI sorts them */
    int mine_first = strcmp(me.nspace, other) < 0;
    PMIX_LOAD_PROCID(&both[mine_first ? 0 : 1], me.nspace, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&both[mine_first ? 1 : 0], other, PMIX_RANK_WILDCARD);
    rc = PMIx_Connect(both, 2, NULL, 0);
    snprintf(what, sizeof what, "%s_connect", tag);
    check(what, PMIX_SUCCESS == rc, "%s:%u with %s: %s", me.nspace, me.rank, other,
          PMIx_Error_string(rc));
    if (PMIX_SUCCESS != rc) {
        return;
    }
    PMIX_LOAD_PROCID(&theirs, other, PMIX_RANK_WILDCARD);
    uint32_t n = get_u32(&theirs, PMIX_JOB_SIZE, &rc);
    snprintf(what, sizeof what, "%s_their_size", tag);
    check(what, PMIX_SUCCESS == rc && n == other_size, "%u (want %u) %s", n, other_size,
          PMIx_Error_string(rc));
    PMIX_LOAD_PROCID(&zero, other, 0);
    char *s = get_str(&zero, key, &rc);
    snprintf(what, sizeof what, "%s_their_key", tag);
    check(what, s && 0 == strcmp(s, want), "%s", s ? s : PMIx_Error_string(rc));
    free(s);
    rc = PMIx_Disconnect(both, 2, NULL, 0);
    snprintf(what, sizeof what, "%s_disconnect", tag);
    check(what, PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
}

/* Rank 0 spawns `napps` apps of `self` ("child <total> <label>"), the
 * parent's ranks all learn the namespace; returns 0 when it failed. */
static int spawn(const char *self, int napps, const int *procs, const char **labels, int total,
                 char *child, const char *tag) {
    pmix_status_t rc = PMIX_SUCCESS;
    char what[64];
    if (0 == me.rank) {
        pmix_app_t *apps;
        char tot[16];
        snprintf(tot, sizeof tot, "%d", total);
        PMIX_APP_CREATE(apps, napps);
        for (int a = 0; a < napps; a++) {
            apps[a].cmd = strdup(self);
            PMIX_ARGV_APPEND(rc, apps[a].argv, self);
            PMIX_ARGV_APPEND(rc, apps[a].argv, "child");
            PMIX_ARGV_APPEND(rc, apps[a].argv, tot);
            PMIX_ARGV_APPEND(rc, apps[a].argv, labels[a]);
            PMIX_ARGV_APPEND(rc, apps[a].argv, parent_size);
            apps[a].maxprocs = procs[a];
            if (getenv("SPAWN_CONN_CHILD_ENV")) {
                PMIX_ARGV_APPEND(rc, apps[a].env, getenv("SPAWN_CONN_CHILD_ENV"));
            }
        }
        pmix_nspace_t ns;
        rc = PMIx_Spawn(NULL, 0, apps, napps, ns);
        snprintf(what, sizeof what, "%s_spawn", tag);
        check(what, PMIX_SUCCESS == rc && 0 != strcmp(ns, me.nspace), "%s",
              PMIX_SUCCESS == rc ? ns : PMIx_Error_string(rc));
        PMIX_APP_FREE(apps, napps);
        strncpy(child, PMIX_SUCCESS == rc ? ns : "", PMIX_MAX_NSLEN);
        put_str("spawn.child", child);
    }
    put_str("spawn.parent", "parent-value");
    PMIx_Commit();
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    PMIx_Fence(NULL, 0, &collect, 1);
    PMIX_INFO_DESTRUCT(&collect);
    if (0 != me.rank) {
        pmix_proc_t zero;
        PMIX_LOAD_PROCID(&zero, me.nspace, 0);
        char *s = get_str(&zero, "spawn.child", &rc);
        strncpy(child, s ? s : "", PMIX_MAX_NSLEN);
        free(s);
    }
    return child[0] != '\0';
}

static void dump(void) {
    const char *own[] = {PMIX_PARENT_ID, PMIX_APPNUM, "pmix.apprank", PMIX_GLOBAL_RANK,
                         PMIX_LOCAL_RANK, PMIX_NODE_RANK, PMIX_HOSTNAME, "pmix.reinc", NULL};
    const char *job[] = {PMIX_SPAWNED, PMIX_JOB_SIZE, PMIX_UNIV_SIZE, PMIX_MAX_PROCS,
                         PMIX_JOB_NUM_APPS, PMIX_APP_SIZE, PMIX_APPLDR, PMIX_APP_ARGV, PMIX_WDIR,
                         PMIX_NPROC_OFFSET, PMIX_JOBID, PMIX_NSDIR, PMIX_PROGRAMMING_MODEL,
                         NULL};
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    for (int pass = 0; pass < 2; pass++) {
        const char **keys = pass ? job : own;
        for (int i = 0; keys[i]; i++) {
            pmix_value_t *v = NULL;
            pmix_status_t rc = PMIx_Get(pass ? &wild : &me, keys[i], NULL, 0, &v);
            if (PMIX_SUCCESS != rc || !v) {
                printf("none %s %s\n", keys[i], PMIx_Error_string(rc));
                continue;
            }
            switch (v->type) {
            case PMIX_PROC:
                printf("have %s PROC %s:%u\n", keys[i], v->data.proc->nspace, v->data.proc->rank);
                break;
            case PMIX_STRING: printf("have %s STRING %s\n", keys[i], v->data.string); break;
            case PMIX_BOOL: printf("have %s BOOL %d\n", keys[i], v->data.flag); break;
            case PMIX_UINT32: printf("have %s UINT32 %u\n", keys[i], v->data.uint32); break;
            case PMIX_UINT16: printf("have %s UINT16 %u\n", keys[i], v->data.uint16); break;
            case PMIX_PROC_RANK: printf("have %s RANK %u\n", keys[i], v->data.rank); break;
            default: printf("have %s type %d\n", keys[i], v->type);
            }
            PMIX_VALUE_RELEASE(v);
        }
    }
    fflush(stdout);
}

int main(int argc, char **argv) {
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        printf("fail init %s\n", PMIx_Error_string(rc));
        return 1;
    }
    const char *mode = argc > 1 ? argv[1] : "";
    pmix_proc_t wild, parent;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    uint32_t size = get_u32(&wild, PMIX_JOB_SIZE, &rc);
    int spawned = parent_of(&parent, &rc);
    if (!spawned) {
        /* a parent hears of its children's ends */
        pmix_status_t code = PMIX_EVENT_JOB_END;
        PMIx_Register_event_handler(&code, 1, NULL, 0, on_job_end, on_ev_reg, NULL);
        while (!ev_registered) {
            usleep(1000);
        }
    }
    if (0 == strcmp(mode, "child")) {
        const char *label = argc > 3 ? argv[3] : "";
        check("child_has_parent", spawned && 0 != strcmp(parent.nspace, me.nspace), "%s:%u %s",
              spawned ? parent.nspace : "-", spawned ? parent.rank : 0, PMIx_Error_string(rc));
        uint32_t want = argc > 2 ? (uint32_t) atoi(argv[2]) : 0;
        check("child_size", size == want, "%u (want %u)", size, want);
        if (0 == strcmp(label, "dump")) {
            dump();
        } else if (spawned) {
            if (label[0] == 'A' || label[0] == 'B') {
                uint32_t app = get_u32(&me, PMIX_APPNUM, &rc);
                check("child_appnum", app == (uint32_t) (label[0] - 'A'), "%u %s", app,
                      PMIx_Error_string(rc));
            }
            char val[PMIX_MAX_NSLEN + 16];
            snprintf(val, sizeof val, "child-%s", me.nspace);
            put_str("spawn.child.val", val);
            PMIx_Commit();
            uint32_t psize = argc > 4 ? (uint32_t) atoi(argv[4]) : 0;
            connect_with(parent.nspace, psize, "spawn.parent", "parent-value", "child");
        }
    } else if (spawned) {
        /* a parent-mode program that finds a parent was itself spawned:
         * it must not spawn again */
        check("not_spawned", 0, "%s:%u has parent %s:%u", me.nspace, me.rank, parent.nspace,
              parent.rank);
    } else if (0 == strcmp(mode, "connect") || 0 == strcmp(mode, "multiple") ||
               0 == strcmp(mode, "dump")) {
        snprintf(parent_size, sizeof parent_size, "%u", size);
        int multi = 0 == strcmp(mode, "multiple"), dumping = 0 == strcmp(mode, "dump");
        int procs2[] = {2}, procs3[] = {1, 2}, procs1[] = {1};
        const char *l2[] = {""}, *l3[] = {"A", "B"}, *l1[] = {"dump"};
        char child[PMIX_MAX_NSLEN + 1] = "";
        int ok = spawn(argv[0], multi ? 2 : 1, multi ? procs3 : dumping ? procs1 : procs2,
                       multi ? l3 : dumping ? l1 : l2, multi ? 3 : dumping ? 1 : 2, child, mode);
        check("learned_child", ok, "%s", child);
        if (ok && !dumping) {
            char want[PMIX_MAX_NSLEN + 16];
            snprintf(want, sizeof want, "child-%s", child);
            connect_with(child, multi ? 3 : 2, "spawn.child.val", want, mode);
        }
        if (ok && 0 == me.rank) {
            await_end(child, mode);
        }
    } else if (0 == strcmp(mode, "loop")) {
        snprintf(parent_size, sizeof parent_size, "%u", size);
        int procs1[] = {1};
        const char *l1[] = {""};
        int done = 0;
        for (int i = 0; i < 20; i++) {
            char child[PMIX_MAX_NSLEN + 1] = "", tag[16], want[PMIX_MAX_NSLEN + 16];
            snprintf(tag, sizeof tag, "loop%d", i);
            if (!spawn(argv[0], 1, procs1, l1, 1, child, tag)) {
                break;
            }
            snprintf(want, sizeof want, "child-%s", child);
            int before = failures;
            connect_with(child, 1, "spawn.child.val", want, tag);
            await_end(child, tag);
            if (failures != before) {
                break;
            }
            done++;
        }
        check("loop_spawns", done == 20, "%d of 20", done);
    } else {
        check("mode", 0, "unknown mode %s", mode);
    }
    rc = PMIx_Finalize(NULL, 0);
    check("finalize", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
    return failures ? 1 : 0;
}
