/* pmix-wire: the PMIx_Group_* calls, for the C library's differential test
 * (capi/tests/live_capi_client.rs): one program, run under `pmixw run -n 3`
 * once on libpmix 5.0.11 and once on ours, must print the same lines.
 * Written for pmix-wire. Statuses are printed as numbers (libpmix 4's and
 * 5's error strings differ), one line per step: "rank R: <step> ...".
 *
 *   1. every rank constructs "gall" (the job's wildcard) asking for a
 *      context id: the status and every result (key, type, value; the
 *      membership's ranks); a fence across the group; destruct
 *   2. a destruct of a group never constructed; a construct without procs
 *   3. ranks 0 and 1 construct "gpair" with PMIx_Group_construct_nb (rank 2
 *      stays out), the callback's status and result keys; destruct_nb
 *   4. rank 0 invites ranks 1 and 2 to "ginv" (PMIx_Group_invite); they
 *      accept from their PMIX_GROUP_INVITED handler (PMIx_Group_join_nb)
 *   5. (`capi_group leave`, alone: libpmix 5.0.11's PMIx_Group_leave
 *      crashes, spec-notes/divergences.md) every rank constructs "gleave";
 *      rank 2 leaves it (PMIx_Group_leave); ranks 0 and 1 hear
 *      PMIX_GROUP_LEFT and destruct it without rank 2
 */
#include <pmix.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pmix_proc_t me;

/* one completion of a callback: a flag and what it was given */
typedef struct {
    volatile int done;
    pmix_status_t status;
    char text[256];
} waiter_t;

static void wait_for(waiter_t *w) {
    while (!w->done) {
        usleep(1000);
    }
}

static void print_results(const char *step, pmix_status_t rc, pmix_info_t *res, size_t nres) {
    printf("rank %u: %s rc=%d nres=%zu\n", me.rank, step, rc, nres);
    for (size_t i = 0; i < nres; i++) {
        char val[200] = "";
        if (PMIX_STRING == res[i].value.type) {
            snprintf(val, sizeof val, "%s", res[i].value.data.string);
        } else if (PMIX_SIZE == res[i].value.type) {
            snprintf(val, sizeof val, "%s", SIZE_MAX == res[i].value.data.size ? "SIZE_MAX" : "set");
        } else if (PMIX_DATA_ARRAY == res[i].value.type && res[i].value.data.darray) {
            pmix_data_array_t *d = res[i].value.data.darray;
            size_t used = snprintf(val, sizeof val, "type=%u size=%zu", d->type, d->size);
            for (size_t k = 0; PMIX_PROC == d->type && k < d->size && used < sizeof val - 16; k++) {
                used += snprintf(val + used, sizeof val - used, " %u", ((pmix_proc_t *) d->array)[k].rank);
            }
        }
        printf("rank %u: %s result %s type=%u %s\n", me.rank, step, res[i].key, res[i].value.type, val);
    }
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(const char *const *) a, *(const char *const *) b);
}

static void info_done(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                      pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    waiter_t *w = cbdata;
    w->status = status;
    /* the keys in name order (libpmix 5.0.11 and ours order them apart) */
    const char *keys[16];
    size_t n = ninfo < 16 ? ninfo : 16;
    for (size_t i = 0; i < n; i++) {
        keys[i] = info[i].key;
    }
    qsort(keys, n, sizeof keys[0], by_name);
    size_t used = 0;
    for (size_t i = 0; i < n && used < sizeof w->text - 40; i++) {
        used += snprintf(w->text + used, sizeof w->text - used, " %s", keys[i]);
    }
    if (release_fn) {
        release_fn(release_cbdata);
    }
    w->done = 1;
}

static void op_done(pmix_status_t status, void *cbdata) {
    waiter_t *w = cbdata;
    w->status = status;
    w->done = 1;
}

static void reg_done(pmix_status_t status, size_t ref, void *cbdata) {
    (void) ref;
    waiter_t *w = cbdata;
    w->status = status;
    w->done = 1;
}

static waiter_t invited, joined, left;

/* the PMIX_GROUP_ID among a notice's infos */
static const char *group_of(const pmix_info_t info[], size_t ninfo) {
    for (size_t i = 0; i < ninfo; i++) {
        if (0 == strcmp(info[i].key, PMIX_GROUP_ID) && PMIX_STRING == info[i].value.type) {
            return info[i].value.data.string;
        }
    }
    return "?";
}

/* the first notice a handler hears, in `w`; `then` (if any) called with its group */
static void heard(waiter_t *w, pmix_status_t status, const pmix_proc_t *source,
                  const pmix_info_t info[], size_t ninfo, void (*then)(const char *, const pmix_proc_t *)) {
    const char *grp = group_of(info, ninfo);
    if (!w->done) {
        snprintf(w->text, sizeof w->text, "code=%d group=%s from=%u", status, grp,
                 source ? source->rank : 99);
        w->done = 1;
        if (then) {
            then(grp, source);
        }
    }
}

static void accept_invitation(const char *grp, const pmix_proc_t *leader) {
    PMIx_Group_join_nb(grp, leader, PMIX_GROUP_ACCEPT, NULL, 0, info_done, &joined);
}

static void on_invited(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void) id;
    (void) results;
    (void) nresults;
    heard(&invited, status, source, info, ninfo, accept_invitation);
    if (cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

static void on_left(size_t id, pmix_status_t status, const pmix_proc_t *source,
                    pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void) id;
    (void) results;
    (void) nresults;
    heard(&left, status, source, info, ninfo, NULL);
    if (cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

static void register_for(pmix_status_t code, pmix_notification_fn_t fn) {
    waiter_t w = {0};
    PMIx_Register_event_handler(&code, 1, NULL, 0, fn, reg_done, &w);
    wait_for(&w);
    printf("rank %u: register %d rc=%d\n", me.rank, code, w.status);
}

static void leave_step(pmix_proc_t *all);

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    int leave = argc > 1 && 0 == strcmp(argv[1], "leave");
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        printf("init rc=%d\n", rc);
        return 1;
    }
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    pmix_info_t *res = NULL;
    size_t nres = 0;
    if (leave) {
        leave_step(&all);
        goto done;
    }

    /* 1 */
    pmix_info_t dir;
    bool yes = true;
    PMIX_INFO_LOAD(&dir, PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
    rc = PMIx_Group_construct("gall", &all, 1, &dir, 1, &res, &nres);
    print_results("construct gall", rc, res, nres);
    PMIX_INFO_FREE(res, nres);
    pmix_proc_t grp;
    PMIX_LOAD_PROCID(&grp, "gall", PMIX_RANK_WILDCARD);
    rc = PMIx_Fence(&grp, 1, NULL, 0);
    printf("rank %u: fence gall rc=%d\n", me.rank, rc);
    rc = PMIx_Group_destruct("gall", NULL, 0);
    printf("rank %u: destruct gall rc=%d\n", me.rank, rc);

    /* 2 */
    rc = PMIx_Group_destruct("never", NULL, 0);
    printf("rank %u: destruct never rc=%d\n", me.rank, rc);
    res = NULL;
    nres = 0;
    rc = PMIx_Group_construct("noprocs", NULL, 0, NULL, 0, &res, &nres);
    printf("rank %u: construct noprocs rc=%d nres=%zu\n", me.rank, rc, nres);

    /* 3 */
    if (me.rank < 2) {
        pmix_proc_t pair[2];
        PMIX_LOAD_PROCID(&pair[0], me.nspace, 0);
        PMIX_LOAD_PROCID(&pair[1], me.nspace, 1);
        waiter_t w = {0};
        rc = PMIx_Group_construct_nb("gpair", pair, 2, NULL, 0, info_done, &w);
        if (PMIX_SUCCESS == rc) {
            wait_for(&w);
        }
        printf("rank %u: construct_nb gpair rc=%d cb=%d keys%s\n", me.rank, rc, w.status, w.text);
        waiter_t d = {0};
        rc = PMIx_Group_destruct_nb("gpair", NULL, 0, op_done, &d);
        if (PMIX_SUCCESS == rc) {
            wait_for(&d);
        }
        printf("rank %u: destruct_nb gpair rc=%d cb=%d\n", me.rank, rc, d.status);
    }
    PMIx_Fence(NULL, 0, NULL, 0);

    /* 4 */
    if (0 != me.rank) {
        register_for(PMIX_GROUP_INVITED, on_invited);
    }
    PMIx_Fence(NULL, 0, NULL, 0);
    if (0 == me.rank) {
        pmix_proc_t guests[2];
        PMIX_LOAD_PROCID(&guests[0], me.nspace, 1);
        PMIX_LOAD_PROCID(&guests[1], me.nspace, 2);
        res = NULL;
        nres = 0;
        rc = PMIx_Group_invite("ginv", guests, 2, NULL, 0, &res, &nres);
        printf("rank %u: invite ginv rc=%d nres=%zu\n", me.rank, rc, nres);
    } else {
        wait_for(&invited);
        printf("rank %u: invited %s\n", me.rank, invited.text);
        wait_for(&joined);
        printf("rank %u: join_nb cb=%d keys%s\n", me.rank, joined.status, joined.text);
    }
    PMIx_Fence(NULL, 0, NULL, 0);

done:
    PMIx_Fence(NULL, 0, NULL, 0);
    rc = PMIx_Finalize(NULL, 0);
    printf("rank %u: finalize rc=%d\n", me.rank, rc);
    return 0;
}

/* 5 */
static void leave_step(pmix_proc_t *all) {
    pmix_info_t *res = NULL;
    size_t nres = 0;
    pmix_status_t rc;
    if (2 != me.rank) {
        register_for(PMIX_GROUP_LEFT, on_left);
    }
    res = NULL;
    nres = 0;
    rc = PMIx_Group_construct("gleave", all, 1, NULL, 0, &res, &nres);
    printf("rank %u: construct gleave rc=%d\n", me.rank, rc);
    PMIX_INFO_FREE(res, nres);
    if (2 == me.rank) {
        rc = PMIx_Group_leave("gleave", NULL, 0);
        printf("rank %u: leave gleave rc=%d\n", me.rank, rc);
    } else {
        wait_for(&left);
        printf("rank %u: left %s\n", me.rank, left.text);
        rc = PMIx_Group_destruct("gleave", NULL, 0);
        printf("rank %u: destruct gleave rc=%d\n", me.rank, rc);
    }
}
