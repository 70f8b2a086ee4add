/* pmix-wire: the fault matrix's rank (pmixw/tests/live_faults.rs). Every
 * rank of a job runs `fault WIRE STAGE KIND VICTIM`; rank VICTIM dies at
 * STAGE by KIND, every other rank (a peer) goes through the job's normal
 * sequence and reports what became of it. VICTIM may be a list (`1,2`),
 * KIND too (one kind for every victim, or one each, in order): several
 * ranks die at the same stage. Written for pmix-wire.
 *
 *   WIRE   pmix  libpmix 4.2.2's client (PMIx_Init, Put, Commit, Fence, Get)
 *          pmi1  the simple PMI-1 wire over PMI_FD, spoken here
 *          pmi2  the PMI-2 wire over PMI_FD, spoken here
 *   STAGE  before     before connecting at all
 *          handshake  half-way into the first message (PMIx: 4 bytes of
 *                     the connection header on the URI's socket; PMI: half
 *                     of the init line)
 *          init       right after init
 *          fence      inside a fence with data (put, commit, fence
 *                     collecting data, not waiting for its answer)
 *          fence0     inside a fence without data
 *          get        inside a get of a key the next rank never puts, while
 *                     the peers wait in a get of the victim's key (PMIx)
 *          finalized  after a finalize that completed the job's sequence
 *          spawn      inside a spawn (PMIx_Spawn; PMI-1 `mcmd=spawn`, PMI-2
 *                     `cmd=spawn`): the victim asks for a child job of one
 *                     rank (this program, as a child) and dies before its
 *                     answer can arrive; the child, if started, waits in a
 *                     PMIx_Connect with the victim (PMI: its own fence,
 *                     then finalize)
 *          connect    (PMIx) the victim's PMIx_Spawn completes, then it
 *                     dies while its child waits in a PMIx_Connect with it
 *          spawnchild the victim's child dies inside its init (half a
 *                     connection header; PMI: half the init line); the
 *                     victim (which reports as a peer does) waits in its
 *                     spawn, then (PMIx) in a PMIx_Connect with the child,
 *                     (PMI) for the child's death ($FAULT_SYNC/child.R),
 *                     then in the job's fence, its peers already there
 *          connectchild (PMIx) the child dies after its init while the
 *                     victim waits in a PMIx_Connect with it
 *          hold       no death: the victim enters the fence 3 s late (and
 *                     reports as a peer does), the others wait in it; for
 *                     what the launcher's own end does to them
 *   KIND   kill (SIGKILL), segv (SIGSEGV, no core file), exit (status 3
 *          without finalizing), abort (PMIx_Abort / PMI abort, status 7
 *          for the first victim, 8 for the second, ...; PMI-2's has none)
 *
 * Peers: init, put "fault.key", commit, fence (with data unless STAGE is
 * fence0), get the (first) victim's key, finalize; at STAGE get the get of
 * the victim's key comes before the fence; at STAGE fence and fence0 the
 * last rank enters the fence only once every victim has died (victim R
 * writes its pid to $FAULT_SYNC/victim.R, when set), so that the victims
 * die inside a fence they have entered and the others wait in. Each prints one
 * line: "fault peer R: done" (exit 0) or "fault peer R: OP failed: WHY" (exit 5). The victim
 * prints "fault victim R: STAGE KIND" before it dies. A spawned child is
 * run as `fault child STAGE KIND PARENT-NSPACE PARENT-RANK` and reports as
 * "fault child R: ..." (at STAGE spawnchild and connectchild it is the
 * one that dies, "fault victim R: ..."); a PMI child is given its wire in
 * place of the parent's namespace. */
#include <pmix.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *wire, *stage, *kind, *role = "peer";
static int me = -1, size = 0, victim, fd = -1;
/* every victim, and which of them this rank is (-1: a peer) */
#define MAX_VICTIMS 16
static int victims[MAX_VICTIMS], nvictims = 0, my_victim = -1;

static void die(void);

static void peer_failed(const char *op, const char *why) {
    printf("fault %s %d: %s failed: %s\n", role, me, op, why);
    fflush(stdout);
    exit(5);
}

/* ---- the simple PMI wires, spoken over PMI_FD ---- */

static int v(void) { return strcmp(wire, "pmi1") == 0 ? 1 : 2; }

static void send_all(const char *s, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w <= 0) peer_failed("write", "connection lost");
        s += w;
        n -= (size_t)w;
    }
}

/* one v1 line without its newline, or one v2 body; 0 when the
 * connection ended first */
static int answer_as(int ver, const char *op, char *buf, size_t max) {
    size_t i = 0;
    if (ver == 1) {
        while (i + 1 < max) {
            if (read(fd, buf + i, 1) != 1) return 0;
            if (buf[i] == '\n') break;
            i++;
        }
        buf[i] = 0;
        return 1;
    }
    char len[7] = {0};
    for (int k = 0; k < 6; k++)
        if (read(fd, len + k, 1) != 1) return 0;
    size_t n = (size_t)atoi(len);
    if (n + 1 > max) peer_failed(op, "answer too long");
    for (i = 0; i < n; i++)
        if (read(fd, buf + i, 1) != 1) return 0;
    buf[n] = 0;
    return 1;
}

static int answer(const char *op, char *buf, size_t max) { return answer_as(v(), op, buf, max); }

static void pmi_send(const char *q) {
    if (v() == 1) {
        send_all(q, strlen(q));
    } else {
        char b[2048];
        snprintf(b, sizeof b, "%-6zu%s", strlen(q), q);
        send_all(b, strlen(b));
    }
}

/* ask and check: the answer must hold `want` */
static void pmi_ask(const char *op, const char *q, const char *want, char *ans, size_t max) {
    pmi_send(q);
    if (!answer(op, ans, max)) peer_failed(op, "connection closed");
    if (!strstr(ans, want)) peer_failed(op, ans);
}

static char kvs[300];

static void pmi_init(void) {
    char ans[4096], q[512], *p;
    snprintf(q, sizeof q, "cmd=init pmi_version=%d pmi_subversion=%d\n", v(), v() == 1 ? 1 : 0);
    send_all(q, strlen(q));
    /* the init line is answered with a line on both wires */
    if (!answer_as(1, "init", ans, sizeof ans)) peer_failed("init", "connection closed");
    if (!strstr(ans, "rc=0")) peer_failed("init", ans);
    if (v() == 1) {
        pmi_ask("get_my_kvsname", "cmd=get_my_kvsname\n", "rc=0", ans, sizeof ans);
        p = strstr(ans, "kvsname=");
    } else {
        snprintf(q, sizeof q, "cmd=fullinit;pmirank=%d;threaded=FALSE;", me);
        pmi_ask("fullinit", q, "rc=0;", ans, sizeof ans);
        pmi_ask("job-getid", "cmd=job-getid;", "rc=0;", ans, sizeof ans);
        p = strstr(ans, "jobid=");
    }
    if (!p) peer_failed("init", "no kvs name");
    p = strchr(p, '=') + 1;
    size_t i = 0;
    while (*p && *p != ' ' && *p != ';' && i + 1 < sizeof kvs) kvs[i++] = *p++;
    kvs[i] = 0;
}

static void pmi_put(void) {
    char ans[4096], q[512];
    if (v() == 1)
        snprintf(q, sizeof q, "cmd=put kvsname=%s key=fault-%d value=v%d\n", kvs, me, me);
    else
        snprintf(q, sizeof q, "cmd=kvs-put;key=fault-%d;value=v%d;", me, me);
    pmi_ask("put", q, "rc=0", ans, sizeof ans);
}

static const char *fence_q(void) {
    return v() == 1 ? "cmd=barrier_in\n" : "cmd=kvs-fence;";
}

static void pmi_fence(void) {
    char ans[4096];
    pmi_ask("fence", fence_q(), v() == 1 ? "cmd=barrier_out rc=0" : "cmd=kvs-fence-response;rc=0;", ans,
            sizeof ans);
}

static void pmi_get_victim(void) {
    char ans[4096], q[512], want[64];
    if (v() == 1)
        snprintf(q, sizeof q, "cmd=get kvsname=%s key=fault-%d\n", kvs, victim);
    else
        snprintf(q, sizeof q, "cmd=kvs-get;jobid=%s;srcid=-1;key=fault-%d;", kvs, victim);
    snprintf(want, sizeof want, "value=v%d", victim);
    pmi_ask("get", q, want, ans, sizeof ans);
}

static void pmi_finalize(void) {
    char ans[4096];
    pmi_ask("finalize", v() == 1 ? "cmd=finalize\n" : "cmd=finalize;", "finalize", ans, sizeof ans);
}

/* the PMI spawn of one rank of this program as a child of this rank
 * (`fault child STAGE KIND WIRE RANK`); with `wait`, its answer checked */
static void pmi_spawn(int wait) {
    static char exe[4096];
    char q[8192], ans[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) peer_failed("spawn", "no /proc/self/exe");
    exe[n] = 0;
    if (v() == 1)
        snprintf(q, sizeof q,
                 "mcmd=spawn\nnprocs=1\nexecname=%s\ntotspawns=1\nspawnssofar=1\nargcnt=5\n"
                 "arg1=child\narg2=%s\narg3=%s\narg4=%s\narg5=%d\npreput_num=0\ninfo_num=0\nendcmd\n",
                 exe, stage, kind, wire, me);
    else
        snprintf(q, sizeof q,
                 "cmd=spawn;ncmds=1;preputcount=0;subcmd=%s;maxprocs=1;argc=5;argv0=child;"
                 "argv1=%s;argv2=%s;argv3=%s;argv4=%d;infokeycount=0;",
                 exe, stage, kind, wire, me);
    if (!wait) {
        pmi_send(q);
        return;
    }
    pmi_ask("spawn", q, "rc=0", ans, sizeof ans);
}

/* ---- PMIx, through libpmix ---- */

static pmix_proc_t self;

static void pmix_check(const char *op, pmix_status_t rc) {
    if (rc != PMIX_SUCCESS) peer_failed(op, PMIx_Error_string(rc));
}

static void px_init(void) {
    pmix_status_t rc = PMIx_Init(&self, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        me = atoi(getenv("PMIX_RANK") ? getenv("PMIX_RANK") : "-1");
        peer_failed("init", PMIx_Error_string(rc));
    }
    pmix_proc_t wild;
    pmix_value_t *val = NULL;
    PMIX_LOAD_PROCID(&wild, self.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val) == PMIX_SUCCESS && val) {
        size = (int)val->data.uint32;
        PMIX_VALUE_RELEASE(val);
    }
}

static void px_put(void) {
    pmix_value_t val;
    char s[64];
    snprintf(s, sizeof s, "v%d", me);
    PMIX_VALUE_LOAD(&val, s, PMIX_STRING);
    pmix_check("put", PMIx_Put(PMIX_GLOBAL, "fault.key", &val));
    PMIX_VALUE_DESTRUCT(&val);
    pmix_check("commit", PMIx_Commit());
}

static void px_fence(int collect) {
    pmix_info_t info;
    bool yes = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_check("fence", PMIx_Fence(NULL, 0, collect ? &info : NULL, collect ? 1 : 0));
}

static void px_get_victim(void) {
    pmix_proc_t p;
    pmix_value_t *val = NULL;
    PMIX_LOAD_PROCID(&p, self.nspace, (pmix_rank_t)victim);
    pmix_check("get", PMIx_Get(&p, "fault.key", NULL, 0, &val));
    if (val) PMIX_VALUE_RELEASE(val);
}

static void nop_cb(pmix_status_t status, void *cbdata) {
    (void)status;
    (void)cbdata;
}

static void nop_value_cb(pmix_status_t status, pmix_value_t *kv, void *cbdata) {
    (void)status;
    (void)kv;
    (void)cbdata;
}

/* ---- spawn and connect ---- */

/* PMIx_Spawn of one rank of this program as a child of this rank; with
 * `wait`, until it has been answered (the child's namespace in `child`) */
static void px_spawn(int wait, char *child) {
    static char exe[4096], rank[16];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) peer_failed("spawn", "no /proc/self/exe");
    exe[n] = 0;
    snprintf(rank, sizeof rank, "%d", me);
    static char *argv[7];
    argv[0] = exe;
    argv[1] = "child";
    argv[2] = (char *)stage;
    argv[3] = (char *)kind;
    argv[4] = self.nspace;
    argv[5] = rank;
    argv[6] = NULL;
    pmix_app_t app;
    memset(&app, 0, sizeof app);
    app.cmd = exe;
    app.argv = argv;
    app.maxprocs = 1;
    if (wait)
        pmix_check("spawn", PMIx_Spawn(NULL, 0, &app, 1, child));
    else
        PMIx_Spawn_nb(NULL, 0, &app, 1, NULL, NULL);
}

/* PMIx_Connect of rank `rank` of `ns` with every rank of `other` */
static void px_connect(const char *ns, int rank, const char *other) {
    pmix_proc_t procs[2];
    PMIX_LOAD_PROCID(&procs[0], ns, (pmix_rank_t)rank);
    PMIX_LOAD_PROCID(&procs[1], other, PMIX_RANK_WILDCARD);
    pmix_check("connect", PMIx_Connect(procs, 2, NULL, 0));
}

static int is(const char *s) { return strcmp(stage, s) == 0; }

/* the victim's part at the spawn and connect stages */
static void spawner_run(void) {
    char child[PMIX_MAX_NSLEN + 1] = {0};
    px_init();
    if (is("spawn")) {
        px_spawn(0, child);
        usleep(1000);
        die();
    }
    px_spawn(1, child);
    if (is("connect")) die();
    /* spawnchild, connectchild: the child dies, this rank waits */
    px_connect(self.nspace, me, child);
    printf("fault peer %d: done\n", me);
    exit(0);
}

static void die_in_handshake(void);
static void write_pid(const char *what, int r);
static void wait_for_file(const char *what, int r);

/* the victim's part at the spawn stages, on a PMI wire */
static void pmi_spawner_run(void) {
    char ans[4096];
    pmi_init();
    if (is("spawn")) {
        pmi_spawn(0);
        usleep(1000);
        die();
    }
    /* spawnchild: the child dies in its init; once it has, into the
     * fence the peers wait in */
    pmi_spawn(1);
    wait_for_file("child", me);
    pmi_put();
    pmi_fence();
    pmi_ask("finalize", v() == 1 ? "cmd=finalize\n" : "cmd=finalize;", "finalize", ans, sizeof ans);
    printf("fault peer %d: done\n", me);
    exit(0);
}

/* a spawned child: `fault child STAGE KIND PARENT-NSPACE PARENT-RANK`
 * (PMI: `fault child STAGE KIND WIRE PARENT-RANK`) */
static int child_main(char **argv) {
    wire = "pmix";
    role = "child";
    my_victim = 0; /* its abort's status: 7 */
    stage = argv[2];
    kind = argv[3];
    if (strcmp(argv[4], "pmi1") == 0 || strcmp(argv[4], "pmi2") == 0) {
        wire = argv[4];
        if (!getenv("PMI_FD") || !getenv("PMI_RANK")) return 10;
        fd = atoi(getenv("PMI_FD"));
        me = atoi(getenv("PMI_RANK"));
        if (is("spawnchild")) {
            write_pid("child", atoi(argv[5]));
            die_in_handshake();
        }
        pmi_init();
        pmi_fence();
        pmi_finalize();
        printf("fault child %d: done\n", me);
        return 0;
    }
    me = getenv("PMIX_RANK") ? atoi(getenv("PMIX_RANK")) : 0;
    if (is("spawnchild")) die_in_handshake();
    px_init();
    if (is("connectchild")) {
        /* the parent is in (or on its way into) the connect */
        usleep(300 * 1000);
        die();
    }
    px_connect(argv[4], atoi(argv[5]), self.nspace);
    printf("fault child %d: done\n", me);
    return 0;
}

/* ---- the victim ---- */

static int is_pmix(void) { return strcmp(wire, "pmix") == 0; }

static void die(void) {
    struct rlimit none = {0, 0};
    printf("fault victim %d: %s %s\n", me, stage, kind);
    fflush(stdout);
    if (strcmp(kind, "kill") == 0) raise(SIGKILL);
    if (strcmp(kind, "segv") == 0) {
        setrlimit(RLIMIT_CORE, &none);
        signal(SIGSEGV, SIG_DFL);
        raise(SIGSEGV);
    }
    if (strcmp(kind, "exit") == 0) exit(3);
    if (strcmp(kind, "abort") == 0) {
        int status = 7 + my_victim;
        if (is_pmix()) {
            PMIx_Abort(status, "fault abort", NULL, 0);
        } else {
            char ans[4096], q[128];
            snprintf(q, sizeof q, "cmd=abort exitcode=%d\n", status);
            pmi_send(v() == 1 ? q : "cmd=abort;isworldabort=TRUE;msg=fault abort;");
            answer("abort", ans, sizeof ans);
        }
        /* the host ends the job; waiting here is its business */
        pause();
    }
    exit(9); /* an unknown kind */
}

/* half of a connection's first message, then death */
static void die_in_handshake(void) {
    if (!is_pmix()) {
        send_all("cmd=init pmi_", 13);
    } else {
        static const char *vars[] = {"PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3",
                                     "PMIX_SERVER_URI21", "PMIX_SERVER_URI2"};
        const char *uri = NULL, *t;
        for (size_t i = 0; i < sizeof vars / sizeof vars[0] && !uri; i++) uri = getenv(vars[i]);
        if (!uri || !(t = strstr(uri, "tcp4://"))) exit(11);
        char host[64] = {0};
        int port = 0;
        if (sscanf(t + 7, "%63[^:]:%d", host, &port) != 2) exit(12);
        struct sockaddr_in sa = {0};
        sa.sin_family = AF_INET;
        sa.sin_port = htons((uint16_t)port);
        inet_pton(AF_INET, host, &sa.sin_addr);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) exit(13);
        /* the start of a connection header: its size, cut short */
        if (write(fd, "\0\0\0", 3) != 3) exit(14);
    }
    usleep(300 * 1000);
    die();
}

static void victim_run(void) {
    if (!is_pmix() && (is("spawn") || is("spawnchild"))) pmi_spawner_run();
    if (is("spawn") || is("connect") || is("spawnchild") || is("connectchild")) spawner_run();
    if (strcmp(stage, "before") == 0) die();
    if (strcmp(stage, "handshake") == 0) die_in_handshake();
    if (is_pmix())
        px_init();
    else
        pmi_init();
    if (strcmp(stage, "init") == 0) die();
    if (strcmp(stage, "hold") == 0) {
        /* late into the fence the others wait in, then as a peer */
        sleep(3);
        if (is_pmix()) {
            px_put();
            px_fence(1);
            pmix_check("finalize", PMIx_Finalize(NULL, 0));
        } else {
            pmi_put();
            pmi_fence();
            pmi_finalize();
        }
        printf("fault peer %d: done\n", me);
        exit(0);
    }
    if (strcmp(stage, "fence") == 0 || strcmp(stage, "fence0") == 0) {
        int collect = strcmp(stage, "fence") == 0;
        if (is_pmix()) {
            pmix_info_t info;
            bool yes = true;
            PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
            if (collect) px_put();
            PMIx_Fence_nb(NULL, 0, collect ? &info : NULL, collect ? 1 : 0, nop_cb, NULL);
        } else {
            if (collect) pmi_put();
            pmi_send(fence_q());
        }
        usleep(300 * 1000);
        die();
    }
    if (strcmp(stage, "get") == 0) {
        if (!is_pmix()) exit(15); /* a PMI get does not wait */
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, self.nspace, (pmix_rank_t)((victim + 1) % size));
        PMIx_Get_nb(&p, "fault.never", NULL, 0, nop_value_cb, NULL);
        usleep(300 * 1000);
        die();
    }
    if (strcmp(stage, "finalized") == 0) {
        if (is_pmix()) {
            px_put();
            px_fence(1);
            PMIx_Finalize(NULL, 0);
        } else {
            pmi_put();
            pmi_fence();
            pmi_finalize();
        }
        die();
    }
    exit(16); /* an unknown stage */
}

/* until process WHAT.R (its pid in $FAULT_SYNC/WHAT.R) has died, 20 s at
 * most (a hang guard; the test's own bound is longer) */
static void wait_for_file(const char *what, int r) {
    const char *dir = getenv("FAULT_SYNC");
    char path[4096], st[512];
    if (!dir) return;
    snprintf(path, sizeof path, "%s/%s.%d", dir, what, r);
    for (int i = 0; i < 2000; i++, usleep(10 * 1000)) {
        FILE *f = fopen(path, "r");
        int pid = 0;
        if (!f) continue;
        if (fscanf(f, "%d", &pid) != 1) pid = 0;
        fclose(f);
        if (pid <= 0) continue;
        snprintf(path, sizeof path, "/proc/%d/stat", pid);
        f = fopen(path, "r");
        if (!f) return;
        size_t n = fread(st, 1, sizeof st - 1, f);
        fclose(f);
        st[n] = 0;
        char *e = strrchr(st, ')');
        if (e && e[1] == ' ' && (e[2] == 'Z' || e[2] == 'X')) return;
        snprintf(path, sizeof path, "%s/%s.%d", dir, what, r);
    }
}

/* the late peer's wait: until victim R has died */
static void wait_for_one(int r) { wait_for_file("victim", r); }

/* this process's pid in $FAULT_SYNC/WHAT.R, whole when it appears */
static void write_pid(const char *what, int r) {
    if (!getenv("FAULT_SYNC")) return;
    char path[4096], to[4096];
    snprintf(path, sizeof path, "%s/%s.tmp.%d", getenv("FAULT_SYNC"), what, (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    snprintf(to, sizeof to, "%s/%s.%d", getenv("FAULT_SYNC"), what, r);
    rename(path, to);
}

/* until every victim has died */
static void wait_for_victim(void) {
    for (int i = 0; i < nvictims; i++) wait_for_one(victims[i]);
}

static void peer_run(void) {
    int get_first = strcmp(stage, "get") == 0;
    int collect = strcmp(stage, "fence0") != 0;
    /* a fence the victim dies inside is one it has entered while a rank
     * has not: the last rank (the late peer) enters it once the victim
     * has died, the victim 0.3 s after entering it */
    int late = strcmp(stage, "fence") == 0 || !collect; /* and me the last, below */
    if (is_pmix()) {
        px_init();
        px_put();
        if (get_first) px_get_victim();
        if (late && me == size - 1) wait_for_victim();
        px_fence(collect);
        if (!get_first) px_get_victim();
        pmix_check("finalize", PMIx_Finalize(NULL, 0));
    } else {
        pmi_init();
        if (collect) pmi_put();
        if (late && me == size - 1) wait_for_victim();
        pmi_fence();
        if (collect) pmi_get_victim();
        pmi_finalize();
    }
    printf("fault peer %d: done\n", me);
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc == 6 && strcmp(argv[1], "child") == 0) return child_main(argv);
    if (argc != 5) {
        fprintf(stderr, "usage: fault pmix|pmi1|pmi2 STAGE KIND VICTIM\n");
        return 2;
    }
    wire = argv[1];
    stage = argv[2];
    static char kinds[256];
    snprintf(kinds, sizeof kinds, "%s", argv[3]);
    for (const char *p = argv[4]; *p && nvictims < MAX_VICTIMS;) {
        victims[nvictims++] = atoi(p);
        p = strchr(p, ',') ? strchr(p, ',') + 1 : "";
    }
    if (nvictims == 0) return 2;
    victim = victims[0];
    const char *r = getenv(is_pmix() ? "PMIX_RANK" : "PMI_RANK");
    const char *s = is_pmix() ? NULL : getenv("PMI_SIZE");
    if (!r) return 10;
    me = atoi(r);
    size = s ? atoi(s) : 0;
    for (int i = 0; i < nvictims; i++)
        if (victims[i] == me) my_victim = i;
    /* this victim's kind: the list's entry (else its last) */
    kind = strtok(kinds, ",");
    for (int i = 0; i < my_victim; i++) {
        const char *k = strtok(NULL, ",");
        if (k) kind = k;
    }
    if (!kind) return 2;
    if (!is_pmix()) {
        const char *f = getenv("PMI_FD");
        if (!f) return 10;
        fd = atoi(f);
    }
    if (my_victim >= 0) write_pid("victim", me);
    if (my_victim >= 0)
        victim_run();
    else
        peer_run();
    return 0;
}
