/* pmix-wire test clients: the check line every test client prints, and
 * PMIx_Get of a number or a string. Written for pmix-wire. */
#ifndef PMIXW_CHECKS_H
#define PMIXW_CHECKS_H

#include <pmix.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* checks that failed */
static int failures = 0;

/* What every check line begins with ("" by default; semantics.c sets
 * "[rank] " once it knows its rank). */
static char check_prefix[32] = "";

/* Print "ok WHAT VALUE" or "fail WHAT VALUE" (and count the failure). */
static void check(const char *what, int good, const char *fmt_value, ...) {
    char buf[1024] = "";
    if (fmt_value) {
        va_list ap;
        va_start(ap, fmt_value);
        vsnprintf(buf, sizeof buf, fmt_value, ap);
        va_end(ap);
    }
    printf("%s%s %s %s\n", check_prefix, good ? "ok" : "fail", what, buf);
    fflush(stdout);
    if (!good) {
        failures++;
    }
}

/* A number (UINT32, UINT16 or PROC_RANK) of a proc; *rc says whether. */
static uint32_t get_u32(const pmix_proc_t *p, const char *key, pmix_status_t *rc) {
    pmix_value_t *v = NULL;
    uint32_t out = 0;
    *rc = PMIx_Get(p, key, NULL, 0, &v);
    if (PMIX_SUCCESS == *rc && v) {
        switch (v->type) {
        case PMIX_UINT32: out = v->data.uint32; break;
        case PMIX_UINT16: out = v->data.uint16; break;
        case PMIX_PROC_RANK: out = v->data.rank; break;
        default: *rc = PMIX_ERR_TYPE_MISMATCH;
        }
    }
    if (v) {
        PMIX_VALUE_RELEASE(v);
    }
    return out;
}

/* A string of a proc (malloc'd), or NULL; *rc says why. */
static char *get_str(const pmix_proc_t *p, const char *key, pmix_status_t *rc) {
    pmix_value_t *v = NULL;
    char *out = NULL;
    *rc = PMIx_Get(p, key, NULL, 0, &v);
    if (PMIX_SUCCESS == *rc && v && PMIX_STRING == v->type) {
        out = strdup(v->data.string);
    } else if (PMIX_SUCCESS == *rc) {
        *rc = PMIX_ERR_TYPE_MISMATCH;
    }
    if (v) {
        PMIX_VALUE_RELEASE(v);
    }
    return out;
}

/* PMIx_Put of a string at GLOBAL scope. */
static pmix_status_t put_str(const char *key, const char *val) {
    pmix_value_t v;
    PMIX_VALUE_LOAD(&v, val, PMIX_STRING);
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    PMIX_VALUE_DESTRUCT(&v);
    return rc;
}

#endif
