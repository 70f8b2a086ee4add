/* pmix-wire server tests: PMIx_Job_control_nb requests a launcher may be
 * asked (issue #24 item 4). Written for pmix-wire. Rank 0 makes each
 * request named on the command line and prints "status REQUEST STATUS"
 * (the status the launcher completed it with); the other ranks only wait
 * in a fence. Requests:
 *
 *   preempt    OpenPMIx's examples/jctrl.c: "we are preemptible, and our
 *              checkpoint methods are SIGUSR2 and the PMIX_JCTRL_CHECKPOINT
 *              event" (PMIX_JOB_CTRL_PREEMPTIBLE and
 *              PMIX_JOB_CTRL_CHECKPOINT_METHOD, no targets)
 *   ckpt       PMIX_JOB_CTRL_CHECKPOINT "ck1" of this rank: with the method
 *              above registered, delivered as SIGUSR2 (counted) and/or the
 *              event (counted); "ckpt_seen SIGNALS EVENTS" follows
 *   cleanup    PMIX_REGISTER_CLEANUP of a file this rank creates (the
 *              path in "cleanup_file PATH"; the launcher removes it when
 *              the job ends)
 *   restart    PMIX_JOB_CTRL_RESTART "ck1"
 *   provision  PMIX_JOB_CTRL_PROVISION "image"
 */
#include <pmix.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "waits.h"

static volatile sig_atomic_t usr2 = 0;
static volatile int events = 0;
static void on_usr2(int s) {
    (void) s;
    usr2++;
}

static void on_ckpt(size_t id, pmix_status_t status, const pmix_proc_t *source,
                    pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void) id;
    (void) source;
    (void) info;
    (void) ninfo;
    (void) results;
    (void) nresults;
    if (PMIX_JCTRL_CHECKPOINT == status) {
        events++;
    }
    if (cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

/* Make one request and wait for its completion. */
static pmix_status_t request(const pmix_proc_t *targets, size_t nt, pmix_info_t *info,
                             size_t ninfo) {
    w_arm();
    return w_wait(PMIx_Job_control_nb(targets, nt, info, ninfo, w_info_cb, NULL), 600000);
}

int main(int argc, char **argv) {
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        printf("fail init %s\n", PMIx_Error_string(rc));
        return 1;
    }
    signal(SIGUSR2, on_usr2);
    pmix_status_t code = PMIX_JCTRL_CHECKPOINT;
    w_register(code, on_ckpt);
    for (int a = 1; a < argc && 0 == me.rank; a++) {
        const char *what = argv[a];
        pmix_info_t info[2];
        size_t n = 0;
        bool yes = true;
        if (0 == strcmp(what, "preempt")) {
            PMIX_INFO_LOAD(&info[0], PMIX_JOB_CTRL_PREEMPTIBLE, &yes, PMIX_BOOL);
            pmix_data_array_t *d;
            PMIX_DATA_ARRAY_CREATE(d, 2, PMIX_INFO);
            pmix_info_t *m = (pmix_info_t *) d->array;
            int sig = SIGUSR2;
            pmix_status_t ev = PMIX_JCTRL_CHECKPOINT;
            PMIX_INFO_LOAD(&m[0], PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, &sig, PMIX_INT);
            PMIX_INFO_LOAD(&m[1], PMIX_JOB_CTRL_CHECKPOINT_EVENT, &ev, PMIX_STATUS);
            PMIX_INFO_LOAD(&info[1], PMIX_JOB_CTRL_CHECKPOINT_METHOD, d, PMIX_DATA_ARRAY);
            PMIX_DATA_ARRAY_FREE(d);
            rc = request(NULL, 0, info, 2);
            n = 2;
        } else if (0 == strcmp(what, "ckpt")) {
            PMIX_INFO_LOAD(&info[0], PMIX_JOB_CTRL_CHECKPOINT, "ck1", PMIX_STRING);
            rc = request(&me, 1, info, 1);
            n = 1;
        } else if (0 == strcmp(what, "cleanup")) {
            char path[256];
            snprintf(path, sizeof path, "%s/jctrl-cleanup-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
                     (int) getpid());
            FILE *f = fopen(path, "w");
            if (f) {
                fclose(f);
            }
            printf("cleanup_file %s\n", path);
            PMIX_INFO_LOAD(&info[0], PMIX_REGISTER_CLEANUP, path, PMIX_STRING);
            rc = request(NULL, 0, info, 1);
            n = 1;
        } else if (0 == strcmp(what, "restart")) {
            PMIX_INFO_LOAD(&info[0], PMIX_JOB_CTRL_RESTART, "ck1", PMIX_STRING);
            rc = request(&me, 1, info, 1);
            n = 1;
        } else if (0 == strcmp(what, "provision")) {
            PMIX_INFO_LOAD(&info[0], PMIX_JOB_CTRL_PROVISION, "image", PMIX_STRING);
            rc = request(&me, 1, info, 1);
            n = 1;
        } else {
            printf("unknown request %s\n", what);
            continue;
        }
        printf("status %s %s\n", what, PMIx_Error_string(rc));
        if (0 == strcmp(what, "ckpt")) {
            /* the signal and the event come separately: wait (bounded) for both */
            for (int i = 0; i < 10000 && (0 == usr2 || 0 == events); i++) {
                usleep(1000);
            }
            printf("ckpt_seen %d %d\n", (int) usr2, events);
        }
        fflush(stdout);
        for (size_t i = 0; i < n; i++) {
            PMIX_INFO_DESTRUCT(&info[i]);
        }
    }
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    PMIx_Finalize(NULL, 0);
    return PMIX_SUCCESS == rc ? 0 : 1;
}
