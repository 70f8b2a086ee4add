/* pmix-wire harness: small helpers shared by the C servers and clients of
 * the capture and benchmark programs. Written for pmix-wire. */
#ifndef PMIXW_HARNESS_H
#define PMIXW_HARNESS_H

#include <pmix_common.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An op callback that raises the int flag cbdata points to. */
static void done_cb(pmix_status_t status, void *cbdata) {
    (void) status;
    *(volatile int *) cbdata = 1;
}

/* This process's peak resident set (VmHWM) in KiB, or -1. */
static long peak_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof line, f)) {
        if (0 == strncmp(line, "VmHWM:", 6)) {
            v = atol(line + 6);
        }
    }
    if (f) {
        fclose(f);
    }
    return v;
}

#endif
