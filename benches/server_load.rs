//! Server load benchmark (issue #11): N simulated PMIx clients against our
//! server and libpmix 4.2.2's, each in a process of its own. The simulator
//! and what it prints: `pmix_test_kit::load` (test-kit/src/load.rs).
//!
//!     nice -n 19 cargo bench --bench server_load          # N = 1000
//!     BENCH_N=1000,10000 nice -n 19 cargo bench --bench server_load
//!     BENCH_GDS=ds21 BENCH_N=100000 BENCH_REPS=1 nice -n 19 cargo bench --bench server_load

fn main() {
    pmix_test_kit::load::main(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")));
}
