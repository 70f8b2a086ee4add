/* pmix-wire benchmark, C side: packs and unpacks the same workloads as
 * codec/benches/codec_vs_libpmix.rs with libpmix and prints, per workload,
 *   name \t packed_bytes \t fnv1a64 \t best_pack_ns \t best_unpack_ns
 * Data come from the same xorshift64 generator (seed 42) as the Rust side. */
#include <pmix_tool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng = 42;
static uint64_t next(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }
static uint64_t now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return (uint64_t)t.tv_sec * 1000000000u + t.tv_nsec; }
static uint64_t fnv(const char *p, size_t n) { uint64_t h = 0xcbf29ce484222325ULL; for (size_t i = 0; i < n; i++) { h ^= (unsigned char)p[i]; h *= 0x100000001b3ULL; } return h; }

static void run(const char *name, void *src, int32_t n, pmix_data_type_t t, size_t elsize, int reps) {
    uint64_t bp = UINT64_MAX, bu = UINT64_MAX;
    size_t used = 0;
    uint64_t h = 0;
    for (int r = 0; r < reps; r++) {
        pmix_data_buffer_t b;
        PMIX_DATA_BUFFER_CONSTRUCT(&b);
        uint64_t t0 = now();
        if (PMIX_SUCCESS != PMIx_Data_pack(NULL, &b, src, n, t)) { fprintf(stderr, "pack failed\n"); exit(1); }
        uint64_t t1 = now();
        used = b.bytes_used;
        h = fnv(b.base_ptr, b.bytes_used);
        void *dst = calloc((size_t)n, elsize);
        int32_t m = n;
        uint64_t t2 = now();
        if (PMIX_SUCCESS != PMIx_Data_unpack(NULL, &b, dst, &m, t)) { fprintf(stderr, "unpack failed\n"); exit(1); }
        uint64_t t3 = now();
        if (t1 - t0 < bp) bp = t1 - t0;
        if (t3 - t2 < bu) bu = t3 - t2;
        PMIX_DATA_BUFFER_DESTRUCT(&b);
        /* unpacked storage is leaked on purpose: freeing is not part of the measurement */
    }
    printf("%s\t%zu\t%016llx\t%llu\t%llu\n", name, used, (unsigned long long)h, (unsigned long long)bp, (unsigned long long)bu);
    fflush(stdout);
}

int main(void) {
    pmix_info_t info;
    pmix_proc_t me;
    PMIX_INFO_LOAD(&info, PMIX_TOOL_DO_NOT_CONNECT, NULL, PMIX_BOOL);
    if (PMIX_SUCCESS != PMIx_tool_init(&me, &info, 1)) return 1;
    int reps = getenv("BENCH_REPS") ? atoi(getenv("BENCH_REPS")) : 5;

    size_t nu = 1000000;
    uint64_t *u = malloc(nu * 8);
    for (size_t i = 0; i < nu; i++) u[i] = next();
    run("u64x1e6", u, (int32_t)nu, PMIX_UINT64, 8, reps);

    size_t ns = 100000;
    char **s = malloc(ns * sizeof(char *));
    for (size_t i = 0; i < ns; i++) {
        s[i] = malloc(33);
        for (int k = 0; k < 32; k++) s[i][k] = (char)('a' + next() % 26);
        s[i][32] = 0;
    }
    run("str32x1e5", s, (int32_t)ns, PMIX_STRING, sizeof(char *), reps);

    size_t ni = 10000;
    pmix_info_t *in = calloc(ni, sizeof(pmix_info_t));
    for (size_t i = 0; i < ni; i++) {
        char key[32];
        snprintf(key, sizeof key, "pmix.bench.%zu", i);
        PMIX_LOAD_KEY(in[i].key, key);
        switch (i % 5) {
        case 0: {
            char *v = malloc(33);
            for (int k = 0; k < 32; k++) v[k] = (char)('a' + next() % 26);
            v[32] = 0;
            in[i].value.type = PMIX_STRING; in[i].value.data.string = v; break;
        }
        case 1: in[i].value.type = PMIX_UINT32; in[i].value.data.uint32 = (uint32_t)next(); break;
        case 2: in[i].value.type = PMIX_BOOL; in[i].value.data.flag = next() & 1; break;
        case 3: {
            char *b = malloc(64);
            for (int k = 0; k < 64; k++) b[k] = (char)next();
            in[i].value.type = PMIX_BYTE_OBJECT; in[i].value.data.bo.bytes = b; in[i].value.data.bo.size = 64; break;
        }
        default: {
            uint64_t *a = malloc(32);
            for (int k = 0; k < 4; k++) a[k] = next();
            pmix_data_array_t *d = malloc(sizeof *d);
            d->type = PMIX_UINT64; d->size = 4; d->array = a;
            in[i].value.type = PMIX_DATA_ARRAY; in[i].value.data.darray = d;
        }
        }
    }
    run("info_mixed_x1e4", in, (int32_t)ni, PMIX_INFO, sizeof(pmix_info_t), reps);

    size_t big = 64u << 20;
    pmix_byte_object_t bo;
    bo.bytes = malloc(big);
    for (size_t i = 0; i < big; i += 8) { uint64_t x = next(); memcpy(bo.bytes + i, &x, 8); }
    bo.size = big;
    run("bo64MiB", &bo, 1, PMIX_BYTE_OBJECT, sizeof bo, reps < 3 ? reps : 3);
    PMIx_tool_finalize();
    return 0;
}
