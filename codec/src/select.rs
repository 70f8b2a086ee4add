//! Choosing a dialect as OpenPMIx does: from a bfrops module list, from a
//! peer's version string, or from the PMIX_SERVER_URI* variable a client
//! was given (bfrops.md §5, protocol.md §8).

use crate::dialect::{BufferType, Dialect, Format};

/// Component priority order of OpenPMIx (v61 70 > v51 60 > v41 58 > v4 50 >
/// v3 40 > v21 30 > v20 20 > v12 5). Our V7 is announced as "v61" and is
/// chosen only by its own name.
const PRIORITY: &[Dialect] = &[
    Dialect::V61,
    Dialect::V51,
    Dialect::V41,
    Dialect::V4,
    Dialect::V3,
    Dialect::V21,
    Dialect::V20,
    Dialect::V12,
];

/// `pmix_bfrops_base_assign_module`: the comma-separated list of wanted
/// module names is matched against the components in priority order; the
/// first component named in the list wins. An empty list means "the
/// highest priority" (`None` → v61 for a 6.1 library; callers say which).
pub fn from_module_list(list: &str) -> Option<Dialect> {
    let wanted: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if wanted.iter().any(|w| w.eq_ignore_ascii_case("v7")) {
        return Some(Dialect::V7);
    }
    PRIORITY.iter().copied().find(|d| {
        wanted
            .iter()
            .any(|w| w.eq_ignore_ascii_case(d.module_name()))
    })
}

/// The dialect a peer of this PMIx release speaks by default: "1.2.5" →
/// v12, "2.0.x" → v20, "2.1"/"2.2" → v21, "3.x" → v3, "4.0" → v4, "4.1",
/// "4.2", "5.0" → v41, "6.0" → v51, "6.1" and later 6.x → v61, "7" → v7.
/// Suffixes such as "rc2" or "a1" are ignored.
pub fn from_version(v: &str) -> Option<Dialect> {
    let mut parts = v.trim().trim_start_matches(['v', 'V']).split('.');
    let num = |s: Option<&str>| -> Option<u32> {
        let s = s?;
        let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    };
    let major = num(parts.next())?;
    let minor = num(parts.next()).unwrap_or(0);
    Some(match (major, minor) {
        (1, _) => Dialect::V12,
        (2, 0) => Dialect::V20,
        (2, _) => Dialect::V21,
        (3, _) => Dialect::V3,
        (4, 0) => Dialect::V4,
        (4, _) | (5, _) => Dialect::V41,
        (6, 0) => Dialect::V51,
        (6, _) => Dialect::V61,
        (m, _) if m >= 7 => Dialect::V7,
        _ => return None,
    })
}

/// The (major, minor) of a PMIx version string ("7.0.0a1" → (7, 0),
/// "4.2.2rc2" → (4, 2)); `None` without a leading major number.
pub fn version_major_minor(v: &str) -> Option<(u32, u32)> {
    let mut parts = v.trim().trim_start_matches(['v', 'V']).split('.');
    let num = |s: Option<&str>| -> Option<u32> {
        let digits: String = s?.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    };
    let major = num(parts.next())?;
    Some((major, num(parts.next()).unwrap_or(0)))
}

/// OpenPMIx 7.0's version floors (OpenPMIx PR #4261, 2026-09-15; not in
/// the 7.0.0a1 snapshot): its server accepts clients and tools from 2.1
/// on, its client connects only to servers from 3.2 on.
pub const OPENPMIX7_MIN_CLIENT: (u32, u32) = (2, 1);
/// See [`OPENPMIX7_MIN_CLIENT`].
pub const OPENPMIX7_MIN_SERVER: (u32, u32) = (3, 2);

/// Whether a peer of version `v` is at or above `floor` (major, minor); a
/// version that does not parse is not.
pub fn version_at_least(v: &str, floor: (u32, u32)) -> bool {
    version_major_minor(v).is_some_and(|mm| mm >= floor)
}

/// The PMIX_SERVER_URI* variables, in the order a client checks them:
/// libpmix 6.1 generates `URI<nn>` from its component names (URI61 …
/// URI12, with URI20); 4.2.2 checks URI41, URI4, URI3, URI21 and URI2.
/// We speak every dialect, so we take the newest a server offers.
pub const SERVER_URI_VARS: &[(&str, Dialect)] = &[
    ("PMIX_SERVER_URI61", Dialect::V61),
    ("PMIX_SERVER_URI51", Dialect::V51),
    ("PMIX_SERVER_URI41", Dialect::V41),
    ("PMIX_SERVER_URI4", Dialect::V4),
    ("PMIX_SERVER_URI3", Dialect::V3),
    ("PMIX_SERVER_URI21", Dialect::V21),
    ("PMIX_SERVER_URI2", Dialect::V20),
    ("PMIX_SERVER_URI20", Dialect::V20),
    ("PMIX_SERVER_URI12", Dialect::V12),
];

/// What a client chooses from its environment: the dialect of the first
/// URI variable present, the server's URI, and the buffer type from
/// PMIX_BFROP_BUFFER_TYPE (exactly "PMIX_BFROP_BUFFER_FULLY_DESC" selects
/// FULLY_DESC; anything else, or nothing, NON_DESC).
pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Option<(Format, String)> {
    let (uri, d) = SERVER_URI_VARS
        .iter()
        .find_map(|(var, d)| get(var).map(|uri| (uri, *d)))?;
    let bt = get("PMIX_BFROP_BUFFER_TYPE")
        .map_or(BufferType::NonDesc, |v| BufferType::from_env_value(&v));
    Some((Format::new(d, bt), uri))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_lists() {
        assert_eq!(from_module_list("v41"), Some(Dialect::V41));
        assert_eq!(from_module_list("v3,v21"), Some(Dialect::V3));
        assert_eq!(
            from_module_list("v21, v3"),
            Some(Dialect::V3),
            "priority, not list order"
        );
        assert_eq!(from_module_list("v61"), Some(Dialect::V61));
        assert_eq!(from_module_list("v7"), Some(Dialect::V7));
        // the handshake of a 4.2.2 server stores the peer's *version* under
        // pmix.bfrops.mod, which never names a component (bfrops.md §5.3)
        assert_eq!(from_module_list("4.2.2"), None);
        assert_eq!(from_module_list(""), None);
    }

    #[test]
    fn versions() {
        assert!(version_at_least("7.0.0a1", OPENPMIX7_MIN_SERVER));
        assert!(version_at_least("3.2.5", OPENPMIX7_MIN_SERVER));
        assert!(!version_at_least("3.1.6", OPENPMIX7_MIN_SERVER));
        assert!(version_at_least("2.1.0", OPENPMIX7_MIN_CLIENT));
        assert!(!version_at_least("2.0.3", OPENPMIX7_MIN_CLIENT));
        assert!(!version_at_least("1.2.5", OPENPMIX7_MIN_CLIENT));
        assert!(!version_at_least("garbage", (0, 0)));
        assert_eq!(from_version("4.2.2rc2"), Some(Dialect::V41));
        assert_eq!(from_version("4.2.2"), Some(Dialect::V41));
        assert_eq!(from_version("3.2.5"), Some(Dialect::V3));
        assert_eq!(from_version("6.1.0"), Some(Dialect::V61));
        assert_eq!(from_version("6.0.0"), Some(Dialect::V51));
        assert_eq!(from_version("5.0.11"), Some(Dialect::V41));
        assert_eq!(from_version("2.0.3"), Some(Dialect::V20));
        assert_eq!(from_version("2.1.4"), Some(Dialect::V21));
        assert_eq!(from_version("1.2.5"), Some(Dialect::V12));
        assert_eq!(from_version("4.0.0"), Some(Dialect::V4));
        assert_eq!(from_version("7.0.0a1"), Some(Dialect::V7));
        assert_eq!(from_version("garbage"), None);
    }

    #[test]
    fn environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let (f, uri) = from_env(env(&[(
            "PMIX_SERVER_URI3",
            "pmix-server.1;tcp4://127.0.0.1:1",
        )]))
        .unwrap();
        assert_eq!(
            (f, uri.as_str()),
            (
                Format::new(Dialect::V3, BufferType::NonDesc),
                "pmix-server.1;tcp4://127.0.0.1:1"
            )
        );
        // a 4.2.2 server exports URI41, URI4, URI3, URI21 and URI2: we take v41
        let (f, _) = from_env(env(&[
            ("PMIX_SERVER_URI2", "a"),
            ("PMIX_SERVER_URI21", "a"),
            ("PMIX_SERVER_URI3", "a"),
            ("PMIX_SERVER_URI4", "a"),
            ("PMIX_SERVER_URI41", "a"),
            ("PMIX_BFROP_BUFFER_TYPE", "PMIX_BFROP_BUFFER_FULLY_DESC"),
        ]))
        .unwrap();
        assert_eq!(f, Format::new(Dialect::V41, BufferType::FullyDesc));
        assert!(from_env(env(&[])).is_none());
    }
}
