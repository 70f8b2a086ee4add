/* pmix-wire: the helper header Debian's OpenPMIx 4.2.2 example programs
 * include (`#include "examples.h"`) and libpmix-dev does not ship, so that
 * capi/tests/live_capi_examples.rs can build the client examples from the
 * installed documentation folder (/usr/share/doc/libpmix-dev/examples).
 *
 * Written for pmix-wire, independently: the names below (the lock struct
 * and its macros, the release and query helpers, the unused-parameter
 * macro) are the interface the examples use, learned from how they use
 * them; no line is OpenPMIx's. A lock is a mutex, a condition and a flag:
 * a callback wakes it, the main thread waits for it.
 */
#ifndef PMIXW_EXAMPLES_H
#define PMIXW_EXAMPLES_H

#include <pmix.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A one-shot wait: `active` until a callback wakes it, with what the
 * callback reports. */
typedef struct {
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    volatile bool active;
    pmix_status_t status;
    int count;
    size_t evhandler_ref;
} mylock_t;

#define DEBUG_CONSTRUCT_LOCK(l)                    \
    do {                                           \
        pthread_mutex_init(&(l)->mutex, NULL);     \
        pthread_cond_init(&(l)->cond, NULL);       \
        (l)->active = true;                        \
        (l)->status = PMIX_SUCCESS;                \
        (l)->count = 0;                            \
        (l)->evhandler_ref = 0;                    \
    } while (0)

#define DEBUG_DESTRUCT_LOCK(l)                     \
    do {                                           \
        pthread_cond_destroy(&(l)->cond);          \
        pthread_mutex_destroy(&(l)->mutex);        \
    } while (0)

#define DEBUG_WAIT_THREAD(l)                                   \
    do {                                                       \
        pthread_mutex_lock(&(l)->mutex);                       \
        while ((l)->active) {                                  \
            pthread_cond_wait(&(l)->cond, &(l)->mutex);        \
        }                                                      \
        pthread_mutex_unlock(&(l)->mutex);                     \
    } while (0)

#define DEBUG_WAKEUP_THREAD(l)                     \
    do {                                           \
        pthread_mutex_lock(&(l)->mutex);           \
        (l)->active = false;                       \
        pthread_cond_broadcast(&(l)->cond);        \
        pthread_mutex_unlock(&(l)->mutex);         \
    } while (0)

/* What a termination handler hands back to the waiting main thread. */
typedef struct {
    mylock_t lock;
    char *nspace;
    int exit_code;
    bool exit_code_given;
} myrel_t;

#define DEBUG_CONSTRUCT_MYREL(r)                   \
    do {                                           \
        DEBUG_CONSTRUCT_LOCK(&(r)->lock);          \
        (r)->nspace = NULL;                        \
        (r)->exit_code = 0;                        \
        (r)->exit_code_given = false;              \
    } while (0)

#define DEBUG_DESTRUCT_MYREL(r)                    \
    do {                                           \
        DEBUG_DESTRUCT_LOCK(&(r)->lock);           \
        free((r)->nspace);                         \
        (r)->nspace = NULL;                        \
    } while (0)

/* A query's answers, copied out of the callback (`active` too: debuggerd.c
 * clears it). */
typedef struct {
    mylock_t lock;
    volatile bool active;
    pmix_status_t status;
    pmix_info_t *info;
    size_t ninfo;
} myquery_data_t;

#define DEBUG_CONSTRUCT_MYQUERY(q)                 \
    do {                                           \
        DEBUG_CONSTRUCT_LOCK(&(q)->lock);          \
        (q)->active = true;                        \
        (q)->status = PMIX_SUCCESS;                \
        (q)->info = NULL;                          \
        (q)->ninfo = 0;                            \
    } while (0)

#define DEBUG_DESTRUCT_MYQUERY(q)                  \
    do {                                           \
        DEBUG_DESTRUCT_LOCK(&(q)->lock);           \
        if (NULL != (q)->info) {                   \
            PMIX_INFO_FREE((q)->info, (q)->ninfo); \
        }                                          \
    } while (0)

/* Mark parameters a function does not use (any number of them). */
static inline void pmixw_examples_unused(int n, ...) { (void) n; }
#define EXAMPLES_HIDE_UNUSED_PARAMS(...) pmixw_examples_unused(0, __VA_ARGS__)

#endif
