/* pmix-wire: libpmix 5's helper functions (the standard's CONSTRUCT,
 * CREATE, DESTRUCT, FREE, LOAD, CHECK and ARGV_APPEND macros, which
 * libpmix 5's headers expand to calls), called outright, for the C
 * library's differential test (capi/tests/libpmix_capi_diff.rs): built on
 * libpmix 4.2.2's headers (which have the types but expand the macros
 * inline), linked once to libpmix 5.0.11 and once to ours; both must print
 * the same lines. Written for pmix-wire; the prototypes are the PMIx v5
 * standard's. No PMIx_Init: these need no server.
 */
#include <pmix.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void PMIx_Data_buffer_construct(pmix_data_buffer_t *b);
pmix_data_buffer_t *PMIx_Data_buffer_create(void);
void PMIx_Data_buffer_destruct(pmix_data_buffer_t *b);
void PMIx_Data_buffer_release(pmix_data_buffer_t *b);
void PMIx_Data_buffer_load(pmix_data_buffer_t *b, char *bytes, size_t sz);
void PMIx_Data_buffer_unload(pmix_data_buffer_t *b, char **bytes, size_t *sz);
void PMIx_Value_free(pmix_value_t *v, size_t n);
void PMIx_Info_construct(pmix_info_t *p);
void PMIx_Info_destruct(pmix_info_t *p);
pmix_info_t *PMIx_Info_create(size_t n);
void PMIx_Info_free(pmix_info_t *p, size_t n);
void PMIx_Info_qualifier(pmix_info_t *p);
void PMIx_Pdata_construct(pmix_pdata_t *p);
void PMIx_Pdata_destruct(pmix_pdata_t *p);
void PMIx_Proc_construct(pmix_proc_t *p);
pmix_proc_t *PMIx_Proc_create(size_t n);
void PMIx_Proc_free(pmix_proc_t *p, size_t n);
pmix_app_t *PMIx_App_create(size_t n);
void PMIx_App_free(pmix_app_t *p, size_t n);
void PMIx_Query_construct(pmix_query_t *p);
void PMIx_Cpuset_construct(pmix_cpuset_t *c);
void PMIx_Load_key(pmix_key_t key, const char *src);
void PMIx_Load_nspace(pmix_nspace_t nspace, const char *src);
void PMIx_Load_procid(pmix_proc_t *p, const char *ns, pmix_rank_t rank);
bool PMIx_Check_key(const char *key, const char *str);
bool PMIx_Check_nspace(const char *a, const char *b);
pmix_status_t PMIx_Argv_append_nosize(char ***argv, const char *arg);

static void print_buffer(const char *what, const pmix_data_buffer_t *b) {
    printf("%s base=%s pack=%td unpack=%td allocated=%zu used=%zu\n", what,
           b->base_ptr ? "set" : "NULL", b->base_ptr ? b->pack_ptr - b->base_ptr : (ptrdiff_t) -1,
           b->base_ptr ? b->unpack_ptr - b->base_ptr : (ptrdiff_t) -1, b->bytes_allocated,
           b->bytes_used);
}

static void print_info(const char *what, const pmix_info_t *i) {
    printf("%s key=\"%s\" flags=%u type=%u\n", what, i->key, (unsigned) i->flags,
           (unsigned) i->value.type);
}

static void buffers(void) {
    pmix_data_buffer_t b;
    memset(&b, 0x5a, sizeof b);
    PMIx_Data_buffer_construct(&b);
    print_buffer("buffer construct", &b);
    char *bytes = malloc(5);
    memcpy(bytes, "\x01\x02\x03\x04\x05", 5);
    PMIx_Data_buffer_load(&b, bytes, 5);
    print_buffer("buffer load 5", &b);
    char *out = NULL;
    size_t n = 0;
    PMIx_Data_buffer_unload(&b, &out, &n);
    printf("buffer unload size=%zu same=%d\n", n, out && 5 == n && 0 == memcmp(out, "\x01\x02\x03\x04\x05", 5));
    print_buffer("buffer after unload", &b);
    free(out);
    out = NULL;
    n = 7;
    PMIx_Data_buffer_unload(&b, &out, &n);
    printf("buffer unload empty size=%zu data=%s\n", n, out ? "set" : "NULL");
    free(out);
    bytes = malloc(3);
    memcpy(bytes, "abc", 3);
    PMIx_Data_buffer_load(&b, bytes, 3);
    PMIx_Data_buffer_destruct(&b);
    print_buffer("buffer destruct", &b);
    pmix_data_buffer_t *c = PMIx_Data_buffer_create();
    printf("buffer create %s\n", c ? "set" : "NULL");
    if (c) {
        print_buffer("buffer created", c);
        bytes = malloc(4);
        memcpy(bytes, "wxyz", 4);
        PMIx_Data_buffer_load(c, bytes, 4);
        print_buffer("buffer created load 4", c);
        PMIx_Data_buffer_release(c);
        printf("buffer release done\n");
    }
}

static void values_and_infos(void) {
    pmix_value_t *v = calloc(2, sizeof *v);
    PMIx_Value_load(&v[0], "a string", PMIX_STRING);
    uint32_t u = 7;
    PMIx_Value_load(&v[1], &u, PMIX_UINT32);
    PMIx_Value_free(v, 2);
    printf("value free done\n");

    pmix_info_t i;
    memset(&i, 0x5a, sizeof i);
    PMIx_Info_construct(&i);
    print_info("info construct", &i);
    PMIx_Info_load(&i, "pmix.test.key", "text", PMIX_STRING);
    print_info("info load", &i);
    PMIx_Info_qualifier(&i);
    print_info("info qualifier", &i);
    printf("info is qualifier %d\n", PMIX_INFO_IS_QUALIFIER(&i) ? 1 : 0);
    PMIx_Info_destruct(&i);
    print_info("info destruct", &i);
    pmix_info_t *is = PMIx_Info_create(3);
    printf("info create %s\n", is ? "set" : "NULL");
    for (size_t k = 0; is && k < 3; k++) {
        print_info("info created", &is[k]);
    }
    if (is) {
        PMIx_Info_load(&is[1], "pmix.test.n", &u, PMIX_UINT32);
        PMIx_Info_load(&is[2], "pmix.test.s", "s", PMIX_STRING);
        PMIx_Info_free(is, 3);
        printf("info free done\n");
    }
    printf("info create 0 %s\n", PMIx_Info_create(0) ? "set" : "NULL");
}

static void pdata_procs_apps(void) {
    pmix_pdata_t d;
    memset(&d, 0x5a, sizeof d);
    PMIx_Pdata_construct(&d);
    printf("pdata construct nspace=\"%s\" rank=%u key=\"%s\" type=%u\n", d.proc.nspace, d.proc.rank,
           d.key, (unsigned) d.value.type);
    PMIx_Value_load(&d.value, "published", PMIX_STRING);
    PMIx_Pdata_destruct(&d);
    printf("pdata destruct type=%u\n", (unsigned) d.value.type);

    pmix_proc_t p;
    memset(&p, 0x5a, sizeof p);
    PMIx_Proc_construct(&p);
    printf("proc construct nspace=\"%s\" rank=%u\n", p.nspace, p.rank);
    PMIx_Load_procid(&p, "the-namespace", 3);
    printf("proc load nspace=\"%s\" rank=%u\n", p.nspace, p.rank);
    pmix_proc_t *ps = PMIx_Proc_create(2);
    printf("proc create %s\n", ps ? "set" : "NULL");
    for (size_t k = 0; ps && k < 2; k++) {
        printf("proc created nspace=\"%s\" rank=%u\n", ps[k].nspace, ps[k].rank);
    }
    if (ps) {
        PMIx_Proc_free(ps, 2);
        printf("proc free done\n");
    }

    pmix_app_t *a = PMIx_App_create(2);
    printf("app create %s\n", a ? "set" : "NULL");
    for (size_t k = 0; a && k < 2; k++) {
        printf("app created cmd=%s argv=%s env=%s cwd=%s maxprocs=%d info=%s ninfo=%zu\n",
               a[k].cmd ? "set" : "NULL", a[k].argv ? "set" : "NULL", a[k].env ? "set" : "NULL",
               a[k].cwd ? "set" : "NULL", a[k].maxprocs, a[k].info ? "set" : "NULL", a[k].ninfo);
    }
    if (a) {
        a[0].cmd = strdup("/bin/true");
        PMIx_Argv_append_nosize(&a[0].argv, "true");
        a[0].ninfo = 1;
        a[0].info = PMIx_Info_create(1);
        PMIx_Info_load(a[0].info, "pmix.test.app", "x", PMIX_STRING);
        PMIx_App_free(a, 2);
        printf("app free done\n");
    }

    pmix_query_t q;
    memset(&q, 0x5a, sizeof q);
    PMIx_Query_construct(&q);
    printf("query construct keys=%s qualifiers=%s nqual=%zu\n", q.keys ? "set" : "NULL",
           q.qualifiers ? "set" : "NULL", q.nqual);

    pmix_cpuset_t c;
    memset(&c, 0x5a, sizeof c);
    PMIx_Cpuset_construct(&c);
    printf("cpuset construct source=%s bitmap=%s\n", c.source ? "set" : "NULL",
           c.bitmap ? "set" : "NULL");
}

/* `load` of `src` into `dst` (`cap` bytes, filled with 'z' first): its
 * length and whether the last byte is the NUL */
static void load_into(const char *what, void (*load)(char *, const char *), char *dst, size_t cap,
                      const char *src) {
    memset(dst, 'z', cap);
    load(dst, src);
    printf("load %s %s len=%zu last=%d\n", what, src ? (strlen(src) > 20 ? "long" : src) : "NULL",
           strnlen(dst, cap), dst[cap - 1]);
}

static void keys_and_names(void) {
    char longer[700];
    memset(longer, 'k', sizeof longer - 1);
    longer[sizeof longer - 1] = 0;
    pmix_key_t k;
    pmix_nspace_t ns;
    load_into("key", PMIx_Load_key, k, sizeof k, "pmix.short");
    load_into("key", PMIx_Load_key, k, sizeof k, longer);
    load_into("nspace", PMIx_Load_nspace, ns, sizeof ns, "job-1");
    load_into("nspace", PMIx_Load_nspace, ns, sizeof ns, longer);
    load_into("nspace", PMIx_Load_nspace, ns, sizeof ns, NULL);

    const char *pairs[][2] = {
        {"pmix.a", "pmix.a"}, {"pmix.a", "pmix.b"}, {"pmix.a", "pmix.ab"}, {"", ""}, {"x", ""},
    };
    for (size_t n = 0; n < sizeof pairs / sizeof pairs[0]; n++) {
        printf("check key \"%s\" \"%s\" %d\n", pairs[n][0], pairs[n][1],
               PMIx_Check_key(pairs[n][0], pairs[n][1]) ? 1 : 0);
    }
    printf("check key long %d\n", PMIx_Check_key(longer, longer) ? 1 : 0);
    const char *spaces[][2] = {
        {"job", "job"}, {"job", "jab"}, {"job", "job2"}, {"", "job"}, {"job", ""},
    };
    for (size_t n = 0; n < sizeof spaces / sizeof spaces[0]; n++) {
        printf("check nspace \"%s\" \"%s\" %d\n", spaces[n][0], spaces[n][1],
               PMIx_Check_nspace(spaces[n][0], spaces[n][1]) ? 1 : 0);
    }
    printf("check nspace NULL job %d\n", PMIx_Check_nspace(NULL, "job") ? 1 : 0);
    printf("check nspace job NULL %d\n", PMIx_Check_nspace("job", NULL) ? 1 : 0);

    char **argv = NULL;
    for (int n = 0; n < 3; n++) {
        char arg[16];
        snprintf(arg, sizeof arg, "arg%d", n);
        pmix_status_t rc = PMIx_Argv_append_nosize(&argv, arg);
        size_t count = 0;
        while (argv && argv[count]) {
            count++;
        }
        printf("argv append rc=%d count=%zu last=%s\n", rc, count, count ? argv[count - 1] : "-");
    }
    for (size_t n = 0; argv && argv[n]; n++) {
        free(argv[n]);
    }
    free(argv);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    buffers();
    values_and_infos();
    pdata_procs_apps();
    keys_and_names();
    return 0;
}
