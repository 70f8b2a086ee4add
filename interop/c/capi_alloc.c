/* PMIx_Allocation_request and its _nb form before PMIx_Init and after
 * it, printed so that the same program linked to libpmix and to
 * pmix-wire's libpmix can be compared line by line
 * (capi/tests/libpmix_capi_query.rs): as a singleton (no server to ask)
 * and as the one rank of `pmixw run -n 1` (whose server does not support
 * allocations). Written for pmix-wire. */
#include <pmix.h>
#include <stdio.h>
#include <unistd.h>

static volatile int done = 0;
static volatile pmix_status_t cb_status;
static volatile size_t cb_ninfo;

static void cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
               pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    (void) info;
    (void) cbdata;
    /* printed by the caller once it has printed its own line: the
     * callback may run on another thread before or after it */
    cb_status = status;
    cb_ninfo = ninfo;
    if (NULL != release_fn) {
        release_fn(release_cbdata);
    }
    done = 1;
}

static void both(const char *when, pmix_info_t *info, size_t ninfo)
{
    pmix_info_t *res = NULL;
    size_t nres = 7;
    pmix_status_t rc = PMIx_Allocation_request(PMIX_ALLOC_NEW, info, ninfo, &res, &nres);
    printf("%s blocking rc=%d n=%zu results=%s\n", when, rc, nres, NULL == res ? "NULL" : "set");
    if (NULL != res) {
        PMIX_INFO_FREE(res, nres);
    }
    done = 0;
    rc = PMIx_Allocation_request_nb(PMIX_ALLOC_EXTEND, info, ninfo, cb, NULL);
    printf("%s nb rc=%d\n", when, rc);
    fflush(stdout);
    while (PMIX_SUCCESS == rc && !done) {
        usleep(1000);
    }
    if (PMIX_SUCCESS == rc) {
        printf("callback rc=%d n=%zu\n", cb_status, cb_ninfo);
        fflush(stdout);
    }
}

int main(void)
{
    pmix_proc_t me;
    pmix_info_t info;
    uint64_t n = 1;
    pmix_status_t rc;

    PMIX_INFO_LOAD(&info, PMIX_ALLOC_NUM_NODES, &n, PMIX_UINT64);
    both("before", &info, 1);
    rc = PMIx_Init(&me, NULL, 0);
    printf("init rc=%d\n", rc);
    both("after init", &info, 1);
    both("no info", NULL, 0);
    PMIx_Finalize(NULL, 0);
    both("after finalize", &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    return 0;
}
