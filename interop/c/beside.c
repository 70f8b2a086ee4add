/* pmix-wire server tests: a rank beside a helper process of its own that
 * connects first as the same rank (issue #24 item 5). Written for
 * pmix-wire.
 *
 *   beside stay    each rank forks a helper before PMIx_Init; the helper
 *                  initializes (as the rank: it inherited the environment)
 *                  and stays connected while the rank initializes, puts a
 *                  key, commits, fences with data, reads its neighbour's
 *                  key and finalizes; then the helper finalizes
 *   beside early   the helper initializes, finalizes and exits before the
 *                  rank initializes
 *
 * libpmix's server serves every connection of a rank; a server that took
 * the helper for the rank would refuse the rank itself. Each rank prints
 * "ok <check> <value>" or "fail <check> <why>" lines and exits 1 on any
 * failure; the helper's failures are the rank's.
 */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checks.h"

/* The helper: init, say so on `up`, wait for a byte on `go` (stay) or
 * not (early), finalize. Exit status 0 when every call succeeded. */
static int helper(int up, int go, int stay) {
    pmix_proc_t h;
    pmix_status_t rc = PMIx_Init(&h, NULL, 0);
    char c = PMIX_SUCCESS == rc ? 'y' : 'n';
    if (PMIX_SUCCESS != rc) {
        printf("fail helper_init %s\n", PMIx_Error_string(rc));
        fflush(stdout);
    }
    if (!stay && PMIX_SUCCESS == rc) {
        rc = PMIx_Finalize(NULL, 0);
    }
    if (write(up, &c, 1) != 1) {
        return 2;
    }
    if (stay) {
        if (read(go, &c, 1) != 1) {
            return 2;
        }
        if (PMIX_SUCCESS == rc) {
            rc = PMIx_Finalize(NULL, 0);
        }
    }
    return PMIX_SUCCESS == rc ? 0 : 1;
}

int main(int argc, char **argv) {
    int stay = argc > 1 && 0 == strcmp(argv[1], "stay");
    int up[2], go[2];
    if (pipe(up) || pipe(go)) {
        perror("pipe");
        return 1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (0 == pid) {
        close(up[0]);
        close(go[1]);
        _exit(helper(up[1], go[0], stay));
    }
    close(up[1]);
    close(go[0]);
    char c = 0;
    if (read(up[0], &c, 1) != 1 || c != 'y') {
        check("helper_connected_first", 0, "%c", c ? c : '-');
    }
    int st = 0;
    if (!stay) {
        waitpid(pid, &st, 0);
        check("helper_done_first", WIFEXITED(st) && 0 == WEXITSTATUS(st), "%d", st);
    }
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    check("init_beside_helper", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
    if (PMIX_SUCCESS != rc) {
        return 1;
    }
    snprintf(check_prefix, sizeof check_prefix, "[%u] ", me.rank);
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    uint32_t n = get_u32(&wild, PMIX_JOB_SIZE, &rc);
    char val[64];
    snprintf(val, sizeof val, "rank-%u", me.rank);
    put_str("beside.k", val);
    PMIx_Commit();
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &collect, 1);
    PMIX_INFO_DESTRUCT(&collect);
    check("fence", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
    pmix_proc_t next;
    PMIX_LOAD_PROCID(&next, me.nspace, n ? (me.rank + 1) % n : 0);
    char *s = get_str(&next, "beside.k", &rc);
    char want[64];
    snprintf(want, sizeof want, "rank-%u", next.rank);
    check("neighbour_key", s && 0 == strcmp(s, want), "%s", s ? s : PMIx_Error_string(rc));
    free(s);
    rc = PMIx_Finalize(NULL, 0);
    check("finalize", PMIX_SUCCESS == rc, "%s", PMIx_Error_string(rc));
    if (stay) {
        c = 'g';
        if (write(go[1], &c, 1) != 1) {
            check("helper_told", 0, "");
        }
        waitpid(pid, &st, 0);
        check("helper_finalized", WIFEXITED(st) && 0 == WEXITSTATUS(st), "%d", st);
    }
    if (!failures) {
        printf("[%u] complete beside its helper\n", me.rank);
    }
    return failures ? 1 : 0;
}
