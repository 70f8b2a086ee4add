/* pmix-wire wireup benchmark: the C reference launcher (pmixw/benches/wireup.rs).
 * Written for pmix-wire.
 *
 *   bench_server N PROG
 *   bench_server N -
 *
 * A PMIx_server_init host on libpmix 4.2.2 (hash gds; with
 * BENCH_SERVER_DSTORE=1 libpmix's default, ds21) that registers one
 * namespace of N local ranks, starts PROG as each rank with the
 * environment PMIx_server_setup_fork gives, waits for them and prints its
 * own peak RSS ("server_rss <KiB>"). Exit status: 0 if every rank
 * succeeded. With "-" for PROG (benches/server_load.rs) it starts nothing:
 * it prints "uri <PMIX_SERVER_URI41>", "nspace <ns>" and
 * "server_cpu_ready_ms <ms>" (its CPU time spent registering), serves whoever
 * connects as the N ranks until N have finalized, then prints
 * "server_rss <KiB>" and "server_cpu_ms <user+sys ms>" on stdout and
 * ends when its stdin closes. */
#include <pmix_server.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static pmix_status_t h_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                             size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cb,
                             void *d) {
    (void) procs;
    (void) nprocs;
    (void) info;
    (void) ninfo;
    cb(PMIX_SUCCESS, data, ndata, d, NULL, NULL);
    return PMIX_SUCCESS;
}

/* This process's CPU time so far (user + system), in ms. */
static long cpu_ms(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000L
           + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000L;
}

static volatile int finalized = 0;

static pmix_status_t h_finalized(const pmix_proc_t *p, void *o, pmix_op_cbfunc_t cb, void *d) {
    (void) p;
    (void) o;
    __atomic_add_fetch(&finalized, 1, __ATOMIC_SEQ_CST);
    if (cb) {
        cb(PMIX_SUCCESS, d);
    }
    return PMIX_SUCCESS;
}

static pmix_server_module_t module = {
    .client_finalized = h_finalized,
    .fence_nb = h_fence,
};

/* Register rank r of "benchns" with our uid and gid; wait for it. */
static pmix_proc_t register_rank(int r) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "benchns", (pmix_rank_t) r);
    volatile int done = 0;
    pmix_status_t rc =
        PMIx_server_register_client(&p, getuid(), getgid(), NULL, done_cb, (void *) &done);
    while (PMIX_SUCCESS == rc && !done) {
        usleep(100);
    }
    return p;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: bench_server N PROG\n");
        return 2;
    }
    int n = atoi(argv[1]);
    /* BENCH_SERVER_DSTORE=1: libpmix's own choice (ds21 for its clients,
     * pmixw/tests/live_dstore.rs compares its store with ours) */
    const char *ds = getenv("BENCH_SERVER_DSTORE");
    if (NULL == ds || 0 != strcmp(ds, "1")) {
        setenv("PMIX_MCA_gds", "hash", 1);
    }
    if (PMIX_SUCCESS != PMIx_server_init(&module, NULL, 0)) {
        return 1;
    }
    char host[256];
    gethostname(host, sizeof host);
    char *nodes = NULL, *ppn = NULL, *peers = calloc(1, (size_t) n * 8 + 1);
    for (int r = 0; r < n; r++) {
        sprintf(peers + strlen(peers), "%s%d", r ? "," : "", r);
    }
    PMIx_generate_regex(host, &nodes);
    PMIx_generate_ppn(peers, &ppn);
    size_t ninfo = 9 + (size_t) n;
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, ninfo);
    uint32_t size = (uint32_t) n;
    PMIX_INFO_LOAD(&info[0], PMIX_UNIV_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[1], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[2], PMIX_LOCAL_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[3], PMIX_NODE_MAP, nodes, PMIX_REGEX);
    PMIX_INFO_LOAD(&info[4], PMIX_PROC_MAP, ppn, PMIX_REGEX);
    PMIX_INFO_LOAD(&info[5], PMIX_LOCAL_PEERS, peers, PMIX_STRING);
    /* job level, as mpirun registers them and our server sends them */
    uint32_t app0 = 0;
    PMIX_INFO_LOAD(&info[6], PMIX_JOBID, "benchns", PMIX_STRING);
    PMIX_INFO_LOAD(&info[7], PMIX_APPNUM, &app0, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[8], PMIX_NODE_SIZE, &size, PMIX_UINT32);
    for (int r = 0; r < n; r++) {
        pmix_data_array_t *arr;
        PMIX_DATA_ARRAY_CREATE(arr, 4, PMIX_INFO);
        pmix_info_t *pi = (pmix_info_t *) arr->array;
        pmix_rank_t rank = (pmix_rank_t) r;
        uint16_t lr = (uint16_t) r;
        PMIX_INFO_LOAD(&pi[0], PMIX_RANK, &rank, PMIX_PROC_RANK);
        PMIX_INFO_LOAD(&pi[1], PMIX_LOCAL_RANK, &lr, PMIX_UINT16);
        PMIX_INFO_LOAD(&pi[2], PMIX_NODE_RANK, &lr, PMIX_UINT16);
        /* per rank, as mpirun registers it (libpmix adds appnum 0 itself):
         * the job info then carries the same data as ours */
        uint32_t nodeid = 0;
        PMIX_INFO_LOAD(&pi[3], PMIX_NODEID, &nodeid, PMIX_UINT32);
        PMIX_INFO_LOAD(&info[9 + r], PMIX_PROC_DATA, arr, PMIX_DATA_ARRAY);
        PMIX_DATA_ARRAY_FREE(arr);
    }
    volatile int done = 0;
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, "benchns");
    pmix_status_t rc = PMIx_server_register_nspace(ns, n, info, ninfo, done_cb, (void *) &done);
    while (PMIX_SUCCESS == rc && !done) {
        usleep(100);
    }
    int serve_only = 0 == strcmp(argv[2], "-");
    pid_t *pids = calloc((size_t) n, sizeof(pid_t));
    for (int r = 0; r < n && serve_only; r++) {
        pmix_proc_t p = register_rank(r);
        if (n - 1 == r) {
            /* every rank registered: now clients may come */
            char **env = NULL;
            PMIx_server_setup_fork(&p, &env);
            for (int i = 0; env && env[i]; i++) {
                if (0 == strncmp(env[i], "PMIX_SERVER_URI41=", 18)) {
                    printf("uri %s\n", env[i] + 18);
                }
            }
            printf("nspace benchns\nserver_cpu_ready_ms %ld\n", cpu_ms());
            fflush(stdout);
        }
    }
    if (serve_only) {
        while (__atomic_load_n(&finalized, __ATOMIC_SEQ_CST) < n) {
            usleep(1000);
        }
        printf("server_rss %ld\nserver_cpu_ms %ld\n", peak_kib(), cpu_ms());
        fflush(stdout);
        /* the last replies may still be on their way: finalize when told */
        char sink[64];
        while (fgets(sink, sizeof sink, stdin)) {
        }
        PMIx_server_finalize();
        return 0;
    }
    for (int r = 0; r < n; r++) {
        pmix_proc_t p = register_rank(r);
        char **env = NULL;
        PMIx_server_setup_fork(&p, &env);
        pids[r] = fork();
        if (0 == pids[r]) {
            for (int i = 0; env && env[i]; i++) {
                putenv(env[i]);
            }
            execl(argv[2], argv[2], (char *) NULL);
            _exit(127);
        }
    }
    int failed = 0;
    for (int r = 0; r < n; r++) {
        int st = 0;
        waitpid(pids[r], &st, 0);
        failed |= !WIFEXITED(st) || 0 != WEXITSTATUS(st);
    }
    fprintf(stderr, "server_rss %ld\n", peak_kib());
    PMIx_server_finalize();
    return failed;
}
