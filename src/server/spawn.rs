//! What a spawned job knows of its origin (issue #24): its parent and its
//! applications, given to every rank in the job info as PRRTE 5.0.11's
//! prterun gives them (spec-notes/server.md, "What a spawned job is told"):
//! per rank `pmix.parent` (the process that called PMIx_Spawn: a child
//! that finds none believes it is the parent and spawns again),
//! `pmix.appnum`, `pmix.apprank`, `pmix.grank` and `pmix.reinc` (also
//! for a job the host described the apps of: `pmixw run`'s own); per job
//! `pmix.job.napps`, `pmix.offset`, `pmix.spawned` (which prterun does not
//! give; the standard defines it) and one `pmix.app.arr` per application (`pmix.appnum`
//! first, as libpmix's hash module requires, then `pmix.app.size`,
//! `pmix.aldr`, `pmix.app.argv`, `pmix.wdir`). A job the host launched
//! itself has none of these unless the host says (its layout is then
//! libpmix 4.2.2's, byte for byte).

#![forbid(unsafe_code)]

use super::{info_array, kval, pstr, Server};
use pmix_types::{Info, Kval, Proc, Value};

/// One application of a job: its ranks follow those of the applications
/// before it.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct AppSpec {
    /// How many ranks it has.
    pub size: u32,
    /// Its argument vector (argv\[0\] included), as `pmix.app.argv`
    /// reports it (joined by spaces).
    pub argv: Vec<String>,
    /// Its working directory, if known.
    pub wdir: Option<String>,
}

/// What the host said of a job's origin.
#[derive(Clone, Debug, Default)]
pub(super) struct Origin {
    /// The process that spawned it.
    pub(super) parent: Option<Proc>,
    /// Its applications (empty: one, every rank).
    pub(super) apps: Vec<AppSpec>,
    /// How many ranks the host started before this job's (its rank r is
    /// rank offset + r of the universe).
    pub(super) offset: Option<u32>,
}

impl Origin {
    /// The application of `rank` and its rank within it.
    fn app_of(&self, rank: u32) -> (u32, u32) {
        let mut first = 0;
        for (i, a) in self.apps.iter().enumerate() {
            if rank < first + a.size {
                return (i as u32, rank - first);
            }
            first += a.size;
        }
        (0, rank)
    }
}

impl Server {
    /// The job `nspace` was spawned by `parent` (PMIx_Spawn's caller):
    /// its ranks find it as `pmix.parent` (PMIX_PARENT_ID) and the job
    /// as `pmix.spawned`.
    pub fn set_parent(&mut self, nspace: &str, parent: Proc) {
        if let Some(j) = self.jobs.get_mut(nspace) {
            j.origin.parent = Some(parent);
            self.job_info_changed();
        }
    }

    /// How many ranks the host started before job `nspace`'s: its ranks
    /// find it as `pmix.offset` and their global rank as `pmix.grank`.
    pub fn set_offset(&mut self, nspace: &str, offset: u32) {
        if let Some(j) = self.jobs.get_mut(nspace) {
            j.origin.offset = Some(offset);
            self.job_info_changed();
        }
    }

    /// The applications of job `nspace`, in rank order (their sizes
    /// should add up to the job's).
    pub fn set_apps(&mut self, nspace: &str, apps: Vec<AppSpec>) {
        if let Some(j) = self.jobs.get_mut(nspace) {
            j.origin.apps = apps;
            self.job_info_changed();
        }
    }

    /// The job-level KVALs of a job's origin (none for a job the host
    /// described no origin of).
    pub(super) fn origin_job_kvals(&self, nspace: &str) -> Vec<Kval> {
        let Some(o) = self.jobs.get(nspace).map(|j| &j.origin) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if o.parent.is_some() {
            out.push(kval("pmix.spawned", Value::Bool(true)));
        }
        if let Some(off) = o.offset {
            out.push(kval("pmix.offset", Value::ProcRank(off)));
        }
        if o.apps.is_empty() {
            return out;
        }
        out.push(kval("pmix.job.napps", Value::Uint32(o.apps.len() as u32)));
        let mut first = 0;
        for (i, a) in o.apps.iter().enumerate() {
            let mut items = vec![
                Info::new("pmix.appnum", Value::Uint32(i as u32)),
                Info::new("pmix.app.size", Value::Uint32(a.size)),
                Info::new("pmix.aldr", Value::ProcRank(first)),
                Info::new("pmix.app.argv", pstr(&a.argv.join(" "))),
            ];
            if let Some(w) = &a.wdir {
                items.push(Info::new("pmix.wdir", pstr(w)));
            }
            out.push(kval("pmix.app.arr", info_array(items)));
            first += a.size;
        }
        out
    }

    /// A rank's application number, and the KVALs of its origin that go
    /// in its blob after the usual ones (`pmix.apprank`, `pmix.parent`).
    pub(super) fn origin_rank_kvals(&self, nspace: &str, rank: u32) -> (u32, Vec<Kval>) {
        let Some(o) = self.jobs.get(nspace).map(|j| &j.origin) else {
            return (0, Vec::new());
        };
        let mut out = Vec::new();
        let (app, apprank) = o.app_of(rank);
        if !o.apps.is_empty() {
            out.push(kval("pmix.apprank", Value::ProcRank(apprank)));
        }
        if let Some(off) = o.offset {
            out.push(kval(
                "pmix.grank",
                Value::ProcRank(off.saturating_add(rank)),
            ));
        }
        if let Some(p) = &o.parent {
            out.push(kval("pmix.parent", Value::Proc(Box::new(p.clone()))));
        }
        if o.parent.is_some() || !o.apps.is_empty() {
            // started for the first time (no host here restarts a rank)
            out.push(kval("pmix.reinc", Value::Uint32(0)));
        }
        (app, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_fall_in_their_apps_in_order() {
        let app = |size| AppSpec {
            size,
            ..AppSpec::default()
        };
        let o = Origin {
            apps: vec![app(1), app(2)],
            ..Origin::default()
        };
        assert_eq!(o.app_of(0), (0, 0));
        assert_eq!(o.app_of(1), (1, 0));
        assert_eq!(o.app_of(2), (1, 1));
        // beyond the apps (a host that said too few): the first app's
        assert_eq!(Origin::default().app_of(5), (0, 5));
    }
}
