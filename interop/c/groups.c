/* pmix-wire server tests: group local context ids and fences over groups
 * built without a collective (issue #36 item 6). Written for pmix-wire;
 * the calls are those of OpenPMIx 4.2.2's group_lcl_cid and asyncgroup
 * examples. The mode is argv[1]:
 *
 *   lclcid  every rank: PMIx_Group_construct("lg", all ranks, {ASSIGN_
 *           CONTEXT_ID, GROUP_INFO = [GROUP_LOCAL_CID = 1000 + rank]}),
 *           the context id taken from the results by its key; then every
 *           member's GROUP_LOCAL_CID with the GROUP_CONTEXT_ID qualifier,
 *           before and after PMIx_Group_destruct. Prints
 *           "lclcid WHEN ME OF VALUE" (WHEN: before/after; VALUE the
 *           number read, or the status name)
 *   async   4 ranks or more: rank 0 invites ranks 0, 2 and 3 into "ag"
 *           (PMIx_Group_invite), 2 and 3 accept from their
 *           PMIX_GROUP_INVITED handler (PMIx_Group_join_nb) and wait for
 *           PMIX_GROUP_CONSTRUCT_COMPLETE; the three fence over
 *           ("ag", WILDCARD): "groupfence ME STATUS". Then ranks 1, 2 and
 *           3 build "tg" with PMIx_Group_construct_nb and
 *           PMIX_GROUP_NOTIFY_TERMINATION and fence over it the same way:
 *           "termfence ME STATUS". Every rank ends with a job fence.
 */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "waits.h"

static pmix_proc_t me;
static volatile int complete = 0;
static void on_complete(size_t id, pmix_status_t status, const pmix_proc_t *source,
                        pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                        pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void) id;
    (void) status;
    (void) source;
    (void) info;
    (void) ninfo;
    (void) results;
    (void) nresults;
    complete = 1;
    if (cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

static void on_invited(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void) id;
    (void) status;
    (void) results;
    (void) nresults;
    const char *grp = NULL;
    for (size_t n = 0; n < ninfo; n++) {
        if (PMIX_CHECK_KEY(&info[n], PMIX_GROUP_ID)) {
            grp = info[n].value.data.string;
        }
    }
    /* the leader hears its own invitation too */
    if (!PMIX_CHECK_PROCID(source, &me) && NULL != grp) {
        pmix_status_t rc = PMIx_Group_join_nb(grp, source, PMIX_GROUP_ACCEPT, NULL, 0, NULL, NULL);
        if (PMIX_SUCCESS != rc) {
            printf("join %u %s\n", me.rank, PMIx_Error_string(rc));
        }
    }
    if (cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

static pmix_status_t group_fence(const char *grp) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, grp, PMIX_RANK_WILDCARD);
    return PMIx_Fence(&p, 1, NULL, 0);
}

static void lclcid_reads(const char *when, size_t ctxid, uint32_t n) {
    pmix_info_t q[2];
    uint32_t timeout = 10;
    PMIX_INFO_LOAD(&q[0], PMIX_GROUP_CONTEXT_ID, &ctxid, PMIX_SIZE);
    PMIX_INFO_SET_QUALIFIER(&q[0]);
    PMIX_INFO_LOAD(&q[1], PMIX_TIMEOUT, &timeout, PMIX_UINT32);
    for (uint32_t r = 0; r < n; r++) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        pmix_value_t *val = NULL;
        pmix_status_t rc = PMIx_Get(&p, PMIX_GROUP_LOCAL_CID, q, 2, &val);
        if (PMIX_SUCCESS != rc) {
            printf("lclcid %s %u %u %s\n", when, me.rank, r, PMIx_Error_string(rc));
        } else if (PMIX_SIZE != val->type) {
            printf("lclcid %s %u %u type %s\n", when, me.rank, r,
                   PMIx_Data_type_string(val->type));
        } else {
            printf("lclcid %s %u %u %lu\n", when, me.rank, r, (unsigned long) val->data.size);
        }
        if (val) {
            PMIX_VALUE_RELEASE(val);
        }
    }
}

static int lclcid(uint32_t n) {
    pmix_proc_t *procs;
    PMIX_PROC_CREATE(procs, n);
    for (uint32_t r = 0; r < n; r++) {
        PMIX_LOAD_PROCID(&procs[r], me.nspace, r);
    }
    size_t mine = 1000 + me.rank;
    pmix_info_t local;
    PMIX_INFO_LOAD(&local, PMIX_GROUP_LOCAL_CID, &mine, PMIX_SIZE);
    pmix_data_array_t arr = {.type = PMIX_INFO, .size = 1, .array = &local};
    pmix_info_t info[2];
    PMIX_INFO_LOAD(&info[0], PMIX_GROUP_ASSIGN_CONTEXT_ID, NULL, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_GROUP_INFO, &arr, PMIX_DATA_ARRAY);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t rc = PMIx_Group_construct("lg", procs, n, info, 2, &results, &nresults);
    printf("construct %u %s\n", me.rank, PMIx_Error_string(rc));
    size_t ctxid = SIZE_MAX;
    for (size_t i = 0; i < nresults; i++) {
        if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_CONTEXT_ID)) {
            pmix_status_t r2;
            PMIX_VALUE_GET_NUMBER(r2, &results[i].value, ctxid, size_t);
            (void) r2;
        }
    }
    printf("ctxid %u %s\n", me.rank, SIZE_MAX == ctxid ? "none" : "some");
    fflush(stdout);
    if (PMIX_SUCCESS != rc) {
        return 1;
    }
    lclcid_reads("before", ctxid, n);
    rc = PMIx_Group_destruct("lg", NULL, 0);
    printf("destruct %u %s\n", me.rank, PMIx_Error_string(rc));
    lclcid_reads("after", ctxid, n);
    fflush(stdout);
    PMIX_PROC_FREE(procs, n);
    /* the array was on the stack: only the info's own contents go */
    PMIX_INFO_DESTRUCT(&info[0]);
    return 0;
}

static int async(uint32_t n) {
    if (n < 4) {
        printf("async needs 4 ranks\n");
        return 1;
    }
    pmix_status_t rc;
    if (0 == me.rank) {
        pmix_proc_t procs[3];
        PMIX_LOAD_PROCID(&procs[0], me.nspace, 0);
        PMIX_LOAD_PROCID(&procs[1], me.nspace, 2);
        PMIX_LOAD_PROCID(&procs[2], me.nspace, 3);
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        rc = PMIx_Group_invite("ag", procs, 3, NULL, 0, &results, &nresults);
        printf("invite %u %s\n", me.rank, PMIx_Error_string(rc));
        fflush(stdout);
        rc = group_fence("ag");
        printf("groupfence %u %s\n", me.rank, PMIx_Error_string(rc));
    } else if (2 == me.rank || 3 == me.rank) {
        for (int i = 0; i < 60000 && !complete; i++) {
            usleep(1000);
        }
        printf("complete %u %d\n", me.rank, complete);
        fflush(stdout);
        rc = group_fence("ag");
        printf("groupfence %u %s\n", me.rank, PMIx_Error_string(rc));
    }
    fflush(stdout);
    if (0 < me.rank && me.rank < 4) {
        pmix_proc_t procs[3];
        for (uint32_t r = 1; r < 4; r++) {
            PMIX_LOAD_PROCID(&procs[r - 1], me.nspace, r);
        }
        pmix_info_t term;
        bool yes = true;
        PMIX_INFO_LOAD(&term, PMIX_GROUP_NOTIFY_TERMINATION, &yes, PMIX_BOOL);
        w_arm();
        rc = w_wait(PMIx_Group_construct_nb("tg", procs, 3, &term, 1, w_info_cb, NULL), 60000);
        printf("termconstruct %u %s\n", me.rank, PMIx_Error_string(rc));
        rc = group_fence("tg");
        printf("termfence %u %s\n", me.rank, PMIx_Error_string(rc));
        fflush(stdout);
        PMIx_Group_destruct("tg", NULL, 0);
    }
    return 0;
}

int main(int argc, char **argv) {
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        printf("fail init %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *val = NULL;
    uint32_t n = 0;
    if (PMIX_SUCCESS == PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val)) {
        n = val->data.uint32;
        PMIX_VALUE_RELEASE(val);
    }
    w_register(PMIX_GROUP_INVITED, on_invited);
    w_register(PMIX_GROUP_CONSTRUCT_COMPLETE, on_complete);
    rc = PMIx_Fence(&wild, 1, NULL, 0);
    int bad = 0;
    const char *mode = argc > 1 ? argv[1] : "lclcid";
    if (0 == strcmp(mode, "lclcid")) {
        bad = lclcid(n);
    } else if (0 == strcmp(mode, "async")) {
        bad = async(n);
    } else {
        printf("unknown mode %s\n", mode);
        bad = 1;
    }
    rc = PMIx_Fence(&wild, 1, NULL, 0);
    printf("fence %u %s\n", me.rank, PMIx_Error_string(rc));
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return PMIX_SUCCESS == rc && !bad ? 0 : 1;
}
