/* pmix-capi's program for the client calls that were stubs
 * (capi/tests/libpmix_capi_stubs.rs as a singleton,
 * capi/tests/live_capi_client.rs under `pmixw run -n 1`): the credential
 * calls, the fabric calls and PMIx_Register_attributes, each blocking and
 * non-blocking form, with NULL arguments and with real ones. Run once on
 * libpmix 4.2.2 and once on pmix-capi's libpmix.so.2, it must print the
 * same lines. Public API only; one line per call: what it returned, and
 * for an accepted non-blocking call what its callback got. Left out: the
 * arguments on which libpmix 4.2.2 crashes (a NULL credential or fabric
 * where it writes or reads one, a NULL function name, the non-blocking
 * fabric calls before PMIx_Init). PMIx_Register_attributes is called as
 * libpmix 4.2.2's header declares it (a function name and a
 * NULL-terminated list of attribute names), and as the standard v4 text
 * does (with pmix_regattr_t's and a count): pmix-capi reads only the
 * name, which both place first. Written for pmix-wire. */
#include <pmix.h>
#include <pmix_server.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "waits.h"

static size_t w_cred_len, w_ninfo;

static void cred_cb(pmix_status_t st, pmix_byte_object_t *cred, pmix_info_t info[], size_t ninfo, void *cbdata) {
    (void) info;
    (void) cbdata;
    w_status = st;
    w_cred_len = cred ? cred->size : 0;
    w_ninfo = ninfo;
    w_done = 1;
}

static void valid_cb(pmix_status_t st, pmix_info_t info[], size_t ninfo, void *cbdata) {
    (void) info;
    (void) cbdata;
    w_status = st;
    w_ninfo = ninfo;
    w_done = 1;
}

/* A non-blocking call's line: its return and, when accepted, its callback's status. */
static void nb_line(const char *what, pmix_status_t rc) {
    if (PMIX_SUCCESS == rc) {
        pmix_status_t cb = w_wait(rc, 20000);
        printf("%s: ret=0 cb=%d\n", what, cb);
    } else {
        printf("%s: ret=%d\n", what, rc);
    }
}

static void calls(const char *when) {
    char what[128];
    pmix_status_t rc;

    /* credentials */
    pmix_byte_object_t cred;
    PMIX_BYTE_OBJECT_CONSTRUCT(&cred);
    rc = PMIx_Get_credential(NULL, 0, &cred);
    printf("%s get_credential: ret=%d len=%zu\n", when, rc, cred.size);

    w_arm();
    w_cred_len = 0;
    w_ninfo = 0;
    rc = PMIx_Get_credential_nb(NULL, 0, cred_cb, NULL);
    snprintf(what, sizeof what, "%s get_credential_nb", when);
    nb_line(what, rc);
    if (PMIX_SUCCESS == rc) {
        printf("%s get_credential_nb: len=%zu ninfo=%zu\n", when, w_cred_len, w_ninfo);
    }
    rc = PMIx_Get_credential_nb(NULL, 0, NULL, NULL);
    printf("%s get_credential_nb(no cb): ret=%d\n", when, rc);

    pmix_info_t *results = NULL;
    size_t nresults = 0;
    rc = PMIx_Validate_credential(&cred, NULL, 0, &results, &nresults);
    printf("%s validate_credential(own): ret=%d nresults=%zu\n", when, rc, nresults);
    if (results) {
        PMIX_INFO_FREE(results, nresults);
    }
    pmix_byte_object_t bogus;
    bogus.bytes = (char *) "not a credential";
    bogus.size = strlen(bogus.bytes);
    results = NULL;
    nresults = 0;
    rc = PMIx_Validate_credential(&bogus, NULL, 0, &results, &nresults);
    printf("%s validate_credential(bogus): ret=%d nresults=%zu\n", when, rc, nresults);
    if (results) {
        PMIX_INFO_FREE(results, nresults);
    }

    w_arm();
    w_ninfo = 0;
    rc = PMIx_Validate_credential_nb(&cred, NULL, 0, valid_cb, NULL);
    snprintf(what, sizeof what, "%s validate_credential_nb(own)", when);
    nb_line(what, rc);
    w_arm();
    rc = PMIx_Validate_credential_nb(&bogus, NULL, 0, valid_cb, NULL);
    snprintf(what, sizeof what, "%s validate_credential_nb(bogus)", when);
    nb_line(what, rc);
    rc = PMIx_Validate_credential_nb(&cred, NULL, 0, NULL, NULL);
    printf("%s validate_credential_nb(no cb): ret=%d\n", when, rc);
    PMIX_BYTE_OBJECT_DESTRUCT(&cred);

    /* fabrics */
    pmix_fabric_t fab;
    memset(&fab, 0, sizeof fab);
    fab.name = (char *) "capi-fabric";
    rc = PMIx_Fabric_register(&fab, NULL, 0);
    printf("%s fabric_register: ret=%d ninfo=%zu\n", when, rc, fab.ninfo);
    w_arm();
    rc = PMIx_Fabric_register_nb(&fab, NULL, 0, w_op_cb, NULL);
    snprintf(what, sizeof what, "%s fabric_register_nb", when);
    nb_line(what, rc);
    rc = PMIx_Fabric_update(&fab);
    printf("%s fabric_update: ret=%d\n", when, rc);
    w_arm();
    rc = PMIx_Fabric_update_nb(&fab, w_op_cb, NULL);
    snprintf(what, sizeof what, "%s fabric_update_nb", when);
    nb_line(what, rc);
    rc = PMIx_Fabric_deregister(&fab);
    printf("%s fabric_deregister: ret=%d\n", when, rc);
    w_arm();
    rc = PMIx_Fabric_deregister_nb(&fab, w_op_cb, NULL);
    snprintf(what, sizeof what, "%s fabric_deregister_nb", when);
    nb_line(what, rc);

    /* attributes */
    char *names[] = {"PMIX_TIMEOUT", NULL};
    rc = PMIx_Register_attributes((char *) "capi_fn", names);
    printf("%s register_attributes: ret=%d\n", when, rc);
    rc = PMIx_Register_attributes((char *) "capi_fn", names);
    printf("%s register_attributes(again): ret=%d\n", when, rc);
    rc = PMIx_Register_attributes((char *) "capi_other", NULL);
    printf("%s register_attributes(other, none): ret=%d\n", when, rc);
}

int main(void) {
    pmix_proc_t me;
    setvbuf(stdout, NULL, _IOLBF, 0);
    char *names[] = {"PMIX_TIMEOUT", NULL};
    pmix_fabric_t fab;
    memset(&fab, 0, sizeof fab);
    printf("pre-init register_attributes: ret=%d\n", PMIx_Register_attributes((char *) "capi_fn", names));
    printf("pre-init fabric_register: ret=%d\n", PMIx_Fabric_register(&fab, NULL, 0));
    printf("pre-init fabric_update: ret=%d\n", PMIx_Fabric_update(&fab));
    pmix_byte_object_t cred;
    PMIX_BYTE_OBJECT_CONSTRUCT(&cred);
    printf("pre-init get_credential: ret=%d\n", PMIx_Get_credential(NULL, 0, &cred));
    printf("pre-init validate_credential: ret=%d\n", PMIx_Validate_credential(&cred, NULL, 0, NULL, NULL));
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    /* a singleton's init answers PMIX_ERR_UNREACH and still initializes */
    printf("init: ret=%d rank=%u\n", rc, me.rank);
    calls("rank");
    rc = PMIx_Finalize(NULL, 0);
    printf("finalize: ret=%d\n", rc);
    return 0;
}
