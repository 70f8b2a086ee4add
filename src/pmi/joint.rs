//! One store for a job served both PMI and PMIx (issue #27): how the PMI
//! server's keys become PMIx data and back. A PMI key/value is a PMIx
//! key of the same name holding a `PMIX_STRING`, in the data of the rank
//! that put it; a PMI client reads the PMIx store's keys of every rank
//! by their names, values a PMI string can render ([`text_of`]). PMI's
//! KVS is one per job, PMIx's one per rank: where ranks put the same
//! key, a PMI client reads the highest rank's value. Facts and the
//! mapping's table: spec-notes/pmi.md §6.

#![forbid(unsafe_code)]

use pmix_types::{Kval, PString, Value};

/// A rank's PMI puts as the PMIx data the host contributes for it
/// ([`crate::server::Server::host_commit`]): each a `PMIX_STRING`.
pub fn to_kvals(puts: &[(String, String)]) -> Vec<Kval> {
    puts.iter()
        .map(|(k, v)| Kval {
            key: Some(PString::from(k.as_str())),
            value: Value::String(Some(PString::from(v.as_str()))),
        })
        .collect()
}

/// A PMIx value as a PMI client reads it: a string as it is; a boolean
/// `TRUE` or `FALSE` (PMI-2's words); an integer (`PMIX_INT*`,
/// `PMIX_UINT*`, `PMIX_SIZE`, `PMIX_PID`) in decimal. Anything else (byte
/// objects, floats, structures, a string holding a newline, which no PMI
/// wire carries) none: a PMI client does not find that key.
pub fn text_of(v: &Value) -> Option<String> {
    let s = match v {
        Value::String(Some(s)) => s.to_string(),
        Value::Bool(b) => (if *b { "TRUE" } else { "FALSE" }).to_string(),
        Value::Size(n) | Value::Uint64(n) => n.to_string(),
        Value::Pid(n) | Value::Uint(n) | Value::Uint32(n) => n.to_string(),
        Value::Uint16(n) => n.to_string(),
        Value::Uint8(n) => n.to_string(),
        Value::Int(n) | Value::Int32(n) => n.to_string(),
        Value::Int64(n) => n.to_string(),
        Value::Int16(n) => n.to_string(),
        Value::Int8(n) => n.to_string(),
        _ => return None,
    };
    (!s.contains('\n')).then_some(s)
}

/// The keys a PMI client of the job reads after a fence: every rank's
/// committed data ([`crate::server::Server::committed`], rank order),
/// each key with a value [`text_of`] renders, by its name; a later
/// rank's value of a key replaces an earlier one's.
pub fn visible_to_pmi(committed: &[(u32, Vec<Kval>)]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut at = std::collections::HashMap::new();
    for (_, kvals) in committed {
        for kv in kvals {
            let (Some(key), Some(text)) = (kv.key.as_ref(), text_of(&kv.value)) else {
                continue;
            };
            let key = key.to_string();
            match at.get(&key) {
                Some(&i) => out[i] = (key, text),
                None => {
                    at.insert(key.clone(), out.len());
                    out.push((key, text));
                }
            }
        }
    }
    out
}

/// What a host does with [`super::server::Event::JointFence`] on the
/// PMIx server core: contribute the rank's puts as its data, then enter
/// it into its job's fence ([`HostEvent::HostFenceDone`] says when that
/// completes). The host remembers the event's request by the rank, to
/// answer [`super::server::Server::joint_done`] with [`keys_for_pmi`].
///
/// [`HostEvent::HostFenceDone`]: crate::server::HostEvent::HostFenceDone
pub fn enter(
    pmix: &mut crate::server::Server,
    kvsname: &str,
    rank: u32,
    puts: &[(String, String)],
) {
    if let Err(st) = pmix.host_commit(kvsname, rank, to_kvals(puts)) {
        tracing::warn!(target: "pmix_wire::pmi", "rank {rank} of {kvsname}: the PMIx store refused its puts ({st})");
    }
    pmix.host_fence(kvsname, rank);
}

/// After a fence: the PMIx store's keys of job `kvsname`, as its PMI
/// clients read them ([`visible_to_pmi`]).
pub fn keys_for_pmi(pmix: &crate::server::Server, kvsname: &str) -> Vec<(String, String)> {
    visible_to_pmi(&pmix.committed(kvsname))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn puts_become_strings_and_come_back() {
        let puts = vec![("P0-businesscard".to_string(), "port#1 a\\b".to_string())];
        let kv = to_kvals(&puts);
        assert_eq!(
            kv[0].value,
            Value::String(Some(PString::from("port#1 a\\b")))
        );
        assert_eq!(visible_to_pmi(&[(0, kv)]), puts);
    }

    #[test]
    fn which_values_a_pmi_client_reads() {
        assert_eq!(text_of(&Value::Uint32(7)).as_deref(), Some("7"));
        assert_eq!(text_of(&Value::Int8(-3)).as_deref(), Some("-3"));
        assert_eq!(text_of(&Value::Bool(true)).as_deref(), Some("TRUE"));
        assert_eq!(
            text_of(&Value::Size(1 << 40)).as_deref(),
            Some("1099511627776")
        );
        assert_eq!(text_of(&Value::String(None)), None);
        assert_eq!(text_of(&Value::String(Some(PString::from("a\nb")))), None);
        let bo = Value::ByteObject(Box::new(pmix_types::Hex(bytes::Bytes::from_static(b"x"))));
        assert_eq!(text_of(&bo), None);
    }

    #[test]
    fn a_later_rank_wins_a_shared_key() {
        let kv = |v: &str| to_kvals(&[("k".into(), v.into())]);
        let got = visible_to_pmi(&[(0, kv("a")), (1, kv("b"))]);
        assert_eq!(got, vec![("k".to_string(), "b".to_string())]);
    }
}
