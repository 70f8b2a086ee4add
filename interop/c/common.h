/* pmix-wire interop harness: shared helpers for the C programs that run
 * against the system libpmix. Written for pmix-wire; prints values in the
 * JSON form of spec-notes/json.md ("bare" form, type known from context;
 * "tagged" form {"type":..,"value":..} wherever pmix_value_t appears). */
#ifndef PMIXW_COMMON_H
#define PMIXW_COMMON_H

#include <math.h>
#include <pmix_server.h>
#include <pmix_tool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PMIX_KVAL (28) is libpmix's internal pmix_kval_t: its layout comes from
 * the private headers libpmix-dev installs next to the public ones (the
 * pkg-config include path covers them). Without them KVAL is not covered,
 * nor with PMIXW_PUBLIC_ONLY (a build against another libpmix file, whose
 * private layout is not 4.2.2's: `pmixw interop --lib`). */
#if defined(__has_include) && !defined(PMIXW_PUBLIC_ONLY)
#if __has_include("src/include/pmix_globals.h")
#include "src/include/pmix_globals.h"
#define PMIXW_HAVE_KVAL 1
#endif
#endif

/* Set when a value of type PMIX_DATA_BUFFER was printed: libpmix's packer
 * mishandles those (bfrops.md section 4.6), the unpack program does not
 * hand them to libpmix's destructors. */
static int g_saw_value_dbuf = 0;

/* PMIX_BUFFER (26) is libpmix's internal pmix_buffer_t. libpmix writes an
 * array of them with its own stride, so with the private headers the
 * storage is exactly that size (a larger stride put the items of every
 * unit after the first where libpmix's packer does not look: they were
 * re-packed as empty buffers, the diff_unpack divergences of the
 * 2026-11-24 campaign). Without them it is opaque: zeroed storage this
 * large, right for one item only. */
#ifdef PMIXW_HAVE_KVAL
#define OPAQUE_BUFFER_SIZE sizeof(pmix_buffer_t)
#else
#define OPAQUE_BUFFER_SIZE 512
#endif

static int init_tool(void) {
    pmix_info_t info;
    pmix_proc_t me;
    PMIX_INFO_LOAD(&info, PMIX_TOOL_DO_NOT_CONNECT, NULL, PMIX_BOOL);
    pmix_status_t rc = PMIx_tool_init(&me, &info, 1);
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "PMIx_tool_init failed: %d\n", rc);
        return 1;
    }
    return 0;
}

/* Storage size of one element of a type, as PMIx_Data_pack reads it. */
static size_t type_size(pmix_data_type_t t) {
    switch (t) {
    case PMIX_BOOL: return sizeof(bool);
    case PMIX_BYTE: case PMIX_INT8: case PMIX_UINT8: case PMIX_PERSIST: case PMIX_SCOPE:
    case PMIX_DATA_RANGE: case PMIX_COMMAND: case PMIX_PROC_STATE: case PMIX_ALLOC_DIRECTIVE:
    case PMIX_JOB_STATE: case PMIX_LINK_STATE: return 1;
    case PMIX_STRING: case PMIX_POINTER: case PMIX_REGEX: return sizeof(char *);
    case PMIX_SIZE: return sizeof(size_t);
    case PMIX_PID: return sizeof(pid_t);
    case PMIX_INT: case PMIX_UINT: return sizeof(int);
    case PMIX_INT16: case PMIX_UINT16: case PMIX_DATA_TYPE: case PMIX_IOF_CHANNEL:
    case PMIX_LOCTYPE: case PMIX_STOR_ACCESS_TYPE: return 2;
    case PMIX_INT32: case PMIX_UINT32: case PMIX_STATUS: case PMIX_INFO_DIRECTIVES:
    case PMIX_PROC_RANK: return 4;
    case PMIX_INT64: case PMIX_UINT64: case PMIX_DEVTYPE: case PMIX_STOR_MEDIUM:
    case PMIX_STOR_ACCESS: case PMIX_STOR_PERSIST: return 8;
    case PMIX_FLOAT: return sizeof(float);
    case PMIX_DOUBLE: return sizeof(double);
    case PMIX_TIMEVAL: return sizeof(struct timeval);
    case PMIX_TIME: return sizeof(time_t);
    case PMIX_VALUE: return sizeof(pmix_value_t);
    case PMIX_PROC: return sizeof(pmix_proc_t);
    case PMIX_APP: return sizeof(pmix_app_t);
    case PMIX_INFO: return sizeof(pmix_info_t);
    case PMIX_PDATA: return sizeof(pmix_pdata_t);
    case PMIX_BUFFER: return OPAQUE_BUFFER_SIZE;
    case PMIX_BYTE_OBJECT: case PMIX_COMPRESSED_STRING: case PMIX_COMPRESSED_BYTE_OBJECT:
        return sizeof(pmix_byte_object_t);
    case PMIX_PROC_INFO: return sizeof(pmix_proc_info_t);
    case PMIX_DATA_ARRAY: return sizeof(pmix_data_array_t);
    case PMIX_QUERY: return sizeof(pmix_query_t);
    case PMIX_ENVAR: return sizeof(pmix_envar_t);
    case PMIX_COORD: return sizeof(pmix_coord_t);
    case PMIX_REGATTR: return sizeof(pmix_regattr_t);
    case PMIX_PROC_CPUSET: return sizeof(pmix_cpuset_t);
    case PMIX_GEOMETRY: return sizeof(pmix_geometry_t);
    case PMIX_DEVICE_DIST: return sizeof(pmix_device_distance_t);
    case PMIX_ENDPOINT: return sizeof(pmix_endpoint_t);
    case PMIX_TOPO: return sizeof(pmix_topology_t);
    case PMIX_PROC_NSPACE: return sizeof(pmix_nspace_t);
    case PMIX_PROC_STATS: return sizeof(pmix_proc_stats_t);
    case PMIX_DISK_STATS: return sizeof(pmix_disk_stats_t);
    case PMIX_NET_STATS: return sizeof(pmix_net_stats_t);
    case PMIX_NODE_STATS: return sizeof(pmix_node_stats_t);
    case PMIX_DATA_BUFFER: return sizeof(pmix_data_buffer_t);
#ifdef PMIXW_HAVE_KVAL
    case PMIX_KVAL: return sizeof(pmix_kval_t);
#endif
    default: return 0;
    }
}

/* Type names without the PMIX_ prefix. Our own table: PMIx_Data_type_string
 * answers from the active dialect's registrations ("UNKNOWN" for types the
 * dialect does not register, and for PMIX_UNDEF). */
static const char *const TYPE_NAMES[76] = {
    "UNDEF",
    "BOOL",
    "BYTE",
    "STRING",
    "SIZE",
    "PID",
    "INT",
    "INT8",
    "INT16",
    "INT32",
    "INT64",
    "UINT",
    "UINT8",
    "UINT16",
    "UINT32",
    "UINT64",
    "FLOAT",
    "DOUBLE",
    "TIMEVAL",
    "TIME",
    "STATUS",
    "VALUE",
    "PROC",
    "APP",
    "INFO",
    "PDATA",
    "BUFFER",
    "BYTE_OBJECT",
    "KVAL",
    "MODEX",
    "PERSIST",
    "POINTER",
    "SCOPE",
    "DATA_RANGE",
    "COMMAND",
    "INFO_DIRECTIVES",
    "DATA_TYPE",
    "PROC_STATE",
    "PROC_INFO",
    "DATA_ARRAY",
    "PROC_RANK",
    "QUERY",
    "COMPRESSED_STRING",
    "ALLOC_DIRECTIVE",
    "INFO_ARRAY",
    "IOF_CHANNEL",
    "ENVAR",
    "COORD",
    "REGATTR",
    "REGEX",
    "JOB_STATE",
    "LINK_STATE",
    "PROC_CPUSET",
    "GEOMETRY",
    "DEVICE_DIST",
    "ENDPOINT",
    "TOPO",
    "DEVTYPE",
    "LOCTYPE",
    "COMPRESSED_BYTE_OBJECT",
    "PROC_NSPACE",
    "PROC_STATS",
    "DISK_STATS",
    "NET_STATS",
    "NODE_STATS",
    "DATA_BUFFER",
    "STOR_MEDIUM",
    "STOR_ACCESS",
    "STOR_PERSIST",
    "STOR_ACCESS_TYPE",
    "DEVICE",
    "RESBLOCK_DIRECTIVE",
    "RESOURCE_UNIT",
    "NODE_PID",
    "REGEX2",
    "ALLOC_INHERIT",
};

static const char *short_name(pmix_data_type_t t) {
    return t < 76 ? TYPE_NAMES[t] : "UNKNOWN";
}

static void hexs(FILE *f, const void *p, size_t n) {
    const unsigned char *b = p;
    fputc('"', f);
    for (size_t i = 0; i < n; i++) fprintf(f, "%02x", b[i]);
    fputc('"', f);
}

static int utf8_ok(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t k = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : 9;
        if (k == 9 || i + k >= n + (k == 0)) { if (k) return 0; }
        for (size_t j = 1; j <= k; j++) if (i + j >= n || (s[i + j] & 0xc0) != 0x80) return 0;
        i += k + 1;
    }
    return 1;
}

static void json_text(FILE *f, const char *s);

/* A C string: JSON string, null for NULL, {"hex":..} if not UTF-8. */
static void jstr(FILE *f, const char *s) {
    if (NULL == s) { fputs("null", f); return; }
    size_t n = strlen(s);
    if (!utf8_ok((const unsigned char *)s, n)) { fputs("{\"hex\":", f); hexs(f, s, n); fputc('}', f); return; }
    json_text(f, s);
}

/* Any text as a JSON string (printer output may hold tabs and newlines). */
static void json_text(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

static void jdouble(FILE *f, double d) {
    if (isnan(d)) fputs(signbit(d) ? "\"-nan\"" : "\"nan\"", f);
    else if (isinf(d)) fputs(d < 0 ? "\"-inf\"" : "\"inf\"", f);
    else fprintf(f, "%.17g", d);
}

/* A float with just enough digits to read back the same float. */
static void jfloat(FILE *f, float x) {
    if (isnan(x)) fputs(signbit(x) ? "\"-nan\"" : "\"nan\"", f);
    else if (isinf(x)) fputs(x < 0 ? "\"-inf\"" : "\"inf\"", f);
    else fprintf(f, "%.9g", (double)x);
}

static void jtv(FILE *f, const struct timeval *t) {
    fprintf(f, "{\"sec\":%ld,\"usec\":%ld}", (long)t->tv_sec, (long)t->tv_usec);
}

static void jargv(FILE *f, char **argv) {
    fputc('[', f);
    for (int i = 0; argv && argv[i]; i++) { if (i) fputc(',', f); jstr(f, argv[i]); }
    fputc(']', f);
}

static void jbare(FILE *f, const void *p, pmix_data_type_t t);
static void jvalue(FILE *f, const pmix_value_t *v);

static void jinfo(FILE *f, const pmix_info_t *i) {
    fputs("{\"key\":", f); jstr(f, i->key);
    fprintf(f, ",\"flags\":%u,\"value\":", (unsigned)i->flags);
    jvalue(f, &i->value);
    fputc('}', f);
}

static void jinfos(FILE *f, const pmix_info_t *i, size_t n) {
    fputc('[', f);
    for (size_t k = 0; k < n; k++) { if (k) fputc(',', f); jinfo(f, &i[k]); }
    fputc(']', f);
}

static void jproc(FILE *f, const pmix_proc_t *p) {
    fputs("{\"nspace\":", f); jstr(f, p->nspace); fprintf(f, ",\"rank\":%u}", (unsigned)p->rank);
}

static void jcoord(FILE *f, const pmix_coord_t *c) {
    fprintf(f, "{\"view\":%u,\"coord\":[", (unsigned)c->view);
    for (size_t k = 0; k < c->dims; k++) fprintf(f, "%s%u", k ? "," : "", c->coord[k]);
    fputs("]}", f);
}

static void jdarray(FILE *f, const pmix_data_array_t *a) {
    if (NULL == a) { fputs("{\"type\":\"UNDEF\",\"size\":0}", f); return; }
    if (PMIX_UNDEF == a->type) { fprintf(f, "{\"type\":\"UNDEF\",\"size\":%zu}", a->size); return; }
    fprintf(f, "{\"type\":\"%s\",\"elements\":[", short_name(a->type));
    size_t sz = type_size(a->type);
    for (size_t k = 0; k < a->size; k++) {
        if (k) fputc(',', f);
        jbare(f, (const char *)a->array + k * sz, a->type);
    }
    fputs("]}", f);
}

static void jdisk(FILE *f, const pmix_disk_stats_t *d) {
    fputs("{\"disk\":", f); jstr(f, d->disk);
    fprintf(f, ",\"reads_completed\":%lu,\"reads_merged\":%lu,\"sectors_read\":%lu,\"milliseconds_reading\":%lu,"
               "\"writes_completed\":%lu,\"writes_merged\":%lu,\"sectors_written\":%lu,\"milliseconds_writing\":%lu,"
               "\"num_ios_in_progress\":%lu,\"milliseconds_io\":%lu,\"weighted_milliseconds_io\":%lu}",
            d->num_reads_completed, d->num_reads_merged, d->num_sectors_read, d->milliseconds_reading,
            d->num_writes_completed, d->num_writes_merged, d->num_sectors_written, d->milliseconds_writing,
            d->num_ios_in_progress, d->milliseconds_io, d->weighted_milliseconds_io);
}

static void jnet(FILE *f, const pmix_net_stats_t *n) {
    fputs("{\"net_interface\":", f); jstr(f, n->net_interface);
    fprintf(f, ",\"num_bytes_recvd\":%lu,\"num_packets_recvd\":%lu,\"num_recv_errs\":%lu,\"num_bytes_sent\":%lu,"
               "\"num_packets_sent\":%lu,\"num_send_errs\":%lu}",
            n->num_bytes_recvd, n->num_packets_recvd, n->num_recv_errs, n->num_bytes_sent, n->num_packets_sent,
            n->num_send_errs);
}

/* One element of type t stored at p, bare form. */
static void jbare(FILE *f, const void *p, pmix_data_type_t t) {
    switch (t) {
    case PMIX_UNDEF: case PMIX_POINTER: fputs("null", f); break;
    case PMIX_BOOL: fputs(*(const bool *)p ? "true" : "false", f); break;
    case PMIX_BYTE: case PMIX_UINT8: case PMIX_PERSIST: case PMIX_SCOPE: case PMIX_DATA_RANGE: case PMIX_COMMAND:
    case PMIX_PROC_STATE: case PMIX_ALLOC_DIRECTIVE: case PMIX_JOB_STATE: case PMIX_LINK_STATE:
        fprintf(f, "%u", *(const uint8_t *)p); break;
    case PMIX_INT8: fprintf(f, "%d", *(const int8_t *)p); break;
    case PMIX_STRING: jstr(f, *(char *const *)p); break;
    case PMIX_SIZE: fprintf(f, "%zu", *(const size_t *)p); break;
    case PMIX_PID: fprintf(f, "%u", (unsigned)*(const pid_t *)p); break;
    case PMIX_INT: fprintf(f, "%d", *(const int *)p); break;
    case PMIX_UINT: fprintf(f, "%u", *(const unsigned *)p); break;
    case PMIX_INT16: fprintf(f, "%d", *(const int16_t *)p); break;
    case PMIX_UINT16: case PMIX_DATA_TYPE: case PMIX_IOF_CHANNEL: case PMIX_LOCTYPE: case PMIX_STOR_ACCESS_TYPE:
        fprintf(f, "%u", *(const uint16_t *)p); break;
    case PMIX_INT32: case PMIX_STATUS: fprintf(f, "%d", *(const int32_t *)p); break;
    case PMIX_UINT32: case PMIX_INFO_DIRECTIVES: case PMIX_PROC_RANK: fprintf(f, "%u", *(const uint32_t *)p); break;
    case PMIX_INT64: fprintf(f, "%ld", (long)*(const int64_t *)p); break;
    case PMIX_UINT64: case PMIX_DEVTYPE: case PMIX_STOR_MEDIUM: case PMIX_STOR_ACCESS: case PMIX_STOR_PERSIST:
        fprintf(f, "%lu", (unsigned long)*(const uint64_t *)p); break;
    case PMIX_TIME: fprintf(f, "%lu", (unsigned long)*(const time_t *)p); break;
    case PMIX_FLOAT: jfloat(f, *(const float *)p); break;
    case PMIX_DOUBLE: jdouble(f, *(const double *)p); break;
    case PMIX_TIMEVAL: jtv(f, p); break;
    case PMIX_VALUE: jvalue(f, p); break;
    case PMIX_PROC: jproc(f, p); break;
    case PMIX_PROC_NSPACE: jstr(f, *(const pmix_nspace_t *)p); break;
    case PMIX_APP: {
        const pmix_app_t *a = p;
        fputs("{\"cmd\":", f); jstr(f, a->cmd);
        fputs(",\"argv\":", f); jargv(f, a->argv);
        fputs(",\"env\":", f); jargv(f, a->env);
        fputs(",\"cwd\":", f); jstr(f, a->cwd);
        fprintf(f, ",\"maxprocs\":%d,\"info\":", a->maxprocs);
        jinfos(f, a->info, a->ninfo);
        fputc('}', f);
        break;
    }
    case PMIX_INFO: jinfo(f, p); break;
    case PMIX_PDATA: {
        const pmix_pdata_t *d = p;
        fputs("{\"proc\":", f); jproc(f, &d->proc);
        fputs(",\"key\":", f); jstr(f, d->key);
        fputs(",\"value\":", f); jvalue(f, &d->value);
        fputc('}', f);
        break;
    }
    case PMIX_BUFFER: { /* opaque internal struct: only the all-zero one is known */
        const unsigned char *z = p;
        size_t k = 0;
        while (k < OPAQUE_BUFFER_SIZE && 0 == z[k]) k++;
        fputs(k == OPAQUE_BUFFER_SIZE ? "{\"buffer_type\":0,\"bytes\":\"\"}" : "null", f);
        break;
    }
    case PMIX_BYTE_OBJECT: case PMIX_COMPRESSED_STRING: case PMIX_COMPRESSED_BYTE_OBJECT: {
        const pmix_byte_object_t *b = p;
        hexs(f, b->bytes, b->size);
        break;
    }
    case PMIX_PROC_INFO: {
        const pmix_proc_info_t *i = p;
        fputs("{\"proc\":", f); jproc(f, &i->proc);
        fputs(",\"hostname\":", f); jstr(f, i->hostname);
        fputs(",\"executable_name\":", f); jstr(f, i->executable_name);
        fprintf(f, ",\"pid\":%u,\"exit_code\":%d,\"state\":%u}", (unsigned)i->pid, i->exit_code, i->state);
        break;
    }
    case PMIX_DATA_ARRAY: jdarray(f, p); break;
    case PMIX_QUERY: {
        const pmix_query_t *q = p;
        fputs("{\"keys\":", f); jargv(f, q->keys);
        fputs(",\"qualifiers\":", f); jinfos(f, q->qualifiers, q->nqual);
        fputc('}', f);
        break;
    }
    case PMIX_ENVAR: {
        const pmix_envar_t *e = p;
        fputs("{\"envar\":", f); jstr(f, e->envar);
        fputs(",\"value\":", f); jstr(f, e->value);
        fprintf(f, ",\"separator\":%u}", (unsigned char)e->separator);
        break;
    }
    case PMIX_COORD: jcoord(f, p); break;
    case PMIX_REGATTR: {
        const pmix_regattr_t *r = p;
        fputs("{\"name\":", f); jstr(f, r->name);
        fputs(",\"string\":", f); jstr(f, r->string);
        fprintf(f, ",\"type\":%u,\"description\":", (unsigned)r->type);
        jargv(f, r->description);
        fputc('}', f);
        break;
    }
    case PMIX_REGEX: {
        const char *s = *(char *const *)p;
        if (s && (0 == strncmp(s, "pmix", 4) || 0 == strncmp(s, "raw:", 4))) {
            fputs("{\"text\":", f); jstr(f, s); fputc('}', f);
        } else {
            fputs("{\"packed\":", f); jstr(f, s); fputc('}', f);
        }
        break;
    }
    case PMIX_PROC_CPUSET: {
        const pmix_cpuset_t *c = p;
        char *s = NULL;
        if (NULL != c->bitmap) PMIx_server_generate_cpuset_string(c, &s);
        fputs("{\"cpus\":", f);
        if (s && 0 == strncmp(s, "hwloc:", 6)) jstr(f, s + 6); else jstr(f, s);
        fputc('}', f);
        break;
    }
    case PMIX_GEOMETRY: {
        const pmix_geometry_t *g = p;
        fprintf(f, "{\"fabric\":%zu,\"uuid\":", g->fabric); jstr(f, g->uuid);
        fputs(",\"osname\":", f); jstr(f, g->osname);
        fputs(",\"coordinates\":[", f);
        for (size_t k = 0; k < g->ncoords; k++) { if (k) fputc(',', f); jcoord(f, &g->coordinates[k]); }
        fputs("]}", f);
        break;
    }
    case PMIX_DEVICE_DIST: {
        const pmix_device_distance_t *d = p;
        fputs("{\"uuid\":", f); jstr(f, d->uuid);
        fputs(",\"osname\":", f); jstr(f, d->osname);
        fprintf(f, ",\"type\":%lu,\"mindist\":%u,\"maxdist\":%u}", (unsigned long)d->type, d->mindist, d->maxdist);
        break;
    }
    case PMIX_ENDPOINT: {
        const pmix_endpoint_t *e = p;
        fputs("{\"uuid\":", f); jstr(f, e->uuid);
        fputs(",\"osname\":", f); jstr(f, e->osname);
        fputs(",\"endpt\":", f); hexs(f, e->endpt.bytes, e->endpt.size);
        fputc('}', f);
        break;
    }
    case PMIX_TOPO: fputs("null", f); break; /* host dependent: not generated */
    case PMIX_PROC_STATS: {
        const pmix_proc_stats_t *s = p;
        fputs("{\"node\":", f); jstr(f, s->node);
        fputs(",\"proc\":", f); jproc(f, &s->proc);
        fprintf(f, ",\"pid\":%u,\"cmd\":", (unsigned)s->pid); jstr(f, s->cmd);
        fprintf(f, ",\"state\":%u,\"time\":", (unsigned char)s->state); jtv(f, &s->time);
        fputs(",\"percent_cpu\":", f); jfloat(f, s->percent_cpu);
        fprintf(f, ",\"priority\":%d,\"num_threads\":%u,\"pss\":", s->priority, s->num_threads); jfloat(f, s->pss);
        fputs(",\"vsize\":", f); jfloat(f, s->vsize);
        fputs(",\"rss\":", f); jfloat(f, s->rss);
        fputs(",\"peak_vsize\":", f); jfloat(f, s->peak_vsize);
        fprintf(f, ",\"processor\":%u,\"sample_time\":", s->processor); jtv(f, &s->sample_time);
        fputc('}', f);
        break;
    }
    case PMIX_DISK_STATS: jdisk(f, p); break;
    case PMIX_NET_STATS: jnet(f, p); break;
    case PMIX_NODE_STATS: {
        const pmix_node_stats_t *n = p;
        const float *fl[] = {&n->la, &n->la5, &n->la15, &n->total_mem, &n->free_mem, &n->buffers, &n->cached,
                             &n->swap_cached, &n->swap_total, &n->swap_free, &n->mapped};
        const char *nm[] = {"la", "la5", "la15", "total_mem", "free_mem", "buffers", "cached", "swap_cached",
                            "swap_total", "swap_free", "mapped"};
        fputs("{\"node\":", f); jstr(f, n->node);
        for (int k = 0; k < 11; k++) { fprintf(f, ",\"%s\":", nm[k]); jfloat(f, *fl[k]); }
        fputs(",\"sample_time\":", f); jtv(f, &n->sample_time);
        fputs(",\"diskstats\":[", f);
        for (size_t k = 0; k < n->ndiskstats; k++) { if (k) fputc(',', f); jdisk(f, &n->diskstats[k]); }
        fputs("],\"netstats\":[", f);
        for (size_t k = 0; k < n->nnetstats; k++) { if (k) fputc(',', f); jnet(f, &n->netstats[k]); }
        fputs("]}", f);
        break;
    }
    case PMIX_DATA_BUFFER: {
        const pmix_data_buffer_t *d = p;
        if (NULL == d) fputs("\"\"", f);
        else hexs(f, d->base_ptr, d->bytes_used);
        break;
    }
#ifdef PMIXW_HAVE_KVAL
    case PMIX_KVAL: {
        const pmix_kval_t *k = p;
        fputs("{\"key\":", f); jstr(f, k->key);
        fputs(",\"value\":", f);
        if (NULL == k->value) fputs("{\"type\":\"UNDEF\",\"value\":null}", f);
        else jvalue(f, k->value);
        fputc('}', f);
        break;
    }
#endif
    /* Types v41 does not register, only ever packed from zeroed storage
     * (the pack fails): their zero value in our JSON form. */
    case 29 /* MODEX */: fputs("\"\"", f); break;
    case 44 /* INFO_ARRAY */: fputs("[]", f); break;
    case 70 /* DEVICE (v6.0+) */: fputs("{\"uuid\":null,\"osname\":null,\"type\":0}", f); break;
    default: fprintf(f, "\"<no JSON for type %u>\"", (unsigned)t);
    }
}

/* The pmix_value_t union member for type t (pointer members dereferenced). */
static const void *value_data(const pmix_value_t *v) {
    switch (v->type) {
    case PMIX_PROC: return v->data.proc;
    case PMIX_PROC_NSPACE: return v->data.nspace;
    case PMIX_PROC_INFO: return v->data.pinfo;
    case PMIX_DATA_ARRAY: return v->data.darray;
    case PMIX_COORD: return v->data.coord;
    case PMIX_TOPO: return v->data.topo;
    case PMIX_PROC_CPUSET: return v->data.cpuset;
    case PMIX_GEOMETRY: return v->data.geometry;
    case PMIX_DEVICE_DIST: return v->data.devdist;
    case PMIX_ENDPOINT: return v->data.endpoint;
    case PMIX_REGATTR: return v->data.ptr;
    case PMIX_DATA_BUFFER: return v->data.dbuf;
    case PMIX_PROC_STATS: return v->data.pstats;
    case PMIX_DISK_STATS: return v->data.dkstats;
    case PMIX_NET_STATS: return v->data.netstats;
    case PMIX_NODE_STATS: return v->data.ndstats;
    default: return &v->data;
    }
}

static void jvalue(FILE *f, const pmix_value_t *v) {
    fprintf(f, "{\"type\":\"%s\",\"value\":", short_name(v->type));
    if (PMIX_DATA_ARRAY == v->type) jdarray(f, v->data.darray);
    else if (PMIX_UNDEF == v->type || PMIX_POINTER == v->type) fputs("null", f);
    else { g_saw_value_dbuf |= PMIX_DATA_BUFFER == v->type; jbare(f, value_data(v), v->type); }
    fputc('}', f);
}

static void print_hex_buf(FILE *f, const pmix_data_buffer_t *b) {
    for (size_t i = 0; i < b->bytes_used; i++) fprintf(f, "%02x", (unsigned char)b->base_ptr[i]);
}

#endif
