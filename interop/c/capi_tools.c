/* pmix-capi's multi-server tool program (capi/tests/live_capi_tools.rs):
 * a tool that attaches to two servers and moves between them, once on
 * libpmix 4.2.2 and once on pmix-capi's libpmix.so.2; both must print the
 * same lines (but for the differences the test lists). Public API only;
 * written for pmix-wire from the standard's text of the tool calls.
 *
 *   capi_tools PID_A PID_B FILE_B
 *
 * A is a job's server (`pmixw run`), B a system server (`pmixw dvm`, its
 * pmix.sys file in $PMIX_SYSTEM_TMPDIR), FILE_B B's rendezvous file. The
 * servers' pids are printed as <A> and <B> wherever they appear. */
#include <pmix_tool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capi_query.h"

static char pid_a[32], pid_b[32];

/* `s` with the servers' pids written as <A> and <B> */
static const char *masked(const char *s) {
    static char out[4][512];
    static int next = 0;
    char *o = out[next++ % 4];
    size_t n = 0;
    while (*s && n < 500) {
        if (pid_a[0] && 0 == strncmp(s, pid_a, strlen(pid_a))) {
            n += (size_t) snprintf(o + n, 512 - n, "<A>");
            s += strlen(pid_a);
        } else if (pid_b[0] && 0 == strncmp(s, pid_b, strlen(pid_b))) {
            n += (size_t) snprintf(o + n, 512 - n, "<B>");
            s += strlen(pid_b);
        } else {
            o[n++] = *s++;
        }
    }
    o[n] = '\0';
    return o;
}

static const char *rank_str(pmix_rank_t r) {
    static char buf[4][16];
    static int next = 0;
    char *b = buf[next++ % 4];
    if (PMIX_RANK_WILDCARD == r) return "*";
    if (PMIX_RANK_UNDEF == r) return "undef";
    if (PMIX_RANK_INVALID == r) return "invalid";
    snprintf(b, 16, "%u", r);
    return b;
}

static const char *proc_str(const pmix_proc_t *p) {
    static char buf[4][600];
    static int next = 0;
    char *b = buf[next++ % 4];
    snprintf(b, 600, "%s.%s", masked(p->nspace), masked(rank_str(p->rank)));
    return b;
}

static void servers(const char *label) {
    pmix_proc_t *s = NULL;
    size_t n = 0;
    pmix_status_t rc = PMIx_tool_get_servers(&s, &n);
    printf("%s: get_servers rc=%d n=%zu [", label, rc, n);
    for (size_t i = 0; i < n; i++) printf("%s%s", i ? " " : "", proc_str(&s[i]));
    printf("]\n");
    if (NULL != s) PMIX_PROC_FREE(s, n);
}

/* the namespaces the last query named */
static char last_ns[512];

/* the primary server's active namespaces: how many it names */
static void query(const char *label) {
    pmix_info_t *res;
    size_t n;
    pmix_status_t rc = ask_namespaces(&res, &n);
    int names = -1;
    if (PMIX_SUCCESS == rc && 1 == n && PMIX_STRING == res[0].value.type) {
        const char *v = res[0].value.data.string;
        snprintf(last_ns, sizeof last_ns, "%s", v ? v : "");
        names = (NULL == v || '\0' == *v) ? 0 : 1;
        for (; v && *v; v++) names += (',' == *v);
    }
    printf("%s: query rc=%d n=%zu namespaces=%d\n", label, rc, n, names);
    if (res) PMIX_INFO_FREE(res, n);
}

static pmix_status_t attach(const char *label, pmix_info_t *info, size_t ninfo, pmix_proc_t *srv) {
    pmix_proc_t me, server;
    PMIX_LOAD_PROCID(&me, "unset", 77);
    PMIX_LOAD_PROCID(&server, "unset", 77);
    pmix_status_t rc = PMIx_tool_attach_to_server(&me, &server, info, ninfo);
    printf("%s: attach rc=%d me=%s server=%s\n", label, rc, proc_str(&me), proc_str(&server));
    if (NULL != srv) *srv = server;
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: capi_tools PID_A PID_B FILE_B\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    snprintf(pid_a, sizeof pid_a, "%s", argv[1]);
    snprintf(pid_b, sizeof pid_b, "%s", argv[2]);
    pid_t a = (pid_t) atoi(argv[1]), b = (pid_t) atoi(argv[2]);
    pmix_proc_t me, sa, sb, none;
    pmix_info_t info[2];
    pmix_status_t rc;
    bool yes = true;

    /* before init */
    PMIX_LOAD_PROCID(&none, "no-such-server", 0);
    servers("before init");
    printf("before init: set_server rc=%d\n", PMIx_tool_set_server(&none, NULL, 0));
    printf("before init: disconnect rc=%d\n", PMIx_tool_disconnect(&none));

    /* the first server, by pid, is the primary */
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_PIDINFO, &a, PMIX_PID);
    rc = PMIx_tool_init(&me, info, 1);
    PMIX_INFO_DESTRUCT(&info[0]);
    printf("tool_init: rc=%d me=%s\n", rc, proc_str(&me));
    if (PMIX_SUCCESS != rc) return 1;
    servers("after init");
    query("through A");
    char job_a[512];
    snprintf(job_a, sizeof job_a, "%s", last_ns);

    /* no directives */
    printf("no info: attach rc=%d\n", PMIx_tool_attach_to_server(NULL, NULL, NULL, 0));

    /* the second, by pid: not the primary */
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_PIDINFO, &b, PMIX_PID);
    attach("pid B", info, 1, &sb);
    PMIX_INFO_DESTRUCT(&info[0]);
    servers("after pid B");
    query("still through A");

    /* the server we started with, by name */
    {
        pmix_proc_t *s = NULL;
        size_t n = 0;
        PMIx_tool_get_servers(&s, &n);
        if (n > 0) sa = s[0];
        if (s) PMIX_PROC_FREE(s, n);
    }

    /* B made the primary: calls go there */
    printf("set B: set_server rc=%d\n", PMIx_tool_set_server(&sb, NULL, 0));
    servers("after set B");
    query("through B");
    printf("set B again: set_server rc=%d\n", PMIx_tool_set_server(&sb, NULL, 0));
    servers("after set B again");

    /* a server we are not attached to */
    printf("set unknown: set_server rc=%d\n", PMIx_tool_set_server(&none, NULL, 0));
    int secs = 1;
    PMIX_INFO_LOAD(&info[0], PMIX_WAIT_FOR_CONNECTION, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &secs, PMIX_INT);
    printf("set unknown waiting 1s: set_server rc=%d\n", PMIx_tool_set_server(&none, info, 2));
    printf("set B waiting: set_server rc=%d\n", PMIx_tool_set_server(&sb, info, 2));
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    servers("after set unknown");
    query("through B still");

    /* back to A */
    printf("set A: set_server rc=%d\n", PMIx_tool_set_server(&sa, NULL, 0));
    servers("after set A");
    query("through A again");

    /* drop B (not the primary), twice */
    printf("disconnect B: rc=%d\n", PMIx_tool_disconnect(&sb));
    servers("after disconnect B");
    printf("disconnect B again: rc=%d\n", PMIx_tool_disconnect(&sb));
    printf("set B gone: set_server rc=%d\n", PMIx_tool_set_server(&sb, NULL, 0));
    query("through A after B");

    /* B again, as the system server, made the primary as it connects;
     * tried once (without a system server, libpmix 4.2.2 hangs here:
     * spec-notes/divergences.md) */
    pmix_info_t sys[3];
    uint32_t retries = 0;
    PMIX_INFO_LOAD(&sys[0], PMIX_CONNECT_TO_SYSTEM, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&sys[1], PMIX_PRIMARY_SERVER, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&sys[2], PMIX_CONNECT_MAX_RETRIES, &retries, PMIX_UINT32);
    attach("system primary", sys, 3, NULL);
    PMIX_INFO_DESTRUCT(&sys[0]);
    PMIX_INFO_DESTRUCT(&sys[1]);
    PMIX_INFO_DESTRUCT(&sys[2]);
    servers("after system primary");
    query("through system");

    /* drop the primary */
    printf("disconnect primary: rc=%d\n", PMIx_tool_disconnect(&sb));
    servers("after disconnect primary");
    query("without a primary");
    printf("set A after: set_server rc=%d\n", PMIx_tool_set_server(&sa, NULL, 0));
    servers("after set A again");
    query("through A at last");

    /* B by its rendezvous file, through the older name */
    PMIX_INFO_LOAD(&info[0], PMIX_TOOL_ATTACHMENT_FILE, argv[3], PMIX_STRING);
    rc = PMIx_tool_connect_to_server(&me, info, 1);
    PMIX_INFO_DESTRUCT(&info[0]);
    printf("connect_to_server file B: rc=%d me=%s\n", rc, proc_str(&me));
    servers("after file B");

    /* a pid with no server, tried once */
    pid_t nobody = getpid();
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_PIDINFO, &nobody, PMIX_PID);
    PMIX_INFO_LOAD(&info[1], PMIX_CONNECT_MAX_RETRIES, &retries, PMIX_UINT32);
    attach("pid nobody", info, 2, NULL);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    servers("after pid nobody");

    /* disconnect everything, then finalize */
    printf("disconnect A: rc=%d\n", PMIx_tool_disconnect(&sa));
    printf("disconnect B: rc=%d\n", PMIx_tool_disconnect(&sb));
    servers("after disconnect all");
    query("with none");

    /* A by its job's namespace (what A's query named) */
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_NSPACE, job_a, PMIX_STRING);
    attach("nspace of A's job", info, 1, NULL);
    PMIX_INFO_DESTRUCT(&info[0]);
    servers("after nspace of A's job");

    /* B once more, then again: a server we are attached to already is
     * not attached twice, and the first attached after all were dropped
     * is the primary (libpmix 4.2.2 makes a second connection, names no
     * primary, and then hangs in a query, or in PMIx_tool_finalize when
     * one is named; its finalize answers PMIX_ERR_UNREACH:
     * spec-notes/divergences.md) */
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_PIDINFO, &b, PMIX_PID);
    attach("pid B once more", info, 1, NULL);
    attach("pid B again", info, 1, NULL);
    PMIX_INFO_DESTRUCT(&info[0]);
    servers("after pid B again");

    /* B by its URI (its rendezvous file's first line): attached already;
     * then a pid with no server, tried once (libpmix 4.2.2 keeps the URI
     * of an attach for every later one, and attaches to B again) */
    char uri[512] = "";
    FILE *f = fopen(argv[3], "r");
    if (NULL != f) {
        if (NULL != fgets(uri, sizeof uri, f)) uri[strcspn(uri, "\n")] = '\0';
        fclose(f);
    }
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_URI, uri, PMIX_STRING);
    attach("uri B", info, 1, NULL);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_PIDINFO, &nobody, PMIX_PID);
    PMIX_INFO_LOAD(&info[1], PMIX_CONNECT_MAX_RETRIES, &retries, PMIX_UINT32);
    attach("pid nobody after uri", info, 2, NULL);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    rc = PMIx_tool_finalize();
    printf("tool_finalize: rc=%d initialized=%d\n", rc, PMIx_Initialized());
    servers("after finalize");
    return 0;
}
