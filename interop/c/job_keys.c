/* pmix-wire: what a client can read of its job, node, app and session, and
 * what PMIx_Resolve_peers / PMIx_Resolve_nodes answer (issue #36 items 2
 * and 3), for libpmix 4.2.2 and 5.0.11 clients under any launcher.
 * Written for pmix-wire.
 *
 *   job_keys dump     rank 0 tries every attribute of its own library's
 *                     dictionary (the exported pmix_dictionary behind
 *                     PMIx_Get_attribute_name) in each realm and prints
 *                     one line per key found:
 *                       key REALM KEY TYPE VALUE
 *                     REALM: job (rank WILDCARD), node (WILDCARD with
 *                     PMIX_NODE_INFO), app (WILDCARD with PMIX_APP_INFO and
 *                     PMIX_APPNUM 0), session (WILDCARD with
 *                     PMIX_SESSION_INFO), proc (its own rank). Every get is
 *                     PMIX_OPTIONAL: what the client holds after init, as
 *                     both launchers give a job's data at init
 *   job_keys spawn    rank 0 spawns 1 rank of "job_keys child", which
 *                     prints the same lines with "child" in front
 *   job_keys resolve  every rank: PMIx_Resolve_peers of its own node and
 *                     namespace, of its node and every namespace (an empty
 *                     one), and PMIx_Resolve_nodes of its namespace:
 *                       ok resolve_peers N NS:R,...  / fail resolve_peers STATUS
 *                       ok resolve_nodes LIST (host H) / fail resolve_nodes STATUS
 *                     then the same with a NULL node (lines
 *                     resolve_peers_null_node, resolve_nodes_null_node) and
 *                     with a NULL node and an empty namespace (_any)
 *   job_keys resolve_spawn  (one rank) spawns 1 rank of "job_keys
 *                     resolve_parent"; it resolves the child's namespace
 *                     (resolve_peers_unconnected, resolve_nodes_unconnected),
 *                     then the two connect and each resolves the other's
 *                     (resolve_peers_other, resolve_nodes_other), then they
 *                     disconnect
 *
 * Each process ends with "done" (after PMIx_Finalize).
 */
#include <pmix.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dictionary.h"

static pmix_proc_t me;

/* a string on one line: newlines as \n, at most 80 bytes */
static void print_string(const char *s) {
    if (NULL == s) {
        printf("(null)");
        return;
    }
    for (size_t i = 0; s[i] && i < 80; i++) {
        if ('\n' == s[i]) {
            printf("\\n");
        } else {
            putchar(s[i]);
        }
    }
    if (strlen(s) > 80) {
        printf("...");
    }
}

static void print_value(const pmix_value_t *v) {
    switch (v->type) {
    case PMIX_BOOL: printf("%s", v->data.flag ? "true" : "false"); break;
    case PMIX_UINT8: printf("%u", (unsigned) v->data.uint8); break;
    case PMIX_UINT16: printf("%u", (unsigned) v->data.uint16); break;
    case PMIX_UINT32: printf("%u", v->data.uint32); break;
    case PMIX_UINT64: printf("%llu", (unsigned long long) v->data.uint64); break;
    case PMIX_SIZE: printf("%zu", v->data.size); break;
    case PMIX_INT: printf("%d", v->data.integer); break;
    case PMIX_INT32: printf("%d", v->data.int32); break;
    case PMIX_PID: printf("%ld", (long) v->data.pid); break;
    case PMIX_PROC_RANK: printf("%u", v->data.rank); break;
    case PMIX_STRING: print_string(v->data.string); break;
    case PMIX_PROC:
        printf("%s:%u", v->data.proc->nspace, v->data.proc->rank);
        break;
    case PMIX_DATA_ARRAY: {
        const pmix_data_array_t *a = v->data.darray;
        printf("%s[%zu]", PMIx_Data_type_string(a->type), a->size);
        if (PMIX_PROC == a->type) {
            const pmix_proc_t *p = (const pmix_proc_t *) a->array;
            for (size_t i = 0; i < a->size; i++) {
                printf("%s%s:%u", i ? "," : " ", p[i].nspace, p[i].rank);
            }
        } else if (PMIX_INFO == a->type) {
            const pmix_info_t *in = (const pmix_info_t *) a->array;
            for (size_t i = 0; i < a->size; i++) {
                printf("%s%s", i ? "," : " ", in[i].key);
            }
        }
        break;
    }
    default: printf("-"); break;
    }
}

/* PMIx_Get of key in one realm; a line when found */
static void try_key(const char *prefix, const char *realm, const char *key) {
    pmix_proc_t who;
    pmix_info_t info[3];
    size_t n = 0;
    bool yes = true;
    uint32_t app = 0;
    PMIX_LOAD_PROCID(&who, me.nspace, PMIX_RANK_WILDCARD);
    PMIX_INFO_LOAD(&info[n++], PMIX_OPTIONAL, &yes, PMIX_BOOL);
    if (0 == strcmp(realm, "proc")) {
        who.rank = me.rank;
    } else if (0 == strcmp(realm, "node")) {
        PMIX_INFO_LOAD(&info[n++], PMIX_NODE_INFO, &yes, PMIX_BOOL);
    } else if (0 == strcmp(realm, "app")) {
        PMIX_INFO_LOAD(&info[n++], PMIX_APP_INFO, &yes, PMIX_BOOL);
        PMIX_INFO_LOAD(&info[n++], PMIX_APPNUM, &app, PMIX_UINT32);
    } else if (0 == strcmp(realm, "session")) {
        PMIX_INFO_LOAD(&info[n++], PMIX_SESSION_INFO, &yes, PMIX_BOOL);
    }
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&who, key, info, n, &v);
    for (size_t i = 0; i < n; i++) {
        PMIX_INFO_DESTRUCT(&info[i]);
    }
    if (PMIX_SUCCESS != rc || NULL == v) {
        return;
    }
    printf("%skey %s %s %s ", prefix, realm, key, PMIx_Data_type_string(v->type));
    print_value(v);
    printf("\n");
    PMIX_VALUE_RELEASE(v);
}

static void dump(const char *prefix) {
    static const char *realms[] = {"job", "node", "app", "session", "proc"};
    for (size_t i = 0; !dict_end(i); i++) {
        const char *key = pmix_dictionary[i].string;
        if (NULL == key || 0 != strncmp(key, "pmix.", 5)) {
            continue;
        }
        for (size_t r = 0; r < sizeof realms / sizeof realms[0]; r++) {
            try_key(prefix, realms[r], key);
        }
    }
}

/* PMIx_Resolve_peers of `ns` on this node and PMIx_Resolve_nodes of `ns`,
 * lines labelled with `what` */
static void resolve_ns(const char *what, const char *host, const char *ns) {
    pmix_proc_t *peers = NULL;
    size_t npeers = 0;
    pmix_status_t rc = PMIx_Resolve_peers(host, ns, &peers, &npeers);
    if (PMIX_SUCCESS != rc) {
        printf("fail resolve_peers%s %s\n", what, PMIx_Error_string(rc));
    } else {
        printf("ok resolve_peers%s %zu", what, npeers);
        for (size_t i = 0; i < npeers; i++) {
            printf("%s%s:%u", i ? "," : " ", peers[i].nspace, peers[i].rank);
        }
        printf("\n");
    }
    if (peers) {
        PMIX_PROC_FREE(peers, npeers);
    }
    char *nodes = NULL;
    rc = PMIx_Resolve_nodes(ns, &nodes);
    if (PMIX_SUCCESS == rc) {
        printf("ok resolve_nodes%s %s (host %s)\n", what, nodes ? nodes : "(null)", host);
    } else {
        printf("fail resolve_nodes%s %s\n", what, PMIx_Error_string(rc));
    }
    free(nodes);
}

static void my_host(char *host, size_t len) {
    pmix_value_t *v = NULL;
    if (PMIX_SUCCESS == PMIx_Get(&me, PMIX_HOSTNAME, NULL, 0, &v) && v && PMIX_STRING == v->type) {
        snprintf(host, len, "%s", v->data.string);
    }
    if (v) {
        PMIX_VALUE_RELEASE(v);
    }
}

/* a parent of one rank and the child it spawned connect, then each
 * resolves the other's namespace (OpenPMIx's resolve example does the same
 * after its spawns) */
static void resolve_other(const char *other) {
    pmix_proc_t both[2];
    PMIX_LOAD_PROCID(&both[0], me.nspace, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&both[1], other, PMIX_RANK_WILDCARD);
    pmix_status_t rc = PMIx_Connect(both, 2, NULL, 0);
    printf("%s connect %s\n", PMIX_SUCCESS == rc ? "ok" : "fail", PMIx_Error_string(rc));
    if (PMIX_SUCCESS != rc) {
        return;
    }
    char host[256] = "";
    my_host(host, sizeof host);
    resolve_ns("_other", host, other);
    rc = PMIx_Disconnect(both, 2, NULL, 0);
    printf("%s disconnect %s\n", PMIX_SUCCESS == rc ? "ok" : "fail", PMIx_Error_string(rc));
}

static void resolve(void) {
    char host[256] = "";
    my_host(host, sizeof host);
    resolve_ns("", host, me.nspace);
    /* this node by NULL, every namespace by an empty one (OpenPMIx's
     * simple_resolve example asks these) */
    pmix_nspace_t any;
    PMIX_LOAD_NSPACE(any, NULL);
    resolve_ns("_null_node", NULL, me.nspace);
    resolve_ns("_any", NULL, any);
}

/* PMIx_Spawn of one rank of this program with argument `mode`; prints
 * "ok spawn STATUS NSPACE" (or fail) */
static pmix_status_t spawn_self(const char *self, const char *mode, char *child) {
    pmix_app_t *app;
    PMIX_APP_CREATE(app, 1);
    app->cmd = strdup(self);
    app->argv = (char **) calloc(3, sizeof(char *));
    app->argv[0] = strdup(self);
    app->argv[1] = strdup(mode);
    app->maxprocs = 1;
    pmix_status_t rc = PMIx_Spawn(NULL, 0, app, 1, child);
    printf("%s spawn %s %s\n", PMIX_SUCCESS == rc ? "ok" : "fail", PMIx_Error_string(rc), child);
    PMIX_APP_FREE(app, 1);
    return rc;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *mode = argc > 1 ? argv[1] : "dump";
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        printf("fail init %s\n", PMIx_Error_string(rc));
        return 1;
    }
    if (0 == strcmp(mode, "dump")) {
        if (0 == me.rank) {
            dump("");
        }
    } else if (0 == strcmp(mode, "child")) {
        if (0 == me.rank) {
            dump("child ");
        }
    } else if (0 == strcmp(mode, "spawn")) {
        if (0 == me.rank) {
            char child[PMIX_MAX_NSLEN + 1] = "";
            spawn_self(argv[0], "child", child);
        }
    } else if (0 == strcmp(mode, "resolve")) {
        resolve();
    } else if (0 == strcmp(mode, "resolve_parent")) {
        pmix_value_t *v = NULL;
        rc = PMIx_Get(&me, PMIX_PARENT_ID, NULL, 0, &v);
        if (PMIX_SUCCESS == rc && v && PMIX_PROC == v->type) {
            char parent[PMIX_MAX_NSLEN + 1];
            PMIX_LOAD_NSPACE(parent, v->data.proc->nspace);
            resolve_other(parent);
        } else {
            printf("fail parent %s\n", PMIx_Error_string(rc));
        }
        if (v) {
            PMIX_VALUE_RELEASE(v);
        }
    } else if (0 == strcmp(mode, "resolve_spawn")) {
        /* one rank: spawn one child of "resolve_parent", connect, resolve */
        char child[PMIX_MAX_NSLEN + 1] = "";
        rc = spawn_self(argv[0], "resolve_parent", child);
        if (PMIX_SUCCESS == rc) {
            /* before the connect: a namespace this client has no data of */
            char host[256] = "";
            my_host(host, sizeof host);
            resolve_ns("_unconnected", host, child);
            resolve_other(child);
        }
    } else {
        printf("fail mode %s\n", mode);
    }
    PMIx_Finalize(NULL, 0);
    printf("done\n");
    return 0;
}
