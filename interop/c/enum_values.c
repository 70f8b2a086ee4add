/* pmix-wire: prints the values of libpmix's enum macros, as TSV lines
 *   type \t macro \t value
 * straight from the installed pmix_common.h.
 * codec/tests/libpmix_enums.rs compares pmix_types::enums with it. */
#include <pmix_common.h>
#include <stdio.h>

#define P(t, m) printf("%s\t%s\t%lu\n", t, #m, (unsigned long)(m))

int main(void)
{
    P("Scope", PMIX_SCOPE_UNDEF);
    P("Scope", PMIX_LOCAL);
    P("Scope", PMIX_REMOTE);
    P("Scope", PMIX_GLOBAL);
    P("Scope", PMIX_INTERNAL);
    P("DataRange", PMIX_RANGE_UNDEF);
    P("DataRange", PMIX_RANGE_RM);
    P("DataRange", PMIX_RANGE_LOCAL);
    P("DataRange", PMIX_RANGE_NAMESPACE);
    P("DataRange", PMIX_RANGE_SESSION);
    P("DataRange", PMIX_RANGE_GLOBAL);
    P("DataRange", PMIX_RANGE_CUSTOM);
    P("DataRange", PMIX_RANGE_PROC_LOCAL);
    P("DataRange", PMIX_RANGE_INVALID);
    P("Persistence", PMIX_PERSIST_INDEF);
    P("Persistence", PMIX_PERSIST_FIRST_READ);
    P("Persistence", PMIX_PERSIST_PROC);
    P("Persistence", PMIX_PERSIST_APP);
    P("Persistence", PMIX_PERSIST_SESSION);
    P("Persistence", PMIX_PERSIST_INVALID);
    P("ProcState", PMIX_PROC_STATE_UNDEF);
    P("ProcState", PMIX_PROC_STATE_PREPPED);
    P("ProcState", PMIX_PROC_STATE_LAUNCH_UNDERWAY);
    P("ProcState", PMIX_PROC_STATE_RESTART);
    P("ProcState", PMIX_PROC_STATE_TERMINATE);
    P("ProcState", PMIX_PROC_STATE_RUNNING);
    P("ProcState", PMIX_PROC_STATE_CONNECTED);
    P("ProcState", PMIX_PROC_STATE_UNTERMINATED);
    P("ProcState", PMIX_PROC_STATE_TERMINATED);
    P("ProcState", PMIX_PROC_STATE_ERROR);
    P("ProcState", PMIX_PROC_STATE_KILLED_BY_CMD);
    P("ProcState", PMIX_PROC_STATE_ABORTED);
    P("ProcState", PMIX_PROC_STATE_FAILED_TO_START);
    P("ProcState", PMIX_PROC_STATE_ABORTED_BY_SIG);
    P("ProcState", PMIX_PROC_STATE_TERM_WO_SYNC);
    P("ProcState", PMIX_PROC_STATE_COMM_FAILED);
    P("ProcState", PMIX_PROC_STATE_SENSOR_BOUND_EXCEEDED);
    P("ProcState", PMIX_PROC_STATE_CALLED_ABORT);
    P("ProcState", PMIX_PROC_STATE_HEARTBEAT_FAILED);
    P("ProcState", PMIX_PROC_STATE_MIGRATING);
    P("ProcState", PMIX_PROC_STATE_CANNOT_RESTART);
    P("ProcState", PMIX_PROC_STATE_TERM_NON_ZERO);
    P("ProcState", PMIX_PROC_STATE_FAILED_TO_LAUNCH);
    P("JobState", PMIX_JOB_STATE_UNDEF);
    P("JobState", PMIX_JOB_STATE_AWAITING_ALLOC);
    P("JobState", PMIX_JOB_STATE_LAUNCH_UNDERWAY);
    P("JobState", PMIX_JOB_STATE_RUNNING);
    P("JobState", PMIX_JOB_STATE_SUSPENDED);
    P("JobState", PMIX_JOB_STATE_CONNECTED);
    P("JobState", PMIX_JOB_STATE_UNTERMINATED);
    P("JobState", PMIX_JOB_STATE_TERMINATED);
    P("JobState", PMIX_JOB_STATE_TERMINATED_WITH_ERROR);
    P("LinkState", PMIX_LINK_STATE_UNKNOWN);
    P("LinkState", PMIX_LINK_DOWN);
    P("LinkState", PMIX_LINK_UP);
    P("AllocDirective", PMIX_ALLOC_NEW);
    P("AllocDirective", PMIX_ALLOC_EXTEND);
    P("AllocDirective", PMIX_ALLOC_RELEASE);
    P("AllocDirective", PMIX_ALLOC_REAQUIRE);
    P("IofChannel", PMIX_FWD_NO_CHANNELS);
    P("IofChannel", PMIX_FWD_STDIN_CHANNEL);
    P("IofChannel", PMIX_FWD_STDOUT_CHANNEL);
    P("IofChannel", PMIX_FWD_STDERR_CHANNEL);
    P("IofChannel", PMIX_FWD_STDDIAG_CHANNEL);
    P("IofChannel", PMIX_FWD_ALL_CHANNELS);
    P("DeviceType", PMIX_DEVTYPE_UNKNOWN);
    P("DeviceType", PMIX_DEVTYPE_BLOCK);
    P("DeviceType", PMIX_DEVTYPE_GPU);
    P("DeviceType", PMIX_DEVTYPE_NETWORK);
    P("DeviceType", PMIX_DEVTYPE_OPENFABRICS);
    P("DeviceType", PMIX_DEVTYPE_DMA);
    P("DeviceType", PMIX_DEVTYPE_COPROC);
    P("Rank", PMIX_RANK_UNDEF);
    P("Rank", PMIX_RANK_WILDCARD);
    P("Rank", PMIX_RANK_LOCAL_NODE);
    P("Rank", PMIX_RANK_INVALID);
    P("Rank", PMIX_RANK_LOCAL_PEERS);
    P("Rank", PMIX_RANK_VALID);
    return 0;
}
