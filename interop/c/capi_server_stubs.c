/* pmix-capi's program for the server calls that were stubs
 * (capi/tests/libpmix_capi_stubs.rs): a host with an empty module calls
 * PMIx_server_collect_inventory, PMIx_server_deliver_inventory,
 * PMIx_server_define_process_set, PMIx_server_delete_process_set,
 * PMIx_server_register_resources and PMIx_server_deregister_resources
 * before PMIx_server_init, after it (with and without a callback) and
 * after PMIx_server_finalize, and the client-side calls a host may make
 * (credentials, fabric, PMIx_Register_attributes). Built once with
 * libpmix 4.2.2 and once with pmix-capi, it must print the same lines:
 * what each call returned and what its callback got. Written for
 * pmix-wire.
 *
 * usage: capi_server_stubs <tmpdir> */
#include <pmix.h>
#include <pmix_server.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "waits.h"

static size_t w_ninfo;

static void inv_cb(pmix_status_t st, pmix_info_t *info, size_t ninfo, void *cbdata,
                   pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    (void) info;
    (void) cbdata;
    w_status = st;
    w_ninfo = ninfo;
    if (release_fn) {
        release_fn(release_cbdata);
    }
    w_done = 1;
}

static void nb_line(const char *when, const char *what, pmix_status_t rc) {
    if (PMIX_SUCCESS == rc) {
        pmix_status_t cb = w_wait(rc, 20000);
        printf("%s %s: ret=0 cb=%d\n", when, what, cb);
    } else {
        printf("%s %s: ret=%d\n", when, what, rc);
    }
}

static void calls(const char *when) {
    pmix_status_t rc;
    pmix_info_t res[1];
    PMIX_INFO_LOAD(&res[0], "capi.resource", "fabric-a", PMIX_STRING);

    w_arm();
    w_ninfo = 0;
    rc = PMIx_server_collect_inventory(NULL, 0, inv_cb, NULL);
    nb_line(when, "collect_inventory", rc);
    if (PMIX_SUCCESS == rc) {
        printf("%s collect_inventory: ninfo=%zu\n", when, w_ninfo);
    }
    w_arm();
    rc = PMIx_server_deliver_inventory(res, 1, NULL, 0, w_op_cb, NULL);
    nb_line(when, "deliver_inventory", rc);
    rc = PMIx_server_deliver_inventory(res, 1, NULL, 0, NULL, NULL);
    printf("%s deliver_inventory(blocking): ret=%d\n", when, rc);

    pmix_proc_t members[2];
    PMIX_LOAD_PROCID(&members[0], "capi-ns", 0);
    PMIX_LOAD_PROCID(&members[1], "capi-ns", 1);
    rc = PMIx_server_define_process_set(members, 2, "capi-pset");
    printf("%s define_process_set: ret=%d\n", when, rc);
    rc = PMIx_server_delete_process_set((char *) "capi-pset");
    printf("%s delete_process_set: ret=%d\n", when, rc);
    rc = PMIx_server_delete_process_set((char *) "capi-never");
    printf("%s delete_process_set(unknown): ret=%d\n", when, rc);

    w_arm();
    rc = PMIx_server_register_resources(res, 1, w_op_cb, NULL);
    nb_line(when, "register_resources", rc);
    rc = PMIx_server_register_resources(res, 1, NULL, NULL);
    printf("%s register_resources(blocking): ret=%d\n", when, rc);
    w_arm();
    rc = PMIx_server_deregister_resources(res, 1, w_op_cb, NULL);
    nb_line(when, "deregister_resources", rc);
    rc = PMIx_server_deregister_resources(res, 1, NULL, NULL);
    printf("%s deregister_resources(blocking): ret=%d\n", when, rc);
    PMIX_INFO_DESTRUCT(&res[0]);
}

/* The client-side calls, made by the host. */
static void client_calls(const char *when) {
    pmix_status_t rc;
    pmix_byte_object_t cred;
    PMIX_BYTE_OBJECT_CONSTRUCT(&cred);
    rc = PMIx_Get_credential(NULL, 0, &cred);
    printf("%s get_credential: ret=%d len=%zu\n", when, rc, cred.size);
    pmix_byte_object_t bogus;
    bogus.bytes = (char *) "not a credential";
    bogus.size = strlen(bogus.bytes);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    rc = PMIx_Validate_credential(&bogus, NULL, 0, &results, &nresults);
    printf("%s validate_credential(bogus): ret=%d nresults=%zu\n", when, rc, nresults);
    PMIX_BYTE_OBJECT_DESTRUCT(&cred);
    pmix_fabric_t fab;
    memset(&fab, 0, sizeof fab);
    rc = PMIx_Fabric_register(&fab, NULL, 0);
    printf("%s fabric_register: ret=%d ninfo=%zu\n", when, rc, fab.ninfo);
    rc = PMIx_Fabric_update(&fab);
    printf("%s fabric_update: ret=%d\n", when, rc);
    rc = PMIx_Fabric_deregister(&fab);
    printf("%s fabric_deregister: ret=%d\n", when, rc);
    char *names[] = {"PMIX_TIMEOUT", NULL};
    rc = PMIx_Register_attributes((char *) "capi_host_fn", names);
    printf("%s register_attributes: ret=%d\n", when, rc);
    rc = PMIx_Register_attributes((char *) "capi_host_fn", names);
    printf("%s register_attributes(again): ret=%d\n", when, rc);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: capi_server_stubs <tmpdir>\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    calls("pre-init");
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    pmix_info_t sinfo[2];
    PMIX_INFO_LOAD(&sinfo[0], PMIX_SERVER_TMPDIR, argv[1], PMIX_STRING);
    PMIX_INFO_LOAD(&sinfo[1], PMIX_SYSTEM_TMPDIR, argv[1], PMIX_STRING);
    pmix_status_t rc = PMIx_server_init(&module, sinfo, 2);
    printf("server_init: ret=%d\n", rc);
    if (rc != PMIX_SUCCESS) {
        return 3;
    }
    calls("server");
    client_calls("server");
    rc = PMIx_server_finalize();
    printf("server_finalize: ret=%d\n", rc);
    return 0;
}
