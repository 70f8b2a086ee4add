/* pmix-wire server tests: MPI's dynamic processes over a launcher's PMIx
 * server (issue #24 item 3), built with an MPI compiler wrapper (Open MPI
 * 5.0.11 or 4.1.4). Written for pmix-wire. Each process prints
 * "ok <check> <value>" or "fail <check> <why>" and exits 1 on a failure.
 *
 *   mpi_dyn spawn      rank 0 of the world spawns 2 ranks of "mpi_dyn
 *                      child"; parent and children exchange over the
 *                      intercommunicator, merge it, sum over the merged
 *                      communicator and disconnect
 *   mpi_dyn multiple   the same with MPI_Comm_spawn_multiple (1 + 2 ranks)
 *   mpi_dyn loop       (one rank) 20 spawns of 1 rank in turn, each
 *                      exchanged with and disconnected
 *   mpi_dyn accept     the world's halves meet by MPI_Open_port,
 *                      MPI_Publish_name / MPI_Lookup_name and
 *                      MPI_Comm_accept / MPI_Comm_connect
 *   mpi_dyn join       ranks 0 and 1 meet by MPI_Comm_join over a socket
 *   mpi_dyn intercomm  the world's halves form an intercommunicator with
 *                      MPI_Intercomm_create and merge it
 */
#include <arpa/inet.h>
#include <mpi.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int failures = 0, wrank = 0;

static void check(const char *what, int good, const char *fmt, int v) {
    char buf[256];
    snprintf(buf, sizeof buf, fmt, v);
    printf("[%d] %s %s %s\n", wrank, good ? "ok" : "fail", what, buf);
    fflush(stdout);
    if (!good) {
        failures++;
    }
}

/* Both sides of an intercommunicator: the local leader sends its world
 * size to the remote leader, then the merged communicator sums ones. */
static void exercise(MPI_Comm inter, int high, const char *tag) {
    int lrank, lsize, rsize, theirs = -1, mine;
    char what[64];
    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    mine = lsize;
    if (0 == lrank) {
        MPI_Sendrecv(&mine, 1, MPI_INT, 0, 7, &theirs, 1, MPI_INT, 0, 7, inter,
                     MPI_STATUS_IGNORE);
    }
    MPI_Bcast(&theirs, 1, MPI_INT, 0, MPI_COMM_WORLD == inter ? MPI_COMM_SELF : MPI_COMM_SELF);
    MPI_Comm merged;
    MPI_Intercomm_merge(inter, high, &merged);
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged);
    snprintf(what, sizeof what, "%s_merged_sum", tag);
    check(what, sum == lsize + rsize, "%d", sum);
    if (0 == lrank) {
        snprintf(what, sizeof what, "%s_remote_size", tag);
        check(what, theirs == rsize, "%d", theirs);
    }
    MPI_Comm_free(&merged);
}

static MPI_Comm spawn_n(char *self, int n) {
    MPI_Comm inter;
    char *args[] = {"child", NULL};
    int errs[8];
    MPI_Comm_spawn(self, args, n, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
    return inter;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    const char *mode = argc > 1 ? argv[1] : "";
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (0 == strcmp(mode, "child")) {
        check("child_has_parent", MPI_COMM_NULL != parent, "%d", wsize);
        if (MPI_COMM_NULL != parent) {
            exercise(parent, 1, "child");
            MPI_Comm_disconnect(&parent);
        }
    } else if (MPI_COMM_NULL != parent) {
        check("not_spawned", 0, "%d", wsize);
    } else if (0 == strcmp(mode, "spawn")) {
        MPI_Comm inter = spawn_n(argv[0], 2);
        exercise(inter, 0, "spawn");
        MPI_Comm_disconnect(&inter);
    } else if (0 == strcmp(mode, "multiple")) {
        char *cmds[2] = {argv[0], argv[0]};
        char *a[] = {"child", NULL};
        char **args[2] = {a, a};
        int n[2] = {1, 2};
        MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
        MPI_Comm inter;
        int errs[3];
        MPI_Comm_spawn_multiple(2, cmds, args, n, infos, 0, MPI_COMM_WORLD, &inter, errs);
        exercise(inter, 0, "multiple");
        MPI_Comm_disconnect(&inter);
    } else if (0 == strcmp(mode, "loop")) {
        int done = 0;
        for (int i = 0; i < 20; i++) {
            int before = failures;
            MPI_Comm inter = spawn_n(argv[0], 1);
            exercise(inter, 0, "loop");
            MPI_Comm_disconnect(&inter);
            if (failures != before) {
                break;
            }
            done++;
        }
        check("loop_spawns", done == 20, "%d of 20", done);
    } else if (0 == strcmp(mode, "accept") || 0 == strcmp(mode, "intercomm")) {
        int half = wrank % 2;
        MPI_Comm local, inter;
        MPI_Comm_split(MPI_COMM_WORLD, half, wrank, &local);
        if (0 == strcmp(mode, "intercomm")) {
            MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - half, 5, &inter);
            exercise(inter, half, "intercomm");
            MPI_Comm_free(&inter);
        } else {
            char port[MPI_MAX_PORT_NAME] = "";
            if (0 == half) {
                if (0 == wrank) {
                    MPI_Open_port(MPI_INFO_NULL, port);
                    MPI_Publish_name("pmixw-dyn", MPI_INFO_NULL, port);
                }
                MPI_Barrier(MPI_COMM_WORLD);
                MPI_Comm_accept(port, MPI_INFO_NULL, 0, local, &inter);
            } else {
                MPI_Barrier(MPI_COMM_WORLD);
                if (1 == wrank) {
                    int rc = MPI_Lookup_name("pmixw-dyn", MPI_INFO_NULL, port);
                    check("lookup_name", MPI_SUCCESS == rc && port[0], "%d", rc);
                }
                MPI_Comm_connect(port, MPI_INFO_NULL, 0, local, &inter);
            }
            exercise(inter, half, "accept");
            MPI_Comm_disconnect(&inter);
            MPI_Barrier(MPI_COMM_WORLD);
            if (0 == wrank) {
                MPI_Unpublish_name("pmixw-dyn", MPI_INFO_NULL, port);
                MPI_Close_port(port);
            }
        }
        MPI_Comm_free(&local);
    } else if (0 == strcmp(mode, "join")) {
        MPI_Comm inter = MPI_COMM_NULL;
        int port = 0;
        int fd = -1;
        if (0 == wrank) {
            int l = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in a = {0};
            socklen_t len = sizeof a;
            a.sin_family = AF_INET;
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            bind(l, (struct sockaddr *) &a, sizeof a);
            listen(l, 1);
            getsockname(l, (struct sockaddr *) &a, &len);
            port = ntohs(a.sin_port);
            MPI_Send(&port, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
            fd = accept(l, NULL, NULL);
            close(l);
        } else if (1 == wrank) {
            MPI_Recv(&port, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            fd = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in a = {0};
            a.sin_family = AF_INET;
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            a.sin_port = htons(port);
            if (connect(fd, (struct sockaddr *) &a, sizeof a)) {
                check("join_socket", 0, "%d", port);
            }
        }
        if (wrank < 2) {
            MPI_Comm_join(fd, &inter);
            check("join", MPI_COMM_NULL != inter, "%d", fd);
            if (MPI_COMM_NULL != inter) {
                int rsize = 0, v = wrank, theirs = -1;
                MPI_Comm_remote_size(inter, &rsize);
                MPI_Sendrecv(&v, 1, MPI_INT, 0, 9, &theirs, 1, MPI_INT, 0, 9, inter,
                             MPI_STATUS_IGNORE);
                check("join_exchange", rsize == 1 && theirs == 1 - wrank, "%d", theirs);
                MPI_Comm_disconnect(&inter);
            }
            close(fd);
        }
    } else {
        check("mode", 0, "%d", 0);
    }
    MPI_Finalize();
    if (!failures) {
        printf("[%d] done %s\n", wrank, mode);
    }
    return failures ? 1 : 0;
}
