/* pmix-wire: libpmix's (de)compression. Reads lines "c <hex>" (compress)
 * or "d <hex>" (decompress) and prints "<ok 0/1> <hex result>". */
#include <pmix_tool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hv(int c) { return c <= '9' ? c - '0' : (c | 32) - 'a' + 10; }

int main(void) {
    pmix_info_t info;
    pmix_proc_t me;
    PMIX_INFO_LOAD(&info, PMIX_TOOL_DO_NOT_CONNECT, NULL, PMIX_BOOL);
    if (PMIX_SUCCESS != PMIx_tool_init(&me, &info, 1)) return 1;
    static char line[1 << 20];
    while (fgets(line, sizeof line, stdin)) {
        size_t n = strcspn(line + 2, "\r\n") / 2;
        uint8_t *in = malloc(n + 1);
        for (size_t i = 0; i < n; i++) in[i] = (uint8_t)(hv(line[2 + 2 * i]) << 4 | hv(line[3 + 2 * i]));
        uint8_t *out = NULL;
        size_t nout = 0;
        bool ok = 'c' == line[0] ? PMIx_Data_compress(in, n, &out, &nout) : PMIx_Data_decompress(in, n, &out, &nout);
        printf("%d ", ok ? 1 : 0);
        for (size_t i = 0; ok && out && i < nout; i++) printf("%02x", out[i]);
        printf("\n");
        fflush(stdout);
        free(in);
        free(out);
    }
    PMIx_tool_finalize();
    return 0;
}
