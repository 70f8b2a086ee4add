//! Status codes (`pmix_status_t`). Placeholder filled in by the status-table work.
pub type Status = i32;
