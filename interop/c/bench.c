/* pmix-wire benchmark, C side: packs and unpacks the workloads of
 * codec/benches/codec_vs_libpmix.rs with libpmix (PMIx_Data_pack /
 * PMIx_Data_unpack after PMIx_tool_init with PMIX_TOOL_DO_NOT_CONNECT) and
 * prints one machine-readable line per workload:
 *
 *   name \t packed_bytes \t fnv1a64(hex) \t best_pack_ns \t best_unpack_ns
 *
 * Data come from the same xorshift64 generator (seed 42), drawn in the same
 * order, as on the Rust side. Best of BENCH_REPS runs (default 5; at most 3
 * for the 64 MiB byte object). With BENCH_DUMP_DIR set, the packed bytes of
 * each workload are also written to BENCH_DUMP_DIR/<name>.bin so the caller
 * can compare them byte for byte. Every unpack is checked against the input
 * (outside the timed region); a difference ends the program with status 1.
 * Unpacked storage is released outside the timed region too. */
#include <pmix_tool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng = 42;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint64_t now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t) t.tv_sec * 1000000000u + (uint64_t) t.tv_nsec;
}

static uint64_t fnv(const char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char) p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

static void die(const char *what, const char *name)
{
    fprintf(stderr, "bench.c: %s: %s\n", name, what);
    exit(1);
}

static void dump(const char *name, const char *p, size_t n)
{
    const char *dir = getenv("BENCH_DUMP_DIR");
    if (NULL == dir) {
        return;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.bin", dir, name);
    FILE *f = fopen(path, "wb");
    if (NULL == f || fwrite(p, 1, n, f) != n || 0 != fclose(f)) {
        die("cannot write the dump file", name);
    }
}

static void report(const char *name, const pmix_data_buffer_t *b, uint64_t bp, uint64_t bu)
{
    dump(name, b->base_ptr, b->bytes_used);
    printf("%s\t%zu\t%016llx\t%llu\t%llu\n", name, b->bytes_used,
           (unsigned long long) fnv(b->base_ptr, b->bytes_used), (unsigned long long) bp,
           (unsigned long long) bu);
    fflush(stdout);
}

/* compare one unpacked item with its source; 0 when equal */
typedef int (*check_fn)(const void *src, const void *dst, int32_t n);
/* release what one unpack allocated inside dst (not dst itself) */
typedef void (*release_fn)(void *dst, int32_t n);

/* One pack call of n items, one unpack call of n items, best of reps. */
static void run(const char *name, const void *src, int32_t n, pmix_data_type_t t, size_t elsize,
                int reps, check_fn check, release_fn release)
{
    uint64_t bp = UINT64_MAX, bu = UINT64_MAX;
    pmix_data_buffer_t keep;
    PMIX_DATA_BUFFER_CONSTRUCT(&keep);
    for (int r = 0; r < reps; r++) {
        pmix_data_buffer_t b;
        PMIX_DATA_BUFFER_CONSTRUCT(&b);
        uint64_t t0 = now();
        if (PMIX_SUCCESS != PMIx_Data_pack(NULL, &b, (void *) src, n, t)) {
            die("pack failed", name);
        }
        uint64_t t1 = now();
        size_t used = b.bytes_used;
        void *dst = calloc((size_t) n, elsize);
        int32_t m = n;
        uint64_t t2 = now();
        if (PMIX_SUCCESS != PMIx_Data_unpack(NULL, &b, dst, &m, t)) {
            die("unpack failed", name);
        }
        uint64_t t3 = now();
        if (m != n || 0 != check(src, dst, n)) {
            die("unpacked values differ from the input", name);
        }
        if (t1 - t0 < bp) {
            bp = t1 - t0;
        }
        if (t3 - t2 < bu) {
            bu = t3 - t2;
        }
        if (NULL != release) {
            release(dst, n);
        }
        free(dst);
        if (r == reps - 1) {
            /* unpacking moved the read pointer only: the bytes are intact */
            b.bytes_used = used;
            keep = b;
        } else {
            PMIX_DATA_BUFFER_DESTRUCT(&b);
        }
    }
    report(name, &keep, bp, bu);
    PMIX_DATA_BUFFER_DESTRUCT(&keep);
}

/* 1e6 pack calls of one UINT64 each, then 1e6 unpack calls of one each. */
static void run_each(const char *name, const uint64_t *src, int32_t n, int reps)
{
    uint64_t bp = UINT64_MAX, bu = UINT64_MAX;
    uint64_t *dst = malloc((size_t) n * 8);
    pmix_data_buffer_t keep;
    PMIX_DATA_BUFFER_CONSTRUCT(&keep);
    for (int r = 0; r < reps; r++) {
        pmix_data_buffer_t b;
        PMIX_DATA_BUFFER_CONSTRUCT(&b);
        uint64_t t0 = now();
        for (int32_t i = 0; i < n; i++) {
            if (PMIX_SUCCESS != PMIx_Data_pack(NULL, &b, (void *) &src[i], 1, PMIX_UINT64)) {
                die("pack failed", name);
            }
        }
        uint64_t t1 = now();
        size_t used = b.bytes_used;
        memset(dst, 0, (size_t) n * 8);
        uint64_t t2 = now();
        for (int32_t i = 0; i < n; i++) {
            int32_t one = 1;
            if (PMIX_SUCCESS != PMIx_Data_unpack(NULL, &b, &dst[i], &one, PMIX_UINT64)) {
                die("unpack failed", name);
            }
        }
        uint64_t t3 = now();
        if (0 != memcmp(src, dst, (size_t) n * 8)) {
            die("unpacked values differ from the input", name);
        }
        if (t1 - t0 < bp) {
            bp = t1 - t0;
        }
        if (t3 - t2 < bu) {
            bu = t3 - t2;
        }
        if (r == reps - 1) {
            b.bytes_used = used;
            keep = b;
        } else {
            PMIX_DATA_BUFFER_DESTRUCT(&b);
        }
    }
    free(dst);
    report(name, &keep, bp, bu);
    PMIX_DATA_BUFFER_DESTRUCT(&keep);
}

static int check_u64(const void *src, const void *dst, int32_t n)
{
    return memcmp(src, dst, (size_t) n * 8);
}

static int check_str(const void *src, const void *dst, int32_t n)
{
    char *const *a = src, *const *b = dst;
    for (int32_t i = 0; i < n; i++) {
        if (NULL == b[i] || 0 != strcmp(a[i], b[i])) {
            return 1;
        }
    }
    return 0;
}

static void release_str(void *dst, int32_t n)
{
    char **s = dst;
    for (int32_t i = 0; i < n; i++) {
        free(s[i]);
    }
}

static int check_info(const void *src, const void *dst, int32_t n)
{
    const pmix_info_t *a = src, *b = dst;
    for (int32_t i = 0; i < n; i++) {
        const pmix_value_t *x = &a[i].value, *y = &b[i].value;
        if (0 != strncmp(a[i].key, b[i].key, PMIX_MAX_KEYLEN) || x->type != y->type) {
            return 1;
        }
        switch (x->type) {
        case PMIX_STRING:
            if (0 != strcmp(x->data.string, y->data.string)) {
                return 1;
            }
            break;
        case PMIX_UINT32:
            if (x->data.uint32 != y->data.uint32) {
                return 1;
            }
            break;
        case PMIX_BOOL:
            if (x->data.flag != y->data.flag) {
                return 1;
            }
            break;
        case PMIX_BYTE_OBJECT:
            if (x->data.bo.size != y->data.bo.size
                || 0 != memcmp(x->data.bo.bytes, y->data.bo.bytes, x->data.bo.size)) {
                return 1;
            }
            break;
        case PMIX_DATA_ARRAY:
            if (y->data.darray->type != PMIX_UINT64 || y->data.darray->size != 4
                || 0 != memcmp(x->data.darray->array, y->data.darray->array, 32)) {
                return 1;
            }
            break;
        default:
            return 1;
        }
    }
    return 0;
}

static void release_info(void *dst, int32_t n)
{
    pmix_info_t *in = dst;
    for (int32_t i = 0; i < n; i++) {
        PMIX_INFO_DESTRUCT(&in[i]);
    }
}

static int check_bo(const void *src, const void *dst, int32_t n)
{
    const pmix_byte_object_t *a = src, *b = dst;
    (void) n;
    return a->size != b->size || 0 != memcmp(a->bytes, b->bytes, a->size);
}

static void release_bo(void *dst, int32_t n)
{
    pmix_byte_object_t *b = dst;
    (void) n;
    free(b->bytes);
}

static char *word(void)
{
    char *s = malloc(33);
    for (int k = 0; k < 32; k++) {
        s[k] = (char) ('a' + next() % 26);
    }
    s[32] = 0;
    return s;
}

/* The reference for the byte object: allocate fresh memory and copy into
 * it, as any pack of a large object must. Hash column is 0. */
static void run_memcpy(const char *name, const char *src, size_t n, int reps)
{
    uint64_t best = UINT64_MAX;
    for (int r = 0; r < reps; r++) {
        uint64_t t0 = now();
        char *d = malloc(n);
        memcpy(d, src, n);
        uint64_t t1 = now();
        if (0 != memcmp(d, src, n)) {
            die("memcpy differs", name);
        }
        free(d);
        if (t1 - t0 < best) {
            best = t1 - t0;
        }
    }
    printf("%s\t%zu\t%016llx\t%llu\t%llu\n", name, n, 0ULL, (unsigned long long) best, 0ULL);
    fflush(stdout);
}

int main(void)
{
    pmix_info_t info;
    pmix_proc_t me;
    PMIX_INFO_LOAD(&info, PMIX_TOOL_DO_NOT_CONNECT, NULL, PMIX_BOOL);
    if (PMIX_SUCCESS != PMIx_tool_init(&me, &info, 1)) {
        fprintf(stderr, "bench.c: PMIx_tool_init failed\n");
        return 1;
    }
    int reps = getenv("BENCH_REPS") ? atoi(getenv("BENCH_REPS")) : 5;
    if (reps < 1) {
        reps = 1;
    }
    int big_reps = reps < 3 ? reps : 3;

    /* the draw order matches the Rust side: u64s, strings, infos, big object */
    int32_t nu = 1000000;
    uint64_t *u = malloc((size_t) nu * 8);
    for (int32_t i = 0; i < nu; i++) {
        u[i] = next();
    }
    run("u64x1e6", u, nu, PMIX_UINT64, 8, reps, check_u64, NULL);
    run_each("u64x1e6_each", u, nu, reps);

    int32_t ns = 100000;
    char **s = malloc((size_t) ns * sizeof(char *));
    for (int32_t i = 0; i < ns; i++) {
        s[i] = word();
    }
    run("str32x1e5", s, ns, PMIX_STRING, sizeof(char *), reps, check_str, release_str);

    int32_t ni = 10000;
    pmix_info_t *in = calloc((size_t) ni, sizeof(pmix_info_t));
    for (int32_t i = 0; i < ni; i++) {
        char key[32];
        snprintf(key, sizeof key, "pmix.bench.%d", i);
        PMIX_LOAD_KEY(in[i].key, key);
        pmix_value_t *v = &in[i].value;
        switch (i % 5) {
        case 0:
            v->type = PMIX_STRING;
            v->data.string = word();
            break;
        case 1:
            v->type = PMIX_UINT32;
            v->data.uint32 = (uint32_t) next();
            break;
        case 2:
            v->type = PMIX_BOOL;
            v->data.flag = next() & 1;
            break;
        case 3: {
            char *b = malloc(64);
            for (int k = 0; k < 64; k++) {
                b[k] = (char) next();
            }
            v->type = PMIX_BYTE_OBJECT;
            v->data.bo.bytes = b;
            v->data.bo.size = 64;
            break;
        }
        default: {
            uint64_t *a = malloc(32);
            for (int k = 0; k < 4; k++) {
                a[k] = next();
            }
            pmix_data_array_t *d = malloc(sizeof *d);
            d->type = PMIX_UINT64;
            d->size = 4;
            d->array = a;
            v->type = PMIX_DATA_ARRAY;
            v->data.darray = d;
        }
        }
    }
    run("info_mixed_x1e4", in, ni, PMIX_INFO, sizeof(pmix_info_t), reps, check_info,
        release_info);

    size_t big = (size_t) 64 << 20;
    pmix_byte_object_t bo;
    bo.bytes = malloc(big);
    for (size_t i = 0; i < big; i += 8) {
        uint64_t x = next();
        memcpy(bo.bytes + i, &x, 8);
    }
    bo.size = big;
    run("bo64MiB", &bo, 1, PMIX_BYTE_OBJECT, sizeof bo, big_reps, check_bo, release_bo);
    run_memcpy("memcpy64MiB", bo.bytes, big, big_reps);

    PMIx_tool_finalize();
    return 0;
}
