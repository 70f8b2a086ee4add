//! The PMIx standard's reserved keys (PMIx 4.x, chapter "Reserved Keys",
//! data realm sections): macro name, string, value type and the realm
//! (level) each belongs to. Taken from
//! the standard's `chap-api-reserved-keys.txt`, whose rows the repository
//! keeps in `corpus/standard/reserved-keys.tsv`; the root crate's
//! `pmixw/tests/libpmix_reserved_keys.rs` checks this table against those rows and every
//! row against libpmix 4.2.2's attribute dictionary.
//!
//! `check` flags a value whose type is not the standard's (Slurm sends
//! `pmix.appnum` as PMIX_INT where the standard says uint32_t).

use crate::DataType;

/// The data realm a reserved key belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Level {
    /// The session realm: the allocation, across jobs.
    Session,
    /// The job realm: one namespace.
    Job,
    /// The application realm: one app of a multi-app job.
    App,
    /// The process realm: one rank.
    Proc,
    /// The node realm: one host.
    Node,
}

impl Level {
    /// The realm's name as the standard's chapter titles it, lower case.
    pub fn name(self) -> &'static str {
        match self {
            Level::Session => "session",
            Level::Job => "job",
            Level::App => "app",
            Level::Proc => "proc",
            Level::Node => "node",
        }
    }
}

/// One reserved key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    /// The macro ("PMIX_JOB_SIZE").
    pub name: &'static str,
    /// The string that travels ("pmix.job.size").
    pub string: &'static str,
    /// The C type the standard gives ("uint32_t").
    pub c_type: &'static str,
    /// The PMIx data type of that C type.
    pub data_type: DataType,
    /// The data realm the standard lists the key under.
    pub level: Level,
    /// Declared provisional in the standard.
    pub provisional: bool,
}

/// `PMIX_CLUSTER_ID`: char*, session level.
pub const CLUSTER_ID: &str = "pmix.clid";
/// `PMIX_UNIV_SIZE`: uint32_t, session level.
pub const UNIV_SIZE: &str = "pmix.univ.size";
/// `PMIX_TMPDIR`: char*, session level.
pub const TMPDIR: &str = "pmix.tmpdir";
/// `PMIX_TDIR_RMCLEAN`: bool, session level.
pub const TDIR_RMCLEAN: &str = "pmix.tdir.rmclean";
/// `PMIX_HOSTNAME_KEEP_FQDN`: bool, session level.
pub const HOSTNAME_KEEP_FQDN: &str = "pmix.fqdn";
/// `PMIX_RM_NAME`: char*, session level.
pub const RM_NAME: &str = "pmix.rm.name";
/// `PMIX_RM_VERSION`: char*, session level.
pub const RM_VERSION: &str = "pmix.rm.version";
/// `PMIX_ALLOCATED_NODELIST`: char*, session level.
pub const ALLOCATED_NODELIST: &str = "pmix.alist";
/// `PMIX_NUM_ALLOCATED_NODES`: uint32_t, session level.
pub const NUM_ALLOCATED_NODES: &str = "pmix.num.anodes";
/// `PMIX_MAX_PROCS`: uint32_t, session level.
pub const MAX_PROCS: &str = "pmix.max.size";
/// `PMIX_NODE_LIST`: char*, session level.
pub const NODE_LIST: &str = "pmix.nlist";
/// `PMIX_NUM_SLOTS`: uint32_t, session level.
pub const NUM_SLOTS: &str = "pmix.num.slots";
/// `PMIX_NUM_NODES`: uint32_t, session level.
pub const NUM_NODES: &str = "pmix.num.nodes";
/// `PMIX_NODE_MAP`: char*, session level.
pub const NODE_MAP: &str = "pmix.nmap";
/// `PMIX_NODE_MAP_RAW`: char*, session level.
pub const NODE_MAP_RAW: &str = "pmix.nmap.raw";
/// `PMIX_PROC_MAP`: char*, session level.
pub const PROC_MAP: &str = "pmix.pmap";
/// `PMIX_PROC_MAP_RAW`: char*, session level.
pub const PROC_MAP_RAW: &str = "pmix.pmap.raw";
/// `PMIX_ANL_MAP`: char*, session level.
pub const ANL_MAP: &str = "pmix.anlmap";
/// `PMIX_JOBID`: char*, job level.
pub const JOBID: &str = "pmix.jobid";
/// `PMIX_NPROC_OFFSET`: pmix_rank_t, job level.
pub const NPROC_OFFSET: &str = "pmix.offset";
/// `PMIX_CMD_LINE`: char*, job level.
pub const CMD_LINE: &str = "pmix.cmd.line";
/// `PMIX_NSDIR`: char*, job level.
pub const NSDIR: &str = "pmix.nsdir";
/// `PMIX_JOB_SIZE`: uint32_t, job level.
pub const JOB_SIZE: &str = "pmix.job.size";
/// `PMIX_JOB_NUM_APPS`: uint32_t, job level.
pub const JOB_NUM_APPS: &str = "pmix.job.napps";
/// `PMIX_LOCAL_PEERS`: char*, job level.
pub const LOCAL_PEERS: &str = "pmix.lpeers";
/// `PMIX_LOCALLDR`: pmix_rank_t, job level.
pub const LOCALLDR: &str = "pmix.lldr";
/// `PMIX_LOCAL_CPUSETS`: pmix_data_array_t, job level.
pub const LOCAL_CPUSETS: &str = "pmix.lcpus";
/// `PMIX_LOCAL_SIZE`: uint32_t, job level.
pub const LOCAL_SIZE: &str = "pmix.local.size";
/// `PMIX_APPLDR`: pmix_rank_t, app level.
pub const APPLDR: &str = "pmix.aldr";
/// `PMIX_APP_SIZE`: uint32_t, app level.
pub const APP_SIZE: &str = "pmix.app.size";
/// `PMIX_APP_ARGV`: char*, app level.
pub const APP_ARGV: &str = "pmix.app.argv";
/// `PMIX_APP_MAP_TYPE`: char*, app level.
pub const APP_MAP_TYPE: &str = "pmix.apmap.type";
/// `PMIX_APP_MAP_REGEX`: char*, app level.
pub const APP_MAP_REGEX: &str = "pmix.apmap.regex";
/// `PMIX_APPNUM`: uint32_t, proc level.
pub const APPNUM: &str = "pmix.appnum";
/// `PMIX_RANK`: pmix_rank_t, proc level.
pub const RANK: &str = "pmix.rank";
/// `PMIX_NSPACE`: char*, proc level.
pub const NSPACE: &str = "pmix.nspace";
/// `PMIX_SESSION_ID`: uint32_t, proc level.
pub const SESSION_ID: &str = "pmix.session.id";
/// `PMIX_GLOBAL_RANK`: pmix_rank_t, proc level.
pub const GLOBAL_RANK: &str = "pmix.grank";
/// `PMIX_APP_RANK`: pmix_rank_t, proc level.
pub const APP_RANK: &str = "pmix.apprank";
/// `PMIX_PARENT_ID`: pmix_proc_t, proc level.
pub const PARENT_ID: &str = "pmix.parent";
/// `PMIX_EXIT_CODE`: int, proc level.
pub const EXIT_CODE: &str = "pmix.exit.code";
/// `PMIX_PROCID`: pmix_proc_t, proc level.
pub const PROCID: &str = "pmix.procid";
/// `PMIX_LOCAL_RANK`: uint16_t, proc level.
pub const LOCAL_RANK: &str = "pmix.lrank";
/// `PMIX_NODE_RANK`: uint16_t, proc level.
pub const NODE_RANK: &str = "pmix.nrank";
/// `PMIX_PACKAGE_RANK`: uint16_t, proc level.
pub const PACKAGE_RANK: &str = "pmix.pkgrank";
/// `PMIX_PROC_PID`: pid_t, proc level.
pub const PROC_PID: &str = "pmix.ppid";
/// `PMIX_PROCDIR`: char*, proc level.
pub const PROCDIR: &str = "pmix.pdir";
/// `PMIX_CPUSET`: char*, proc level.
pub const CPUSET: &str = "pmix.cpuset";
/// `PMIX_CPUSET_BITMAP`: pmix_cpuset_t*, proc level.
pub const CPUSET_BITMAP: &str = "pmix.bitmap";
/// `PMIX_CREDENTIAL`: char*, proc level.
pub const CREDENTIAL: &str = "pmix.cred";
/// `PMIX_SPAWNED`: bool, proc level.
pub const SPAWNED: &str = "pmix.spawned";
/// `PMIX_REINCARNATION`: uint32_t, proc level.
pub const REINCARNATION: &str = "pmix.reinc";
/// `PMIX_HOSTNAME`: char*, node level.
pub const HOSTNAME: &str = "pmix.hname";
/// `PMIX_HOSTNAME_ALIASES`: char*, node level.
pub const HOSTNAME_ALIASES: &str = "pmix.alias";
/// `PMIX_NODEID`: uint32_t, node level.
pub const NODEID: &str = "pmix.nodeid";
/// `PMIX_NODE_SIZE`: uint32_t, node level.
pub const NODE_SIZE: &str = "pmix.node.size";
/// `PMIX_AVAIL_PHYS_MEMORY`: uint64_t, node level.
pub const AVAIL_PHYS_MEMORY: &str = "pmix.pmem";
/// `PMIX_LOCAL_PROCS`: pmix_proc_t array, node level.
pub const LOCAL_PROCS: &str = "pmix.lprocs";
/// `PMIX_NODE_OVERSUBSCRIBED`: bool, node level.
pub const NODE_OVERSUBSCRIBED: &str = "pmix.ndosub";

/// Every reserved key of the data realm sections, in the chapter's order.
pub const RESERVED: &[Key] = &[
    Key {
        name: "PMIX_CLUSTER_ID",
        string: CLUSTER_ID,
        c_type: "char*",
        data_type: DataType::String,
        level: Level::Session,
        provisional: false,
    },
    Key {
        name: "PMIX_UNIV_SIZE",
        string: UNIV_SIZE,
        c_type: "uint32_t",
        data_type: DataType::Uint32,
        level: Level::Session,
        provisional: false,
    },
    Key {
        name: "PMIX_TMPDIR",
        string: TMPDIR,
        c_type: "char*",
        data_type: DataType::String,
        level: Level::Session,
        provisional: false,
    },
    Key {
        name: "PMIX_TDIR_RMCLEAN",
        string: TDIR_RMCLEAN,
        c_type: "bool",
        data_type: DataType::Bool,
        level: Level::Session,
        provisional: false,
    },
    Key {
        name: "PMIX_HOSTNAME_KEEP_FQDN",
        string: HOSTNAME_KEEP_FQDN,
        c_type: "bool",
        data_type: DataType::Bool,
        level: Level::Session,
        provisional: false,
    },
    Key {
        name: "PMIX_RM_NAME",
        string: RM_NAME,
        c_type: "char*",
        data_type: DataType::String,
        level: Level::Session,
        provisional: false,
    },
    Key {
        name: "PMIX_RM_VERSION",
        string: RM_VERSION,
        c_type: "char*",
        data_type: DataType::String,
        level: Level::Session,
        provisional: false,
    },
    Key {
        name: "PMIX_ALLOCATED_NODELIST",
        string: ALLOCATED_NODELIST,
        c_type: "char*",
        data_type: DataType::String,
        level: Level::Session,
        provisional: false,
    },
    Key {
        name: "PMIX_NUM_ALLOCATED_NODES",
        string: NUM_ALLOCATED_NODES,
        c_type: "uint32_t",
        data_type: DataType::Uint32,
        level: Level::Session,
        provisional: false,
    },
    Key {
        name: "PMIX_MAX_PROCS",
        string: MAX_PROCS,
        c_type: "uint32_t",
        data_type: DataType::Uint32,
        level: Level::Session,
        provisional: false,
    },
    Key {
        name: "PMIX_NODE_LIST",
        string: NODE_LIST,
        c_type: "char*",
        data_type: DataType::String,
        level: Level::Session,
        provisional: false,
    },
    Key {
        name: "PMIX_NUM_SLOTS",
        string: NUM_SLOTS,
        c_type: "uint32_t",
        data_type: DataType::Uint32,
        level: Level::Session,
        provisional: false,
    },
    Key {
        name: "PMIX_NUM_NODES",
        string: NUM_NODES,
        c_type: "uint32_t",
        data_type: DataType::Uint32,
        level: Level::Session,
        provisional: false,
    },
    Key {
        name: "PMIX_NODE_MAP",
        string: NODE_MAP,
        c_type: "char*",
        data_type: DataType::String,
        level: Level::Session,
        provisional: false,
    },
    Key {
        name: "PMIX_NODE_MAP_RAW",
        string: NODE_MAP_RAW,
        c_type: "char*",
        data_type: DataType::String,
        level: Level::Session,
        provisional: false,
    },
    Key {
        name: "PMIX_PROC_MAP",
        string: PROC_MAP,
        c_type: "char*",
        data_type: DataType::String,
        level: Level::Session,
        provisional: false,
    },
    Key {
        name: "PMIX_PROC_MAP_RAW",
        string: PROC_MAP_RAW,
        c_type: "char*",
        data_type: DataType::String,
        level: Level::Session,
        provisional: false,
    },
    Key {
        name: "PMIX_ANL_MAP",
        string: ANL_MAP,
        c_type: "char*",
        data_type: DataType::String,
        level: Level::Session,
        provisional: false,
    },
    Key {
        name: "PMIX_JOBID",
        string: JOBID,
        c_type: "char*",
        data_type: DataType::String,
        level: Level::Job,
        provisional: false,
    },
    Key {
        name: "PMIX_NPROC_OFFSET",
        string: NPROC_OFFSET,
        c_type: "pmix_rank_t",
        data_type: DataType::ProcRank,
        level: Level::Job,
        provisional: false,
    },
    Key {
        name: "PMIX_CMD_LINE",
        string: CMD_LINE,
        c_type: "char*",
        data_type: DataType::String,
        level: Level::Job,
        provisional: false,
    },
    Key {
        name: "PMIX_NSDIR",
        string: NSDIR,
        c_type: "char*",
        data_type: DataType::String,
        level: Level::Job,
        provisional: false,
    },
    Key {
        name: "PMIX_JOB_SIZE",
        string: JOB_SIZE,
        c_type: "uint32_t",
        data_type: DataType::Uint32,
        level: Level::Job,
        provisional: false,
    },
    Key {
        name: "PMIX_JOB_NUM_APPS",
        string: JOB_NUM_APPS,
        c_type: "uint32_t",
        data_type: DataType::Uint32,
        level: Level::Job,
        provisional: false,
    },
    Key {
        name: "PMIX_LOCAL_PEERS",
        string: LOCAL_PEERS,
        c_type: "char*",
        data_type: DataType::String,
        level: Level::Job,
        provisional: false,
    },
    Key {
        name: "PMIX_LOCALLDR",
        string: LOCALLDR,
        c_type: "pmix_rank_t",
        data_type: DataType::ProcRank,
        level: Level::Job,
        provisional: false,
    },
    Key {
        name: "PMIX_LOCAL_CPUSETS",
        string: LOCAL_CPUSETS,
        c_type: "pmix_data_array_t",
        data_type: DataType::DataArray,
        level: Level::Job,
        provisional: false,
    },
    Key {
        name: "PMIX_LOCAL_SIZE",
        string: LOCAL_SIZE,
        c_type: "uint32_t",
        data_type: DataType::Uint32,
        level: Level::Job,
        provisional: false,
    },
    Key {
        name: "PMIX_APPLDR",
        string: APPLDR,
        c_type: "pmix_rank_t",
        data_type: DataType::ProcRank,
        level: Level::App,
        provisional: false,
    },
    Key {
        name: "PMIX_APP_SIZE",
        string: APP_SIZE,
        c_type: "uint32_t",
        data_type: DataType::Uint32,
        level: Level::App,
        provisional: false,
    },
    Key {
        name: "PMIX_APP_ARGV",
        string: APP_ARGV,
        c_type: "char*",
        data_type: DataType::String,
        level: Level::App,
        provisional: false,
    },
    Key {
        name: "PMIX_APP_MAP_TYPE",
        string: APP_MAP_TYPE,
        c_type: "char*",
        data_type: DataType::String,
        level: Level::App,
        provisional: false,
    },
    Key {
        name: "PMIX_APP_MAP_REGEX",
        string: APP_MAP_REGEX,
        c_type: "char*",
        data_type: DataType::String,
        level: Level::App,
        provisional: false,
    },
    Key {
        name: "PMIX_APPNUM",
        string: APPNUM,
        c_type: "uint32_t",
        data_type: DataType::Uint32,
        level: Level::Proc,
        provisional: false,
    },
    Key {
        name: "PMIX_RANK",
        string: RANK,
        c_type: "pmix_rank_t",
        data_type: DataType::ProcRank,
        level: Level::Proc,
        provisional: false,
    },
    Key {
        name: "PMIX_NSPACE",
        string: NSPACE,
        c_type: "char*",
        data_type: DataType::String,
        level: Level::Proc,
        provisional: false,
    },
    Key {
        name: "PMIX_SESSION_ID",
        string: SESSION_ID,
        c_type: "uint32_t",
        data_type: DataType::Uint32,
        level: Level::Proc,
        provisional: false,
    },
    Key {
        name: "PMIX_GLOBAL_RANK",
        string: GLOBAL_RANK,
        c_type: "pmix_rank_t",
        data_type: DataType::ProcRank,
        level: Level::Proc,
        provisional: false,
    },
    Key {
        name: "PMIX_APP_RANK",
        string: APP_RANK,
        c_type: "pmix_rank_t",
        data_type: DataType::ProcRank,
        level: Level::Proc,
        provisional: false,
    },
    Key {
        name: "PMIX_PARENT_ID",
        string: PARENT_ID,
        c_type: "pmix_proc_t",
        data_type: DataType::Proc,
        level: Level::Proc,
        provisional: false,
    },
    Key {
        name: "PMIX_EXIT_CODE",
        string: EXIT_CODE,
        c_type: "int",
        data_type: DataType::Int,
        level: Level::Proc,
        provisional: false,
    },
    Key {
        name: "PMIX_PROCID",
        string: PROCID,
        c_type: "pmix_proc_t",
        data_type: DataType::Proc,
        level: Level::Proc,
        provisional: false,
    },
    Key {
        name: "PMIX_LOCAL_RANK",
        string: LOCAL_RANK,
        c_type: "uint16_t",
        data_type: DataType::Uint16,
        level: Level::Proc,
        provisional: false,
    },
    Key {
        name: "PMIX_NODE_RANK",
        string: NODE_RANK,
        c_type: "uint16_t",
        data_type: DataType::Uint16,
        level: Level::Proc,
        provisional: false,
    },
    Key {
        name: "PMIX_PACKAGE_RANK",
        string: PACKAGE_RANK,
        c_type: "uint16_t",
        data_type: DataType::Uint16,
        level: Level::Proc,
        provisional: false,
    },
    Key {
        name: "PMIX_PROC_PID",
        string: PROC_PID,
        c_type: "pid_t",
        data_type: DataType::Pid,
        level: Level::Proc,
        provisional: false,
    },
    Key {
        name: "PMIX_PROCDIR",
        string: PROCDIR,
        c_type: "char*",
        data_type: DataType::String,
        level: Level::Proc,
        provisional: false,
    },
    Key {
        name: "PMIX_CPUSET",
        string: CPUSET,
        c_type: "char*",
        data_type: DataType::String,
        level: Level::Proc,
        provisional: false,
    },
    Key {
        name: "PMIX_CPUSET_BITMAP",
        string: CPUSET_BITMAP,
        c_type: "pmix_cpuset_t*",
        data_type: DataType::ProcCpuset,
        level: Level::Proc,
        provisional: false,
    },
    Key {
        name: "PMIX_CREDENTIAL",
        string: CREDENTIAL,
        c_type: "char*",
        data_type: DataType::String,
        level: Level::Proc,
        provisional: false,
    },
    Key {
        name: "PMIX_SPAWNED",
        string: SPAWNED,
        c_type: "bool",
        data_type: DataType::Bool,
        level: Level::Proc,
        provisional: false,
    },
    Key {
        name: "PMIX_REINCARNATION",
        string: REINCARNATION,
        c_type: "uint32_t",
        data_type: DataType::Uint32,
        level: Level::Proc,
        provisional: false,
    },
    Key {
        name: "PMIX_HOSTNAME",
        string: HOSTNAME,
        c_type: "char*",
        data_type: DataType::String,
        level: Level::Node,
        provisional: false,
    },
    Key {
        name: "PMIX_HOSTNAME_ALIASES",
        string: HOSTNAME_ALIASES,
        c_type: "char*",
        data_type: DataType::String,
        level: Level::Node,
        provisional: false,
    },
    Key {
        name: "PMIX_NODEID",
        string: NODEID,
        c_type: "uint32_t",
        data_type: DataType::Uint32,
        level: Level::Node,
        provisional: false,
    },
    Key {
        name: "PMIX_NODE_SIZE",
        string: NODE_SIZE,
        c_type: "uint32_t",
        data_type: DataType::Uint32,
        level: Level::Node,
        provisional: false,
    },
    Key {
        name: "PMIX_AVAIL_PHYS_MEMORY",
        string: AVAIL_PHYS_MEMORY,
        c_type: "uint64_t",
        data_type: DataType::Uint64,
        level: Level::Node,
        provisional: false,
    },
    Key {
        name: "PMIX_LOCAL_PROCS",
        string: LOCAL_PROCS,
        c_type: "pmix_proc_t array",
        data_type: DataType::DataArray,
        level: Level::Node,
        provisional: false,
    },
    Key {
        name: "PMIX_NODE_OVERSUBSCRIBED",
        string: NODE_OVERSUBSCRIBED,
        c_type: "bool",
        data_type: DataType::Bool,
        level: Level::Node,
        provisional: true,
    },
];

/// The reserved key with this string.
pub fn reserved(key: &str) -> Option<&'static Key> {
    RESERVED.iter().find(|k| k.string == key)
}

/// Why a value of type `ty` under `key` is not what the standard says, or
/// `None` (also for keys that are not reserved).
pub fn check(key: &str, ty: DataType) -> Option<String> {
    let k = reserved(key)?;
    (k.data_type != ty).then(|| {
        format!(
            "{key} ({}) is {} ({}) by the standard, not {ty}",
            k.name, k.data_type, k.c_type
        )
    })
}

/// Typed keys: one per row of [`RESERVED`], generated from that table by
/// `build.rs`, each carrying the Rust type its value reads as.
///
/// ```
/// use pmix_types::keys::{self, typed, Level};
/// let k: typed::Key<u32> = typed::JOB_SIZE;
/// assert_eq!((k.string(), k.level()), (keys::JOB_SIZE, Level::Job));
/// assert_eq!(k.read(pmix_types::Value::Uint32(4)), Ok(4));
/// ```
pub mod typed {
    use super::Level;
    use std::marker::PhantomData;

    /// A reserved key whose value reads as `T`.
    pub struct Key<T> {
        string: &'static str,
        level: Level,
        ty: PhantomData<fn() -> T>,
    }

    impl<T> Key<T> {
        /// The key `string` of realm `level`, read as `T`.
        pub const fn new(string: &'static str, level: Level) -> Self {
            Key {
                string,
                level,
                ty: PhantomData,
            }
        }

        /// The string that travels ("pmix.job.size").
        pub const fn string(self) -> &'static str {
            self.string
        }

        /// The data realm the key belongs to.
        pub const fn level(self) -> Level {
            self.level
        }

        /// The row of [`super::RESERVED`] for this key.
        pub fn row(self) -> &'static super::Key {
            super::reserved(self.string).expect("typed keys come from RESERVED")
        }
    }

    impl<T: TryFrom<crate::Value>> Key<T> {
        /// `v` read as this key's type.
        pub fn read(self, v: crate::Value) -> Result<T, T::Error> {
            T::try_from(v)
        }
    }

    impl<T> Clone for Key<T> {
        fn clone(&self) -> Self {
            *self
        }
    }
    impl<T> Copy for Key<T> {}
    impl<T> PartialEq for Key<T> {
        fn eq(&self, o: &Self) -> bool {
            self.string == o.string
        }
    }
    impl<T> Eq for Key<T> {}
    impl<T> std::fmt::Debug for Key<T> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "Key<{}>({:?})", std::any::type_name::<T>(), self.string)
        }
    }
    impl<T> std::fmt::Display for Key<T> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.string)
        }
    }

    include!(concat!(env!("OUT_DIR"), "/typed_keys.rs"));

    /// Every typed key's string, in the order of the table (for tests).
    #[cfg(test)]
    pub(crate) fn all_strings() -> Vec<&'static str> {
        include_str!(concat!(env!("OUT_DIR"), "/typed_keys.rs"))
            .lines()
            .filter_map(|l| l.split("Key::new(super::").nth(1))
            .filter_map(|l| l.split(',').next())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurms_int_appnum_is_flagged() {
        assert!(check(APPNUM, DataType::Int)
            .unwrap()
            .contains("PMIX_UINT32"));
        assert_eq!(check(APPNUM, DataType::Uint32), None);
        assert_eq!(check("pmix.not.reserved", DataType::Int), None);
        assert_eq!(reserved(JOB_SIZE).unwrap().level, Level::Job);
    }

    /// One typed key per row, the same string, level and a Rust type that
    /// reads the row's data type.
    #[test]
    fn typed_keys_cover_the_table() {
        assert_eq!(typed::all_strings().len(), RESERVED.len());
        assert_eq!(typed::JOB_SIZE.row().data_type, DataType::Uint32);
        assert_eq!(typed::RANK.row().data_type, DataType::ProcRank);
        assert_eq!(typed::HOSTNAME.level(), Level::Node);
        let r: crate::Rank = typed::RANK.read(crate::Value::ProcRank(2)).unwrap();
        assert_eq!(r, crate::Rank::new(2));
        let h: String = typed::HOSTNAME.read(crate::Value::from("n1")).unwrap();
        assert_eq!(h, "n1");
    }
}
