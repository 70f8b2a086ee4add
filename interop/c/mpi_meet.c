/* pmix-wire launcher tests: two MPI jobs that meet (issue #36 item 7).
 * Written for pmix-wire. One rank per job; argv[1] is the role:
 *   server  MPI_Open_port, MPI_Publish_name("pmixw-meet"), MPI_Comm_accept,
 *           receives an int, sends it back plus one, unpublishes, prints
 *           "server got N"
 *   client  MPI_Lookup_name("pmixw-meet") until it is found (at most 20 s),
 *           MPI_Comm_connect to the port name, sends 41, prints
 *           "client got N"
 * The two jobs meet only when one PMIx server serves both (a DVM).
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    char port[MPI_MAX_PORT_NAME];
    MPI_Comm other;
    int v = 0;
    if (argc > 1 && 0 == strcmp(argv[1], "server")) {
        MPI_Open_port(MPI_INFO_NULL, port);
        int rc = MPI_Publish_name("pmixw-meet", MPI_INFO_NULL, port);
        printf("published %d\n", rc); fflush(stdout);
        MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &other);
        MPI_Recv(&v, 1, MPI_INT, 0, 0, other, MPI_STATUS_IGNORE);
        v += 1;
        MPI_Send(&v, 1, MPI_INT, 0, 0, other);
        MPI_Unpublish_name("pmixw-meet", MPI_INFO_NULL, port);
        MPI_Comm_disconnect(&other);
        MPI_Close_port(port);
        printf("server got %d\n", v - 1);
    } else {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = 1;
        for (int i = 0; i < 200 && MPI_SUCCESS != rc; i++) {
            rc = MPI_Lookup_name("pmixw-meet", MPI_INFO_NULL, port);
            if (MPI_SUCCESS != rc) usleep(100000);
        }
        printf("lookup %d\n", rc); fflush(stdout);
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &other);
        v = 41;
        MPI_Send(&v, 1, MPI_INT, 0, 0, other);
        MPI_Recv(&v, 1, MPI_INT, 0, 0, other, MPI_STATUS_IGNORE);
        MPI_Comm_disconnect(&other);
        printf("client got %d\n", v);
    }
    MPI_Finalize();
    return 0;
}
