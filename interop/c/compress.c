/* pmix-wire: libpmix's (de)compression, driven line by line from stdin.
 *
 *   c <hex>          PMIx_Data_compress(bytes)        -> "<ok> <hex out>"
 *   d <hex> [<pad>]  PMIx_Data_decompress(bytes)      -> "<ok> <hex out>"
 *   S <hex>          pmix_compress.compress_string    -> "<ok> <hex out>"
 *   s <hex> [<pad>]  pmix_compress.decompress_string  -> "<ok> <stray> <hex of the string>"
 *   C <hex>          PMIx_Data_compress, details      -> "<ok> <out> <nbytes>"
 *   D <hex> [<pad>]  PMIx_Data_decompress, details    -> "<ok> <out> <nbytes> <hex>"
 *   n                PMIx_Data_compress(NULL, 0)      -> "<ok> <out> <nbytes>"
 *   m                PMIx_Data_decompress(NULL, 0)    -> "<ok> <out> <nbytes>"
 *
 * <ok> is 1 or 0. The output pointer and size start as a marker address
 * and 12345: <out> is "null", "untouched" or "set" (a new address), and
 * <nbytes> shows whether the size was touched. The optional <pad> hex
 * bytes are placed in memory right after the input (then 64 zero bytes):
 * they show what libpmix reads beyond the length it was given. Output is
 * printed only when <ok> is 1; "D" prints at most the first 64 KiB.
 *
 * decompress_string of 4.2.2 terminates its result through
 * outstring[declared] instead of (*outstring)[declared]: "s" therefore
 * passes an array of declared+1 pointers whose last one points to a
 * marker byte, and <stray> is 1 when that marker was overwritten (the
 * write a real caller suffers at a random address). */
#include <pmix_tool.h>
#include "src/mca/pcompress/pcompress.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hv(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    c |= 32;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* decode the hex word starting at *p; advance *p past it and its blank */
static size_t unhex(char **p, uint8_t *dst) {
    size_t n = 0;
    char *s = *p;
    while (hv(s[0]) >= 0 && hv(s[1]) >= 0) {
        if (dst) dst[n] = (uint8_t)(hv(s[0]) << 4 | hv(s[1]));
        n++;
        s += 2;
    }
    while (*s == ' ') s++;
    *p = s;
    return n;
}

static char marker;

static const char *state(const uint8_t *out) {
    return out == NULL ? "null" : out == (uint8_t *)&marker ? "untouched" : "set";
}

static void hex(const uint8_t *b, size_t n) {
    for (size_t i = 0; b && i < n; i++) printf("%02x", b[i]);
}

int main(void) {
    pmix_info_t info;
    pmix_proc_t me;
    PMIX_INFO_LOAD(&info, PMIX_TOOL_DO_NOT_CONNECT, NULL, PMIX_BOOL);
    if (PMIX_SUCCESS != PMIx_tool_init(&me, &info, 1)) {
        fprintf(stderr, "PMIx_tool_init failed\n");
        return 1;
    }
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, stdin) > 0) {
        line[strcspn(line, "\r\n")] = 0;
        char cmd = line[0];
        if (!cmd) continue;
        char *p = line + 1;
        while (*p == ' ') p++;
        /* sizes first, then the bytes: input, pad, 64 zeros */
        char *q = p;
        size_t n = unhex(&q, NULL);
        size_t npad = unhex(&q, NULL);
        uint8_t *in = calloc(n + npad + 64 + 1, 1);
        q = p;
        unhex(&q, in);
        unhex(&q, in + n);
        uint8_t *out = (uint8_t *)&marker;
        size_t nout = 12345;
        bool ok;
        char *str = NULL;
        switch (cmd) {
        case 'c':
        case 'C':
            ok = PMIx_Data_compress(in, n, &out, &nout);
            break;
        case 'd':
        case 'D':
            ok = PMIx_Data_decompress(in, n, &out, &nout);
            break;
        case 'S':
            in[n] = 0; /* the text is the bytes before the first NUL */
            ok = pmix_compress.compress_string((char *)in, &out, &nout);
            break;
        case 's': {
            uint32_t declared;
            memcpy(&declared, in, 4);
            size_t nslots = declared < (1u << 24) ? (size_t)declared + 1 : 1;
            char **slots = calloc(nslots, sizeof(char *));
            slots[nslots - 1] = &marker;
            marker = 1;
            ok = pmix_compress.decompress_string(slots, in, n);
            str = slots[0];
            free(slots);
            break;
        }
        case 'n':
            ok = PMIx_Data_compress(NULL, 0, &out, &nout);
            break;
        case 'm':
            ok = PMIx_Data_decompress(NULL, 0, &out, &nout);
            break;
        default:
            fprintf(stderr, "unknown command %c\n", cmd);
            return 2;
        }
        printf("%d", ok ? 1 : 0);
        switch (cmd) {
        case 'c':
        case 'd':
        case 'S':
            printf(" ");
            if (ok) hex(out, nout);
            break;
        case 's':
            printf(" %d ", marker == 0 ? 1 : 0);
            if (ok && str) hex((uint8_t *)str, strlen(str));
            break;
        case 'C':
            printf(" %s %zu", state(out), nout);
            break;
        case 'D':
            printf(" %s %zu ", state(out), nout);
            if (ok) hex(out, nout < 65536 ? nout : 65536);
            break;
        default:
            printf(" %s %zu", state(out), nout);
        }
        printf("\n");
        fflush(stdout);
        free(in);
        if (ok && out && out != (uint8_t *)&marker) free(out);
        if (ok && str != &marker) free(str);
    }
    free(line);
    PMIx_tool_finalize();
    return 0;
}
