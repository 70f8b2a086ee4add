/* pmix-wire wireup benchmark client (pmixw/benches/wireup.rs). Written for
 * pmix-wire. One rank: init, put 4 keys, commit, fence with data, get
 * every peer's 4 keys, finalize; prints its peak RSS ("rss <KiB>"), its
 * CPU time, every thread's, user and system ("cpu <ns>", getrusage) and
 * when each phase ended ("t <phase> <microseconds since the epoch>",
 * CLOCK_REALTIME, so the bench can line the ranks up). */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "harness.h"

/* when each phase ended, printed at the end (no I/O in between) */
static long long stamps[6];
static const char *phases[6] = {"start", "init", "commit", "fence", "get", "finalize"};

static long long now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (long long) t.tv_sec * 1000000LL + t.tv_nsec / 1000;
}

int main(void) {
    pmix_proc_t me, p, wild;
    stamps[0] = now_us();
    if (PMIX_SUCCESS != PMIx_Init(&me, NULL, 0)) {
        return 1;
    }
    stamps[1] = now_us();
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    if (PMIX_SUCCESS != PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v)) {
        return 2;
    }
    uint32_t n = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    char key[64], val[64];
    for (int k = 0; k < 4; k++) {
        pmix_value_t x;
        snprintf(key, sizeof key, "bench.%d.%u", k, me.rank);
        snprintf(val, sizeof val, "value-%d-of-rank-%u-padded-to-a-few-bytes", k, me.rank);
        PMIX_VALUE_LOAD(&x, val, PMIX_STRING);
        PMIx_Put(PMIX_GLOBAL, key, &x);
        PMIX_VALUE_DESTRUCT(&x);
    }
    PMIx_Commit();
    stamps[2] = now_us();
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    if (PMIX_SUCCESS != PMIx_Fence(NULL, 0, &collect, 1)) {
        return 3;
    }
    stamps[3] = now_us();
    for (uint32_t r = 0; r < n; r++) {
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        for (int k = 0; k < 4; k++) {
            snprintf(key, sizeof key, "bench.%d.%u", k, r);
            if (PMIX_SUCCESS != PMIx_Get(&p, key, NULL, 0, &v)) {
                return 4;
            }
            PMIX_VALUE_RELEASE(v);
        }
    }
    stamps[4] = now_us();
    if (PMIX_SUCCESS != PMIx_Finalize(NULL, 0)) {
        return 5;
    }
    stamps[5] = now_us();
    struct rusage ru;
    long long cpu_ns = 0;
    if (0 == getrusage(RUSAGE_SELF, &ru)) {
        cpu_ns = ((long long) ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
                 ((long long) ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
    }
    printf("rss %ld\ncpu %lld\n", peak_kib(), cpu_ns);
    for (int i = 0; i < 6; i++) {
        printf("t %s %lld\n", phases[i], stamps[i]);
    }
    return 0;
}
