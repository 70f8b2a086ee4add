//! Process groups (`PMIx_Group_*`), as libpmix 5.0.11's client makes them
//! (spec-notes/capi.md, "Groups"): construct, destruct and leave are
//! requests to the server (pmix-wire's client core); invite and join are
//! events between the processes, which the server routes: the leader
//! notifies PMIX_GROUP_INVITED to the invitees, each answers
//! PMIX_GROUP_INVITE_ACCEPTED or _DECLINED to the leader, and the leader's
//! own handler counts the answers. The threading rules of
//! [`crate::client`] apply; the `_nb` forms run the blocking form on a
//! thread of their own and call the callback from it.
#![allow(non_camel_case_types)]

use crate::abi::*;
use crate::client::{cerr, get_value, status, with_client};
use crate::conv::*;
use crate::events::{deregister, register_hook};
use crate::guard::exports;
use crate::services::{
    in_background, info_cb, infos, op_nb, out_array, pmix_info_cbfunc_t, pmix_op_cbfunc_t, procs_of, Opaque,
};
use pmix_types::enums::DataRange;
use pmix_types::status::codes::*;
use pmix_types::value::DataArray;
use pmix_types::{DataType, Info, PString, Proc, Value, RANK_WILDCARD};
use pmix_wire::client::GroupOpts;
use std::collections::BTreeSet;
use std::ffi::{c_char, c_void};
use std::ptr;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// `pmix_group_opt_t`: PMIX_GROUP_DECLINE (0) or PMIX_GROUP_ACCEPT (1).
pub type pmix_group_opt_t = u32;
/// `PMIX_GROUP_ACCEPT`.
pub const PMIX_GROUP_ACCEPT: pmix_group_opt_t = 1;

/// The groups this process constructed and has not destructed or left:
/// a destruct of another answers NOT_FOUND, as libpmix 5.0.11's does.
static MINE: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

fn mine() -> std::sync::MutexGuard<'static, BTreeSet<String>> {
    MINE.lock().unwrap_or_else(|p| p.into_inner())
}

/// The group name argument (NULL: BAD_PARAM).
///
/// # Safety
/// `grp` is NULL or a C string.
unsafe fn group_arg(grp: *const c_char) -> Result<String, Status> {
    // SAFETY: the caller's contract
    unsafe { read_str(grp) }
        .map(|s| s.to_string_lossy().into_owned())
        .ok_or(PMIX_ERR_BAD_PARAM)
}

/// The processes `procs` name, a namespace's wildcard as every rank of
/// its job (its PMIX_JOB_SIZE), without repeats, sorted by namespace
/// then rank (the order libpmix 5.0.11 gives the membership in).
fn expand(procs: &[Proc]) -> Result<Vec<Proc>, Status> {
    let mut set = BTreeSet::new();
    for p in procs {
        let ns = p.nspace.to_string();
        if p.rank == RANK_WILDCARD {
            let size = get_value(Some(Proc::new(&ns, RANK_WILDCARD)), "pmix.job.size", vec![])?;
            let n = u32::try_from(size).map_err(|_| PMIX_ERR_BAD_PARAM)?;
            set.extend((0..n).map(|r| (ns.clone(), r)));
        } else {
            set.insert((ns, p.rank));
        }
    }
    Ok(set.into_iter().map(|(ns, r)| Proc::new(&ns, r)).collect())
}

/// PMIx_Group_construct: the results libpmix 5.0.11 gives — PMIX_GROUP_ID,
/// PMIX_GROUP_MEMBERSHIP (the members, sorted) and PMIX_GROUP_CONTEXT_ID
/// (SIZE_MAX when the host assigned none) — with the context id first.
fn construct(grp: &str, procs: &[Proc], directives: Vec<Info>) -> Result<Vec<Info>, Status> {
    let opts = directives.into_iter().fold(GroupOpts::new(), GroupOpts::info);
    let ctxid = with_client(|c, _| c.group_construct(grp, procs, opts).map_err(cerr))?;
    mine().insert(grp.to_string());
    let members: Vec<Value> = expand(procs)?
        .into_iter()
        .map(|p| Value::Proc(Box::new(p)))
        .collect();
    let array = DataArray::new(DataType::Proc, members).map_err(|_| PMIX_ERROR)?;
    // the context id first: libpmix 4.2.2 gives it alone, and programs
    // built on it (OpenPMIx's group examples) read results[0]
    Ok(vec![
        Info::new("pmix.grp.ctxid", Value::Size(ctxid.unwrap_or(u64::MAX))),
        Info::new("pmix.grp.id", Value::String(Some(PString::from(grp)))),
        Info::new("pmix.grp.mbrs", Value::DataArray(Box::new(array))),
    ])
}

/// PMIx_Group_destruct of a group of ours.
fn destruct(grp: &str, directives: &[Info]) -> Result<(), Status> {
    if !mine().contains(grp) {
        return Err(PMIX_ERR_NOT_FOUND);
    }
    with_client(|c, _| c.group_destruct(grp, directives).map_err(cerr))?;
    mine().remove(grp);
    Ok(())
}

/// PMIx_Group_leave.
fn leave(grp: &str, directives: &[Info]) -> Result<(), Status> {
    with_client(|c, _| c.group_leave(grp, directives).map_err(cerr))?;
    mine().remove(grp);
    Ok(())
}

/// The answers to one invitation, as the leader's handler counts them.
#[derive(Default)]
struct Answers {
    accepted: usize,
    declined: usize,
    terminated: usize,
}

/// The event attributes that address an invitation: the invitees as the
/// custom range, for non-default handlers only, and the group's name.
fn invitation(grp: &str, procs: &[Proc]) -> Result<Vec<Info>, Status> {
    let range: Vec<Value> = procs.iter().cloned().map(|p| Value::Proc(Box::new(p))).collect();
    let range = DataArray::new(DataType::Proc, range).map_err(|_| PMIX_ERROR)?;
    Ok(vec![
        Info::new("pmix.evrange", Value::DataArray(Box::new(range))),
        Info::new("pmix.evnondef", Value::Bool(true)),
        Info::new("pmix.grp.id", Value::String(Some(PString::from(grp)))),
    ])
}

/// PMIX_TIMEOUT among the directives (seconds; 0 or none: no limit).
fn timeout_of(directives: &[Info]) -> Option<Duration> {
    let v = directives.iter().find(|i| i.key.as_bytes() == b"pmix.timeout")?;
    let secs = u64::try_from(v.value.clone()).ok().filter(|s| *s > 0)?;
    Some(Duration::from_secs(secs))
}

/// PMIx_Group_invite_nb's work: invite `procs` to `grp` and wait until
/// each has answered (or PMIX_TIMEOUT passed): SUCCESS if every one
/// accepted, PMIX_GROUP_INVITE_DECLINED if one declined,
/// PMIX_GROUP_INVITE_FAILED if one terminated first, PMIX_ERR_TIMEOUT.
fn invite(grp: &str, procs: &[Proc], directives: &[Info]) -> Result<(), Status> {
    if procs.is_empty() {
        return Err(PMIX_ERR_BAD_PARAM);
    }
    let want = expand(procs)?.len();
    let answers = Arc::new((Mutex::new(Answers::default()), Condvar::new()));
    let seen = Arc::clone(&answers);
    let hook = Arc::new(move |code: i32, _: &Proc, _: &[Info]| {
        let (m, cv) = &*seen;
        let mut a = m.lock().unwrap_or_else(|p| p.into_inner());
        match code {
            PMIX_GROUP_INVITE_ACCEPTED => a.accepted += 1,
            PMIX_GROUP_INVITE_DECLINED => a.declined += 1,
            _ => a.terminated += 1,
        }
        cv.notify_all();
    });
    let codes = [
        PMIX_GROUP_INVITE_ACCEPTED,
        PMIX_GROUP_INVITE_DECLINED,
        PMIX_PROC_TERMINATED,
    ];
    let id = register_hook(&codes, hook)?;
    let sent = invitation(grp, procs).and_then(|info| {
        with_client(|c, _| c.notify(PMIX_GROUP_INVITED, DataRange::CUSTOM, &info).map_err(cerr))
    });
    let r = sent.and_then(|()| {
        let (m, cv) = &*answers;
        let mut a = m.lock().unwrap_or_else(|p| p.into_inner());
        let limit = timeout_of(directives);
        let start = std::time::Instant::now();
        while a.accepted + a.declined + a.terminated < want {
            a = match limit {
                None => cv.wait(a).unwrap_or_else(|p| p.into_inner()),
                Some(l) => {
                    let left = l.checked_sub(start.elapsed()).ok_or(PMIX_ERR_TIMEOUT)?;
                    cv.wait_timeout(a, left).unwrap_or_else(|p| p.into_inner()).0
                }
            };
        }
        if a.terminated > 0 {
            Err(PMIX_GROUP_INVITE_FAILED)
        } else if a.declined > 0 {
            Err(PMIX_GROUP_INVITE_DECLINED)
        } else {
            Ok(())
        }
    });
    deregister(id);
    r
}

/// PMIx_Group_join_nb's work: answer `leader`'s invitation (NULL: the
/// whole session) with PMIX_GROUP_INVITE_ACCEPTED or _DECLINED. The
/// notice's attributes (the leader as the custom range) are what the
/// callback is given, as libpmix 5.0.11 gives them.
fn join(leader: Option<Proc>, opt: pmix_group_opt_t) -> Result<Vec<Info>, Status> {
    let code = if opt == PMIX_GROUP_ACCEPT {
        PMIX_GROUP_INVITE_ACCEPTED
    } else {
        PMIX_GROUP_INVITE_DECLINED
    };
    let (range, info) = match leader {
        Some(l) => (
            DataRange::CUSTOM,
            vec![Info::new("pmix.evrange", Value::Proc(Box::new(l)))],
        ),
        None => (DataRange::SESSION, vec![]),
    };
    with_client(|c, _| c.notify(code, range, &info).map_err(cerr))?;
    Ok(info)
}

/// `is` as a new C array in `*results`, their count in `*nresults`.
///
/// # Safety
/// `results` and `nresults` are writable.
unsafe fn out_infos(is: Vec<Info>, results: *mut *mut pmix_info_t, nresults: *mut usize) -> Result<(), Status> {
    let vals: Vec<Value> = is.into_iter().map(|i| Value::Info(Box::new(i))).collect();
    // SAFETY: the caller's contract
    unsafe { out_array(DataType::Info, &vals, results, nresults) }
}

/// The arguments of construct and invite, checked: the group, the
/// procs (at least one) and the infos.
///
/// # Safety
/// `grp` is NULL or a C string, `procs` holds `nprocs` procs, `info` `ninfo` infos (or is NULL).
unsafe fn members_args(
    grp: *const c_char,
    procs: *const pmix_proc_t,
    nprocs: usize,
    info: *const pmix_info_t,
    ninfo: usize,
) -> Result<(String, Vec<Proc>, Vec<Info>), Status> {
    if procs.is_null() || nprocs == 0 {
        return Err(PMIX_ERR_BAD_PARAM);
    }
    // SAFETY: the caller's contract
    unsafe { Ok((group_arg(grp)?, procs_of(procs, nprocs)?, infos(info, ninfo)?)) }
}

/// Run `call` on a thread of its own and hand its infos to `cbfunc`;
/// without a callback BAD_PARAM (its answer would be lost).
fn infos_nb(
    name: &'static str,
    cbfunc: pmix_info_cbfunc_t,
    cbdata: *mut c_void,
    call: impl FnOnce() -> Result<Vec<Info>, Status> + Send + 'static,
) -> Result<(), Status> {
    let cb = cbfunc.ok_or(PMIX_ERR_BAD_PARAM)?;
    with_client(|_, _| Ok(()))?;
    let data = Opaque(cbdata);
    in_background(name, move || {
        let data = data;
        info_cb(cb, data.0, call());
    })
}

/// [`destruct`] or [`leave`].
type ByName = fn(&str, &[Info]) -> Result<(), Status>;

/// Destruct or leave (`call`) the group `grp` with the infos: here, or
/// on a thread of its own that hands the status to `cbfunc` if one is
/// given. `ours_only` (a destruct): a group not ours is NOT_FOUND at once.
///
/// # Safety
/// `grp` is NULL or a C string, `info` holds `ninfo` infos (or is NULL).
unsafe fn by_name(
    name: &'static str,
    grp: *const c_char,
    info: *const pmix_info_t,
    ninfo: usize,
    (ours_only, call): (bool, ByName),
    cbfunc: pmix_op_cbfunc_t,
    cbdata: *mut c_void,
) -> pmix_status_t {
    status((|| {
        // SAFETY: the caller's contract
        let (g, is) = unsafe { (group_arg(grp)?, infos(info, ninfo)?) };
        if ours_only && !mine().contains(&g) {
            return Err(PMIX_ERR_NOT_FOUND);
        }
        op_nb(name, cbfunc, cbdata, move || call(&g, &is))
    })())
}

exports! {
    /// `PMIx_Group_construct`: make `grp` of `procs` (a collective over them); the group's id, membership and context id in a new info array.
    fn PMIx_Group_construct(
        grp: *const c_char,
        procs: *const pmix_proc_t,
        nprocs: usize,
        directives: *const pmix_info_t,
        ndirs: usize,
        results: *mut *mut pmix_info_t,
        nresults: *mut usize
    ) -> pmix_status_t {
        status((|| {
            if results.is_null() || nresults.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: as members_args takes them
            let (g, ps, is) = unsafe { members_args(grp, procs, nprocs, directives, ndirs) }?;
            let got = construct(&g, &ps, is)?;
            // SAFETY: checked non-NULL
            unsafe { out_infos(got, results, nresults) }
        })())
    }

    /// `PMIx_Group_construct_nb`: as PMIx_Group_construct; `cbfunc` gets the status and the results.
    fn PMIx_Group_construct_nb(
        grp: *const c_char,
        procs: *const pmix_proc_t,
        nprocs: usize,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_info_cbfunc_t,
        cbdata: *mut c_void
    ) -> pmix_status_t {
        status((|| {
            // SAFETY: as members_args takes them
            let (g, ps, is) = unsafe { members_args(grp, procs, nprocs, info, ninfo) }?;
            infos_nb("PMIx_Group_construct_nb", cbfunc, cbdata, move || construct(&g, &ps, is))
        })())
    }

    /// `PMIx_Group_destruct`: end `grp` (a collective over its members).
    fn PMIx_Group_destruct(grp: *const c_char, info: *const pmix_info_t, ninfo: usize) -> pmix_status_t {
        // SAFETY: as by_name takes them
        unsafe { by_name("PMIx_Group_destruct", grp, info, ninfo, (true, destruct), None, ptr::null_mut()) }
    }

    /// `PMIx_Group_destruct_nb`: as PMIx_Group_destruct; `cbfunc` gets the status.
    fn PMIx_Group_destruct_nb(
        grp: *const c_char,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void
    ) -> pmix_status_t {
        // SAFETY: as by_name takes them
        unsafe { by_name("PMIx_Group_destruct_nb", grp, info, ninfo, (true, destruct), cbfunc, cbdata) }
    }

    /// `PMIx_Group_invite`: invite `procs` to `grp` and wait for their answers; then tell them the group is complete (PMIX_GROUP_CONSTRUCT_COMPLETE).
    fn PMIx_Group_invite(
        grp: *const c_char,
        procs: *const pmix_proc_t,
        nprocs: usize,
        info: *const pmix_info_t,
        ninfo: usize,
        results: *mut *mut pmix_info_t,
        nresults: *mut usize
    ) -> pmix_status_t {
        status((|| {
            if results.is_null() || nresults.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: as members_args takes them
            let (g, ps, is) = unsafe { members_args(grp, procs, nprocs, info, ninfo) }?;
            invite(&g, &ps, &is)?;
            // SAFETY: checked non-NULL
            unsafe { out_infos(vec![], results, nresults) }?;
            let done = invitation(&g, &ps)?;
            with_client(|c, _| c.notify(PMIX_GROUP_CONSTRUCT_COMPLETE, DataRange::CUSTOM, &done).map_err(cerr))
        })())
    }

    /// `PMIx_Group_invite_nb`: invite `procs` to `grp`; `cbfunc` gets the status when every one has answered.
    fn PMIx_Group_invite_nb(
        grp: *const c_char,
        procs: *const pmix_proc_t,
        nprocs: usize,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_info_cbfunc_t,
        cbdata: *mut c_void
    ) -> pmix_status_t {
        status((|| {
            // SAFETY: as members_args takes them
            let (g, ps, is) = unsafe { members_args(grp, procs, nprocs, info, ninfo) }?;
            infos_nb("PMIx_Group_invite_nb", cbfunc, cbdata, move || invite(&g, &ps, &is).map(|()| vec![]))
        })())
    }

    /// `PMIx_Group_join`: answer `leader`'s invitation to `grp` (`opt`: PMIX_GROUP_ACCEPT or _DECLINE); no results.
    fn PMIx_Group_join(
        grp: *const c_char,
        leader: *const pmix_proc_t,
        opt: pmix_group_opt_t,
        info: *const pmix_info_t,
        ninfo: usize,
        results: *mut *mut pmix_info_t,
        nresults: *mut usize
    ) -> pmix_status_t {
        status((|| {
            // SAFETY: NULL or a C string; ninfo infos; NULL or a proc
            let (_, _, who) = unsafe { (group_arg(grp)?, infos(info, ninfo)?, (!leader.is_null()).then(|| read_proc(leader))) };
            join(who, opt)?;
            if !results.is_null() && !nresults.is_null() {
                // SAFETY: checked non-NULL
                unsafe { out_infos(vec![], results, nresults) }?;
            }
            Ok(())
        })())
    }

    /// `PMIx_Group_join_nb`: as PMIx_Group_join; `cbfunc` (if any) gets the status once the answer is sent.
    fn PMIx_Group_join_nb(
        grp: *const c_char,
        leader: *const pmix_proc_t,
        opt: pmix_group_opt_t,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_info_cbfunc_t,
        cbdata: *mut c_void
    ) -> pmix_status_t {
        status((|| {
            // SAFETY: NULL or a C string; ninfo infos; NULL or a proc
            let (_, _, who) = unsafe { (group_arg(grp)?, infos(info, ninfo)?, (!leader.is_null()).then(|| read_proc(leader))) };
            let Some(_) = cbfunc else { return join(who, opt).map(|_| ()) };
            infos_nb("PMIx_Group_join_nb", cbfunc, cbdata, move || join(who, opt))
        })())
    }

    /// `PMIx_Group_leave`: leave `grp` (its other members hear PMIX_GROUP_LEFT).
    fn PMIx_Group_leave(grp: *const c_char, info: *const pmix_info_t, ninfo: usize) -> pmix_status_t {
        // SAFETY: as by_name takes them
        unsafe { by_name("PMIx_Group_leave", grp, info, ninfo, (false, leave), None, ptr::null_mut()) }
    }

    /// `PMIx_Group_leave_nb`: as PMIx_Group_leave; `cbfunc` gets the status.
    fn PMIx_Group_leave_nb(
        grp: *const c_char,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void
    ) -> pmix_status_t {
        // SAFETY: as by_name takes them
        unsafe { by_name("PMIx_Group_leave_nb", grp, info, ninfo, (false, leave), cbfunc, cbdata) }
    }
}
