/* pmix-capi's differential program: built once against libpmix 4.2.2 and
 * once against pmix-capi's libpmix.so.2 (capi/tests/libpmix_capi_diff.rs),
 * it must print the same with both. Public API only: packed bytes of
 * values of many types, their re-pack after an unpack, Data_print and
 * Data_copy text, the value and info helpers, the payload moves,
 * compression, the status of calls with bad arguments, and the string
 * of every status code, type and state.
 *
 * usage: capi_diff SECTION   (pack | helpers | errors N | strings) */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void hex(const char *label, const pmix_data_buffer_t *b) {
    printf("%s used=%zu ", label, b->bytes_used);
    for (size_t i = 0; i < b->bytes_used; i++) printf("%02x", (unsigned char)b->base_ptr[i]);
    printf("\n");
}

static void bytes(const char *label, const char *p, size_t n) {
    printf("%s n=%zu ", label, n);
    for (size_t i = 0; i < n; i++) printf("%02x", (unsigned char)p[i]);
    printf("\n");
}

static void print_one(const char *label, void *src, pmix_data_type_t t) {
    char *out = NULL;
    pmix_status_t rc = PMIx_Data_print(&out, "> ", src, t);
    printf("%s print rc=%d [%s]\n", label, rc, out ? out : "(null)");
    free(out);
}

/* pack n elements of t, print the bytes, unpack them into fresh storage,
 * re-pack that and say whether the bytes agree; print the first element
 * as unpacked and as copied */
static void roundtrip(const char *label, void *src, int32_t n, pmix_data_type_t t, size_t elem,
                      int printable) {
    pmix_data_buffer_t b;
    PMIX_DATA_BUFFER_CONSTRUCT(&b);
    pmix_status_t rc = PMIx_Data_pack(NULL, &b, src, n, t);
    printf("%s pack rc=%d\n", label, rc);
    if (rc != PMIX_SUCCESS) {
        PMIX_DATA_BUFFER_DESTRUCT(&b);
        return;
    }
    hex(label, &b);
    void *dst = calloc(n > 0 ? n : 1, elem);
    int32_t m = n;
    rc = PMIx_Data_unpack(NULL, &b, dst, &m, t);
    printf("%s unpack rc=%d m=%d\n", label, rc, m);
    if (rc == PMIX_SUCCESS && m > 0) {
        pmix_data_buffer_t b2;
        PMIX_DATA_BUFFER_CONSTRUCT(&b2);
        rc = PMIx_Data_pack(NULL, &b2, dst, m, t);
        printf("%s repack rc=%d same=%d\n", label, rc,
               b2.bytes_used == b.bytes_used && 0 == memcmp(b2.base_ptr, b.base_ptr, b.bytes_used));
        PMIX_DATA_BUFFER_DESTRUCT(&b2);
        if (printable) {
            void *first = dst;
            if (t == PMIX_STRING) first = *(char **)dst;
            print_one(label, first, t);
            void *cp = NULL;
            rc = PMIx_Data_copy(&cp, first, t);
            printf("%s copy rc=%d\n", label, rc);
            if (rc == PMIX_SUCCESS) print_one(label, cp, t);
        }
    }
    PMIX_DATA_BUFFER_DESTRUCT(&b);
}

#define RT(label, arr, t, pr) roundtrip(label, (void *)(arr), sizeof(arr) / sizeof((arr)[0]), t, sizeof((arr)[0]), pr)

static void pack_section(void) {
    bool bo[] = {true, false};
    RT("bool", bo, PMIX_BOOL, 1);
    uint8_t by[] = {0, 7, 255};
    RT("byte", by, PMIX_BYTE, 1);
    char *st[] = {"hello", "", "wörld"};
    RT("string", st, PMIX_STRING, 1);
    size_t sz[] = {0, 1, 300, (size_t)-1};
    RT("size", sz, PMIX_SIZE, 1);
    pid_t pi[] = {1, 4000000};
    RT("pid", pi, PMIX_PID, 1);
    int in[] = {0, -1, 1 << 30, -(1 << 30)};
    RT("int", in, PMIX_INT, 1);
    int8_t i8[] = {-128, 0, 127};
    RT("int8", i8, PMIX_INT8, 1);
    int16_t i16[] = {-32768, -1, 32767};
    RT("int16", i16, PMIX_INT16, 1);
    int32_t i32[] = {-2147483647 - 1, -64, 63, 2147483647};
    RT("int32", i32, PMIX_INT32, 1);
    int64_t i64[] = {INT64_MIN, -1, 0, INT64_MAX};
    RT("int64", i64, PMIX_INT64, 1);
    unsigned int ui[] = {0, 127, 128, 4294967295u};
    RT("uint", ui, PMIX_UINT, 1);
    uint16_t u16[] = {0, 65535};
    RT("uint16", u16, PMIX_UINT16, 1);
    uint32_t u32[] = {0, 1, 16384, 4294967295u};
    RT("uint32", u32, PMIX_UINT32, 1);
    uint64_t u64[] = {0, 1ull << 40, UINT64_MAX};
    RT("uint64", u64, PMIX_UINT64, 1);
    float fl[] = {0.5f, -3.25f, 1e10f};
    RT("float", fl, PMIX_FLOAT, 1);
    double db[] = {0.1, -2.5e-300, 12345.678};
    RT("double", db, PMIX_DOUBLE, 1);
    struct timeval tv[] = {{1, 2}, {1700000000, 999999}};
    RT("timeval", tv, PMIX_TIMEVAL, 1);
    time_t tm[] = {0, 1700000000};
    RT("time", tm, PMIX_TIME, 0);
    pmix_status_t ss[] = {0, -46, -1};
    RT("status", ss, PMIX_STATUS, 1);
    pmix_rank_t rk[] = {0, PMIX_RANK_WILDCARD, PMIX_RANK_UNDEF};
    RT("rank", rk, PMIX_PROC_RANK, 1);
    pmix_proc_t pr[2];
    PMIX_LOAD_PROCID(&pr[0], "job.a", 3);
    PMIX_LOAD_PROCID(&pr[1], "other", PMIX_RANK_WILDCARD);
    RT("proc", pr, PMIX_PROC, 1);
    pmix_byte_object_t bob[2] = {{"ab\0c", 4}, {NULL, 0}};
    RT("byte_object", bob, PMIX_BYTE_OBJECT, 1);
    pmix_persistence_t pe[] = {PMIX_PERSIST_INDEF, PMIX_PERSIST_SESSION};
    RT("persist", pe, PMIX_PERSIST, 1);
    pmix_scope_t sc[] = {PMIX_LOCAL, PMIX_GLOBAL};
    RT("scope", sc, PMIX_SCOPE, 1);
    pmix_data_range_t ra[] = {PMIX_RANGE_SESSION};
    RT("range", ra, PMIX_DATA_RANGE, 0);
    pmix_proc_state_t ps[] = {PMIX_PROC_STATE_RUNNING, PMIX_PROC_STATE_ABORTED};
    RT("proc_state", ps, PMIX_PROC_STATE, 1);
    pmix_job_state_t js[] = {PMIX_JOB_STATE_RUNNING};
    RT("job_state", js, PMIX_JOB_STATE, 0);
    pmix_link_state_t ls[] = {PMIX_LINK_UP};
    RT("link_state", ls, PMIX_LINK_STATE, 1);
    pmix_alloc_directive_t ad[] = {PMIX_ALLOC_EXTEND};
    RT("alloc", ad, PMIX_ALLOC_DIRECTIVE, 1);
    pmix_data_type_t dt[] = {PMIX_INFO, PMIX_UINT8};
    RT("data_type", dt, PMIX_DATA_TYPE, 0);

    pmix_info_t inf[4];
    PMIX_INFO_LOAD(&inf[0], "pmix.job.size", &u32[2], PMIX_UINT32);
    PMIX_INFO_LOAD(&inf[1], "my.key", "a string", PMIX_STRING);
    PMIX_INFO_LOAD(&inf[2], "my.proc", &pr[0], PMIX_PROC);
    PMIX_INFO_LOAD(&inf[3], "my.bool", &bo[0], PMIX_BOOL);
    PMIX_INFO_REQUIRED(&inf[3]);
    RT("info", inf, PMIX_INFO, 1);

    pmix_value_t va[3];
    PMIX_VALUE_LOAD(&va[0], "str", PMIX_STRING);
    PMIX_VALUE_LOAD(&va[1], &i64[1], PMIX_INT64);
    PMIX_VALUE_LOAD(&va[2], &bob[0], PMIX_BYTE_OBJECT);
    RT("value", va, PMIX_VALUE, 1);

    pmix_data_array_t da[3];
    da[0].type = PMIX_INT32; da[0].size = 4; da[0].array = i32;
    da[1].type = PMIX_STRING; da[1].size = 3; da[1].array = st;
    da[2].type = PMIX_INFO; da[2].size = 2; da[2].array = inf;
    RT("darray", da, PMIX_DATA_ARRAY, 1);
    pmix_value_t vda[1];
    vda[0].type = PMIX_DATA_ARRAY; vda[0].data.darray = &da[0];
    RT("value_darray", vda, PMIX_VALUE, 1);

    pmix_proc_info_t pinf[1];
    memset(pinf, 0, sizeof(pinf));
    PMIX_LOAD_PROCID(&pinf[0].proc, "job.b", 7);
    pinf[0].hostname = "node1"; pinf[0].executable_name = "/bin/true";
    pinf[0].pid = 1234; pinf[0].state = PMIX_PROC_STATE_RUNNING;
    RT("proc_info", pinf, PMIX_PROC_INFO, 1);

    pmix_envar_t ev[1] = {{"PATH", "/usr/bin", ':'}};
    RT("envar", ev, PMIX_ENVAR, 1);

    uint32_t cv[3] = {1, 2, 3};
    pmix_coord_t co[1] = {{PMIX_COORD_PHYSICAL_VIEW, cv, 3}};
    RT("coord", co, PMIX_COORD, 1);

    pmix_pdata_t pd[1];
    memset(pd, 0, sizeof(pd));
    PMIX_LOAD_PROCID(&pd[0].proc, "pub", 1);
    PMIX_LOAD_KEY(pd[0].key, "pub.key");
    PMIX_VALUE_LOAD(&pd[0].value, &u16[1], PMIX_UINT16);
    RT("pdata", pd, PMIX_PDATA, 0);

    char *argv[] = {"a.out", "-x", NULL};
    char *env[] = {"A=1", NULL};
    pmix_app_t ap[1];
    memset(ap, 0, sizeof(ap));
    ap[0].cmd = "a.out"; ap[0].argv = argv; ap[0].env = env; ap[0].cwd = "/tmp";
    ap[0].maxprocs = 4; ap[0].info = inf; ap[0].ninfo = 2;
    RT("app", ap, PMIX_APP, 0);

    char *keys[] = {"pmix.qry.ns", NULL};
    pmix_query_t qu[1];
    memset(qu, 0, sizeof(qu));
    qu[0].keys = keys; qu[0].qualifiers = inf; qu[0].nqual = 1;
    RT("query", qu, PMIX_QUERY, 0);

    pmix_nspace_t nsp[2];
    PMIX_LOAD_NSPACE(nsp[0], "ns.one");
    PMIX_LOAD_NSPACE(nsp[1], "");
    RT("nspace", nsp, PMIX_PROC_NSPACE, 1);

    /* several units in one buffer, read back in order; a partial read */
    pmix_data_buffer_t b;
    PMIX_DATA_BUFFER_CONSTRUCT(&b);
    PMIx_Data_pack(NULL, &b, u32, 4, PMIX_UINT32);
    PMIx_Data_pack(NULL, &b, st, 3, PMIX_STRING);
    hex("units", &b);
    uint32_t got[4] = {0};
    int32_t m = 2;
    pmix_status_t rc = PMIx_Data_unpack(NULL, &b, got, &m, PMIX_UINT32);
    printf("partial rc=%d m=%d got=%u,%u\n", rc, m, got[0], got[1]);
    PMIX_DATA_BUFFER_DESTRUCT(&b);
    PMIX_DATA_BUFFER_CONSTRUCT(&b);
    PMIx_Data_pack(NULL, &b, u32, 4, PMIX_UINT32);
    PMIx_Data_pack(NULL, &b, st, 3, PMIX_STRING);
    m = 4;
    rc = PMIx_Data_unpack(NULL, &b, got, &m, PMIX_UINT32);
    char *gs[3] = {NULL};
    int32_t m2 = 3;
    pmix_status_t rc2 = PMIx_Data_unpack(NULL, &b, gs, &m2, PMIX_STRING);
    printf("seq rc=%d m=%d rc2=%d m2=%d [%s][%s][%s]\n", rc, m, rc2, m2, gs[0] ? gs[0] : "",
           gs[1] ? gs[1] : "", gs[2] ? gs[2] : "");
    m = 1;
    rc = PMIx_Data_unpack(NULL, &b, got, &m, PMIX_UINT32);
    printf("past end rc=%d\n", rc);
    PMIX_DATA_BUFFER_DESTRUCT(&b);
}

static void helpers_section(void) {
    /* value load / unload / xfer */
    pmix_value_t v, w;
    uint64_t x = 77;
    pmix_status_t rc = PMIx_Value_load(&v, &x, PMIX_UINT64);
    printf("load u64 rc=%d type=%d val=%llu\n", rc, v.type, (unsigned long long)v.data.uint64);
    void *out = NULL;
    size_t sz = 0;
    rc = PMIx_Value_unload(&v, &out, &sz);
    printf("unload u64 rc=%d sz=%zu val=%llu\n", rc, sz, out ? (unsigned long long)*(uint64_t *)out : 0ull);
    free(out);
    rc = PMIx_Value_load(&v, "text", PMIX_STRING);
    printf("load string rc=%d [%s]\n", rc, v.data.string);
    rc = PMIx_Value_unload(&v, &out, &sz);
    printf("unload string rc=%d sz=%zu [%s]\n", rc, sz, out ? (char *)out : "(null)");
    free(out);
    rc = PMIx_Value_xfer(&w, &v);
    printf("xfer rc=%d type=%d [%s] distinct=%d\n", rc, w.type, w.data.string, w.data.string != v.data.string);
    PMIx_Value_destruct(&v);
    PMIx_Value_destruct(&w);
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "nsx", 9);
    rc = PMIx_Value_load(&v, &p, PMIX_PROC);
    printf("load proc rc=%d [%s:%u]\n", rc, v.data.proc->nspace, v.data.proc->rank);
    rc = PMIx_Value_xfer(&w, &v);
    printf("xfer proc rc=%d [%s:%u]\n", rc, w.data.proc->nspace, w.data.proc->rank);
    PMIx_Value_destruct(&v);
    PMIx_Value_destruct(&w);
    pmix_byte_object_t bo = {"xyz", 3};
    rc = PMIx_Value_load(&v, &bo, PMIX_BYTE_OBJECT);
    printf("load bo rc=%d size=%zu\n", rc, v.data.bo.size);
    PMIx_Value_destruct(&v);
    /* no data: the type alone (a BOOL is then true) */
    memset(&v, 0x55, sizeof(v));
    rc = PMIx_Value_load(&v, NULL, PMIX_BOOL);
    printf("load NULL bool rc=%d type=%d flag=%d\n", rc, v.type, v.data.flag);
    memset(&v, 0x55, sizeof(v));
    rc = PMIx_Value_load(&v, NULL, PMIX_UINT32);
    printf("load NULL u32 rc=%d type=%d val=%u\n", rc, v.type, v.data.uint32);
    memset(&v, 0x55, sizeof(v));
    rc = PMIx_Value_load(&v, NULL, PMIX_STRING);
    printf("load NULL string rc=%d type=%d null=%d\n", rc, v.type, v.data.string == NULL);
    pmix_envar_t e = {"VAR", "val", ';'};
    rc = PMIx_Value_load(&v, &e, PMIX_ENVAR);
    printf("load envar rc=%d [%s=%s%c]\n", rc, v.data.envar.envar, v.data.envar.value, v.data.envar.separator);
    PMIx_Value_destruct(&v);

    /* info load / xfer */
    pmix_info_t i, j;
    int32_t y = -5;
    rc = PMIx_Info_load(&i, "pmix.my.key", &y, PMIX_INT32);
    printf("info load rc=%d key=%s type=%d val=%d flags=%u\n", rc, i.key, i.value.type, i.value.data.int32, i.flags);
    PMIX_INFO_REQUIRED(&i);
    rc = PMIx_Info_xfer(&j, &i);
    printf("info xfer rc=%d key=%s val=%d flags=%u\n", rc, j.key, j.value.data.int32, j.flags);
    char *t = PMIx_Info_string(&j);
    printf("info string [%s]\n", t ? t : "(null)");
    free(t);
    t = PMIx_Value_string(&j.value);
    printf("value string [%s]\n", t ? t : "(null)");
    free(t);
    PMIX_INFO_DESTRUCT(&i);
    PMIX_INFO_DESTRUCT(&j);

    /* comparisons */
    {
        pmix_value_t a, b;
        uint32_t u1 = 5, u2 = 9;
        int32_t i1 = 5;
        PMIx_Value_load(&a, &u1, PMIX_UINT32);
        PMIx_Value_load(&b, &u2, PMIX_UINT32);
        printf("cmp u32 5 9 [%d] 9 5 [%d] 5 5 [%d]\n", PMIx_Value_compare(&a, &b), PMIx_Value_compare(&b, &a),
               PMIx_Value_compare(&a, &a));
        PMIx_Value_destruct(&b);
        PMIx_Value_load(&b, &i1, PMIX_INT32);
        printf("cmp u32 i32 [%d]\n", PMIx_Value_compare(&a, &b));
        PMIx_Value_destruct(&a);
        PMIx_Value_destruct(&b);
        PMIx_Value_load(&a, "abc", PMIX_STRING);
        PMIx_Value_load(&b, "abd", PMIX_STRING);
        printf("cmp str [%d] [%d] [%d]\n", PMIx_Value_compare(&a, &b), PMIx_Value_compare(&b, &a), PMIx_Value_compare(&a, &a));
        PMIx_Value_destruct(&a);
        PMIx_Value_destruct(&b);
        pmix_proc_t p1, p2;
        PMIX_LOAD_PROCID(&p1, "a", 1);
        PMIX_LOAD_PROCID(&p2, "a", 2);
        PMIx_Value_load(&a, &p1, PMIX_PROC);
        PMIx_Value_load(&b, &p2, PMIX_PROC);
        printf("cmp proc [%d] [%d]\n", PMIx_Value_compare(&a, &b), PMIx_Value_compare(&a, &a));
        PMIx_Value_destruct(&a);
        PMIx_Value_destruct(&b);
    }

    /* info lists */
    void *list = PMIx_Info_list_start();
    rc = PMIx_Info_list_add(list, "l.one", &y, PMIX_INT32);
    printf("list add rc=%d\n", rc);
    rc = PMIx_Info_list_add(list, "l.flag", NULL, PMIX_BOOL);
    printf("list add NULL bool rc=%d\n", rc);
    rc = PMIx_Info_list_add(list, "l.str", "s", PMIX_STRING);
    pmix_info_t li;
    PMIX_INFO_LOAD(&li, "l.xfer", "x", PMIX_STRING);
    printf("list xfer rc=%d\n", PMIx_Info_list_xfer(list, &li));
    PMIX_INFO_DESTRUCT(&li);
    pmix_data_array_t par;
    rc = PMIx_Info_list_convert(list, &par);
    printf("list convert rc=%d type=%d size=%zu\n", rc, par.type, par.size);
    for (size_t k = 0; rc == PMIX_SUCCESS && k < par.size; k++) {
        pmix_info_t *ii = &((pmix_info_t *)par.array)[k];
        char *t = PMIx_Info_string(ii);
        printf("list %zu [%s]\n", k, t ? t : "(null)");
        free(t);
    }
    if (rc == PMIX_SUCCESS) PMIx_Data_array_destruct(&par);
    PMIx_Info_list_release(list);

    /* payload moves */
    pmix_data_buffer_t a, b;
    PMIX_DATA_BUFFER_CONSTRUCT(&a);
    PMIX_DATA_BUFFER_CONSTRUCT(&b);
    uint32_t u[2] = {1, 2};
    PMIx_Data_pack(NULL, &a, u, 2, PMIX_UINT32);
    PMIx_Data_pack(NULL, &a, u, 1, PMIX_UINT32);
    uint32_t g[2];
    int32_t m = 2;
    PMIx_Data_unpack(NULL, &a, g, &m, PMIX_UINT32);
    rc = PMIx_Data_copy_payload(&b, &a);
    printf("copy_payload rc=%d\n", rc);
    hex("dest", &b);
    hex("src", &a);
    pmix_byte_object_t pl;
    rc = PMIx_Data_unload(&a, &pl);
    printf("unload rc=%d a.used=%zu a.base=%d\n", rc, a.bytes_used, a.base_ptr != NULL);
    bytes("payload", pl.bytes, pl.size);
    rc = PMIx_Data_embed(&b, &pl);
    printf("embed rc=%d\n", rc);
    hex("embedded", &b);
    rc = PMIx_Data_load(&a, &pl);
    printf("load rc=%d pl.bytes=%d pl.size=%zu\n", rc, pl.bytes != NULL, pl.size);
    hex("loaded", &a);
    m = 1;
    rc = PMIx_Data_unpack(NULL, &a, g, &m, PMIX_UINT32);
    printf("unpack loaded rc=%d m=%d g=%u\n", rc, m, g[0]);
    PMIX_DATA_BUFFER_DESTRUCT(&a);
    PMIX_DATA_BUFFER_DESTRUCT(&b);

    /* compression */
    size_t n = 6000;
    uint8_t *big = malloc(n);
    for (size_t k = 0; k < n; k++) big[k] = (uint8_t)(k % 7);
    uint8_t *z = NULL, *back = NULL;
    size_t zn = 0, bn = 0;
    bool ok = PMIx_Data_compress(big, n, &z, &zn);
    printf("compress ok=%d\n", ok);
    if (ok) {
        bytes("compressed", (char *)z, zn);
        ok = PMIx_Data_decompress(z, zn, &back, &bn);
        printf("decompress ok=%d n=%zu same=%d\n", ok, bn, ok && bn == n && 0 == memcmp(back, big, n));
    }
    free(z);
    free(back);
    z = NULL;
    ok = PMIx_Data_compress(big, 10, &z, &zn);
    printf("compress small ok=%d\n", ok);
    free(z);
    free(big);
}

/* one bad call per run: libpmix crashes on some (the test says which) */
static int errors_section(int which) {
    pmix_data_buffer_t b;
    PMIX_DATA_BUFFER_CONSTRUCT(&b);
    uint32_t x = 1;
    if (which == 0) printf("pack NULL buffer rc=%d\n", PMIx_Data_pack(NULL, NULL, &x, 1, PMIX_UINT32));
    if (which == 1) printf("pack unknown type rc=%d\n", PMIx_Data_pack(NULL, &b, &x, 1, 9999));
    if (which == 2) printf("pack negative count rc=%d\n", PMIx_Data_pack(NULL, &b, &x, -1, PMIX_UINT32));
    PMIx_Data_pack(NULL, &b, &x, 1, PMIX_UINT32);
    int32_t m = 1;
    char *s = NULL;
    if (which == 3) printf("unpack NULL buffer rc=%d\n", PMIx_Data_unpack(NULL, NULL, &x, &m, PMIX_UINT32));
    if (which == 4) printf("unpack NULL count rc=%d\n", PMIx_Data_unpack(NULL, &b, &x, NULL, PMIX_UINT32));
    m = 1;
    if (which == 5) printf("unpack unknown type rc=%d\n", PMIx_Data_unpack(NULL, &b, &x, &m, 9999));
    PMIX_DATA_BUFFER_DESTRUCT(&b);
    PMIX_DATA_BUFFER_CONSTRUCT(&b);
    m = 1;
    if (which == 6) printf("unpack empty rc=%d\n", PMIx_Data_unpack(NULL, &b, &s, &m, PMIX_STRING));
    if (which == 7) printf("print NULL output rc=%d\n", PMIx_Data_print(NULL, NULL, &x, PMIX_UINT32));
    char *out = NULL;
    if (which == 8) printf("print unknown type rc=%d\n", PMIx_Data_print(&out, NULL, &x, 9999));
    void *cp = NULL;
    if (which == 9) printf("copy NULL src rc=%d\n", PMIx_Data_copy(&cp, NULL, PMIX_UINT32));
    if (which == 10) printf("copy NULL dest rc=%d\n", PMIx_Data_copy(NULL, &x, PMIX_UINT32));
    if (which == 11) printf("copy_payload NULL rc=%d\n", PMIx_Data_copy_payload(NULL, &b));
    if (which == 12) printf("unload NULL rc=%d\n", PMIx_Data_unload(NULL, NULL));
    if (which == 13) printf("load NULL rc=%d\n", PMIx_Data_load(NULL, NULL));
    if (which == 14) printf("value_unload NULL rc=%d\n", PMIx_Value_unload(NULL, NULL, NULL));
    if (which == 15) printf("value_xfer NULL rc=%d\n", PMIx_Value_xfer(NULL, NULL));
    uint8_t *z = NULL;
    size_t zn = 0;
    if (which == 16) printf("compress NULL ok=%d\n", PMIx_Data_compress(NULL, 0, &z, &zn));
    if (which == 17) printf("decompress junk ok=%d\n", PMIx_Data_decompress((const uint8_t *)"junkjunk", 8, &z, &zn));
    return which < 18;
}

/* the string helpers interop/c/strings.c does not cover (the test runs
 * that program on both libraries too) */
static void strings_section(void) {
    printf("attr [%s] [%s]\n", PMIx_Get_attribute_string("PMIX_JOB_SIZE"), PMIx_Get_attribute_name("pmix.job.size"));
    printf("attr [%s] [%s]\n", PMIx_Get_attribute_string("NOT_AN_ATTR"), PMIx_Get_attribute_name("not.an.attr"));
    for (int c = 0; c <= 6; c++) printf("cmp %d [%s]\n", c, PMIx_Value_comparison_string((pmix_value_cmp_t)c));
    for (int t = 0; t < 20; t++) printf("dev %d [%s]\n", t, PMIx_Device_type_string((pmix_device_type_t)1 << t));
}

int main(int argc, char **argv) {
    pmix_proc_t me;
    /* no server: a singleton, as libpmix 4.2.2 starts one (PMIX_ERR_UNREACH) */
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    printf("init rc=%d initialized=%d rank=%u singleton=%d\n", rc, PMIx_Initialized(), me.rank,
           0 == strncmp(me.nspace, "singleton.", 10));
    const char *what = argc > 1 ? argv[1] : "";
    if (0 == strcmp(what, "pack")) pack_section();
    else if (0 == strcmp(what, "helpers")) helpers_section();
    else if (0 == strcmp(what, "errors")) {
        if (!errors_section(argc > 2 ? atoi(argv[2]) : 0)) {
            printf("no such case\n");
            return 3;
        }
    }
    else if (0 == strcmp(what, "strings")) strings_section();
    else {
        fprintf(stderr, "usage: capi_diff pack|helpers|errors|strings\n");
        return 2;
    }
    rc = PMIx_Finalize(NULL, 0);
    printf("finalize rc=%d initialized=%d\n", rc, PMIx_Initialized());
    return 0;
}
