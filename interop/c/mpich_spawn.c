/* pmix-wire: MPI_Comm_spawn under `pmixw run --mpi pmi1` (pmixw/tests/live_mpich.rs).
 * Written for pmix-wire. The parents spawn 2 children of this same
 * program; each side checks the other's size over the intercommunicator
 * and a value crosses it; one line per process. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm parent, inter;
    int rank, bad = 0, remote = 0, value = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_get_parent(&parent);
    if (parent == MPI_COMM_NULL) {
        int errs[2];
        MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
        MPI_Comm_remote_size(inter, &remote);
        bad |= remote != 2;
        value = 1234;
        if (rank == 0) {
            MPI_Send(&value, 1, MPI_INT, 0, 3, inter);
            MPI_Recv(&value, 1, MPI_INT, 1, 4, inter, MPI_STATUS_IGNORE);
            bad |= value != 1235;
        }
        printf("spawn parent %d: remote %d: %s\n", rank, remote, bad ? "WRONG" : "ok");
        MPI_Comm_disconnect(&inter);
    } else {
        MPI_Comm_remote_size(parent, &remote);
        if (rank == 0) {
            MPI_Recv(&value, 1, MPI_INT, 0, 3, parent, MPI_STATUS_IGNORE);
            bad |= value != 1234;
            value++;
            MPI_Send(&value, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
        } else {
            MPI_Recv(&value, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&value, 1, MPI_INT, 0, 4, parent);
        }
        printf("spawn child %d: remote %d: %s\n", rank, remote, bad ? "WRONG" : "ok");
        MPI_Comm_disconnect(&parent);
    }
    MPI_Finalize();
    return bad;
}
