//! The server's ds21 shared-memory store (spec-notes/dstore.md, issue
//! 35), as libpmix 4.2.2's server offers its clients one: the net
//! driver's (`net::dstore::Session`, the store `pmixw run --dstore` uses),
//! in `<dir>/pmix_dstor_ds21_<pid>`, given to the host's PMIX_USERID, where `<dir>` is the host's
//! PMIX_DSTPATH, else its PMIX_SERVER_TMPDIR, else `$TMPDIR`, `$TEMP`,
//! `$TMP`, `/tmp` (libpmix's `pmix_common_dstor_init`); unless the
//! server's `PMIX_MCA_gds` leaves ds21 out (a host asking for `hash` gets
//! no store). `PMIx_server_setup_fork` then gives a namespace's clients
//! what libpmix's gives them with ds12 excluded: `PMIX_GDS_MODULE` the
//! selected modules in priority order (`ds21,hash`) and
//! `PMIX_DSTORE_21_BASE_PATH`; no ds12, so no `PMIX_DSTORE_ESH_BASE_PATH`
//! (one naming no ds12 store makes every 4.2.2 client log a PMIX ERROR).

use pmix_types::{Info, Value};
use pmix_wire::server::net;
use std::path::{Path, PathBuf};

/// The gds modules of ours `PMIX_MCA_gds` selects, as libpmix's MCA
/// base reads a component list: names, or `^` and the names left out;
/// unset or empty, every one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Gds {
    pub ds21: bool,
    pub hash: bool,
}

impl Gds {
    pub(crate) fn selected(var: Option<&str>) -> Gds {
        let v = var.map(str::trim).unwrap_or("");
        if v.is_empty() {
            return Gds {
                ds21: true,
                hash: true,
            };
        }
        let (exclude, list) = match v.strip_prefix('^') {
            Some(rest) => (true, rest),
            None => (false, v),
        };
        let named = |m: &str| list.split(',').any(|n| n.trim() == m);
        Gds {
            ds21: named("ds21") != exclude,
            hash: named("hash") != exclude,
        }
    }

    /// From this process's environment (read at PMIx_server_init).
    pub(crate) fn from_env() -> Gds {
        Gds::selected(std::env::var("PMIX_MCA_gds").ok().as_deref())
    }

    /// `PMIX_GDS_MODULE` for a namespace the store holds: the selected
    /// modules, highest priority first (libpmix joins its active list).
    fn module_list(&self) -> String {
        let mut v = Vec::new();
        if self.ds21 {
            v.push("ds21");
        }
        if self.hash {
            v.push("hash");
        }
        v.join(",")
    }
}

fn string_of(given: &[Info], key: &str) -> Option<String> {
    given
        .iter()
        .find(|i| i.key.to_string() == key)
        .and_then(|i| match &i.value {
            Value::String(Some(s)) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
}

/// Where the store's directory is made: the host's PMIX_DSTPATH, else
/// its PMIX_SERVER_TMPDIR, else the first of `TMPDIR`, `TEMP`, `TMP` set
/// in `env`, else `/tmp`.
pub(crate) fn base(given: &[Info], env: impl Fn(&str) -> Option<String>) -> PathBuf {
    string_of(given, "pmix.dstpath")
        .or_else(|| string_of(given, "pmix.srvr.tmpdir"))
        .or_else(|| ["TMPDIR", "TEMP", "TMP"].iter().find_map(|v| env(v)))
        .unwrap_or_else(|| "/tmp".into())
        .into()
}

/// The store's directory for a server whose `PMIX_MCA_gds` is `gds`:
/// None when ds21 is not selected.
pub(crate) fn dstore_dir(given: &[Info], gds: Gds) -> Option<PathBuf> {
    gds.ds21.then(|| base(given, |v| std::env::var(v).ok()))
}

/// The job's user the host names (PMIX_USERID, `pmix.euid`): the store's
/// files are given to it, as libpmix's server chowns its session to it
/// (a root slurmstepd passes the job's uid; its clients run as that user).
pub(crate) fn owner(given: &[Info]) -> Option<u32> {
    given
        .iter()
        .find(|i| i.key.to_string() == "pmix.euid")
        .and_then(|i| match i.value {
            Value::Uint32(u) => Some(u),
            _ => None,
        })
}

/// Give the running server its store, made under `dir` for `owner`,
/// before any namespace is registered (posted to the loop first). Where
/// it cannot be made (not glibc on 64-bit Linux, `SM_USE_LINEAR_SEARCH`
/// in the environment, an I/O error) the server runs without one, its
/// clients on hash; why is printed under PMIX_CAPI_TRACE.
pub(crate) fn install(running: &net::Running, dir: &Path, owner: Option<u32>) {
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    match net::dstore::Session::create_owned(dir, owner) {
        Ok(s) => running.post(move |srv| srv.set_shared_store(Box::new(s))),
        Err(e) => trace_why(&format!("no ds21 store in {}: {e}", dir.display())),
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64")))]
    {
        let _ = (running, dir, owner);
        trace_why("no ds21 store: needs glibc on 64-bit Linux");
    }
}

fn trace_why(why: &str) {
    if std::env::var_os("PMIX_CAPI_TRACE").is_some() {
        eprintln!("pmix-capi: PMIx_server_init: {why}");
    }
}

/// A namespace's client environment as the core gives it, its
/// `PMIX_GDS_MODULE` made the selected list where the store holds the
/// namespace (it names the store's directory); else as given (hash).
pub(crate) fn client_env(mut env: Vec<(String, String)>, gds: Gds) -> Vec<(String, String)> {
    if env.iter().any(|(k, _)| k == "PMIX_DSTORE_21_BASE_PATH") {
        for (k, v) in env.iter_mut() {
            if k == "PMIX_GDS_MODULE" {
                *v = gds.module_list();
            }
        }
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pmix_mca_gds_selects_as_libpmix_reads_a_component_list() {
        let all = Gds {
            ds21: true,
            hash: true,
        };
        for (v, want) in [
            (None, all),
            (Some(""), all),
            (
                Some("hash"),
                Gds {
                    ds21: false,
                    hash: true,
                },
            ),
            (Some("ds21,hash"), all),
            (Some(" ds21 , hash"), all),
            (Some("^ds12"), all),
            (
                Some("^ds21"),
                Gds {
                    ds21: false,
                    hash: true,
                },
            ),
            (
                Some("ds12,hash"),
                Gds {
                    ds21: false,
                    hash: true,
                },
            ),
            (
                Some("^hash"),
                Gds {
                    ds21: true,
                    hash: false,
                },
            ),
        ] {
            assert_eq!(Gds::selected(v), want, "{v:?}");
        }
        assert_eq!(all.module_list(), "ds21,hash");
    }

    #[test]
    fn the_directory_is_the_hosts_dstpath_then_its_tmpdir_then_the_environments() {
        let s = |k: &str, v: &str| Info::new(k, Value::String(Some(v.into())));
        let none = |_: &str| None;
        let tmp = |v: &str| (v == "TMP").then(|| "/t".to_string());
        assert_eq!(
            base(
                &[s("pmix.srvr.tmpdir", "/a"), s("pmix.dstpath", "/b")],
                none
            ),
            PathBuf::from("/b")
        );
        assert_eq!(
            base(&[s("pmix.srvr.tmpdir", "/a")], tmp),
            PathBuf::from("/a")
        );
        assert_eq!(base(&[], tmp), PathBuf::from("/t"));
        assert_eq!(base(&[], none), PathBuf::from("/tmp"));
        assert_eq!(
            dstore_dir(
                &[],
                Gds {
                    ds21: false,
                    hash: true
                }
            ),
            None
        );
    }

    #[test]
    fn the_module_list_follows_the_selection_where_the_store_holds_the_namespace() {
        let e = |v: &[(&str, &str)]| {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect::<Vec<_>>()
        };
        let stored = e(&[
            ("PMIX_GDS_MODULE", "ds21,hash"),
            ("PMIX_DSTORE_21_BASE_PATH", "/d"),
        ]);
        let only = Gds {
            ds21: true,
            hash: false,
        };
        assert_eq!(
            client_env(stored, only),
            e(&[
                ("PMIX_GDS_MODULE", "ds21"),
                ("PMIX_DSTORE_21_BASE_PATH", "/d")
            ])
        );
        let hashed = e(&[("PMIX_GDS_MODULE", "hash"), ("PMIX_MCA_gds", "hash")]);
        assert_eq!(client_env(hashed.clone(), only), hashed);
    }
}
