/* pmix-capi's credential client for the server differential
 * (capi/tests/libpmix_capi_server.rs): init; PMIx_Get_credential with a
 * PMIX_CRED_TYPE directive, printing its status, the credential (as text:
 * the test's host makes printable ones) and the infos' keys; then
 * PMIx_Validate_credential of that credential and of a forged one,
 * printing each status and the results' keys; finalize. Run by
 * capi_server.c, whose get_credential and validate_credential upcalls
 * (CAPI_SERVER_CRED) print what they are handed. Written for pmix-wire;
 * public API only. */
#include <pmix.h>
#include <stdio.h>
#include <string.h>

static pmix_proc_t me;

static void keys(char *line, size_t len, const pmix_info_t *info, size_t n) {
    size_t at = strlen(line);
    for (size_t i = 0; i < n && at < len; i++) {
        at += (size_t) snprintf(line + at, len - at, " %s", info[i].key);
        if (info[i].value.type == PMIX_STRING && at < len)
            at += (size_t) snprintf(line + at, len - at, "=%s", info[i].value.data.string);
    }
}

static void validate(const char *what, pmix_byte_object_t *cred) {
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    char line[1024];
    pmix_status_t rc = PMIx_Validate_credential(cred, NULL, 0, &results, &nresults);
    snprintf(line, sizeof line, "rank %u: validate %s %s results", me.rank, what, PMIx_Error_string(rc));
    keys(line, sizeof line, results, nresults);
    printf("%s\n", line);
    if (results) PMIX_INFO_FREE(results, nresults);
}

int main(void) {
    pmix_value_t v;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 10;
    /* data for the host's dmodex_request of rank 0 */
    PMIX_VALUE_LOAD(&v, "here", PMIX_STRING);
    if (PMIx_Put(PMIX_GLOBAL, "capi.cred", &v) != PMIX_SUCCESS) return 11;
    if (PMIx_Commit() != PMIX_SUCCESS) return 12;
    pmix_info_t dir;
    pmix_byte_object_t cred = {NULL, 0};
    char line[1024];
    PMIX_INFO_LOAD(&dir, PMIX_CRED_TYPE, "capi", PMIX_STRING);
    pmix_status_t rc = PMIx_Get_credential(&dir, 1, &cred);
    snprintf(line, sizeof line, "rank %u: get %s credential %.*s", me.rank, PMIx_Error_string(rc),
             (int) cred.size, cred.bytes ? cred.bytes : "");
    printf("%s\n", line);
    if (rc == PMIX_SUCCESS) validate("own", &cred);
    pmix_byte_object_t forged = {(char *) "forged", 6};
    validate("forged", &forged);
    fflush(stdout);
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 13;
}
