//! Debian's OpenPMIx 4.2.2 client examples (libpmix-dev's documentation
//! folder, `dpkg -L libpmix-dev`) on our libpmix.so.2. They include
//! `examples.h`, which the package does not ship: interop/c/examples.h is
//! our own (written for pmix-wire from what the examples use). Each is
//! built at test time from the installed folder against libpmix 4.2.2,
//! run under `pmixw run -n 2` once on libpmix and once with
//! LD_LIBRARY_PATH naming ours: the same exit status and the same lines
//! (each rank's stderr joined to its stdout, sorted, pids masked). Then
//! those of them that each other host serves, our library for the ranks
//! only (`env LD_LIBRARY_PATH=… exe`; the host keeps its own libpmix):
//! PRRTE 5.0.11's `prterun -n 2` (the wheel's libpmix 5.0.11), Open MPI
//! 4.1.4's `mpirun -n 2` (Debian's libpmix 4.2.2) and `srun --mpi=pmix
//! -N 1 -n 2` on a private Slurm cluster (slurmstepd's libpmix 4.2.2):
//! the same again. Which examples run where and why the others do not:
//! spec-notes/capi.md, "Debian's OpenPMIx examples".

mod common;
use common::{pmixw_output_in, profile_dir};
use pmix_test_kit::{cbuild, hosts, process, slurm};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The client examples that run here, and the exit status both libraries
/// give (fault.c and bad_exit.c end their job with a rank's exit 1).
/// Each runs in the folder they are built in: dynamic.c's rank 0 spawns
/// `<its cwd>/client` (client.c, built before it).
const EXAMPLES: &[(&str, i32)] = &[
    ("client", 0),
    ("dynamic", 0),
    ("client2", 0),
    ("hello", 0),
    ("pub", 0),
    ("pubi", 0),
    ("dmodex", 0),
    ("fault", 1),
    ("bad_exit", 1),
    ("group", 0),
    ("asyncgroup", 0),
    ("group_dmodex", 0),
    ("group_lcl_cid", 0),
    ("jctrl", 0),
    ("log", 0),
    ("nodeinfo", 0),
    ("abi_no_init", 0),
    ("abi_with_init", 0),
];

/// Examples run as one rank under `pmixw run` only: alloc.c's rank 1
/// waits for ever for an allocation that never comes (on libpmix too);
/// its rank 0 alone asks for one and reads the server's answer
/// (NOT_SUPPORTED) in its callback.
const ONE_RANK: &[&str] = &["alloc"];

/// Those of [`EXAMPLES`] run under prterun too (bad_exit's job does not
/// end there on libpmix either; group_dmodex and group_lcl_cid are run
/// there by their own test: libpmix 4.2.2 misreads prterun's group
/// answers).
const UNDER_PRTERUN: &[&str] = &[
    "client",
    "dynamic",
    "client2",
    "hello",
    "pub",
    "pubi",
    "dmodex",
    "fault",
    "group",
    "asyncgroup",
    "jctrl",
    "log",
    "nodeinfo",
    "abi_no_init",
    "abi_with_init",
];

/// Those of [`EXAMPLES`] run under Open MPI 4.1.4's mpirun too. Left
/// out: pubi, whose job does not always end there, on libpmix either (ORTE
/// answers rank 1's lookup with an empty publisher namespace, which the
/// example calls wrong, so rank 1 finalizes without the closing fence;
/// rank 0's fence then fails with PMIX_ERR_PARTIAL_SUCCESS, or, in one of
/// four runs on libpmix here, waits for ever); bad_exit, whose ranks do not
/// synchronise: whether rank 1 prints its query's answer before mpirun
/// kills it at rank 0's exit is a race, on libpmix too; abi_with_init,
/// whose query of PMIX_QUERY_NAMESPACES ORTE answers PMIX_ERROR (on
/// libpmix too: the example exits 255). Under `srun --mpi=pmix` all of
/// them run.
const UNDER_MPIRUN4: &[&str] = &[
    "client",
    "dynamic",
    "client2",
    "hello",
    "pub",
    "dmodex",
    "fault",
    "group",
    "asyncgroup",
    "group_dmodex",
    "group_lcl_cid",
    "jctrl",
    "log",
    "nodeinfo",
    "abi_no_init",
];

/// The installed examples folder (the one holding client.c), from dpkg.
fn examples_dir() -> Result<PathBuf, String> {
    let out = Command::new("dpkg")
        .args(["-L", "libpmix-dev"])
        .output()
        .map_err(|e| format!("dpkg: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|l| l.ends_with("/examples/client.c"))
        .and_then(|l| Path::new(l).parent().map(Path::to_path_buf))
        .filter(|d| d.join("client.c").is_file())
        .ok_or_else(|| {
            "libpmix-dev's examples are not installed (apt-get install -y libpmix-dev)".into()
        })
}

/// pids, job ids and namespace suffixes masked: a run of 4 or more digits,
/// or 6 hex digits with a digit among them (pmixw's namespace tag), is `N`;
/// so is the job family of mpirun's process names (`[[717,1],0]`), and a
/// pid the examples print (`pid 393`, `Client 393: Running`), which may
/// be shorter (pids wrap around).
fn masked(line: &str) -> String {
    let line = pids_masked(line);
    let line = match line.split_once("[[") {
        Some((head, tail)) if tail.starts_with(|c: char| c.is_ascii_digit()) => {
            let rest = tail.trim_start_matches(|c: char| c.is_ascii_digit());
            format!("{head}[[N{rest}")
        }
        _ => line.to_string(),
    };
    let mut out = String::new();
    let mut word = String::new();
    let flush = |w: &mut String, out: &mut String| {
        let digits = w.chars().all(|c| c.is_ascii_digit());
        let tag = w.len() == 6
            && w.chars().all(|c| c.is_ascii_hexdigit())
            && w.chars().any(|c| c.is_ascii_digit());
        if (digits && w.len() >= 4) || tag {
            out.push('N');
        } else {
            out.push_str(w);
        }
        w.clear();
    };
    for c in line.chars() {
        if c.is_ascii_alphanumeric() {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// The number after `pid `, a line's `Client <pid>:` or `[<pid>] ` (the
/// asyncgroup example's) and the pid in prterun's namespaces
/// (`prterun-vm-327@1`) as `N`.
fn pids_masked(line: &str) -> String {
    let owned = before_at_masked(line);
    let line: &str = &owned;
    let digits = |s: &str| s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let mut out = String::new();
    let mut rest = line;
    if let Some(tail) = rest.strip_prefix('[') {
        let n = digits(tail);
        if n > 0 && tail[n..].starts_with("] ") {
            out.push_str("[N");
            rest = &tail[n..];
        }
    }
    if let Some(tail) = rest.strip_prefix("Client ") {
        let n = digits(tail);
        if n > 0 && tail[n..].starts_with(':') {
            out.push_str("Client N");
            rest = &tail[n..];
        }
    }
    while let Some(at) = rest.find("pid ") {
        let (head, tail) = rest.split_at(at + 4);
        out.push_str(head);
        let n = digits(tail);
        if n > 0 {
            out.push('N');
        }
        rest = &tail[n..];
    }
    out.push_str(rest);
    out
}

/// Each run of digits right before an `@` as `N`.
fn before_at_masked(line: &str) -> String {
    let mut out = String::new();
    for (i, part) in line.split('@').enumerate() {
        if i > 0 {
            out.push('@');
        }
        let is_last = i == line.matches('@').count();
        let kept = part.trim_end_matches(|c: char| c.is_ascii_digit());
        if !is_last && kept.len() < part.len() {
            out.push_str(kept);
            out.push('N');
        } else {
            out.push_str(part);
        }
    }
    out
}

/// Each rank runs as `sh -c 'exec "$0" 2>&1' exe`: its stderr (where the
/// examples print) goes to the job's stdout, apart from the launcher's own
/// reports on its stderr, which would otherwise interleave with the
/// ranks' lines, even within a line.
const RANK_SH: [&str; 3] = ["sh", "-c", "exec \"$0\" 2>&1"];

/// `pmixw run -n 2 exe` (on ours if `lib`): see [`lines`].
fn run(pmixw: &Path, exe: &Path, lib: Option<&Path>) -> (Option<i32>, Vec<String>) {
    run_n(pmixw, exe, lib, 2)
}

/// [`run`] of `n` ranks.
fn run_n(pmixw: &Path, exe: &Path, lib: Option<&Path>, n: u32) -> (Option<i32>, Vec<String>) {
    // the namespace named as pmixw would (the program's, not sh's)
    let ns = exe.file_name().unwrap_or_default();
    let mut cmd: Vec<&std::ffi::OsStr> = vec!["--nspace".as_ref(), ns];
    cmd.extend(RANK_SH.iter().map(|a| a.as_ref() as &std::ffi::OsStr));
    cmd.push(exe.as_os_str());
    // client.c loads the topology: hwloc says which of its plugins load
    // (its PCI discovery among them), the same on both libraries
    let env: &[(&str, &str)] = if ns == "client" {
        &[("HWLOC_PLUGINS_VERBOSE", "1")]
    } else {
        &[]
    };
    lines(&pmixw_output_in(pmixw, &cmd, lib, n, env, exe.parent()))
}

/// `launcher` (its command line up to the rank's) starting each rank as
/// [`RANK_SH`] `exe`, on ours if `lib` (`env LD_LIBRARY_PATH=<lib>` before
/// it: the host keeps its own libpmix): see [`lines`].
fn run_under(mut launcher: Command, exe: &Path, lib: Option<&Path>) -> (Option<i32>, Vec<String>) {
    if let Some(l) = lib {
        launcher
            .arg("env")
            .arg(format!("LD_LIBRARY_PATH={}", l.display()));
    }
    for (v, _) in pmix_codec::select::SERVER_URI_VARS {
        launcher.env_remove(v);
    }
    launcher.args(RANK_SH).arg(exe);
    if let Some(d) = exe.parent() {
        launcher.current_dir(d);
    }
    let what = format!("{launcher:?}");
    lines(&process::run_within(&mut launcher, process::HANG, &what))
}

/// Each of `names` (built in `out`) under the launcher `launch` makes,
/// on libpmix and on ours (`lib`): the same exit status and lines.
fn same_under(host: &str, names: &[&str], out: &Path, lib: &Path, launch: &dyn Fn() -> Command) {
    for name in names {
        let exe = out.join(name);
        // the reference itself hung once (hello under Open MPI 4.1.4's
        // mpirun on libpmix 4.2.2, rank 0 stuck, load average 40,
        // 2026-12-03): a reference that does not finish is run once more,
        // since only a reference that passes can judge ours
        let reference = || run_under(launch(), &exe, None);
        let (code_c, theirs) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(reference))
            .unwrap_or_else(|_| {
                eprintln!("{name} under {host} on libpmix did not finish: run once more");
                reference()
            });
        assert!(!theirs.is_empty(), "{name} printed nothing under {host}");
        let (code, ours) = run_under(launch(), &exe, Some(lib));
        assert_eq!(code, code_c, "{name} under {host} on ours: {ours:#?}");
        let (ours, theirs) = if host == "srun" {
            (fence_race_masked(ours), fence_race_masked(theirs))
        } else {
            (ours, theirs)
        };
        assert_eq!(ours, theirs, "{name} under {host}");
    }
}

/// slurmstepd's libpmix answers a fence that a finalized rank never
/// joins with PMIX_ERR_TIMEOUT (-24) or PMIX_ERR_PARTIAL_SUCCESS (-52),
/// whichever of the fence's deadline and that rank's closed connection
/// it sees first (pub.c's rank 1, on libpmix and on ours alike: the
/// server decides, not the client library): either is `-24|-52`.
fn fence_race_masked(lines: Vec<String>) -> Vec<String> {
    let mut lines = lines
        .into_iter()
        .map(|l| {
            match l
                .strip_suffix("PMIx_Fence failed: -24")
                .or(l.strip_suffix("PMIx_Fence failed: -52"))
            {
                Some(head) => format!("{head}PMIx_Fence failed: -24|-52"),
                None => l,
            }
        })
        .collect::<Vec<_>>();
    lines.sort();
    lines
}

/// With `lib` first on LD_LIBRARY_PATH, the loader resolves `exe`'s
/// libpmix.so.2 to ours (our call trace would share the examples' pipe,
/// so the loader is asked instead).
fn assert_loads_ours(exe: &Path, lib: &Path) {
    let o = Command::new(exe)
        .env("LD_LIBRARY_PATH", lib)
        .env("LD_TRACE_LOADED_OBJECTS", "1")
        .output()
        .unwrap();
    let want = format!("libpmix.so.2 => {}", lib.join("libpmix.so.2").display());
    let got = String::from_utf8_lossy(&o.stdout);
    assert!(got.contains(&want), "the loader did not take ours:\n{got}");
}

/// A run's exit status, its lines (NULs dropped: prterun's log channel
/// writes them), masked and sorted, our not-supported notices, the
/// host's own libpmix 5.0.11 error log, pmixw's notice of a namespace's
/// tool rendezvous name held by another job and slurmstepd's notice of a
/// cancelled step left out (it carries the time of day, and whether srun
/// relays it before it exits is a race, on libpmix too).
fn lines(o: &std::process::Output) -> (Option<i32>, Vec<String>) {
    let all: Vec<String> = [&o.stdout, &o.stderr]
        .iter()
        .flat_map(|b| {
            String::from_utf8_lossy(b)
                .replace('\0', "")
                .lines()
                .map(masked)
                .collect::<Vec<_>>()
        })
        .collect();
    // the host's libpmix (built under /openmpi-5.0.11/) logs what it
    // cannot read of libpmix 4.2.2's messages: not the program's output
    let mut lines: Vec<String> = all
        .into_iter()
        .filter(|l| {
            let cancelled = l.starts_with("slurmstepd") && l.contains(" CANCELLED AT ");
            // pmixw's notice that another live server (another test's
            // or user's job of the same name) holds the tool rendezvous
            // name: the examples attach no tool, and the job is the same
            let shared_name =
                l.starts_with("pmixw run: warning: ") && l.contains(" belongs to another server");
            !(l.starts_with("pmix-capi: ")
                || l.contains("/openmpi-5.0.11/")
                || cancelled
                || shared_name)
        })
        .collect();
    lines.sort();
    (o.status.code(), lines)
}

#[test]
fn openpmix_client_examples_run_on_ours_as_on_libpmix() {
    if process::require("cc and libpmix 4.2.2", hosts::libpmix4_dev()).is_none() {
        return;
    }
    let Some(dir) = process::require("OpenPMIx 4.2.2's examples", examples_dir()) else {
        return;
    };
    let Some(pmixw) = process::require("pmixw of this build", common::pmixw()) else {
        return;
    };
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capi_examples");
    let lib = out.join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::copy(
        profile_dir().join("deps/libpmix.so"),
        lib.join("libpmix.so.2"),
    )
    .unwrap();
    let mut extra: Vec<String> = vec![
        "-pthread".into(),
        format!("-I{}", cbuild::script("").display()),
    ];
    extra.extend(cbuild::pmix_flags().unwrap_or_else(|e| panic!("{e}")));
    for (name, status) in EXAMPLES {
        let src = dir.join(format!("{name}.c"));
        let exe = cbuild::compile_file(Path::new("cc"), &src, &out.join(name), &extra)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_loads_ours(&exe, &lib);
        let (code_c, theirs) = run(&pmixw, &exe, None);
        assert_eq!(code_c, Some(*status), "{name} on libpmix: {theirs:#?}");
        assert!(!theirs.is_empty(), "{name} printed nothing on libpmix");
        let (code, ours) = run(&pmixw, &exe, Some(&lib));
        assert_eq!(code, code_c, "{name} on ours: {ours:#?}");
        assert_eq!(ours, theirs, "{name}");
    }
    for name in ONE_RANK {
        let src = dir.join(format!("{name}.c"));
        let exe = cbuild::compile_file(Path::new("cc"), &src, &out.join(name), &extra)
            .unwrap_or_else(|e| panic!("{e}"));
        let (code_c, theirs) = run_n(&pmixw, &exe, None, 1);
        assert_eq!(code_c, Some(0), "{name} on libpmix: {theirs:#?}");
        assert!(!theirs.is_empty(), "{name} printed nothing on libpmix");
        let (code, ours) = run_n(&pmixw, &exe, Some(&lib), 1);
        assert_eq!(code, code_c, "{name} on ours: {ours:#?}");
        assert_eq!(ours, theirs, "{name}");
    }
    if let Some(prterun) = process::require("PRRTE 5.0.11's prterun", hosts::prterun5()) {
        same_under("prterun", UNDER_PRTERUN, &out, &lib, &|| {
            hosts::prterun_n(&prterun, 2)
        });
    }
    if let Some(mpirun) = process::require("Open MPI 4.1.4's mpirun", hosts::mpirun4()) {
        same_under("mpirun", UNDER_MPIRUN4, &out, &lib, &|| {
            hosts::mpirun4_n(&mpirun, 2)
        });
    }
    // one cluster for every example (skipped, or a failure in CI, where
    // Slurm is not installed)
    if let Some(cluster) = slurm::for_test(1) {
        let all: Vec<&str> = EXAMPLES.iter().map(|(name, _)| *name).collect();
        same_under("srun", &all, &out, &lib, &|| {
            let mut c = cluster.srun();
            c.args(["--quiet", "--mpi=pmix", "-N", "1", "-n", "2"]);
            c
        });
        cluster.stop();
    }
}

#[test]
fn pids_of_any_length_are_masked() {
    assert_eq!(masked("Client 393: Running"), "Client N: Running");
    assert_eq!(
        masked("Client ns job rank 0 pid 394: Running"),
        "Client ns job rank 0 pid N: Running"
    );
    assert_eq!(masked("Client ns 12345 rank 1: x"), "Client ns N rank 1: x");
    assert_eq!(
        masked("[494] Client ns job rank 0: Running on vm"),
        "[N] Client ns job rank 0: Running on vm"
    );
    assert_eq!(masked("[[717,1],0] x"), "[[N,1],0] x");
    assert_eq!(
        fence_race_masked(vec![
            "Client ns j rank 1: PMIx_Fence failed: -52".into(),
            "Client ns j rank 1: PMIx_Fence failed: -25".into(),
        ]),
        [
            "Client ns j rank 1: PMIx_Fence failed: -24|-52",
            "Client ns j rank 1: PMIx_Fence failed: -25"
        ]
    );
    assert_eq!(
        masked("Client job:0 num procs 2"),
        "Client job:0 num procs 2"
    );
}

/// group_dmodex and group_lcl_cid under PRRTE 5.0.11's `prterun -n 2`,
/// left out of [`UNDER_PRTERUN`]: prterun's libpmix 5.0.11 answers a
/// group construct with the final membership (SIZE + PROCs) before the
/// context id (SIZE), whatever the client's version (a capture through
/// `pmixw relay`, 2026-12-03: 2 members, then 4294967295); libpmix 4.2.2's
/// client reads the first SIZE as the context id and prints the member
/// count, 2, where ours prints what the server sent; and libpmix 4.2.2's
/// destruct carries no members, which that server reads past the end of
/// and refuses BAD_PARAM (group_lcl_cid then stops before its PMIx_Get of
/// each rank's local id), where ours sends them as a 5.0 client does
/// (divergences.md, "A libpmix 4.2.2 client's groups under a 5.0.11
/// server"). The test holds libpmix to that reading, and ours to the
/// rest of libpmix's lines.
#[test]
fn the_group_examples_under_prterun_differ_only_where_libpmix_4_misreads_its_server() {
    if process::require("cc and libpmix 4.2.2", hosts::libpmix4_dev()).is_none() {
        return;
    }
    let Some(dir) = process::require("OpenPMIx 4.2.2's examples", examples_dir()) else {
        return;
    };
    let Some(prterun) = process::require("PRRTE 5.0.11's prterun", hosts::prterun5()) else {
        return;
    };
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capi_examples_groups");
    let lib = out.join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    let tmp = lib.join(format!(".libpmix.so.2.{}", std::process::id()));
    std::fs::copy(profile_dir().join("deps/libpmix.so"), &tmp).unwrap();
    std::fs::rename(&tmp, lib.join("libpmix.so.2")).unwrap();
    let mut extra: Vec<String> = vec![
        "-pthread".into(),
        format!("-I{}", cbuild::script("").display()),
    ];
    extra.extend(cbuild::pmix_flags().unwrap_or_else(|e| panic!("{e}")));
    for name in ["group_dmodex", "group_lcl_cid"] {
        let src = dir.join(format!("{name}.c"));
        let exe = cbuild::compile_file(Path::new("cc"), &src, &out.join(name), &extra)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_loads_ours(&exe, &lib);
        let (code_c, theirs) = run_under(hosts::prterun_n(&prterun, 2), &exe, None);
        let (code, ours) = run_under(hosts::prterun_n(&prterun, 2), &exe, Some(&lib));
        assert_eq!(code_c, Some(0), "{name} on libpmix: {theirs:#?}");
        assert_eq!(code, code_c, "{name} on ours: {ours:#?}");
        let cid = |l: &String| {
            let construct = l.contains("Group construct complete");
            l.split_once(" CID ")
                .filter(|_| construct)
                .map(|(_, c)| c.to_string())
        };
        // libpmix 4.2.2 reads the member count, and its destruct is refused
        let read: Vec<String> = theirs.iter().filter_map(cid).collect();
        assert_eq!(read, ["2", "2"], "{name} on libpmix: {theirs:#?}");
        let refused = |l: &String| l.ends_with("PMIx_Group_destruct failed: BAD-PARAM");
        assert_eq!(
            theirs.iter().filter(|l| refused(l)).count(),
            2,
            "{theirs:#?}"
        );
        // ours: the server's context id, the same on both ranks, and no failure
        let ctxid: Vec<String> = ours.iter().filter_map(cid).collect();
        assert_eq!(ctxid.len(), 2, "{name} on ours: {ours:#?}");
        assert!(ctxid[0] == ctxid[1] && ctxid[0] != "2", "{ours:#?}");
        assert!(
            !ours.iter().any(|l| l.contains("failed")),
            "{name} on ours: {ours:#?}"
        );
        // libpmix's other lines, each on ours; ours has besides only the
        // local ids group_lcl_cid reads after a destruct that succeeded
        let mut left = ours.clone();
        for l in theirs.iter().filter(|l| !refused(l)) {
            let l = match cid(l) {
                Some(c) => l.replace(&format!(" CID {c}"), &format!(" CID {}", ctxid[0])),
                None => l.clone(),
            };
            let at = left.iter().position(|o| *o == l);
            let at = at.unwrap_or_else(|| panic!("{name}: libpmix's {l:?} not on ours: {ours:#?}"));
            left.remove(at);
        }
        assert!(
            left.iter()
                .all(|l| name == "group_lcl_cid" && l.contains(": PMIx_Get LOCAL CID for rank ")),
            "{name}: ours printed besides {left:#?}"
        );
        if name == "group_lcl_cid" {
            assert_eq!(
                left.len(),
                4,
                "each rank reads both ranks' local ids: {ours:#?}"
            );
        }
    }
}
