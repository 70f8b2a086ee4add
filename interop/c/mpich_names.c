/* pmix-wire: MPI name publishing under `pmixw run --mpi pmi1`
 * (pmixw/tests/live_mpich.rs). Written for pmix-wire. Rank 0 opens a port and
 * publishes it; the other ranks look it up once a barrier says it is
 * there; rank 0 then unpublishes it and a second lookup must fail. One
 * line per rank; non-zero exit on a wrong answer. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    char port[MPI_MAX_PORT_NAME] = "", got[MPI_MAX_PORT_NAME] = "";
    if (rank == 0) {
        MPI_Open_port(MPI_INFO_NULL, port);
        bad |= MPI_Publish_name("pmixw-svc", MPI_INFO_NULL, port) != MPI_SUCCESS;
    }
    MPI_Bcast(port, sizeof port, MPI_CHAR, 0, MPI_COMM_WORLD);
    bad |= MPI_Lookup_name("pmixw-svc", MPI_INFO_NULL, got) != MPI_SUCCESS;
    bad |= strcmp(port, got) != 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        bad |= MPI_Unpublish_name("pmixw-svc", MPI_INFO_NULL, port) != MPI_SUCCESS;
        MPI_Close_port(port);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    bad |= MPI_Lookup_name("pmixw-svc", MPI_INFO_NULL, got) == MPI_SUCCESS;
    printf("names rank %d: %s\n", rank, bad ? "WRONG" : "ok");
    MPI_Finalize();
    return bad;
}
