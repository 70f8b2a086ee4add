/* pmix-wire: a put/get/fence program speaking the simple PMI wire itself
 * over PMI_FD (pmixw/tests/live_mpich.rs), as MPICH's client does: PMI-1 lines
 * (`pmi_kvs 1`) or PMI-2 length-prefixed messages (`pmi_kvs 2`). Written
 * for pmix-wire. Each rank puts a key, enters the barrier (fence), reads
 * every rank's key and prints one line; non-zero exit on a wrong value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fd;

static void send_all(const char *s, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w <= 0) exit(20);
        s += w;
        n -= (size_t)w;
    }
}

/* one v1 line (without its newline) */
static void read_line(char *buf, size_t max) {
    size_t i = 0;
    while (i + 1 < max) {
        if (read(fd, buf + i, 1) != 1) exit(21);
        if (buf[i] == '\n') break;
        i++;
    }
    buf[i] = 0;
}

/* one v2 message: its body */
static void read_v2(char *buf, size_t max) {
    char len[7] = {0};
    for (int i = 0; i < 6; i++)
        if (read(fd, len + i, 1) != 1) exit(22);
    size_t n = (size_t)atoi(len);
    if (n + 1 > max) exit(23);
    for (size_t i = 0; i < n; i++)
        if (read(fd, buf + i, 1) != 1) exit(24);
    buf[n] = 0;
}

static void ask(int v, const char *q, char *ans, size_t max) {
    if (v == 1) {
        send_all(q, strlen(q));
        read_line(ans, max);
    } else {
        char b[2048];
        snprintf(b, sizeof b, "%-6zu%s", strlen(q), q);
        send_all(b, strlen(b));
        read_v2(ans, max);
    }
}

/* the value of key= in an answer (up to ' ' or ';') */
static const char *val(const char *ans, const char *key, char *out, size_t max) {
    char pat[64];
    snprintf(pat, sizeof pat, "%s=", key);
    const char *p = strstr(ans, pat);
    if (!p) return NULL;
    p += strlen(pat);
    size_t i = 0;
    while (*p && *p != ';' && *p != ' ' && i + 1 < max) {
        if (*p == '\\' && p[1]) p++;
        out[i++] = *p++;
    }
    out[i] = 0;
    return out;
}

int main(int argc, char **argv) {
    int v = argc > 1 ? atoi(argv[1]) : 1;
    const char *s = getenv("PMI_FD");
    if (!s) return 10;
    fd = atoi(s);
    int rank = atoi(getenv("PMI_RANK")), size = atoi(getenv("PMI_SIZE"));
    char ans[4096], q[2048], kvs[300], got[300], want[300];
    int bad = 0;
    snprintf(q, sizeof q, "cmd=init pmi_version=%d pmi_subversion=%d\n", v, v == 1 ? 1 : 0);
    send_all(q, strlen(q));
    read_line(ans, sizeof ans);
    bad |= strstr(ans, "rc=0") == NULL;
    if (v == 1) {
        ask(1, "cmd=get_my_kvsname\n", ans, sizeof ans);
        val(ans, "kvsname", kvs, sizeof kvs);
        snprintf(q, sizeof q, "cmd=put kvsname=%s key=k-%d value=v%d-of-%d\n", kvs, rank, rank, size);
        ask(1, q, ans, sizeof ans);
        bad |= strstr(ans, "rc=0") == NULL;
        ask(1, "cmd=barrier_in\n", ans, sizeof ans);
        bad |= strstr(ans, "cmd=barrier_out") == NULL;
    } else {
        snprintf(q, sizeof q, "cmd=fullinit;pmirank=%d;threaded=FALSE;", rank);
        ask(2, q, ans, sizeof ans);
        bad |= strstr(ans, "rc=0;") == NULL;
        ask(2, "cmd=job-getid;", ans, sizeof ans);
        val(ans, "jobid", kvs, sizeof kvs);
        snprintf(q, sizeof q, "cmd=kvs-put;key=k-%d;value=v%d-of-%d;", rank, rank, size);
        ask(2, q, ans, sizeof ans);
        bad |= strstr(ans, "rc=0;") == NULL;
        ask(2, "cmd=kvs-fence;", ans, sizeof ans);
        bad |= strstr(ans, "cmd=kvs-fence-response;rc=0;") == NULL;
    }
    for (int r = 0; r < size; r++) {
        if (v == 1)
            snprintf(q, sizeof q, "cmd=get kvsname=%s key=k-%d\n", kvs, r);
        else
            snprintf(q, sizeof q, "cmd=kvs-get;jobid=%s;srcid=-1;key=k-%d;", kvs, r);
        ask(v, q, ans, sizeof ans);
        snprintf(want, sizeof want, "v%d-of-%d", r, size);
        bad |= !val(ans, "value", got, sizeof got) || strcmp(got, want) != 0;
    }
    ask(v, v == 1 ? "cmd=finalize\n" : "cmd=finalize;", ans, sizeof ans);
    bad |= strstr(ans, "finalize") == NULL;
    printf("pmi%d rank %d of %d: kvs %s\n", v, rank, size, bad ? "WRONG" : "ok");
    return bad;
}
