/* pmix-wire: an Open MPI 4.1 program (mpicc; it links libpmix 4.2.2) in
 * which rank 1 exits with status 4 after MPI_Init while the others wait
 * for a message from it that never comes (pmixw/tests/libpmix_server_semantics.rs).
 * The launcher must end the job with status 4 instead of hanging.
 * Written for pmix-wire. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, got = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("mpi rank %d up\n", rank);
    fflush(stdout);
    /* every rank has printed before rank 1 fails: the launcher ends the
     * others when it does, and a rank still between the first barrier and
     * its printf (seen at load 80) would lose its line */
    MPI_Barrier(MPI_COMM_WORLD);
    if (1 == rank) {
        exit(4);
    }
    MPI_Recv(&got, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
