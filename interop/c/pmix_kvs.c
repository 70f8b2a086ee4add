/* pmix-wire: the libpmix twin of pmi_kvs.c, for a job mixing PMIx and PMI
 * clients (pmixw/tests/live_mpich.rs, issue #27). Written for pmix-wire.
 * Each rank puts k-<rank> = "v<rank>-of-<size>" (a PMIX_STRING, global),
 * commits, fences over the whole job, reads every rank's k-<r> (those of
 * the PMI ranks included) and prints one line; non-zero exit on a wrong
 * value. With an argument, also puts n-<rank> = 1000 + rank (PMIX_UINT32),
 * which the PMI ranks read in decimal. */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    pmix_proc_t me, p;
    pmix_value_t v, *got = NULL;
    pmix_info_t info;
    char key[64], want[64];
    int bad = 0;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 10;
    PMIX_PROC_LOAD(&p, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&p, PMIX_JOB_SIZE, NULL, 0, &got) != PMIX_SUCCESS) return 11;
    uint32_t size = got->data.uint32;
    PMIX_VALUE_RELEASE(got);
    snprintf(key, sizeof key, "k-%u", me.rank);
    snprintf(want, sizeof want, "v%u-of-%u", me.rank, size);
    v.type = PMIX_STRING;
    v.data.string = want;
    bad |= PMIx_Put(PMIX_GLOBAL, key, &v) != PMIX_SUCCESS;
    if (argc > 1) {
        snprintf(key, sizeof key, "n-%u", me.rank);
        v.type = PMIX_UINT32;
        v.data.uint32 = 1000 + me.rank;
        bad |= PMIx_Put(PMIX_GLOBAL, key, &v) != PMIX_SUCCESS;
    }
    bad |= PMIx_Commit() != PMIX_SUCCESS;
    bool collect = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(&p, 1, &info, 1);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "rank %u: fence: %s\n", me.rank, PMIx_Error_string(rc));
        bad = 1;
    }
    for (uint32_t r = 0; r < size && rc == PMIX_SUCCESS; r++) {
        PMIX_PROC_LOAD(&p, me.nspace, r);
        snprintf(key, sizeof key, "k-%u", r);
        snprintf(want, sizeof want, "v%u-of-%u", r, size);
        got = NULL;
        pmix_status_t g = PMIx_Get(&p, key, NULL, 0, &got);
        if (g != PMIX_SUCCESS || got->type != PMIX_STRING || strcmp(got->data.string, want) != 0) {
            fprintf(stderr, "rank %u: %s of rank %u: %s\n", me.rank, key, r,
                    g == PMIX_SUCCESS ? "wrong value" : PMIx_Error_string(g));
            bad = 1;
        }
        if (got) PMIX_VALUE_RELEASE(got);
    }
    printf("pmix rank %u of %u: kvs %s\n", me.rank, size, bad ? "WRONG" : "ok");
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return bad;
}
