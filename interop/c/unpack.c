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
 * gets N ms of CPU per line (SIGPROF ends the process beyond) and 256 MiB
 * of address space once initialised (it uses 16 MiB). On fuzzed bytes
 * libpmix walks 2^28 UNDEF elements or zeroes gigabytes for sizes it
 * believes; without these limits each such input held the fuzzer until its
 * 30 s wall-clock timeout, back to back (the children are niced with it).
 * The parent sees the child die, as for a crash, and starts another. (At
 * 1 GiB, re-packing a DATA_BUFFER value, whose size libpmix takes from the
 * wrong bytes, faulted in up to a gigabyte before its SIGSEGV: 0.4 s of
 * CPU each, most of diff_encode's time.)
 *
 * PMIXW_UNPACK_NO_PRINT (the differential targets set it too): the last
 * field stays [] instead of PMIx_Data_print's text of every value, which
 * the differential check does not compare and which is quadratic in the
 * elements of an UNDEF array (32 765 of them: 1.8 s of CPU).
 *
 * PMIXW_UNPACK_FORKSERVER (the differential targets set it too): the
 * process initialises libpmix once and serves from forked copies of
 * itself. A copy that dies (libpmix crashed, or ran out of its budget)
 * is answered for by this process with the line
 *   01 CRASH \t how
 * and replaced by a new fork of the initialised state, which costs far less
 * than the exec, dynamic linking and PMIx_tool_init of a new process
 * (the fuzzers meet such inputs about once in 50). The CRASH starts with
 * a byte 01, which no answer holds (JSON text escapes control bytes): a
 * copy that wrote part of a long answer before it died leaves that part in
 * front of it, on the same line. A copy that dies between lines (after its
 * answer, in the destructors) has no CRASH line: the next line goes to the
 * next copy. stdout keeps glibc's own buffer: a larger one of ours moved
 * what libpmix's heap overruns hit (value_of_info_array_crashes_libpmix_in_v20
 * in codec/tests/libpmix_diff_replay.rs stopped crashing). */
#include "common.h"
#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

/* Set by a copy from reading a line to having answered it (shared with
 * the fork server). */
static volatile int *g_busy = NULL;

/* The fork server: returns in each new copy; exits when a copy ends at the
 * end of the input. Says nothing through stdio (the copies' stdout stays
 * untouched here). */
static void serve_forked(void) {
    void *m = mmap(NULL, sizeof *g_busy, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (MAP_FAILED == m) return; /* serve from this process */
    g_busy = m;
    for (;;) {
        *g_busy = 0;
        pid_t w = fork();
        if (w < 0) return; /* cannot fork: serve from this process */
        if (0 == w) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            return;
        }
        int st = 0;
        while (waitpid(w, &st, 0) < 0 && EINTR == errno) {}
        if (WIFEXITED(st) && 0 == WEXITSTATUS(st)) {
            PMIx_tool_finalize();
            exit(0);
        }
        if (!*g_busy) continue; /* died between lines: nothing to answer */
        char msg[64];
        int n = WIFSIGNALED(st) ? snprintf(msg, sizeof msg, "\001CRASH\tsignal %d\n", WTERMSIG(st))
                                : snprintf(msg, sizeof msg, "\001CRASH\texit status %d\n", WEXITSTATUS(st));
        if (write(1, msg, (size_t)n) != n) exit(1);
    }
}

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
        struct rlimit as = {256UL << 20, 256UL << 20};
        setrlimit(RLIMIT_AS, &as);
    }
    int forked = NULL != getenv("PMIXW_UNPACK_FORKSERVER");
    if (forked) {
        serve_forked();
    }
    size_t cap = 1 << 20;
    char *line = malloc(cap);
    while (fgets(line, (int)cap, stdin)) {
        if (g_busy) *g_busy = 1;
        char *tab = strchr(line, '\t');
        if (!tab) { if (g_busy) *g_busy = 0; continue; }
        if (cpu_ms > 0) cpu_budget(cpu_ms);
        *tab = 0;
        pmix_data_type_t t = type_by_name(line);
        size_t sz = type_size(t);
        char *h = tab + 1;
        size_t hl = strcspn(h, "\r\n");
        size_t nb = hl / 2;
        char *bytes = malloc(nb + 1);
        for (size_t i = 0; i < nb; i++) bytes[i] = (char)(hexval(h[2 * i]) << 4 | hexval(h[2 * i + 1]));
        if (0 == sz) {
            printf("%d\t[]\t\n", PMIX_ERR_UNKNOWN_DATA_TYPE);
            fflush(stdout);
            if (g_busy) *g_busy = 0;
            free(bytes);
            continue;
        }
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
        if (g_busy) *g_busy = 0;
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
    if (forked) { fflush(stdout); _exit(0); } /* a copy: the server finalizes */
    PMIx_tool_finalize();
    return 0;
}
