/* The topology and cpuset calls (PMIx_Load_topology, PMIx_Get_cpuset,
 * PMIx_Parse_cpuset_string, PMIx_Get_relative_locality,
 * PMIx_Compute_distances, the two destructs) and the PMIX_PROC_CPUSET and
 * PMIX_TOPO values, printed so that the same program linked to libpmix
 * and to pmix-wire's libpmix can be compared line by line (capi/tests/
 * libpmix_capi_topo.rs). Linked with hwloc, as a program using what
 * these calls return is: the objects are read with hwloc's own calls.
 * Run as a singleton and as each rank of `pmixw run -n 2`; every line
 * starts with the rank. Written for pmix-wire. */
#include <hwloc.h>
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void distances(const char *what, pmix_info_t *info, size_t ninfo)
{
    pmix_device_distance_t *d = NULL;
    size_t n, nd = 99;
    pmix_status_t rc = PMIx_Compute_distances(NULL, NULL, info, ninfo, &d, &nd);
    OUT("distances %s rc=%d n=%zu", what, rc, nd);
    for (n = 0; PMIX_SUCCESS == rc && n < nd; n++) {
        OUT("distance %s type=0x%llx osname=%s min=%u max=%u", what,
            (unsigned long long) d[n].type, str(d[n].osname), d[n].mindist, d[n].maxdist);
    }
    if (NULL != d) {
        PMIX_DEVICE_DIST_FREE(d, nd);
    }
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

    distances("all", NULL, 0);

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
