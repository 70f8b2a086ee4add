/* pmix-wire server tests: an Open MPI 4.1 program (built with mpicc; it
 * links libpmix 4.2.2) run under `pmixw run` (pmixw/tests/live_server_mpi.rs).
 * Written for pmix-wire. Checks point-to-point, collectives and MPI
 * wireup over our PMIx server; prints one line per rank and exits
 * non-zero on a wrong value. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* a ring of point-to-point messages */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, got = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, next, 7, &got, 1, MPI_INT, prev, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    bad |= got != prev;
    /* collectives */
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    bad |= sum != size * (size - 1) / 2;
    char word[32] = "";
    if (0 == rank) {
        strcpy(word, "broadcast");
    }
    MPI_Bcast(word, sizeof word, MPI_CHAR, 0, MPI_COMM_WORLD);
    bad |= 0 != strcmp(word, "broadcast");
    int all[64] = {0};
    if (size <= 64) {
        MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
        for (int i = 0; i < size; i++) {
            bad |= all[i] != i;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("mpi rank %d of %d: ring from %d, sum %d, bcast %s: %s\n", rank, size, got, sum, word,
           bad ? "WRONG" : "ok");
    MPI_Finalize();
    return bad;
}
