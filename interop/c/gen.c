/* pmix-wire interop harness, direction "C -> Rust": packs a broad set of
 * cases of every type libpmix registers and prints, per case, one TSV line
 *   TYPE  case  num_vals  pack_rc  hex  json
 * where json is the packed values as a JSON array in pmix-wire's bare form.
 * The dialect and buffer type come from the environment (PMIX_MCA_bfrops,
 * PMIX_BFROP_BUFFER_TYPE, PMIX_MCA_psquash). */
#include "common.h"

static void emit(const char *cname, pmix_data_type_t t, const void *data, int32_t n) {
    pmix_data_buffer_t b;
    PMIX_DATA_BUFFER_CONSTRUCT(&b);
    pmix_status_t rc = PMIx_Data_pack(NULL, &b, (void *)data, n, t);
    printf("%s\t%s\t%d\t%d\t", short_name(t), cname, n, rc);
    if (PMIX_SUCCESS == rc) print_hex_buf(stdout, &b);
    printf("\t[");
    size_t sz = type_size(t);
    for (int32_t i = 0; i < n; i++) {
        if (i) putchar(',');
        jbare(stdout, (const char *)data + i * sz, t);
    }
    printf("]\n");
    fflush(stdout);
    PMIX_DATA_BUFFER_DESTRUCT(&b);
}

/* One value, followed by zeroed bytes: the v20/v12 components read some
 * 1- and 2-byte types 4 bytes wide (bfrops.md section 8), and then read
 * zeros, not whatever the stack holds. */
#define ONE(T, ctype, cname, val)                  \
    do {                                           \
        struct { ctype v; char pad[8]; } v_;       \
        memset(&v_, 0, sizeof(v_));                \
        v_.v = (val);                              \
        emit(cname, T, &v_.v, 1);                  \
    } while (0)

static char k511[512], ns255[256], s511[512];
static uint32_t coords3[3] = {1, 2, 3};
static uint64_t u64s[4] = {0, 1, UINT64_MAX, 0x0123456789abcdefULL};
static pmix_data_array_t darr_u64 = {PMIX_UINT64, 4, u64s};
static unsigned char bo_bytes[4] = {0x00, 0x01, 0x7f, 0xff};
/* uint32 LE 8191 + the zlib (level 9) stream of 8191 'a': what
 * PMIx_Data_compress makes of that string */
static const unsigned char z8191[36] = {
    0xff, 0x1f, 0x00, 0x00, 0x78, 0xda, 0xed, 0xc1, 0x01, 0x0d, 0x00, 0x00, 0x00, 0xc2, 0xa0, 0xac, 0xef, 0x5f,
    0xc2, 0x1c, 0x6e, 0x40, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe7, 0x06, 0x6e, 0x4a, 0x20, 0x54};
/* PMIx_generate_regex("node01,node02,node03"), made in main */
static char *regex3;

/* The statistics samples of the shared manifests (DISK_STATS_basic etc.),
 * used both alone and inside values. */
static void disk_sample(pmix_disk_stats_t *d) {
    memset(d, 0, sizeof(*d));
    d->disk = "sda";
    uint64_t *c[] = {&d->num_reads_completed, &d->num_reads_merged, &d->num_sectors_read, &d->milliseconds_reading,
                     &d->num_writes_completed, &d->num_writes_merged, &d->num_sectors_written,
                     &d->milliseconds_writing, &d->num_ios_in_progress, &d->milliseconds_io,
                     &d->weighted_milliseconds_io};
    for (int i = 0; i < 11; i++) *c[i] = (uint64_t)i + 1;
}

static void net_sample(pmix_net_stats_t *n) {
    pmix_net_stats_t x = {"eth0", 100, 101, 102, 103, 104, 105};
    *n = x;
}

static void node_sample(pmix_node_stats_t *n) {
    memset(n, 0, sizeof(*n));
    n->node = "node01"; n->la = 0.5f; n->la5 = 0.25f; n->la15 = 0.125f; n->total_mem = 1024; n->free_mem = 512;
    n->buffers = 1; n->cached = 2; n->swap_cached = 3; n->swap_total = 4; n->swap_free = 5; n->mapped = 6;
    n->sample_time.tv_sec = 1700000000; n->sample_time.tv_usec = 2;
}

static void proc_stats_sample(pmix_proc_stats_t *s) {
    memset(s, 0, sizeof(*s));
    s->node = "node01"; PMIX_LOAD_PROCID(&s->proc, "nspace-a", 2); s->pid = 999; s->cmd = "a.out"; s->state = 'R';
    s->time.tv_sec = 5; s->time.tv_usec = 6; s->percent_cpu = 12.5f; s->priority = -3; s->num_threads = 4;
    s->pss = 1.25f; s->vsize = 2.5f; s->rss = 3.75f; s->peak_vsize = 4.0f; s->processor = 1;
    s->sample_time.tv_sec = 1700000000; s->sample_time.tv_usec = 1;
}

/* One sample value per type, used for the VALUE_x / INFO_v_x cases. */
static int sample_value(pmix_value_t *v, pmix_data_type_t t) {
    static pmix_proc_t proc;
    static pmix_proc_info_t pinfo;
    static pmix_coord_t coord;
    static pmix_geometry_t geo;
    static pmix_device_distance_t dd;
    static pmix_endpoint_t ep;
    static pmix_nspace_t nsp;
    static pmix_regattr_t ra;
    static char *desc[] = {"first line", "second line", NULL};
    static pmix_disk_stats_t dk;
    static pmix_net_stats_t nt;
    static pmix_node_stats_t nd;
    static pmix_proc_stats_t ps;
    memset(v, 0, sizeof(*v));
    v->type = t;
    switch (t) {
    case PMIX_UNDEF: break;
    case PMIX_BOOL: v->data.flag = true; break;
    case PMIX_BYTE: v->data.byte = 0xab; break;
    case PMIX_STRING: v->data.string = "value"; break;
    case PMIX_SIZE: v->data.size = 42; break;
    case PMIX_PID: v->data.pid = 1234; break;
    case PMIX_INT: v->data.integer = -5; break;
    case PMIX_INT8: v->data.int8 = -8; break;
    case PMIX_INT16: v->data.int16 = -16; break;
    case PMIX_INT32: v->data.int32 = -32; break;
    case PMIX_INT64: v->data.int64 = -64; break;
    case PMIX_UINT: v->data.uint = 5; break;
    case PMIX_UINT8: v->data.uint8 = 8; break;
    case PMIX_UINT16: v->data.uint16 = 16; break;
    case PMIX_UINT32: v->data.uint32 = 32; break;
    case PMIX_UINT64: v->data.uint64 = 64; break;
    case PMIX_FLOAT: v->data.fval = 1.5f; break;
    case PMIX_DOUBLE: v->data.dval = 2.25; break;
    case PMIX_TIMEVAL: v->data.tv.tv_sec = 1; v->data.tv.tv_usec = 2; break;
    case PMIX_TIME: v->data.time = 1700000000; break;
    case PMIX_STATUS: v->data.status = PMIX_ERR_NOT_FOUND; break;
    case PMIX_PROC: PMIX_LOAD_PROCID(&proc, "nspace-a", 3); v->data.proc = &proc; break;
    case PMIX_BYTE_OBJECT: v->data.bo.bytes = (char *)bo_bytes; v->data.bo.size = 4; break;
    case PMIX_COMPRESSED_STRING: case PMIX_COMPRESSED_BYTE_OBJECT:
        v->data.bo.bytes = (char *)z8191; v->data.bo.size = sizeof(z8191); break;
    case PMIX_PERSIST: v->data.persist = PMIX_PERSIST_SESSION; break;
    case PMIX_POINTER: v->data.ptr = &proc; break;
    case PMIX_SCOPE: v->data.scope = PMIX_GLOBAL; break;
    case PMIX_DATA_RANGE: v->data.range = PMIX_RANGE_SESSION; break;
    case PMIX_COMMAND: v->data.uint8 = 5; break;
    case PMIX_INFO_DIRECTIVES: v->data.uint32 = PMIX_INFO_REQD | PMIX_INFO_QUALIFIER; break;
    case PMIX_DATA_TYPE: v->data.uint16 = PMIX_UINT64; break;
    case PMIX_PROC_STATE: v->data.state = PMIX_PROC_STATE_RUNNING; break;
    case PMIX_PROC_INFO:
        PMIX_LOAD_PROCID(&pinfo.proc, "nspace-a", 1);
        pinfo.hostname = "node01"; pinfo.executable_name = "/bin/true"; pinfo.pid = 4242;
        pinfo.exit_code = 0; pinfo.state = PMIX_PROC_STATE_RUNNING; v->data.pinfo = &pinfo; break;
    case PMIX_DATA_ARRAY: v->data.darray = &darr_u64; break;
    case PMIX_PROC_RANK: v->data.rank = 7; break;
    case PMIX_ALLOC_DIRECTIVE: v->data.adir = PMIX_ALLOC_NEW; break;
    case PMIX_IOF_CHANNEL: v->data.uint16 = PMIX_FWD_STDOUT_CHANNEL | PMIX_FWD_STDERR_CHANNEL; break;
    case PMIX_ENVAR: v->data.envar.envar = "PATH"; v->data.envar.value = "/bin"; v->data.envar.separator = ':'; break;
    case PMIX_COORD: coord.view = PMIX_COORD_LOGICAL_VIEW; coord.coord = coords3; coord.dims = 3; v->data.coord = &coord; break;
    case PMIX_REGATTR:
        ra.name = "PMIX_TEST_ATTR"; PMIX_LOAD_KEY(ra.string, "pmix.test.attr"); ra.type = PMIX_UINT32;
        ra.description = desc; v->data.ptr = &ra; break;
    case PMIX_REGEX: v->data.bo.bytes = regex3; v->data.bo.size = strlen(regex3) + 1; break;
    case PMIX_JOB_STATE: v->data.jstate = 3; break;
    case PMIX_LINK_STATE: v->data.linkstate = PMIX_LINK_UP; break;
    case PMIX_GEOMETRY:
        coord.view = PMIX_COORD_LOGICAL_VIEW; coord.coord = coords3; coord.dims = 3;
        geo.fabric = 7; geo.uuid = "uuid-fab"; geo.osname = "ib0"; geo.coordinates = &coord; geo.ncoords = 1;
        v->data.geometry = &geo; break;
    case PMIX_DEVICE_DIST:
        dd.uuid = "uuid-gpu0"; dd.osname = "card0"; dd.type = PMIX_DEVTYPE_GPU; dd.mindist = 10; dd.maxdist = 20;
        v->data.devdist = &dd; break;
    case PMIX_ENDPOINT:
        ep.uuid = "uuid-nic0"; ep.osname = "eth0"; ep.endpt.bytes = "\xde\xad\x01"; ep.endpt.size = 3;
        v->data.endpoint = &ep; break;
    case PMIX_DEVTYPE: v->data.devtype = PMIX_DEVTYPE_NETWORK; break;
    case PMIX_LOCTYPE: v->data.locality = PMIX_LOCALITY_SHARE_NODE; break;
    case PMIX_PROC_NSPACE: PMIX_LOAD_NSPACE(nsp, "nspace-b"); v->data.nspace = &nsp; break;
    case PMIX_DISK_STATS: disk_sample(&dk); v->data.dkstats = &dk; break;
    case PMIX_NET_STATS: net_sample(&nt); v->data.netstats = &nt; break;
    case PMIX_NODE_STATS: node_sample(&nd); v->data.ndstats = &nd; break;
    case PMIX_PROC_STATS: proc_stats_sample(&ps); v->data.pstats = &ps; break;
    case PMIX_STOR_MEDIUM: v->data.uint64 = 4; break;
    case PMIX_STOR_ACCESS: v->data.uint64 = 2; break;
    case PMIX_STOR_PERSIST: v->data.uint64 = 8; break;
    case PMIX_STOR_ACCESS_TYPE: v->data.uint16 = 3; break;
    default: return 0;
    }
    return 1;
}

static void scalar_cases(void) {
    bool b3[3] = {true, false, true};
    ONE(PMIX_BOOL, bool, "true", true); ONE(PMIX_BOOL, bool, "false", false);
    emit("array3", PMIX_BOOL, b3, 3);
    uint8_t by[4] = {0xde, 0xad, 0xbe, 0xef};
    ONE(PMIX_BYTE, uint8_t, "zero", 0); ONE(PMIX_BYTE, uint8_t, "ff", 0xff); emit("array4", PMIX_BYTE, by, 4);
    char *strs[3] = {"a", "bc", NULL};
    ONE(PMIX_STRING, char *, "hello", "hello"); ONE(PMIX_STRING, char *, "empty", "");
    ONE(PMIX_STRING, char *, "null", NULL); emit("array3", PMIX_STRING, strs, 3);
    ONE(PMIX_STRING, char *, "utf8", "h\xc3\xa9llo w\xc3\xb6rld"); ONE(PMIX_STRING, char *, "len511", s511);
    ONE(PMIX_STRING, char *, "latin1", "caf\xe9");
    ONE(PMIX_STRING, char *, "escapes", "tab\tquote\"back\\slash\n");
    size_t sz[] = {0, 1, 127, 128, 300, 16383, 16384, (1ULL << 56) - 1, 1ULL << 56, SIZE_MAX};
    const char *szn[] = {"zero", "one", "127", "128", "300", "16383", "16384", "2p56m1", "2p56", "max"};
    for (int i = 0; i < 10; i++) ONE(PMIX_SIZE, size_t, szn[i], sz[i]);
    emit("array10", PMIX_SIZE, sz, 10);
    pid_t pids[] = {0, 12345, INT32_MAX, -1};
    ONE(PMIX_PID, pid_t, "zero", 0); ONE(PMIX_PID, pid_t, "12345", 12345); ONE(PMIX_PID, pid_t, "max", INT32_MAX);
    ONE(PMIX_PID, pid_t, "minus1", -1); emit("array4", PMIX_PID, pids, 4); emit("array0", PMIX_PID, pids, 0);
    int ints[] = {0, -1, 1, 63, 64, -64, -65, INT32_MAX, INT32_MIN};
    const char *intn[] = {"zero", "minus1", "one", "63", "64", "m64", "m65", "max", "min"};
    for (int i = 0; i < 9; i++) ONE(PMIX_INT, int, intn[i], ints[i]);
    emit("array9", PMIX_INT, ints, 9); emit("array0", PMIX_INT, ints, 0);
    int8_t i8[] = {0, -1, 127, -128};
    ONE(PMIX_INT8, int8_t, "zero", 0); ONE(PMIX_INT8, int8_t, "minus1", -1); ONE(PMIX_INT8, int8_t, "max", 127);
    ONE(PMIX_INT8, int8_t, "min", -128); emit("array4", PMIX_INT8, i8, 4);
    int16_t i16[] = {0, -1, 63, 64, -64, -65, INT16_MAX, INT16_MIN, -300};
    emit("edges", PMIX_INT16, i16, 9); ONE(PMIX_INT16, int16_t, "min", INT16_MIN); ONE(PMIX_INT16, int16_t, "max", INT16_MAX);
    int32_t i32[] = {0, -1, 1, 63, 64, -64, -65, 300, -300, 8191, 8192, INT32_MAX, INT32_MIN};
    emit("edges", PMIX_INT32, i32, 13); ONE(PMIX_INT32, int32_t, "min", INT32_MIN); ONE(PMIX_INT32, int32_t, "zero", 0);
    emit("empty", PMIX_INT32, i32, 0);
    int64_t i64[] = {0, -1, 63, -64, -65, INT64_MAX, INT64_MIN, (1LL << 55), -(1LL << 55) - 1, 1LL << 62};
    emit("edges", PMIX_INT64, i64, 10); ONE(PMIX_INT64, int64_t, "min", INT64_MIN);
    unsigned uis[] = {0, 1, 5, UINT32_MAX, 4000000000u, 2147483648u};
    emit("edges", PMIX_UINT, uis, 6); ONE(PMIX_UINT, unsigned, "max", UINT32_MAX);
    uint8_t u8[] = {0, 8, 255};
    emit("edges", PMIX_UINT8, u8, 3);
    uint16_t u16[] = {0, 127, 128, 16383, 16384, 65535};
    emit("edges", PMIX_UINT16, u16, 6); ONE(PMIX_UINT16, uint16_t, "max", 65535);
    uint32_t u32[] = {0, 1, 127, 128, 300, 16383, 16384, 0xdeadbeef, UINT32_MAX};
    emit("edges", PMIX_UINT32, u32, 9); ONE(PMIX_UINT32, uint32_t, "max", UINT32_MAX);
    uint64_t u64[] = {0, 127, 128, 16383, 16384, (1ULL << 56) - 1, 1ULL << 56, 1ULL << 63, UINT64_MAX};
    emit("edges", PMIX_UINT64, u64, 9); ONE(PMIX_UINT64, uint64_t, "max", UINT64_MAX);
    float fl[] = {0.0f, 1.5f, -3.25f, 1e-7f, 1e30f, 123456789.0f, -0.0f, INFINITY, -INFINITY, NAN};
    emit("edges", PMIX_FLOAT, fl, 10); ONE(PMIX_FLOAT, float, "1.5", 1.5f);
    double db[] = {0.0, 3.141592653589793, 1e300, -1e-300, 0.1, 2.5e-7, 0.0000005, -0.0, INFINITY, 1e22};
    emit("edges", PMIX_DOUBLE, db, 10); ONE(PMIX_DOUBLE, double, "pi", 3.141592653589793);
    struct timeval tv[3] = {{0, 0}, {5, 7}, {-1, 999999}};
    emit("edges", PMIX_TIMEVAL, tv, 3); ONE(PMIX_TIMEVAL, struct timeval, "5_7", tv[1]);
    time_t tm[3] = {0, 1000, 1700000000};
    emit("edges", PMIX_TIME, tm, 3);
    pmix_status_t st[] = {PMIX_SUCCESS, PMIX_ERROR, PMIX_ERR_NOT_FOUND, PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER, 12345};
    emit("edges", PMIX_STATUS, st, 5);
    uint8_t e8[] = {0, 1, 4, 255};
    emit("edges", PMIX_PERSIST, e8, 4); emit("edges", PMIX_SCOPE, e8, 4); emit("edges", PMIX_DATA_RANGE, e8, 4);
    emit("edges", PMIX_COMMAND, e8, 4); emit("edges", PMIX_PROC_STATE, e8, 4); emit("edges", PMIX_ALLOC_DIRECTIVE, e8, 4);
    emit("edges", PMIX_JOB_STATE, e8, 4); emit("edges", PMIX_LINK_STATE, e8, 4);
    uint32_t dirs[] = {0, PMIX_INFO_REQD | PMIX_INFO_ARRAY_END, 0x1001b, 0xffffffff};
    emit("edges", PMIX_INFO_DIRECTIVES, dirs, 4);
    pmix_rank_t ranks[] = {0, 7, PMIX_RANK_WILDCARD, PMIX_RANK_UNDEF, PMIX_RANK_LOCAL_NODE, PMIX_RANK_INVALID, PMIX_RANK_VALID};
    emit("edges", PMIX_PROC_RANK, ranks, 7);
    uint16_t chans[] = {0, PMIX_FWD_STDOUT_CHANNEL | PMIX_FWD_STDERR_CHANNEL, PMIX_FWD_ALL_CHANNELS, 0xffff};
    emit("edges", PMIX_IOF_CHANNEL, chans, 4);
    uint16_t loc[] = {0, PMIX_LOCALITY_SHARE_NODE, 0x7fff};
    emit("edges", PMIX_LOCTYPE, loc, 3);
    uint64_t dt[] = {PMIX_DEVTYPE_GPU | PMIX_DEVTYPE_NETWORK, 1ULL << 63, 0};
    emit("edges", PMIX_DEVTYPE, dt, 3);
    uint64_t stor[] = {0, 4, 1ULL << 40};
    emit("edges", PMIX_STOR_MEDIUM, stor, 3); emit("edges", PMIX_STOR_ACCESS, stor, 3); emit("edges", PMIX_STOR_PERSIST, stor, 3);
    uint16_t sat[] = {0, 3, 0xffff};
    emit("edges", PMIX_STOR_ACCESS_TYPE, sat, 3);
    char *ptrs[2] = {"x", NULL};
    emit("nonnull", PMIX_POINTER, ptrs, 1); emit("two", PMIX_POINTER, ptrs, 2);
}

static void struct_cases(void) {
    pmix_proc_t procs[4];
    PMIX_LOAD_PROCID(&procs[0], "nspace-a", 0);
    PMIX_LOAD_PROCID(&procs[1], ns255, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&procs[2], "", PMIX_RANK_UNDEF);
    PMIX_LOAD_PROCID(&procs[3], "n\xc3\xa9", PMIX_RANK_LOCAL_NODE);
    emit("basic", PMIX_PROC, procs, 1); emit("edges", PMIX_PROC, procs, 4);
    pmix_nspace_t nsps[2];
    PMIX_LOAD_NSPACE(nsps[0], "nspace-b"); PMIX_LOAD_NSPACE(nsps[1], ns255);
    emit("edges", PMIX_PROC_NSPACE, nsps, 2);
    char *argv[] = {"./a.out", "-x", NULL}, *env[] = {"FOO=bar", NULL};
    pmix_app_t apps[2];
    memset(apps, 0, sizeof(apps));
    apps[1].cmd = "./a.out"; apps[1].argv = argv; apps[1].env = env; apps[1].cwd = "/tmp"; apps[1].maxprocs = 2;
    pmix_info_t appinfo[1];
    PMIX_INFO_LOAD(&appinfo[0], "pmix.host", "node01", PMIX_STRING);
    apps[1].info = appinfo; apps[1].ninfo = 1;
    emit("empty", PMIX_APP, apps, 1); emit("basic", PMIX_APP, &apps[1], 1); emit("array2", PMIX_APP, apps, 2);
    unsigned char big[300];
    for (int i = 0; i < 300; i++) big[i] = (unsigned char)i;
    pmix_byte_object_t bos[3] = {{(char *)bo_bytes, 4}, {NULL, 0}, {(char *)big, 300}};
    emit("4bytes", PMIX_BYTE_OBJECT, bos, 1); emit("empty", PMIX_BYTE_OBJECT, &bos[1], 1);
    emit("array3", PMIX_BYTE_OBJECT, bos, 3);
    emit("basic", PMIX_COMPRESSED_STRING, bos, 1); emit("array2", PMIX_COMPRESSED_BYTE_OBJECT, bos, 2);
    pmix_proc_info_t pi[2];
    memset(pi, 0, sizeof(pi));
    PMIX_LOAD_PROCID(&pi[0].proc, "nspace-a", 1);
    pi[0].hostname = "node01"; pi[0].executable_name = "/bin/true"; pi[0].pid = 4242; pi[0].state = PMIX_PROC_STATE_RUNNING;
    PMIX_LOAD_PROCID(&pi[1].proc, "n", 0);
    emit("array2", PMIX_PROC_INFO, pi, 2);
    char *keys[] = {"k1", "k2", NULL};
    pmix_query_t q[2];
    memset(q, 0, sizeof(q));
    q[0].keys = keys; q[0].qualifiers = appinfo; q[0].nqual = 1;
    emit("array2", PMIX_QUERY, q, 2);
    pmix_envar_t ev[2] = {{"PATH", "/bin", ':'}, {NULL, NULL, 0}};
    emit("array2", PMIX_ENVAR, ev, 2);
    pmix_coord_t co[2] = {{PMIX_COORD_LOGICAL_VIEW, coords3, 3}, {PMIX_COORD_PHYSICAL_VIEW, NULL, 0}};
    emit("array2", PMIX_COORD, co, 2);
    char *desc[] = {"first line", "second line", NULL};
    pmix_regattr_t ra[2];
    memset(ra, 0, sizeof(ra));
    ra[0].name = "PMIX_TEST_ATTR"; PMIX_LOAD_KEY(ra[0].string, "pmix.test.attr"); ra[0].type = PMIX_UINT32; ra[0].description = desc;
    PMIX_LOAD_KEY(ra[1].string, k511); ra[1].type = 300;
    emit("array2", PMIX_REGATTR, ra, 2);
    char *rx[2] = {"raw:node01,node02", "pmix[node[2:1-3]]"};
    emit("raw", PMIX_REGEX, rx, 1); emit("native", PMIX_REGEX, &rx[1], 1);
    pmix_cpuset_t cs = {NULL, NULL};
    emit("null", PMIX_PROC_CPUSET, &cs, 1);
    pmix_geometry_t geo[2];
    memset(geo, 0, sizeof(geo));
    geo[0].fabric = 7; geo[0].uuid = "uuid-fab"; geo[0].osname = "ib0"; geo[0].coordinates = co; geo[0].ncoords = 2;
    emit("array2", PMIX_GEOMETRY, geo, 2);
    pmix_device_distance_t dd[2] = {{"uuid-gpu0", "card0", PMIX_DEVTYPE_GPU, 10, 20}, {NULL, NULL, 0, 65535, 0}};
    emit("array2", PMIX_DEVICE_DIST, dd, 2);
    pmix_endpoint_t ep[2] = {{"uuid-nic0", "eth0", {"\xde\xad\x01", 3}}, {NULL, NULL, {NULL, 0}}};
    emit("array2", PMIX_ENDPOINT, ep, 2);
    pmix_disk_stats_t dk[1];
    disk_sample(&dk[0]);
    emit("basic", PMIX_DISK_STATS, dk, 1);
    pmix_net_stats_t nt[1];
    net_sample(&nt[0]);
    emit("basic", PMIX_NET_STATS, nt, 1);
    pmix_node_stats_t nd[1];
    node_sample(&nd[0]);
    emit("basic", PMIX_NODE_STATS, nd, 1);
    pmix_proc_stats_t ps[1];
    proc_stats_sample(&ps[0]);
    emit("basic", PMIX_PROC_STATS, ps, 1);
    /* a data buffer holding a packed UINT32 0x01020304 in this dialect */
    pmix_data_buffer_t dbs[2];
    PMIX_DATA_BUFFER_CONSTRUCT(&dbs[0]);
    PMIX_DATA_BUFFER_CONSTRUCT(&dbs[1]);
    uint32_t x = 0x01020304;
    PMIx_Data_pack(NULL, &dbs[0], &x, 1, PMIX_UINT32);
    emit("u32_and_empty", PMIX_DATA_BUFFER, dbs, 2);
    static char opaque[OPAQUE_BUFFER_SIZE];
    emit("probe_zeroed", PMIX_BUFFER, opaque, 1);
    pmix_pdata_t pd[1];
    memset(pd, 0, sizeof(pd));
    PMIX_LOAD_PROCID(&pd[0].proc, "nspace-a", 1); PMIX_LOAD_KEY(pd[0].key, "pub.key");
    pd[0].value.type = PMIX_STRING; pd[0].value.data.string = "pubval";
    emit("basic", PMIX_PDATA, pd, 1);
    uint16_t dtypes[] = {PMIX_UINT64, PMIX_STOR_ACCESS_TYPE, 300, 0};
    emit("edges", PMIX_DATA_TYPE, dtypes, 4);
}

/* The cases of the shared vector manifests (vectors/<release>/<dialect>/
 * manifest.tsv), with the same names and inputs, so that 4.2.2's bytes can
 * be compared case by case with the other releases. Left out, as there:
 *   VALUE/darray_null, INFO/v_darray_null: a DATA_ARRAY value whose array
 *     pointer is NULL makes PMIx_Data_pack dereference NULL (SIGSEGV);
 *   TOPO/local: the host's hwloc topology (XML and support bytes differ
 *     from machine to machine);
 *   NODE_STATS/with_substats: libpmix packs the address of the disk/net
 *     stats pointer instead of the array (bfrops.md section 4.15).
 * TYPE70_UNASSIGNED there is DEVICE here (our type table names code 70). */
static void shared_cases(void) {
    int ints3[3] = {1, -2, 3};
    emit("array3", PMIX_INT, ints3, 3);
    ONE(PMIX_INT16, int16_t, "zero", 0); ONE(PMIX_INT16, int16_t, "minus1", -1);
    ONE(PMIX_INT32, int32_t, "one", 1); ONE(PMIX_INT32, int32_t, "minus1", -1);
    ONE(PMIX_INT32, int32_t, "63", 63); ONE(PMIX_INT32, int32_t, "64", 64);
    ONE(PMIX_INT32, int32_t, "minus64", -64); ONE(PMIX_INT32, int32_t, "minus65", -65);
    ONE(PMIX_INT32, int32_t, "max", INT32_MAX);
    int32_t i32a[4] = {0, -1, 1000, -1000};
    emit("array4", PMIX_INT32, i32a, 4); emit("count0", PMIX_INT32, i32a, 0);
    ONE(PMIX_INT64, int64_t, "zero", 0); ONE(PMIX_INT64, int64_t, "minus1", -1);
    ONE(PMIX_INT64, int64_t, "max", INT64_MAX);
    ONE(PMIX_UINT, unsigned, "zero", 0); ONE(PMIX_UINT, unsigned, "one", 1);
    ONE(PMIX_UINT8, uint8_t, "zero", 0); ONE(PMIX_UINT8, uint8_t, "max", 255);
    ONE(PMIX_UINT16, uint16_t, "zero", 0); ONE(PMIX_UINT16, uint16_t, "0x1234", 0x1234);
    uint32_t u32v[] = {0, 1, 127, 128, 16383, 16384, 0x12345678};
    const char *u32n[] = {"zero", "one", "127", "128", "16383", "16384", "0x12345678"};
    for (int i = 0; i < 7; i++) ONE(PMIX_UINT32, uint32_t, u32n[i], u32v[i]);
    uint32_t u32a[3] = {1, 128, UINT32_MAX};
    emit("array3", PMIX_UINT32, u32a, 3);
    uint64_t u64v[] = {0, 1, 127, 128, 0x0123456789abcdefULL, 1ULL << 63};
    const char *u64n[] = {"zero", "one", "127", "128", "0x0123456789abcdef", "2pow63"};
    for (int i = 0; i < 6; i++) ONE(PMIX_UINT64, uint64_t, u64n[i], u64v[i]);
    emit("array4", PMIX_UINT64, u64s, 4);
    ONE(PMIX_FLOAT, float, "zero", 0.0f); ONE(PMIX_FLOAT, float, "minus3.25", -3.25f);
    ONE(PMIX_FLOAT, float, "1e30", 1e30f); ONE(PMIX_FLOAT, float, "1e-7", 1e-7f);
    ONE(PMIX_DOUBLE, double, "zero", 0.0); ONE(PMIX_DOUBLE, double, "minus1e-300", -1e-300);
    ONE(PMIX_DOUBLE, double, "1e300", 1e300);
    struct timeval tz = {0, 0}, tt = {1700000000, 123456}, tm1 = {-1, -1};
    ONE(PMIX_TIMEVAL, struct timeval, "zero", tz); ONE(PMIX_TIMEVAL, struct timeval, "typical", tt);
    ONE(PMIX_TIMEVAL, struct timeval, "minus1", tm1);
    ONE(PMIX_TIME, time_t, "zero", 0); ONE(PMIX_TIME, time_t, "typical", 1700000000); ONE(PMIX_TIME, time_t, "minus1", -1);
    ONE(PMIX_STATUS, pmix_status_t, "success", PMIX_SUCCESS); ONE(PMIX_STATUS, pmix_status_t, "error", PMIX_ERROR);
    ONE(PMIX_STATUS, pmix_status_t, "not_found", PMIX_ERR_NOT_FOUND);
    ONE(PMIX_PROC_RANK, pmix_rank_t, "zero", 0); ONE(PMIX_PROC_RANK, pmix_rank_t, "seven", 7);
    ONE(PMIX_PROC_RANK, pmix_rank_t, "wildcard", PMIX_RANK_WILDCARD); ONE(PMIX_PROC_RANK, pmix_rank_t, "undef", PMIX_RANK_UNDEF);
    ONE(PMIX_PROC_RANK, pmix_rank_t, "local_node", PMIX_RANK_LOCAL_NODE);
    ONE(PMIX_PROC_RANK, pmix_rank_t, "invalid", PMIX_RANK_INVALID);
    ONE(PMIX_PERSIST, uint8_t, "session", PMIX_PERSIST_SESSION);
    ONE(PMIX_POINTER, void *, "null", NULL);
    ONE(PMIX_SCOPE, uint8_t, "local", PMIX_LOCAL); ONE(PMIX_SCOPE, uint8_t, "global", PMIX_GLOBAL);
    ONE(PMIX_DATA_RANGE, uint8_t, "session", PMIX_RANGE_SESSION); ONE(PMIX_DATA_RANGE, uint8_t, "invalid", PMIX_RANGE_INVALID);
    ONE(PMIX_COMMAND, uint8_t, "five", 5);
    ONE(PMIX_INFO_DIRECTIVES, uint32_t, "zero", 0);
    ONE(PMIX_INFO_DIRECTIVES, uint32_t, "reqd_qual", PMIX_INFO_REQD | PMIX_INFO_QUALIFIER);
    ONE(PMIX_INFO_DIRECTIVES, uint32_t, "reserved", 0xffff0000u);
    ONE(PMIX_DATA_TYPE, uint16_t, "uint64", PMIX_UINT64);
    ONE(PMIX_DATA_TYPE, uint16_t, "stor_access_type", PMIX_STOR_ACCESS_TYPE);
    ONE(PMIX_DATA_TYPE, uint16_t, "300", 300);
    ONE(PMIX_PROC_STATE, uint8_t, "running", PMIX_PROC_STATE_RUNNING);
    ONE(PMIX_ALLOC_DIRECTIVE, uint8_t, "new", PMIX_ALLOC_NEW);
    ONE(PMIX_IOF_CHANNEL, uint16_t, "out_err", PMIX_FWD_STDOUT_CHANNEL | PMIX_FWD_STDERR_CHANNEL);
    ONE(PMIX_IOF_CHANNEL, uint16_t, "all", PMIX_FWD_ALL_CHANNELS);
    ONE(PMIX_JOB_STATE, uint8_t, "three", 3); ONE(PMIX_LINK_STATE, uint8_t, "two", 2);
    ONE(PMIX_DEVTYPE, uint64_t, "gpu_net", PMIX_DEVTYPE_GPU | PMIX_DEVTYPE_NETWORK);
    ONE(PMIX_DEVTYPE, uint64_t, "bit63", 1ULL << 63);
    ONE(PMIX_LOCTYPE, uint16_t, "share_node", PMIX_LOCALITY_SHARE_NODE);
    ONE(PMIX_STOR_MEDIUM, uint64_t, "four", 4); ONE(PMIX_STOR_ACCESS, uint64_t, "two", 2);
    ONE(PMIX_STOR_PERSIST, uint64_t, "eight", 8); ONE(PMIX_STOR_ACCESS_TYPE, uint16_t, "three", 3);

    pmix_proc_t pr[2];
    PMIX_LOAD_PROCID(&pr[0], "", PMIX_RANK_WILDCARD);
    emit("empty_wildcard", PMIX_PROC, pr, 1);
    PMIX_LOAD_PROCID(&pr[0], ns255, 1);
    emit("nspace255", PMIX_PROC, pr, 1);
    PMIX_LOAD_PROCID(&pr[0], "ns1", 0); PMIX_LOAD_PROCID(&pr[1], "ns2", PMIX_RANK_UNDEF);
    emit("array2", PMIX_PROC, pr, 2);
    pmix_nspace_t nsp;
    PMIX_LOAD_NSPACE(nsp, "nspace-b");
    emit("basic", PMIX_PROC_NSPACE, &nsp, 1);
    pmix_byte_object_t bo2[2] = {{(char *)bo_bytes, 4}, {NULL, 0}};
    emit("array2", PMIX_BYTE_OBJECT, bo2, 2);
    pmix_byte_object_t zb = {(char *)z8191, sizeof(z8191)};
    emit("a8191_zlib", PMIX_COMPRESSED_STRING, &zb, 1);
    emit("a8191_zlib", PMIX_COMPRESSED_BYTE_OBJECT, &zb, 1);

    /* a non-empty cpuset: libpmix 4.2.2 cannot pack it (bfrops.md 4.13) */
    pmix_cpuset_t cs;
    memset(&cs, 0, sizeof(cs));
    /* 4.2.2 writes into the string it parses: it must be writable */
    char cstr[] = "hwloc:0-3,8";
    if (PMIX_SUCCESS == PMIx_Parse_cpuset_string(cstr, &cs)) {
        emit("0-3_8", PMIX_PROC_CPUSET, &cs, 1);
        pmix_value_t v;
        memset(&v, 0, sizeof(v));
        v.type = PMIX_PROC_CPUSET; v.data.cpuset = &cs;
        emit("proc_cpuset", PMIX_VALUE, &v, 1);
        pmix_info_t info;
        memset(&info, 0, sizeof(info));
        PMIX_LOAD_KEY(info.key, "k");
        info.value = v;
        emit("v_proc_cpuset", PMIX_INFO, &info, 1);
    }

    pmix_info_t in[3];
    memset(in, 0, sizeof(in));
    PMIX_INFO_LOAD(&in[0], "pmix.test.key", "hello", PMIX_STRING);
    emit("string", PMIX_INFO, &in[0], 1);
    bool yes = true;
    PMIX_INFO_LOAD(&in[1], "pmix.test.flag", &yes, PMIX_BOOL);
    in[1].flags = PMIX_INFO_REQD;
    emit("reqd_bool", PMIX_INFO, &in[1], 1);
    PMIX_LOAD_KEY(in[2].key, "pmix.test.undef");
    emit("undef_value", PMIX_INFO, &in[2], 1);

    pmix_proc_info_t pi;
    memset(&pi, 0, sizeof(pi));
    PMIX_LOAD_PROCID(&pi.proc, "nspace-a", 1);
    pi.hostname = "node01"; pi.executable_name = "/bin/true"; pi.pid = 4242; pi.exit_code = -1;
    pi.state = PMIX_PROC_STATE_RUNNING;
    emit("basic", PMIX_PROC_INFO, &pi, 1);

    uint64_t two[2] = {0, 1};
    bool one_true[1] = {true};
    uint8_t u8one[1] = {1};
    pmix_data_array_t inner[2] = {{PMIX_UINT64, 2, two}, {PMIX_BOOL, 1, one_true}};
    pmix_data_array_t dd = {PMIX_DATA_ARRAY, 2, inner};
    emit("darray_of_darray", PMIX_DATA_ARRAY, &dd, 1);
    pmix_data_array_t ut[2] = {{PMIX_UNDEF, 0, NULL}, {PMIX_UINT8, 1, u8one}};
    emit("undef_then_uint8", PMIX_DATA_ARRAY, ut, 2);

    char *qkeys[] = {"pmix.qry.ns", "pmix.test.k2", NULL};
    pmix_proc_t qp;
    PMIX_LOAD_PROCID(&qp, "nspace-a", 3);
    pmix_info_t qual;
    memset(&qual, 0, sizeof(qual));
    PMIX_INFO_LOAD(&qual, PMIX_PROCID, &qp, PMIX_PROC);
    pmix_query_t q;
    memset(&q, 0, sizeof(q));
    q.keys = qkeys; q.qualifiers = &qual; q.nqual = 1;
    emit("basic", PMIX_QUERY, &q, 1);
    PMIX_INFO_DESTRUCT(&qual);

    pmix_envar_t ev[2] = {{"PATH", "/bin", ':'}, {NULL, NULL, 0}};
    emit("path", PMIX_ENVAR, &ev[0], 1); emit("nulls", PMIX_ENVAR, &ev[1], 1);
    pmix_coord_t co = {PMIX_COORD_LOGICAL_VIEW, coords3, 3};
    emit("logical3", PMIX_COORD, &co, 1);
    char *desc[] = {"first line", "second line", NULL};
    pmix_regattr_t ra;
    memset(&ra, 0, sizeof(ra));
    ra.name = "PMIX_TEST_ATTR"; PMIX_LOAD_KEY(ra.string, "pmix.test.attr"); ra.type = PMIX_UINT32; ra.description = desc;
    emit("basic", PMIX_REGATTR, &ra, 1);
    emit("nodes3", PMIX_REGEX, &regex3, 1);
    pmix_geometry_t geo;
    memset(&geo, 0, sizeof(geo));
    geo.fabric = 7; geo.uuid = "uuid-fab"; geo.osname = "ib0"; geo.coordinates = &co; geo.ncoords = 1;
    emit("basic", PMIX_GEOMETRY, &geo, 1);
    pmix_device_distance_t dist = {"uuid-gpu0", "card0", PMIX_DEVTYPE_GPU, 10, 20};
    emit("basic", PMIX_DEVICE_DIST, &dist, 1);
    pmix_endpoint_t ep = {"uuid-nic0", "eth0", {"\xde\xad\x01", 3}};
    emit("basic", PMIX_ENDPOINT, &ep, 1);
    pmix_data_buffer_t db[2];
    PMIX_DATA_BUFFER_CONSTRUCT(&db[0]);
    PMIX_DATA_BUFFER_CONSTRUCT(&db[1]);
    uint32_t x = 0x01020304;
    PMIx_Data_pack(NULL, &db[0], &x, 1, PMIX_UINT32);
    emit("u32", PMIX_DATA_BUFFER, &db[0], 1);
    emit("empty", PMIX_DATA_BUFFER, &db[1], 1);

    /* types the active component does not register, from zeroed storage:
     * the pack fails. PMIx_Data_type_string answers UNKNOWN for exactly
     * those (MODEX and INFO_ARRAY are still registered before v4). */
    static char zero[OPAQUE_BUFFER_SIZE];
    pmix_data_type_t probes[4] = {PMIX_UNDEF, 29 /* MODEX, removed */, 44 /* INFO_ARRAY, removed */,
                                  70 /* DEVICE in v6.0+, unassigned in 4.2.2 */};
    for (int i = 0; i < 4; i++)
        if (0 == strcmp(PMIx_Data_type_string(probes[i]), "UNKNOWN")) emit("probe", probes[i], zero, 1);

    /* A VALUE / INFO holding a data buffer. libpmix 4.2.2 packs the union
     * as if it held the pmix_data_buffer_t itself (bfrops.md 4.6): it
     * reads 16 bytes past the union. Here those bytes are our zeroed
     * padding, so libpmix writes "empty buffer" whatever the buffer holds;
     * the case is deterministic, and listed as a libpmix defect. */
    struct { pmix_value_t v; char pad[64]; } pv;
    memset(&pv, 0, sizeof(pv));
    pv.v.type = PMIX_DATA_BUFFER; pv.v.data.dbuf = &db[0];
    emit("data_buffer", PMIX_VALUE, &pv.v, 1);
    struct { pmix_info_t i; char pad[64]; } pinf;
    memset(&pinf, 0, sizeof(pinf));
    PMIX_LOAD_KEY(pinf.i.key, "k");
    pinf.i.value.type = PMIX_DATA_BUFFER; pinf.i.value.data.dbuf = &db[0];
    emit("v_data_buffer", PMIX_INFO, &pinf.i, 1);
    PMIX_DATA_BUFFER_DESTRUCT(&db[0]);
    PMIX_DATA_BUFFER_DESTRUCT(&db[1]);

#ifdef PMIXW_HAVE_KVAL
    /* KVAL (28), libpmix's internal key/value pair: key, then a VALUE. A
     * NULL value pointer crashes 4.2.2 (bfrops.md 4.8): not generated. */
    pmix_value_t kvv[2];
    memset(kvv, 0, sizeof(kvv));
    kvv[0].type = PMIX_UINT32; kvv[0].data.uint32 = 7;
    kvv[1].type = PMIX_STRING; kvv[1].data.string = "v";
    pmix_kval_t kv[2];
    memset(kv, 0, sizeof(kv));
    kv[0].key = "pmix.test.kv"; kv[0].value = &kvv[0];
    kv[1].key = NULL; kv[1].value = &kvv[1];
    emit("basic", PMIX_KVAL, kv, 1);
    emit("array2", PMIX_KVAL, kv, 2);
#endif
}

/* More values per pack call, and mixed nesting. */
static void more_cases(void) {
    /* an array of arrays inside an info inside an array of values */
    static uint16_t u16s[3] = {0, 64, 65535};
    static int8_t i8s[2] = {-128, 127};
    static pmix_data_array_t leaves[2] = {{PMIX_UINT16, 3, u16s}, {PMIX_INT8, 2, i8s}};
    static pmix_data_array_t aoa = {PMIX_DATA_ARRAY, 2, leaves};
    pmix_info_t inf;
    memset(&inf, 0, sizeof(inf));
    PMIX_LOAD_KEY(inf.key, "aoa"); inf.flags = PMIX_INFO_REQD | PMIX_INFO_PERSISTENT;
    inf.value.type = PMIX_DATA_ARRAY; inf.value.data.darray = &aoa;
    pmix_value_t vs[3]; /* [0] unused */
    memset(vs, 0, sizeof(vs));
    vs[1].type = PMIX_DATA_ARRAY; vs[1].data.darray = &aoa;
    vs[2].type = PMIX_SIZE; vs[2].data.size = SIZE_MAX;
    emit("aoa_in_value", PMIX_VALUE, &vs[1], 1);
    emit("size_max", PMIX_VALUE, &vs[2], 1);
    emit("aoa_info", PMIX_INFO, &inf, 1);
    pmix_data_array_t ainfo = {PMIX_INFO, 1, &inf};
    emit("of_info_aoa", PMIX_DATA_ARRAY, &ainfo, 1);
    /* several INFO per call, each flag bit set alone and all together */
    pmix_info_t fl[8];
    memset(fl, 0, sizeof(fl));
    uint32_t bits[8] = {0, PMIX_INFO_REQD, PMIX_INFO_ARRAY_END, PMIX_INFO_REQD_PROCESSED, PMIX_INFO_QUALIFIER,
                        PMIX_INFO_PERSISTENT, PMIX_INFO_DIR_RESERVED, 0xffffffffu};
    for (int i = 0; i < 8; i++) {
        snprintf(fl[i].key, sizeof(fl[i].key), "f%d", i);
        fl[i].flags = bits[i];
        fl[i].value.type = PMIX_INT32; fl[i].value.data.int32 = -i;
    }
    emit("flags_array8", PMIX_INFO, fl, 8);
    /* 7-bit varint boundaries through the signed 64-bit and size paths */
    int64_t i64b[] = {63, 64, -64, -65, 8191, 8192, -8192, -8193, (1LL << 55) - 1, -(1LL << 55)};
    emit("varint_bounds", PMIX_INT64, i64b, 10);
    size_t szb[] = {63, 64, 127, 128, 16383, 16384, (1ULL << 63) - 1, 1ULL << 63};
    emit("varint_bounds", PMIX_SIZE, szb, 8);
    /* ranks and strings in arrays */
    pmix_rank_t rk[4] = {PMIX_RANK_WILDCARD, PMIX_RANK_UNDEF, PMIX_RANK_LOCAL_NODE, PMIX_RANK_INVALID};
    pmix_data_array_t rka = {PMIX_PROC_RANK, 4, rk};
    emit("of_special_ranks", PMIX_DATA_ARRAY, &rka, 1);
    char *strs[4] = {"", NULL, s511, "caf\xe9"};
    emit("edges", PMIX_STRING, strs, 4);
    pmix_value_t sv[4];
    memset(sv, 0, sizeof(sv));
    for (int i = 0; i < 4; i++) { sv[i].type = PMIX_STRING; sv[i].data.string = strs[i]; }
    emit("strings4", PMIX_VALUE, sv, 4);
}

static void value_info_cases(void) {
    char name[64];
    for (pmix_data_type_t t = 0; t <= PMIX_STOR_ACCESS_TYPE; t++) {
        pmix_value_t v;
        if (!sample_value(&v, t) || PMIX_PROC_CPUSET == t || PMIX_TOPO == t || PMIX_DATA_BUFFER == t)
            continue;
        char lower[48];
        const char *s = short_name(t);
        size_t i = 0;
        for (; s[i] && i < sizeof(lower) - 1; i++) lower[i] = (char)((s[i] >= 'A' && s[i] <= 'Z') ? s[i] + 32 : s[i]);
        lower[i] = 0;
        emit(lower, PMIX_VALUE, &v, 1);
        pmix_info_t info;
        memset(&info, 0, sizeof(info));
        PMIX_LOAD_KEY(info.key, "k");
        info.value = v;
        snprintf(name, sizeof(name), "v_%s", lower);
        emit(name, PMIX_INFO, &info, 1);
        if (PMIX_UNDEF != t && PMIX_DATA_ARRAY != t) {
            /* a one-element array of the type */
            pmix_data_array_t da = {t, 1, (void *)value_data(&v)};
            snprintf(name, sizeof(name), "of_%s", lower);
            emit(name, PMIX_DATA_ARRAY, &da, 1);
        }
    }
    pmix_value_t v2[2];
    memset(v2, 0, sizeof(v2));
    v2[0].type = PMIX_UINT32; v2[0].data.uint32 = 1; v2[1].type = PMIX_STRING; v2[1].data.string = NULL;
    emit("array2", PMIX_VALUE, v2, 2);
    pmix_data_array_t undef0 = {PMIX_UNDEF, 0, NULL};
    pmix_value_t vu = {.type = PMIX_DATA_ARRAY};
    vu.data.darray = &undef0;
    emit("darray_undef", PMIX_VALUE, &vu, 1);

    pmix_info_t infos[6];
    memset(infos, 0, sizeof(infos));
    PMIX_INFO_LOAD(&infos[0], "pmix.job.size", NULL, PMIX_UNDEF);
    infos[0].value.type = PMIX_UINT32; infos[0].value.data.uint32 = 2;
    PMIX_INFO_LOAD(&infos[1], "pmix.lpeers", "0,1", PMIX_STRING);
    bool t = true;
    PMIX_INFO_LOAD(&infos[2], "pmix.collect", &t, PMIX_BOOL);
    emit("array3", PMIX_INFO, infos, 3);
    PMIX_LOAD_KEY(infos[3].key, k511); infos[3].value.type = PMIX_UINT8; infos[3].value.data.uint8 = 1;
    emit("key511", PMIX_INFO, &infos[3], 1);
    PMIX_LOAD_KEY(infos[4].key, ""); infos[4].value.type = PMIX_INT; infos[4].value.data.integer = 1;
    emit("empty_key", PMIX_INFO, &infos[4], 1);
    PMIX_LOAD_KEY(infos[5].key, "pmix.test.u32"); infos[5].flags = 0x1001b;
    infos[5].value.type = PMIX_UINT32; infos[5].value.data.uint32 = 0xdeadbeef;
    emit("allflags_u32", PMIX_INFO, &infos[5], 1);
    uint32_t bits[] = {PMIX_INFO_REQD, PMIX_INFO_ARRAY_END, PMIX_INFO_REQD_PROCESSED, PMIX_INFO_QUALIFIER,
                       PMIX_INFO_PERSISTENT, PMIX_INFO_DIR_RESERVED, 0x80000000u};
    for (int i = 0; i < 7; i++) {
        infos[5].flags = bits[i];
        snprintf(name, sizeof(name), "flag_%x", bits[i]);
        emit(name, PMIX_INFO, &infos[5], 1);
    }

    /* nested data arrays */
    pmix_info_t inner[2];
    memset(inner, 0, sizeof(inner));
    PMIX_LOAD_KEY(inner[0].key, "inner.u64s"); inner[0].value.type = PMIX_DATA_ARRAY; inner[0].value.data.darray = &darr_u64;
    PMIX_INFO_LOAD(&inner[1], "inner.str", "x", PMIX_STRING);
    pmix_data_array_t dinfo = {PMIX_INFO, 2, inner};
    pmix_info_t outer;
    memset(&outer, 0, sizeof(outer));
    PMIX_LOAD_KEY(outer.key, "outer"); outer.value.type = PMIX_DATA_ARRAY; outer.value.data.darray = &dinfo;
    emit("nested_darray", PMIX_INFO, &outer, 1);
    pmix_data_array_t level[5];
    level[0] = darr_u64;
    for (int i = 1; i < 5; i++) { level[i].type = PMIX_DATA_ARRAY; level[i].size = 1; level[i].array = &level[i - 1]; }
    emit("depth5", PMIX_DATA_ARRAY, &level[4], 1);
    pmix_value_t vals[2];
    memset(vals, 0, sizeof(vals));
    vals[0].type = PMIX_INT16; vals[0].data.int16 = -2; vals[1].type = PMIX_STRING; vals[1].data.string = "s";
    pmix_data_array_t arrs[9] = {
        {PMIX_UINT64, 4, u64s}, {PMIX_UINT8, 0, NULL}, {PMIX_VALUE, 2, vals}, {PMIX_INFO, 2, inner},
        {PMIX_UNDEF, 0, NULL}, {PMIX_UNDEF, 2, NULL}, {PMIX_PROC, 0, NULL}, {PMIX_BOOL, 0, NULL}, {PMIX_STRING, 0, NULL}};
    emit("uint64x4", PMIX_DATA_ARRAY, &arrs[0], 1);
    emit("empty_uint8", PMIX_DATA_ARRAY, &arrs[1], 1);
    emit("value2", PMIX_DATA_ARRAY, &arrs[2], 1);
    pmix_info_t i2[2];
    memset(i2, 0, sizeof(i2));
    PMIX_LOAD_KEY(i2[0].key, "a"); i2[0].value.type = PMIX_UINT32; i2[0].value.data.uint32 = 1;
    PMIX_LOAD_KEY(i2[1].key, "b"); i2[1].flags = PMIX_INFO_REQD;
    i2[1].value.type = PMIX_DATA_ARRAY; i2[1].value.data.darray = &darr_u64;
    pmix_data_array_t a_i2 = {PMIX_INFO, 2, i2};
    emit("info2_nested", PMIX_DATA_ARRAY, &a_i2, 1);
    emit("undef_empty", PMIX_DATA_ARRAY, &arrs[4], 1);
    emit("undef_size2", PMIX_DATA_ARRAY, &arrs[5], 1);
    emit("several", PMIX_DATA_ARRAY, arrs, 4);
    pid_t pids[2] = {5, 6};
    char *strs[3] = {"a", "", NULL};
    pmix_proc_t pr[2];
    PMIX_LOAD_PROCID(&pr[0], "ns1", 0); PMIX_LOAD_PROCID(&pr[1], "ns1", 1);
    pmix_byte_object_t bo1 = {(char *)bo_bytes, 4};
    pmix_data_array_t more[5] = {{PMIX_PID, 2, pids}, {PMIX_STRING, 3, strs}, {PMIX_PROC, 2, pr},
                                 {PMIX_BYTE_OBJECT, 1, &bo1}, {PMIX_POINTER, 2, strs}};
    emit("pid2", PMIX_DATA_ARRAY, &more[0], 1);
    emit("string3", PMIX_DATA_ARRAY, &more[1], 1);
    emit("proc2", PMIX_DATA_ARRAY, &more[2], 1);
    emit("bo1", PMIX_DATA_ARRAY, &more[3], 1);
    emit("pointer2", PMIX_DATA_ARRAY, &more[4], 1);
}

int main(void) {
    memset(k511, 'k', 511);
    memset(ns255, 'n', 255);
    memset(s511, 'k', 511);
    if (init_tool()) return 1;
    if (PMIX_SUCCESS != PMIx_generate_regex("node01,node02,node03", &regex3) || NULL == regex3) {
        fprintf(stderr, "PMIx_generate_regex failed\n");
        return 1;
    }
    scalar_cases();
    struct_cases();
    value_info_cases();
    shared_cases();
    more_cases();
    free(regex3);
    PMIx_tool_finalize();
    return 0;
}
