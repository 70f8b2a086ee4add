/* pmix-wire C test programs: the completions their non-blocking calls
 * wait for, shared. Written for pmix-wire. One call at a time: arm, make
 * the call with the callback named here, then wait. */
#ifndef PMIXW_WAITS_H
#define PMIXW_WAITS_H

#include <pmix.h>
#include <unistd.h>

static volatile int w_done = 0;
static pmix_status_t w_status;

/* Before the call. */
static void w_arm(void) {
    w_done = 0;
}

/* A pmix_info_cbfunc_t: the call's status (its infos released). */
static void w_info_cb(pmix_status_t st, pmix_info_t *info, size_t ninfo, void *cbdata,
                      pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    (void) info;
    (void) ninfo;
    (void) cbdata;
    w_status = st;
    if (release_fn) {
        release_fn(release_cbdata);
    }
    w_done = 1;
}

/* A pmix_op_cbfunc_t. */
static void w_op_cb(pmix_status_t st, void *cbdata) {
    (void) cbdata;
    w_status = st;
    w_done = 1;
}

/* A pmix_hdlr_reg_cbfunc_t. */
static void w_reg_cb(pmix_status_t st, size_t ref, void *cbdata) {
    (void) ref;
    (void) cbdata;
    w_status = st;
    w_done = 1;
}

/* The status of a call that returned `rc`: its completion's when it was
 * accepted (waited for up to `ms` milliseconds: PMIX_ERR_TIMEOUT after),
 * else `rc`. */
static pmix_status_t w_wait(pmix_status_t rc, int ms) {
    if (PMIX_SUCCESS != rc) {
        return rc;
    }
    for (int i = 0; i < ms && !w_done; i++) {
        usleep(1000);
    }
    return w_done ? w_status : PMIX_ERR_TIMEOUT;
}

/* Register `fn` for `code` and wait for the registration. */
static pmix_status_t w_register(pmix_status_t code, pmix_notification_fn_t fn) {
    w_arm();
    PMIx_Register_event_handler(&code, 1, NULL, 0, fn, w_reg_cb, NULL);
    return w_wait(PMIX_SUCCESS, 60000);
}

#endif
