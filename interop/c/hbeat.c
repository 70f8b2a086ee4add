/* pmix-wire server tests: heartbeat monitoring (issue #36 item 4).
 * Written for pmix-wire. Two ranks, the calls OpenPMIx 4.2.2's jctrl
 * example makes, then each rank in its own part:
 *
 *   every rank  PMIx_Job_control_nb(NULL, 0, {PREEMPTIBLE = true,
 *               CHECKPOINT_METHOD = [SIGNAL = SIGUSR2, EVENT =
 *               PMIX_JCTRL_CHECKPOINT]}) with the method's value type left
 *               unset, as the example leaves it ("status example ..."),
 *               and a handler for PMIX_MONITOR_HEARTBEAT_ALERT
 *   rank 0      monitored (window 5 s, 2 drops, the example's figures;
 *               range NAMESPACE, the default), beats every 20 ms until a
 *               fence it started without blocking completes
 *   rank 1      monitored (window 1 s, 0 drops, range PROC_LOCAL), never
 *               beats, waits for an alert (at most argv[1] seconds, default
 *               60), then fences
 *
 * Each rank prints "status monitor STATUS", "status heartbeat done",
 * "alert ME RANK" for every alert it received (RANK: the alert's source) and
 * "status fence STATUS". With a server that monitors, rank 1 prints
 * "alert 1 1" and rank 0 prints no alert line.
 */
#include <pmix.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "waits.h"

static volatile int alerts[64];
static volatile int nalerts = 0;

static void on_alert(size_t id, pmix_status_t status, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void) id;
    (void) info;
    (void) ninfo;
    (void) results;
    (void) nresults;
    if (PMIX_MONITOR_HEARTBEAT_ALERT == status && nalerts < 64) {
        alerts[nalerts] = NULL == source ? -1 : (int) source->rank;
        nalerts++;
    }
    if (cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

int main(int argc, char **argv) {
    int wait_ms = 1000 * (argc > 1 ? atoi(argv[1]) : 60);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        printf("fail init %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_status_t code = PMIX_MONITOR_HEARTBEAT_ALERT;
    w_register(code, on_alert);

    /* the example's job-control request: the method's type is never set */
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, 2);
    bool yes = true;
    PMIX_INFO_LOAD(&info[0], PMIX_JOB_CTRL_PREEMPTIBLE, &yes, PMIX_BOOL);
    strncpy(info[1].key, PMIX_JOB_CTRL_CHECKPOINT_METHOD, PMIX_MAX_KEYLEN);
    PMIX_DATA_ARRAY_CREATE(info[1].value.data.darray, 2, PMIX_INFO);
    pmix_info_t *m = (pmix_info_t *) info[1].value.data.darray->array;
    int sig = SIGUSR2;
    pmix_status_t ev = PMIX_JCTRL_CHECKPOINT;
    PMIX_INFO_LOAD(&m[0], PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, &sig, PMIX_INT);
    PMIX_INFO_LOAD(&m[1], PMIX_JOB_CTRL_CHECKPOINT_EVENT, &ev, PMIX_STATUS);
    w_arm();
    rc = w_wait(PMIx_Job_control_nb(NULL, 0, info, 2, w_info_cb, NULL), 60000);
    printf("status example %s\n", PMIx_Error_string(rc));
    /* the array was never typed: free it by hand, then the rest */
    PMIX_DATA_ARRAY_FREE(info[1].value.data.darray);
    info[1].value.data.darray = NULL;
    PMIX_INFO_FREE(info, 2);

    pmix_info_t mon;
    PMIX_INFO_LOAD(&mon, PMIX_MONITOR_HEARTBEAT, NULL, PMIX_POINTER);
    pmix_info_t dirs[4];
    uint32_t window = 0 == me.rank ? 5 : 1, drops = 0 == me.rank ? 2 : 0;
    pmix_data_range_t range = 0 == me.rank ? PMIX_RANGE_NAMESPACE : PMIX_RANGE_PROC_LOCAL;
    PMIX_INFO_LOAD(&dirs[0], PMIX_MONITOR_ID, "MONITOR1", PMIX_STRING);
    PMIX_INFO_LOAD(&dirs[1], PMIX_MONITOR_HEARTBEAT_TIME, &window, PMIX_UINT32);
    PMIX_INFO_LOAD(&dirs[2], PMIX_MONITOR_HEARTBEAT_DROPS, &drops, PMIX_UINT32);
    PMIX_INFO_LOAD(&dirs[3], PMIX_RANGE, &range, PMIX_DATA_RANGE);
    w_arm();
    rc = w_wait(PMIx_Process_monitor_nb(&mon, PMIX_MONITOR_HEARTBEAT_ALERT, dirs, 4, w_info_cb,
                                        NULL),
                60000);
    printf("status monitor %s\n", PMIx_Error_string(rc));
    fflush(stdout);

    pmix_info_t nocollect;
    bool no = false;
    PMIX_INFO_LOAD(&nocollect, PMIX_COLLECT_DATA, &no, PMIX_BOOL);
    pmix_status_t fence_status;
    if (0 == me.rank) {
        /* beat until every rank has reached the fence */
        w_arm();
        rc = PMIx_Fence_nb(NULL, 0, &nocollect, 1, w_op_cb, NULL);
        while (PMIX_SUCCESS == rc && !w_done) {
            PMIx_Heartbeat();
            usleep(20000);
        }
        fence_status = w_wait(rc, 0);
        printf("status heartbeat done\n");
    } else {
        for (int i = 0; i < wait_ms && 0 == nalerts; i++) {
            usleep(1000);
        }
        printf("status heartbeat done\n");
        w_arm();
        fence_status = w_wait(PMIx_Fence_nb(NULL, 0, &nocollect, 1, w_op_cb, NULL), 600000);
    }
    for (int i = 0; i < nalerts; i++) {
        printf("alert %d %d\n", (int) me.rank, alerts[i]);
    }
    printf("status fence %s\n", PMIx_Error_string(fence_status));
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return PMIX_SUCCESS == fence_status ? 0 : 1;
}
