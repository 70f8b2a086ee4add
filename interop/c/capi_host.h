/* pmix-wire's C test hosts (interop/c/capi_server.c, capi_iof.c): the
 * lock their upcalls and main thread share, the completions of the
 * server calls they wait for, and the environment setup_fork gives.
 * Written for pmix-wire. */
#ifndef PMIXW_CAPI_HOST_H
#define PMIXW_CAPI_HOST_H

#include <pmix.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;

/* a completion: its status, and that it came */
struct done { volatile int fired; pmix_status_t rc; };
static void done_cb(pmix_status_t rc, void *d) {
    struct done *x = d;
    pthread_mutex_lock(&lock);
    x->rc = rc;
    x->fired = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

/* wait for *flag (or for *count to reach want) for at most `seconds` */
static void wait_for_within(volatile int *flag, int want, int seconds) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += seconds;
    pthread_mutex_lock(&lock);
    while (*flag < want)
        if (pthread_cond_timedwait(&cond, &lock, &t) != 0) break;
    pthread_mutex_unlock(&lock);
}

static void wait_for(volatile int *flag, int want) { wait_for_within(flag, want, 60); }

/* the value of variable `name` in `env`, NULL if unset */
static const char *getenv_in(char **env, const char *name) {
    size_t n = strlen(name);
    for (char **e = env; e && *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
    return NULL;
}

#endif
