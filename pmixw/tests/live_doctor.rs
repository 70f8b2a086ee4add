//! Issue 26 item 2: `pmixw doctor`, `query` and `probe` under the
//! reference launchers (Open MPI 4.1.4's mpirun, PRRTE 5.0.11's prterun,
//! Slurm's `srun --mpi=pmix`): each connects as the host accepts, and the
//! host still serves a libpmix client started afterwards.

use pmix_test_kit::process;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

/// What issue 26 item 2 runs as rank 0 under each host, rank 1 being a
/// libpmix 4.2.2 client (`srv_client init`) that starts 2 s later: the
/// host must still serve it. (`pmixw probe` runs as both ranks, rank 1
/// 2 s after rank 0: its fences need both.) The command's status is
/// printed, not returned: a launcher kills the job when a rank fails.
const HARMLESS: &[(&str, &str)] = &[
    (
        "doctor",
        r#"if [ "$PMIX_RANK" = 0 ]; then "$PMIXW" doctor --json; echo "exit $?"; else sleep 2; exec "$SRV" init; fi"#,
    ),
    (
        "query",
        r#"if [ "$PMIX_RANK" = 0 ]; then "$PMIXW" query pmix.qry.ns; echo "exit $?"; else sleep 2; exec "$SRV" init; fi"#,
    ),
    (
        "probe",
        r#"sleep $((PMIX_RANK * 2)); "$PMIXW" probe; echo "exit $?""#,
    ),
];

fn srv_client() -> PathBuf {
    pmix_test_kit::interop::build_c("srv_client", &pmix_test_kit::interop::default_out_dir())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The output of one HARMLESS script under a launcher: success, text.
fn under(mut cmd: Command, script: &str, what: &str) -> (bool, String) {
    cmd.args(["sh", "-c", script])
        .env("PMIXW", env!("CARGO_BIN_EXE_pmixw"))
        .env("SRV", srv_client())
        .stdin(Stdio::null());
    let o = process::run_within(&mut cmd, Duration::from_secs(120), what);
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.success(), text)
}

/// The host survived: rank 1's client, started after rank 0's command,
/// initialized and finalized.
fn check_harmless(host: &str, name: &str, ok: bool, out: &str) {
    eprintln!("--- {host}: {name}\n{out}");
    match name {
        "probe" => {
            // both ranks ran the whole probe through its fences
            for r in 0..2 {
                assert!(
                    out.lines()
                        .any(|l| l.starts_with(&format!("[{r}] probe: "))),
                    "{host}: no summary of rank {r}:\n{out}"
                );
            }
        }
        _ => {
            assert!(
                out.contains("ok init SUCCESS"),
                "{host} {name}: the second client:\n{out}"
            );
            assert!(out.contains("ok finalize SUCCESS"), "{host} {name}:\n{out}");
        }
    }
    if name == "doctor" {
        let j: serde_json::Value = out
            .find("{\n")
            .and_then(|at| {
                serde_json::Deserializer::from_str(&out[at..])
                    .into_iter()
                    .next()
            })
            .and_then(Result::ok)
            .unwrap_or_else(|| panic!("{host}: no JSON report:\n{out}"));
        assert_eq!(j["reachable"], true, "{host}: {j:#}");
        let hs = j["handshake"].as_str().unwrap_or_default();
        assert!(hs.starts_with("accepted as client "), "{host}: {j:#}");
        let verdict = j["verdict"].as_str().unwrap_or_default();
        assert!(
            verdict.starts_with("OK: ") || verdict.starts_with("WARNING: "),
            "{host}: {j:#}"
        );
    }
    // the command ran to its end
    assert!(
        out.lines().any(|l| l.starts_with("exit ")),
        "{host} {name}:\n{out}"
    );
    if name == "query" {
        // the host's answer, or its refusal, as the job's client
        assert!(
            out.contains("pmix.qry.ns: ") || out.contains("pmixw: query: "),
            "{host}: {out}"
        );
        assert!(!out.contains("no rendezvous file"), "{host}: {out}");
    }
    assert!(ok, "{host} {name}: the launcher failed:\n{out}");
}

/// Issue 26 item 2: doctor, query and probe connect to a host only as it
/// accepts (inside a job: as the job's client), and the host lives on: Open
/// MPI 4.1.4's mpirun (once crashed by doctor's tool handshake on
/// PMIX_SERVER_URI41), PRRTE 5.0.11's prterun and Slurm's `srun
/// --mpi=pmix`.
#[test]
fn doctor_query_and_probe_leave_every_launcher_alive() {
    if !has_libpmix_dev() {
        return;
    }
    if let Some(m) = process::require("Open MPI 4.1.4 mpirun", pmix_test_kit::hosts::mpirun4()) {
        for (name, script) in HARMLESS {
            let c = pmix_test_kit::hosts::mpirun4_n(&m, 2);
            let (ok, out) = under(c, script, "mpirun");
            check_harmless("mpirun 4.1.4", name, ok, &out);
        }
    }
    if let Some(p) = process::require("PRRTE 5.0.11 prterun", pmix_test_kit::hosts::prterun5()) {
        for (name, script) in HARMLESS {
            let c = pmix_test_kit::hosts::prterun_n(&p, 2);
            let (ok, out) = under(c, script, "prterun");
            check_harmless("prterun 5.0.11", name, ok, &out);
        }
    }
    if let Some(c) = pmix_test_kit::slurm::for_test(1) {
        for (name, script) in HARMLESS {
            let mut cmd = c.srun();
            cmd.args(["--mpi=pmix", "-N", "1", "-n", "2"]);
            let (ok, out) = under(cmd, script, "srun --mpi=pmix");
            check_harmless("srun --mpi=pmix", name, ok, &out);
        }
        c.stop();
    }
}

fn has_libpmix_dev() -> bool {
    process::require(
        "libpmix 4.2.2 headers",
        pmix_test_kit::hosts::libpmix4_dev(),
    )
    .is_some()
}
