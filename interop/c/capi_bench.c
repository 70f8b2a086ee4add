/* pmix-wire: the timing program of capi/benches/capi_vs_libpmix.rs, run
 * once on libpmix and once on pmix-wire's libpmix.so.2, the one rank of
 * `pmixw run -n 1`. Written for pmix-wire. Prints
 *   init_finalize_us <PMIx_Init .. PMIx_Finalize of this rank, with a
 *                     job-size get, a put, a commit and a fence>
 *   pack_unpack_ns <one PMIx_Data_pack + PMIx_Data_unpack round of an
 *                   INFO array of 4 (string, uint32, proc, int64), the
 *                   best of 5 loops of argv[1] rounds>
 * and exits non-zero on a wrong answer. */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* rounds of pack + unpack of `in`; -1 on a wrong answer */
static double codec_loop(pmix_info_t *in, int32_t n, long rounds) {
    double t0 = now_ns();
    for (long i = 0; i < rounds; i++) {
        pmix_data_buffer_t buf;
        PMIX_DATA_BUFFER_CONSTRUCT(&buf);
        if (PMIx_Data_pack(NULL, &buf, in, n, PMIX_INFO) != PMIX_SUCCESS) return -1;
        pmix_info_t out[4];
        int32_t m = n;
        if (PMIx_Data_unpack(NULL, &buf, out, &m, PMIX_INFO) != PMIX_SUCCESS || m != n) return -1;
        if (out[1].value.data.uint32 != 42) return -1;
        for (int k = 0; k < m; k++) PMIX_INFO_DESTRUCT(&out[k]);
        PMIX_DATA_BUFFER_DESTRUCT(&buf);
    }
    return (now_ns() - t0) / (double)rounds;
}

int main(int argc, char **argv) {
    long rounds = argc > 1 ? atol(argv[1]) : 20000;
    pmix_proc_t me, wild;
    pmix_value_t *got = NULL, v;
    double t0 = now_ns();
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 10;
    PMIX_PROC_LOAD(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &got) != PMIX_SUCCESS) return 11;
    PMIX_VALUE_RELEASE(got);
    v.type = PMIX_UINT32;
    v.data.uint32 = 7;
    if (PMIx_Put(PMIX_GLOBAL, "bench-key", &v) != PMIX_SUCCESS) return 12;
    if (PMIx_Commit() != PMIX_SUCCESS) return 13;
    if (PMIx_Fence(NULL, 0, NULL, 0) != PMIX_SUCCESS) return 14;
    double t_init = now_ns() - t0;

    pmix_info_t in[4];
    uint32_t u = 42;
    int64_t s = -5;
    PMIX_INFO_LOAD(&in[0], "bench.str", "a string value", PMIX_STRING);
    PMIX_INFO_LOAD(&in[1], "bench.u32", &u, PMIX_UINT32);
    PMIX_INFO_LOAD(&in[2], "bench.proc", &me, PMIX_PROC);
    PMIX_INFO_LOAD(&in[3], "bench.i64", &s, PMIX_INT64);
    double best = -1;
    for (int rep = 0; rep < 5; rep++) {
        double t = codec_loop(in, 4, rounds);
        if (t < 0) return 15;
        if (best < 0 || t < best) best = t;
    }
    for (int k = 0; k < 4; k++) PMIX_INFO_DESTRUCT(&in[k]);

    t0 = now_ns();
    if (PMIx_Finalize(NULL, 0) != PMIX_SUCCESS) return 16;
    t_init += now_ns() - t0;
    printf("init_finalize_us %.1f\n", t_init / 1e3);
    printf("pack_unpack_ns %.1f\n", best);
    return 0;
}
