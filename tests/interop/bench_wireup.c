/* pmix-wire wireup benchmark client (benches/wireup.rs). Written for
 * pmix-wire. One rank: init, put 4 keys, commit, fence with data, get
 * every peer's 4 keys, finalize; prints its peak RSS ("rss <KiB>"). */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

int main(void) {
    pmix_proc_t me, p, wild;
    if (PMIX_SUCCESS != PMIx_Init(&me, NULL, 0)) {
        return 1;
    }
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
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    if (PMIX_SUCCESS != PMIx_Fence(NULL, 0, &collect, 1)) {
        return 3;
    }
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
    if (PMIX_SUCCESS != PMIx_Finalize(NULL, 0)) {
        return 5;
    }
    printf("rss %ld\n", peak_kib());
    return 0;
}
