/* pmix-wire: prints what libpmix's string helpers return, as TSV lines
 *   helper \t input \t output
 * for every status code in [-1100, 10] and the event range, every 8-bit
 * value of the enum helpers, and bit patterns of the bitmask helpers.
 * types/tests/strings_vs_libpmix.rs compares pmix-types with it. */
#include <pmix_tool.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    /* PMIx_Data_type_string needs an initialised library ("NOT INITIALIZED" otherwise) */
    pmix_info_t info;
    pmix_proc_t me;
    PMIX_INFO_LOAD(&info, PMIX_TOOL_DO_NOT_CONNECT, NULL, PMIX_BOOL);
    if (PMIX_SUCCESS != PMIx_tool_init(&me, &info, 1)) return 1;
    for (int i = -1100; i <= 10; i++) printf("error\t%d\t%s\n", i, PMIx_Error_string(i));
    for (int i = -3100; i <= -2900; i++) printf("error\t%d\t%s\n", i, PMIx_Error_string(i));
    for (int i = 0; i < 256; i++) {
        printf("proc_state\t%d\t%s\n", i, PMIx_Proc_state_string((pmix_proc_state_t)i));
        printf("scope\t%d\t%s\n", i, PMIx_Scope_string((pmix_scope_t)i));
        printf("persistence\t%d\t%s\n", i, PMIx_Persistence_string((pmix_persistence_t)i));
        printf("data_range\t%d\t%s\n", i, PMIx_Data_range_string((pmix_data_range_t)i));
        printf("alloc_directive\t%d\t%s\n", i, PMIx_Alloc_directive_string((pmix_alloc_directive_t)i));
        printf("job_state\t%d\t%s\n", i, PMIx_Job_state_string((pmix_job_state_t)i));
        printf("link_state\t%d\t%s\n", i, PMIx_Link_state_string((pmix_link_state_t)i));
        printf("iof_channel\t%d\t%s\n", i, PMIx_IOF_channel_string((pmix_iof_channel_t)i));
    }
    for (int i = 0; i < 600; i++) printf("data_type\t%d\t%s\n", i, PMIx_Data_type_string((pmix_data_type_t)i));
    unsigned long long dt[] = {0, 1, 2, 3, 4, 8, 16, 31, 32, 0x7f, 0x1000, 1ULL << 63};
    for (size_t k = 0; k < sizeof(dt) / sizeof(dt[0]); k++)
        printf("device_type\t%llu\t%s\n", dt[k], PMIx_Device_type_string((pmix_device_type_t)dt[k]));
    unsigned dirs[] = {0x10000, 0x1001b, 0x80000000u, 0xffffffffu};
    for (unsigned k = 0; k < 68; k++) {
        unsigned d = k < 64 ? k : dirs[k - 64];
        char *s = PMIx_Info_directives_string(d);
        printf("info_directives\t%u\t%s\n", d, s ? s : "(null)");
        free(s);
    }
    PMIx_tool_finalize();
    return 0;
}
