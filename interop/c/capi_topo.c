/* The topology and cpuset calls (PMIx_Load_topology, PMIx_Get_cpuset,
 * PMIx_Parse_cpuset_string, PMIx_Get_relative_locality,
 * PMIx_Compute_distances and its _nb form,
 * PMIx_server_generate_locality_string, the two destructs) and the
 * PMIX_PROC_CPUSET and
 * PMIX_TOPO values, printed so that the same program linked to libpmix
 * and to pmix-wire's libpmix can be compared line by line (capi/tests/
 * libpmix_capi_topo.rs). Linked with hwloc, as a program using what
 * these calls return is: the objects are read with hwloc's own calls.
 * Run as a singleton and as each rank of `pmixw run -n 2`; every line
 * starts with the rank. Written for pmix-wire. */
#include <hwloc.h>
#include <pmix.h>
#include <pmix_server.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int me = 0;

#define OUT(...)                                                                                   \
    do {                                                                                           \
        printf("%d ", me);                                                                         \
        printf(__VA_ARGS__);                                                                       \
        printf("\n");                                                                              \
        fflush(stdout);                                                                            \
    } while (0)

static const char *str(const char *s)
{
    return NULL == s ? "(null)" : s;
}

/* a bitmap's list form, "(null)" for none */
static void bitmap(const char *what, pmix_status_t rc, pmix_cpuset_t *c)
{
    char *l = NULL;
    if (NULL != c->bitmap) {
        hwloc_bitmap_list_asprintf(&l, (hwloc_const_bitmap_t) c->bitmap);
    }
    OUT("%s rc=%d source=%s bitmap=%s", what, rc, str(c->source), str(l));
    free(l);
}

/* what a topology is: its source and, if hwloc's, its depth and counts */
static void topology(const char *what, pmix_status_t rc, pmix_topology_t *t)
{
    if (NULL == t->topology) {
        OUT("%s rc=%d source=%s topology=NULL", what, rc, str(t->source));
        return;
    }
    hwloc_topology_t h = (hwloc_topology_t) t->topology;
    OUT("%s rc=%d source=%s depth=%d pus=%d cores=%d thissystem=%d", what, rc, str(t->source),
        hwloc_topology_get_depth(h), hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PU),
        hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_CORE), hwloc_topology_is_thissystem(h));
}

static void hex(const char *what, pmix_status_t rc, pmix_data_buffer_t *b)
{
    char line[256];
    size_t n, k = 0;
    for (n = 0; n < b->bytes_used && k + 3 < sizeof(line); n++) {
        k += snprintf(line + k, sizeof(line) - k, "%02x", (unsigned char) b->base_ptr[n]);
    }
    line[k] = '\0';
    OUT("%s rc=%d bytes=%zu %s", what, rc, b->bytes_used, line);
}

/* a cpuset packed, unpacked and copied (the PMIX_PROC_CPUSET type) */
static void cpuset_value(const char *what, pmix_cpuset_t *c)
{
    pmix_data_buffer_t b;
    pmix_status_t rc;
    pmix_cpuset_t back, *copy = NULL;
    int32_t cnt = 1;
    char label[128];

    PMIX_DATA_BUFFER_CONSTRUCT(&b);
    rc = PMIx_Data_pack(NULL, &b, c, 1, PMIX_PROC_CPUSET);
    snprintf(label, sizeof(label), "%s pack", what);
    hex(label, rc, &b);
    if (PMIX_SUCCESS == rc) {
        PMIX_CPUSET_CONSTRUCT(&back);
        rc = PMIx_Data_unpack(NULL, &b, &back, &cnt, PMIX_PROC_CPUSET);
        snprintf(label, sizeof(label), "%s unpack", what);
        bitmap(label, rc, &back);
        PMIx_Cpuset_destruct(&back);
    }
    PMIX_DATA_BUFFER_DESTRUCT(&b);
    rc = PMIx_Data_copy((void **) &copy, c, PMIX_PROC_CPUSET);
    snprintf(label, sizeof(label), "%s copy", what);
    if (PMIX_SUCCESS == rc && NULL != copy) {
        bitmap(label, rc, copy);
        PMIx_Cpuset_destruct(copy);
        free(copy);
    } else {
        OUT("%s rc=%d", label, rc);
    }
}

/* a topology packed and unpacked (the PMIX_TOPO type): the XML's length
 * is the machine's, so only the round trip's result is printed */
static void topo_value(const char *what, pmix_topology_t *t)
{
    pmix_data_buffer_t b;
    pmix_status_t rc;
    pmix_topology_t back, *copy = NULL;
    int32_t cnt = 1;
    char label[128];

    PMIX_DATA_BUFFER_CONSTRUCT(&b);
    rc = PMIx_Data_pack(NULL, &b, t, 1, PMIX_TOPO);
    OUT("%s pack rc=%d nonempty=%d", what, rc, b.bytes_used > 0);
    if (PMIX_SUCCESS == rc) {
        PMIX_TOPOLOGY_CONSTRUCT(&back);
        rc = PMIx_Data_unpack(NULL, &b, &back, &cnt, PMIX_TOPO);
        snprintf(label, sizeof(label), "%s unpack", what);
        topology(label, rc, &back);
        PMIx_Topology_destruct(&back);
    }
    PMIX_DATA_BUFFER_DESTRUCT(&b);
    rc = PMIx_Data_copy((void **) &copy, t, PMIX_TOPO);
    snprintf(label, sizeof(label), "%s copy", what);
    if (PMIX_SUCCESS == rc && NULL != copy) {
        topology(label, rc, copy);
        PMIx_Topology_destruct(copy);
        free(copy);
    } else {
        OUT("%s rc=%d", label, rc);
    }
}

static void relative(const char *a, const char *b)
{
    pmix_locality_t loc = 0x1234;
    pmix_status_t rc = PMIx_Get_relative_locality(a, b, &loc);
    OUT("relative %s | %s rc=%d locality=0x%04x", a, b, rc, loc);
}

static void parse(const char *s)
{
    pmix_cpuset_t c;
    char buf[64];
    PMIX_CPUSET_CONSTRUCT(&c);
    /* libpmix writes into the string while it parses: a copy */
    snprintf(buf, sizeof(buf), "%s", s);
    pmix_status_t rc = PMIx_Parse_cpuset_string(buf, &c);
    char label[96];
    snprintf(label, sizeof(label), "parse %s", s);
    bitmap(label, rc, &c);
    if (PMIX_SUCCESS == rc) {
        cpuset_value(label, &c);
    }
    PMIx_Cpuset_destruct(&c);
    OUT("parse %s destructed source=%s bitmap=%s", s, str(c.source),
        NULL == c.bitmap ? "NULL" : "set");
}

/* the distances one call computed, one line each */
static void print_distances(const char *what, pmix_status_t rc, pmix_device_distance_t *d, size_t nd)
{
    size_t n;
    OUT("distances %s rc=%d n=%zu", what, rc, nd);
    for (n = 0; PMIX_SUCCESS == rc && NULL != d && n < nd; n++) {
        /* the UUID carries the device's address: only its scheme */
        const char *u = NULL == d[n].uuid ? NULL : strstr(d[n].uuid, "://");
        int len = NULL == u ? 0 : (int) (u - d[n].uuid);
        OUT("distance %s type=0x%llx osname=%s uuid=%.*s%s min=%u max=%u", what,
            (unsigned long long) d[n].type, str(d[n].osname), len,
            NULL == d[n].uuid ? "" : d[n].uuid, NULL == d[n].uuid ? "(null)" : "://…",
            d[n].mindist, d[n].maxdist);
    }
}

static void distances_in(const char *what, pmix_topology_t *t, pmix_cpuset_t *c, pmix_info_t *info,
                         size_t ninfo)
{
    pmix_device_distance_t *d = NULL;
    size_t nd = 99;
    pmix_status_t rc = PMIx_Compute_distances(t, c, info, ninfo, &d, &nd);
    print_distances(what, rc, d, nd);
    if (NULL != d) {
        PMIX_DEVICE_DIST_FREE(d, nd);
    }
}

static void distances(const char *what, pmix_info_t *info, size_t ninfo)
{
    distances_in(what, NULL, NULL, info, ninfo);
}

/* the non-blocking form: what it returns, then what its callback gets */
static volatile int nb_done = 0;
static pmix_status_t nb_status;
static pmix_device_distance_t *nb_dist = NULL;
static size_t nb_n = 0;

static void nb_cb(pmix_status_t status, pmix_device_distance_t *dist, size_t ndist, void *cbdata,
                  pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    size_t n;
    (void) cbdata;
    nb_status = status;
    nb_n = ndist;
    nb_dist = NULL;
    if (0 < ndist && NULL != dist) {
        PMIX_DEVICE_DIST_CREATE(nb_dist, ndist);
        for (n = 0; n < ndist; n++) {
            nb_dist[n].uuid = NULL == dist[n].uuid ? NULL : strdup(dist[n].uuid);
            nb_dist[n].osname = NULL == dist[n].osname ? NULL : strdup(dist[n].osname);
            nb_dist[n].type = dist[n].type;
            nb_dist[n].mindist = dist[n].mindist;
            nb_dist[n].maxdist = dist[n].maxdist;
        }
    }
    if (NULL != release_fn) {
        release_fn(release_cbdata);
    }
    nb_done = 1;
}

static void distances_nb(const char *what, pmix_topology_t *t, pmix_cpuset_t *c,
                         pmix_info_t *info, size_t ninfo)
{
    char label[96];
    pmix_status_t rc;
    nb_done = 0;
    rc = PMIx_Compute_distances_nb(t, c, info, ninfo, nb_cb, NULL);
    OUT("distances_nb %s rc=%d", what, rc);
    if (PMIX_SUCCESS != rc) {
        return;
    }
    while (!nb_done) {
        usleep(1000);
    }
    snprintf(label, sizeof(label), "%s cb", what);
    print_distances(label, nb_status, nb_dist, nb_n);
    if (NULL != nb_dist) {
        PMIX_DEVICE_DIST_FREE(nb_dist, nb_n);
        nb_dist = NULL;
    }
}

/* the distances asked for in each way the standard's attributes allow,
 * from each kind of cpuset, blocking and not */
static void all_distances(pmix_topology_t *t1)
{
    pmix_info_t info[2];
    pmix_device_type_t ty;
    pmix_cpuset_t c;
    pmix_topology_t other;
    char buf[32];
    static const char *sets[] = {"hwloc:0", "hwloc:1", "hwloc:0-1", "hwloc:", "hwloc:5", NULL};
    size_t n;

    distances("all", NULL, 0);
    distances_in("topo", t1, NULL, NULL, 0);
    ty = PMIX_DEVTYPE_NETWORK;
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_TYPE, &ty, PMIX_DEVTYPE);
    distances("network", info, 1);
    ty = PMIX_DEVTYPE_NETWORK | PMIX_DEVTYPE_GPU | PMIX_DEVTYPE_OPENFABRICS;
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_TYPE, &ty, PMIX_DEVTYPE);
    distances("net+gpu+ofi", info, 1);
    distances_in("topo net+gpu+ofi", t1, NULL, info, 1);
    ty = PMIX_DEVTYPE_BLOCK;
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_TYPE, &ty, PMIX_DEVTYPE);
    distances("block", info, 1);
    distances("none", info, 0);
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_ID, "ETH0", PMIX_STRING);
    distances("id ETH0", info, 1);
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_ID, "nosuch", PMIX_STRING);
    distances("id nosuch", info, 1);
    PMIX_INFO_LOAD(&info[1], PMIX_DEVICE_ID, "eth0", PMIX_STRING);
    distances("id nosuch,eth0", info, 2);
    ty = PMIX_DEVTYPE_NETWORK;
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_TYPE, &ty, PMIX_DEVTYPE);
    PMIX_INFO_LOAD(&info[1], PMIX_DEVICE_ID, "ETH0", PMIX_STRING);
    distances("network id ETH0", info, 2);
    PMIX_INFO_LOAD(&info[1], PMIX_DEVICE_ID, "nosuch", PMIX_STRING);
    distances("network id nosuch", info, 2);
    for (n = 0; NULL != sets[n]; n++) {
        PMIX_CPUSET_CONSTRUCT(&c);
        snprintf(buf, sizeof(buf), "%s", sets[n]);
        if (PMIX_SUCCESS == PMIx_Parse_cpuset_string(buf, &c)) {
            snprintf(buf, sizeof(buf), "cpus %s", sets[n]);
            distances_in(buf, NULL, &c, NULL, 0);
            distances_in(buf, t1, &c, NULL, 0);
            distances_nb(buf, NULL, &c, NULL, 0);
            PMIx_Cpuset_destruct(&c);
        }
    }
    PMIX_CPUSET_CONSTRUCT(&c);
    distances_in("cpus nosource", NULL, &c, NULL, 0);
    distances_in("topo cpus nosource", t1, &c, NULL, 0);
    c.source = "other";
    distances_in("cpus other", NULL, &c, NULL, 0);
    PMIX_TOPOLOGY_CONSTRUCT(&other);
    other.source = "other";
    distances_in("topo other", &other, NULL, NULL, 0);
    distances_nb("all", NULL, NULL, NULL, 0);
    distances_nb("topo", t1, NULL, NULL, 0);
    ty = PMIX_DEVTYPE_BLOCK;
    PMIX_INFO_LOAD(&info[0], PMIX_DEVICE_TYPE, &ty, PMIX_DEVTYPE);
    distances_nb("block", NULL, NULL, info, 1);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
}

/* the locality string of a cpuset, and the relative locality of two
 * processes of that one string */
static void genloc(const char *what, pmix_cpuset_t *c)
{
    char *loc = (char *) "untouched", both[256];
    pmix_status_t rc = PMIx_server_generate_locality_string(c, &loc);
    OUT("locality %s rc=%d string=%s", what, rc, str(loc));
    if (PMIX_SUCCESS == rc && NULL != loc) {
        snprintf(both, sizeof(both), "hwloc:%s", loc);
        relative(both, both);
        free(loc);
    }
}

static void all_localities(void)
{
    pmix_cpuset_t c;
    char buf[32], label[48];
    static const char *sets[] = {"hwloc:0", "hwloc:1", "hwloc:0-1", "hwloc:", "hwloc:5",
                                 "hwloc:0-", "hwloc:1-", NULL};
    size_t n;

    PMIX_CPUSET_CONSTRUCT(&c);
    if (PMIX_SUCCESS == PMIx_Get_cpuset(&c, PMIX_CPUBIND_PROCESS)) {
        genloc("process", &c);
    }
    PMIx_Cpuset_destruct(&c);
    for (n = 0; NULL != sets[n]; n++) {
        PMIX_CPUSET_CONSTRUCT(&c);
        snprintf(buf, sizeof(buf), "%s", sets[n]);
        if (PMIX_SUCCESS == PMIx_Parse_cpuset_string(buf, &c)) {
            snprintf(label, sizeof(label), "%s", sets[n]);
            genloc(label, &c);
            PMIx_Cpuset_destruct(&c);
        }
    }
    PMIX_CPUSET_CONSTRUCT(&c);
    c.source = "hwloc";
    genloc("nobitmap", &c);
    c.source = "other";
    genloc("other", &c);
}

/* the topology calls before PMIx_Init (and after PMIx_Finalize) */
static void uninitialised(const char *when)
{
    pmix_topology_t t;
    pmix_cpuset_t c;
    pmix_locality_t loc = 0;
    pmix_device_distance_t *d = NULL;
    size_t nd = 0;
    char s[] = "hwloc:0-1";
    PMIX_TOPOLOGY_CONSTRUCT(&t);
    PMIX_CPUSET_CONSTRUCT(&c);
    OUT("%s load rc=%d", when, PMIx_Load_topology(&t));
    OUT("%s get_cpuset rc=%d", when, PMIx_Get_cpuset(&c, PMIX_CPUBIND_PROCESS));
    OUT("%s parse rc=%d", when, PMIx_Parse_cpuset_string(s, &c));
    OUT("%s relative rc=%d", when, PMIx_Get_relative_locality("hwloc:CR0", "hwloc:CR0", &loc));
    OUT("%s distances rc=%d", when, PMIx_Compute_distances(NULL, NULL, NULL, 0, &d, &nd));
    PMIx_Topology_destruct(&t);
    PMIx_Cpuset_destruct(&c);
}

/* what libpmix 4.2.2 crashes on (NULL arguments, a locality string of
 * no fields, a topology used after PMIx_Topology_destruct of the one
 * PMIx_Load_topology handed out): run on pmix-wire's library only */
static void edge(void)
{
    pmix_topology_t t;
    pmix_cpuset_t c;
    pmix_locality_t loc = 0x1234;
    pmix_status_t rc;

    pmix_device_distance_t *d = NULL;
    size_t nd = 0;
    char *ls = NULL;

    relative("hwloc:", "hwloc:");
    relative("hwloc:CR0", "hwloc:");
    relative("hwloc:C:CR", "hwloc:C1:CR");
    OUT("edge load NULL rc=%d", PMIx_Load_topology(NULL));
    OUT("edge get_cpuset NULL rc=%d", PMIx_Get_cpuset(NULL, PMIX_CPUBIND_PROCESS));
    PMIX_CPUSET_CONSTRUCT(&c);
    OUT("edge parse NULL rc=%d", PMIx_Parse_cpuset_string(NULL, &c));
    OUT("edge parse into NULL rc=%d", PMIx_Parse_cpuset_string("hwloc:1", NULL));
    OUT("edge relative NULL rc=%d", PMIx_Get_relative_locality(NULL, "hwloc:CR0", &loc));
    OUT("edge relative into NULL rc=%d", PMIx_Get_relative_locality("hwloc:CR0", "hwloc:CR0", NULL));
    PMIx_Topology_destruct(NULL);
    PMIx_Cpuset_destruct(NULL);
    OUT("edge distances into NULL rc=%d", PMIx_Compute_distances(NULL, NULL, NULL, 0, NULL, &nd));
    OUT("edge distances count NULL rc=%d", PMIx_Compute_distances(NULL, NULL, NULL, 0, &d, NULL));
    OUT("edge distances_nb no callback rc=%d",
        PMIx_Compute_distances_nb(NULL, NULL, NULL, 0, NULL, NULL));
    PMIX_CPUSET_CONSTRUCT(&c);
    c.source = "hwloc";
    distances_in("edge cpus nobitmap", NULL, &c, NULL, 0);
    OUT("edge locality NULL rc=%d", PMIx_server_generate_locality_string(NULL, &ls));
    OUT("edge locality into NULL rc=%d", PMIx_server_generate_locality_string(&c, NULL));
    c.source = NULL;
    OUT("edge locality nosource rc=%d", PMIx_server_generate_locality_string(&c, &ls));
    PMIX_TOPOLOGY_CONSTRUCT(&t);
    rc = PMIx_Load_topology(&t);
    topology("edge load", rc, &t);
    PMIx_Topology_destruct(&t);
    topology("edge destructed", 0, &t);
    PMIX_TOPOLOGY_CONSTRUCT(&t);
    rc = PMIx_Load_topology(&t);
    topology("edge load after destruct", rc, &t);
    topo_value("edge topo", &t);
    PMIx_Topology_destruct(&t);
}

int main(int argc, char **argv)
{
    pmix_proc_t myproc, proc;
    pmix_status_t rc;
    pmix_topology_t t1, t2, t3, t4;
    pmix_cpuset_t c;
    pmix_value_t *val = NULL;
    char *mine = NULL;

    /* before init, the rank the launcher's environment gives (0 alone) */
    me = NULL == getenv("PMIX_RANK") ? 0 : atoi(getenv("PMIX_RANK"));
    if (argc > 1 && 0 == strcmp(argv[1], "edge")) {
        /* libpmix 4.2.2 crashes on the non-blocking form before init */
        OUT("edge before distances_nb rc=%d",
            PMIx_Compute_distances_nb(NULL, NULL, NULL, 0, nb_cb, NULL));
    }
    uninitialised("before");
    /* without a server, libpmix 4.2.2 starts a singleton and answers
     * PMIX_ERR_UNREACH, initialized */
    rc = PMIx_Init(&myproc, NULL, 0);
    OUT("init rc=%d initialized=%d", rc, PMIx_Initialized());
    if (!PMIx_Initialized()) {
        return 1;
    }
    me = PMIX_RANK_WILDCARD == myproc.rank ? -2 : (int) myproc.rank;
    if (argc > 1 && 0 == strcmp(argv[1], "edge")) {
        edge();
        PMIx_Finalize(NULL, 0);
        return 0;
    }

    PMIX_TOPOLOGY_CONSTRUCT(&t1);
    rc = PMIx_Load_topology(&t1);
    topology("load", rc, &t1);
    PMIX_TOPOLOGY_CONSTRUCT(&t2);
    rc = PMIx_Load_topology(&t2);
    topology("load again", rc, &t2);
    OUT("load again same=%d", t1.topology == t2.topology);
    PMIX_TOPOLOGY_CONSTRUCT(&t3);
    t3.source = "hwloc";
    rc = PMIx_Load_topology(&t3);
    topology("load hwloc", rc, &t3);
    OUT("load hwloc same=%d", t1.topology == t3.topology);
    PMIX_TOPOLOGY_CONSTRUCT(&t4);
    t4.source = "other";
    rc = PMIx_Load_topology(&t4);
    topology("load other", rc, &t4);

    if (NULL != t1.topology) {
        topo_value("topo", &t1);
    }

    PMIX_CPUSET_CONSTRUCT(&c);
    rc = PMIx_Get_cpuset(&c, PMIX_CPUBIND_PROCESS);
    bitmap("cpuset process", rc, &c);
    if (PMIX_SUCCESS == rc) {
        cpuset_value("cpuset process", &c);
    }
    PMIx_Cpuset_destruct(&c);
    OUT("cpuset destructed source=%s bitmap=%s", str(c.source), NULL == c.bitmap ? "NULL" : "set");
    PMIX_CPUSET_CONSTRUCT(&c);
    rc = PMIx_Get_cpuset(&c, PMIX_CPUBIND_THREAD);
    bitmap("cpuset thread", rc, &c);
    PMIx_Cpuset_destruct(&c);
    PMIX_CPUSET_CONSTRUCT(&c);
    rc = PMIx_Get_cpuset(&c, 7);
    bitmap("cpuset 7", rc, &c);
    PMIX_CPUSET_CONSTRUCT(&c);
    c.source = "other";
    rc = PMIx_Get_cpuset(&c, PMIX_CPUBIND_PROCESS);
    bitmap("cpuset other", rc, &c);

    parse("hwloc:0-3,8");
    parse("HWLOC:5");
    parse("hwloc:");
    parse("hwloc:1,3-4,9-11");
    parse("other:1");
    parse("nocolon");

    PMIX_CPUSET_CONSTRUCT(&c);
    cpuset_value("cpuset null", &c);
    c.source = "other";
    cpuset_value("cpuset other", &c);

    relative("hwloc:SK0:L30:L20:L10:CR0:HT0", "hwloc:SK0:L30:L20:L10:CR0:HT0");
    relative("hwloc:SK0:L30:L20:L10:CR0:HT0", "hwloc:SK0:L30:L21:L11:CR1:HT1");
    relative("hwloc:NM0:SK0:CR0-3:HT0-7", "hwloc:NM1:SK1:CR2,5:HT4");
    relative("hwloc:SK0-1", "hwloc:SK1-2");
    relative("hwloc:SK0:CR0", "hwloc:CR0");
    relative("hwloc:CR0", "hwloc:SK0:CR0");
    relative("HWLOC:CR1", "hwloc:CR1");
    relative("CR0", "CR0");
    relative("hwloc:CR0", "other:CR0");
    relative("hwloc:XX0", "hwloc:XX0");
    relative("hwloc:XX0", "hwloc:XX1");
    relative("hwloc:CR0:CR1", "hwloc:CR1");

    all_distances(&t1);
    all_localities();

    /* this rank's locality string and cpuset, if its host gave them */
    PMIX_LOAD_PROCID(&proc, myproc.nspace, myproc.rank);
    rc = PMIx_Get(&proc, PMIX_LOCALITY_STRING, NULL, 0, &val);
    OUT("get locality_string rc=%d value=%s", rc,
        (PMIX_SUCCESS == rc && PMIX_STRING == val->type) ? str(val->data.string) : "-");
    if (PMIX_SUCCESS == rc && PMIX_STRING == val->type && NULL != val->data.string) {
        mine = strdup(val->data.string);
    }
    if (NULL != val) {
        PMIX_VALUE_RELEASE(val);
        val = NULL;
    }
    rc = PMIx_Get(&proc, PMIX_CPUSET, NULL, 0, &val);
    OUT("get cpuset rc=%d value=%s", rc,
        (PMIX_SUCCESS == rc && PMIX_STRING == val->type) ? str(val->data.string) : "-");
    if (NULL != val) {
        PMIX_VALUE_RELEASE(val);
        val = NULL;
    }
    if (NULL != mine) {
        relative(mine, mine);
        free(mine);
    }

    /* the topology Load_topology handed out, destructed: then loaded again */
    PMIx_Topology_destruct(&t4);
    topology("destruct other", 0, &t4);

    PMIx_Finalize(NULL, 0);
    uninitialised("after");
    return 0;
}
