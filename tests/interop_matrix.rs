//! The interop matrix against the installed libpmix 4.2.2: every case the
//! C generator packs, in every dialect libpmix 4.2.2 can be forced into
//! that we implement, both buffer types, in both directions. A missing
//! libpmix is a failure with instructions, never a skip.

use pmix_codec::{BufferType, Dialect, Format};
use pmix_wire::interop::{run_matrix, Cell};

fn formats(d: Dialect, fixed_ints: bool) -> Vec<Format> {
    [BufferType::NonDesc, BufferType::FullyDesc]
        .into_iter()
        .map(|b| Format {
            dialect: d,
            buffer_type: b,
            fixed_ints,
        })
        .collect()
}

fn check(fmts: Vec<Format>) {
    let m = run_matrix(&fmts).unwrap_or_else(|e| panic!("interop harness unavailable: {e}"));
    let problems = m.problems();
    assert!(
        problems.is_empty(),
        "{}\n{}",
        m.table(),
        problems.join("\n")
    );
    // the matrix really ran: hundreds of cases, nearly all passing outright
    let passes = m
        .cases
        .iter()
        .flat_map(|c| &c.cells)
        .filter(|(_, c)| *c == Cell::Pass)
        .count();
    let min_passes = 600 * fmts.len();
    assert!(
        m.cases.len() >= 300 * fmts.len() && passes >= min_passes,
        "{}",
        m.table()
    );
}

#[test]
fn v41_both_buffer_types() {
    check(formats(Dialect::V41, false));
}

#[test]
fn v41_psquash_native() {
    check(formats(Dialect::V41, true));
}

#[test]
fn v4_both_buffer_types() {
    check(formats(Dialect::V4, false));
}

#[test]
fn v3_both_buffer_types() {
    check(formats(Dialect::V3, false));
}

#[test]
fn v21_both_buffer_types() {
    check(formats(Dialect::V21, false));
}

#[test]
fn v20_both_buffer_types() {
    check(formats(Dialect::V20, false));
}

#[test]
fn v12_both_buffer_types() {
    check(formats(Dialect::V12, false));
}
