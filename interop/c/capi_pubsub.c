/* pmix-capi: publish, lookup and unpublish through the host's upcalls
 * (capi/tests/libpmix_capi_server.rs, under interop/c/capi_server.c).
 * Written for pmix-wire. Two ranks:
 *   rank 0 publishes five values of five types, then one of them again;
 *   rank 1 looks all five up with PMIX_WAIT (before or after they are
 *   published: the wait covers both), printing each one's publisher,
 *   type and value, then a key nobody published (no wait);
 *   a fence; rank 0 unpublishes one key; a fence; rank 1 looks up the
 *   withdrawn key and one still published.
 * Each rank first puts and commits one key (the host asks for rank 0's
 * data at the end). Every line names the status by its string: the same
 * on every library. */
#include <pmix.h>
#include <stdio.h>
#include <string.h>

#define NKEYS 5
static const char *keys[NKEYS] = {"ps-str", "ps-u32", "ps-i64", "ps-dbl", "ps-bytes"};

static void show(pmix_rank_t me, const pmix_pdata_t *d) {
    char v[96] = "";
    switch (d->value.type) {
    case PMIX_STRING: snprintf(v, sizeof v, "%s", d->value.data.string); break;
    case PMIX_UINT32: snprintf(v, sizeof v, "%u", d->value.data.uint32); break;
    case PMIX_INT64: snprintf(v, sizeof v, "%lld", (long long) d->value.data.int64); break;
    case PMIX_DOUBLE: snprintf(v, sizeof v, "%.3f", d->value.data.dval); break;
    case PMIX_BYTE_OBJECT:
        for (size_t i = 0; i < d->value.data.bo.size && i < 16; i++)
            snprintf(v + strlen(v), sizeof v - strlen(v), "%02x", (unsigned char) d->value.data.bo.bytes[i]);
        break;
    default: snprintf(v, sizeof v, "?"); break;
    }
    printf("rank %u: found %s by rank %u type %s value %s\n", me, d->key, d->proc.rank,
           PMIx_Data_type_string(d->value.type), v);
}

static void look(pmix_rank_t me, const char *key) {
    pmix_pdata_t pd;
    PMIX_PDATA_CONSTRUCT(&pd);
    PMIX_LOAD_KEY(pd.key, key);
    pmix_status_t rc = PMIx_Lookup(&pd, 1, NULL, 0);
    printf("rank %u: lookup %s %s\n", me, key, PMIx_Error_string(rc));
    if (rc == PMIX_SUCCESS) show(me, &pd);
    PMIX_PDATA_DESTRUCT(&pd);
}

int main(void) {
    pmix_proc_t me;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 10;
    /* some committed data: the host's dmodex_request of rank 0 at the end
     * is answered at once rather than waited for */
    pmix_value_t v = {.type = PMIX_UINT32, .data.uint32 = me.rank};
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, "ps-rank", &v);
    if (rc == PMIX_SUCCESS) rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) printf("rank %u: put/commit %s\n", me.rank, PMIx_Error_string(rc));
    if (me.rank == 0) {
        pmix_info_t info[NKEYS];
        uint32_t u = 4242;
        int64_t i = -1099511627776LL;
        double dv = 2.5;
        pmix_byte_object_t bo = {.bytes = "\x00\x01\xfe", .size = 3};
        PMIX_INFO_LOAD(&info[0], keys[0], "tcp://10.0.0.1:5000", PMIX_STRING);
        PMIX_INFO_LOAD(&info[1], keys[1], &u, PMIX_UINT32);
        PMIX_INFO_LOAD(&info[2], keys[2], &i, PMIX_INT64);
        PMIX_INFO_LOAD(&info[3], keys[3], &dv, PMIX_DOUBLE);
        PMIX_INFO_LOAD(&info[4], keys[4], &bo, PMIX_BYTE_OBJECT);
        rc = PMIx_Publish(info, NKEYS);
        printf("rank 0: publish %s\n", PMIx_Error_string(rc));
        rc = PMIx_Publish(info, 1);
        printf("rank 0: publish ps-str again %s\n", PMIx_Error_string(rc));
        for (int k = 0; k < NKEYS; k++) PMIX_INFO_DESTRUCT(&info[k]);
    } else if (me.rank == 1) {
        pmix_pdata_t pd[NKEYS];
        for (int k = 0; k < NKEYS; k++) {
            PMIX_PDATA_CONSTRUCT(&pd[k]);
            PMIX_LOAD_KEY(pd[k].key, keys[k]);
        }
        pmix_info_t w;
        int all = 0;
        PMIX_INFO_LOAD(&w, PMIX_WAIT, &all, PMIX_INT);
        rc = PMIx_Lookup(pd, NKEYS, &w, 1);
        printf("rank 1: lookup waiting %s\n", PMIx_Error_string(rc));
        if (rc == PMIX_SUCCESS)
            for (int k = 0; k < NKEYS; k++) show(1, &pd[k]);
        for (int k = 0; k < NKEYS; k++) PMIX_PDATA_DESTRUCT(&pd[k]);
        PMIX_INFO_DESTRUCT(&w);
        look(1, "ps-none");
    }
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    if (rc != PMIX_SUCCESS) printf("rank %u: fence %s\n", me.rank, PMIx_Error_string(rc));
    if (me.rank == 0) {
        char *gone[] = {"ps-str", NULL};
        rc = PMIx_Unpublish(gone, NULL, 0);
        printf("rank 0: unpublish ps-str %s\n", PMIx_Error_string(rc));
    }
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    if (rc != PMIX_SUCCESS) printf("rank %u: fence %s\n", me.rank, PMIx_Error_string(rc));
    if (me.rank == 1) {
        look(1, "ps-str");
        look(1, "ps-u32");
    }
    PMIx_Finalize(NULL, 0);
    return 0;
}
