/* pmix-wire interop harness, direction "Rust -> C": reads lines
 *   TYPE \t hex
 * unpacks units of TYPE until the bytes are exhausted and prints
 *   rc \t json \t repack_hex
 * rc is 0 when everything unpacked, else the failing status; json is all
 * values as one JSON array (bare form); repack_hex is the values packed
 * again by libpmix as a single unit. Dialect and buffer type come from the
 * environment, as for gen.
 *
 * PMIXW_UNPACK_CPU_MS=N (the differential fuzz targets set it): libpmix
 * gets N ms of CPU per line (SIGPROF ends the process beyond) and 1 GiB
 * of address space once initialised. On fuzzed bytes libpmix walks 2^28
 * UNDEF elements or zeroes gigabytes for sizes it believes; without these
 * limits each such input held the fuzzer until its 30 s wall-clock
 * timeout, back to back (the children are niced with it). The parent sees
 * the child die, as for a crash, and starts another.
 *
 * PMIXW_UNPACK_NO_PRINT (the differential targets set it too): the last
 * field stays [] instead of PMIx_Data_print's text of every value, which
 * the differential check does not compare and which is quadratic in the
 * elements of an UNDEF array (32 765 of them: 1.8 s of CPU). */
#include "common.h"
#include <sys/resource.h>
#include <sys/time.h>

static void cpu_budget(long ms) {
    struct itimerval t = {{0, 0}, {ms / 1000, (ms % 1000) * 1000}};
    setitimer(ITIMER_PROF, &t, NULL);
}

static pmix_data_type_t type_by_name(const char *s) {
    for (pmix_data_type_t t = 0; t < 200; t++)
        if (0 == strcmp(short_name(t), s)) return t;
    return PMIX_UNDEF;
}

static int hexval(int c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int main(void) {
    if (init_tool()) return 1;
    const char *lim = getenv("PMIXW_UNPACK_CPU_MS");
    long cpu_ms = lim ? atol(lim) : 0;
    int print = NULL == getenv("PMIXW_UNPACK_NO_PRINT");
    if (cpu_ms > 0) {
        struct rlimit as = {1UL << 30, 1UL << 30};
        setrlimit(RLIMIT_AS, &as);
    }
    size_t cap = 1 << 20;
    char *line = malloc(cap);
    while (fgets(line, (int)cap, stdin)) {
        char *tab = strchr(line, '\t');
        if (!tab) continue;
        if (cpu_ms > 0) cpu_budget(cpu_ms);
        *tab = 0;
        pmix_data_type_t t = type_by_name(line);
        size_t sz = type_size(t);
        char *h = tab + 1;
        size_t hl = strcspn(h, "\r\n");
        size_t nb = hl / 2;
        char *bytes = malloc(nb + 1);
        for (size_t i = 0; i < nb; i++) bytes[i] = (char)(hexval(h[2 * i]) << 4 | hexval(h[2 * i + 1]));
        if (0 == sz) { printf("%d\t[]\t\n", PMIX_ERR_UNKNOWN_DATA_TYPE); fflush(stdout); free(bytes); continue; }
        g_saw_value_dbuf = 0;
        pmix_data_buffer_t b;
        PMIX_DATA_BUFFER_CONSTRUCT(&b);
        PMIX_DATA_BUFFER_LOAD(&b, bytes, nb);
        size_t total = 0, room = 16;
        char *all = calloc(room, sz);
        pmix_status_t rc = PMIX_SUCCESS;
        while (b.unpack_ptr < b.base_ptr + b.bytes_used) {
            int32_t n = 64;
            char *dst = calloc(64, sz);
            rc = PMIx_Data_unpack(NULL, &b, dst, &n, t);
            /* INADEQUATE_SPACE with n == 64: the unit holds more than 64
             * items and the rest can be asked for. With n == 0 it came from
             * inside an item (a REGEX string's count above 1, libpmix's
             * preg): libpmix refuses the bytes. */
            if (PMIX_SUCCESS != rc && !(PMIX_ERR_UNPACK_INADEQUATE_SPACE == rc && n > 0)) { free(dst); break; }
            if (n > 0) {
                if (total + (size_t)n > room) { room = (total + n) * 2; all = realloc(all, room * sz); }
                memcpy(all + total * sz, dst, (size_t)n * sz);
                total += (size_t)n;
            }
            free(dst);
            rc = PMIX_SUCCESS;
        }
        printf("%d\t[", rc);
        for (size_t i = 0; i < total; i++) { if (i) putchar(','); jbare(stdout, all + i * sz, t); }
        printf("]\t");
        if (PMIX_SUCCESS == rc) {
            pmix_data_buffer_t r;
            PMIX_DATA_BUFFER_CONSTRUCT(&r);
            if (PMIX_SUCCESS == PMIx_Data_pack(NULL, &r, all, (int32_t)total, t)) print_hex_buf(stdout, &r);
            PMIX_DATA_BUFFER_DESTRUCT(&r);
        }
        printf("\t[");
        for (size_t i = 0; print && PMIX_SUCCESS == rc && i < total; i++) {
            char *out = NULL;
            /* PMIx_Data_print takes the string itself for PMIX_STRING, a pointer to the value otherwise */
            void *src = PMIX_STRING == t ? *(char **)(all + i * sz) : (void *)(all + i * sz);
            pmix_status_t prc = PMIx_Data_print(&out, NULL, src, t);
            if (i) putchar(',');
            if (PMIX_SUCCESS != prc) printf("{\"rc\":%d}", prc);
            else if (NULL == out) fputs("null", stdout);
            else { json_text(stdout, out); free(out); }
        }
        printf("]\n");
        fflush(stdout);
        /* free what was unpacked (the buffer owns the input bytes). Not
         * handed to libpmix's destructors: its internal buffers (opaque
         * here) and values holding a data buffer, which libpmix 4.2.2
         * mishandles (bfrops.md section 4.6). */
        PMIX_DATA_BUFFER_DESTRUCT(&b);
        if (PMIX_BUFFER != t && !g_saw_value_dbuf && total > 0) {
            pmix_data_array_t da = {t, total, all};
            PMIx_Data_array_destruct(&da);
        } else {
            free(all);
        }
        if (cpu_ms > 0) cpu_budget(0);
    }
    free(line);
    PMIx_tool_finalize();
    return 0;
}
