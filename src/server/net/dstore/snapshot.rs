//! A store's files read back: a session directory (a copy of one, for
//! tests and `pmixw inspect --dstore`) loaded into memory and walked with the
//! [`layout`] reader. Everything in it is untrusted: sizes come from the
//! files, counts are capped by the files that exist.

use crate::server::dstore::layout::{self, Namespace, Sizes, VecSegs, NS_ENTRY};
use std::io;
use std::path::Path;

/// Segments of one kind read per namespace at most.
const MAX_SEGS: u64 = 64;

/// One namespace of a snapshot.
pub struct SnapNs {
    /// Its name.
    pub name: String,
    /// Its entry in the initial segment.
    pub entry: [u8; NS_ENTRY],
    /// Its lock segment (`smlockseg-<name>`), if there is one.
    pub lock: Option<Vec<u8>>,
    /// Its rank index and data.
    pub ns: Namespace<VecSegs>,
}

/// A session directory read back.
pub struct Snapshot {
    /// The sizes, from the files.
    pub sizes: Sizes,
    /// Its namespaces, in the order of the initial segment.
    pub spaces: Vec<SnapNs>,
}

impl Snapshot {
    /// Read `dir`: initial segment 0, and every namespace it lists with
    /// the meta and data segments its entry counts (the chain of initial
    /// segments past the first is not followed).
    pub fn load(dir: &Path) -> io::Result<Snapshot> {
        let initial = std::fs::read(dir.join("initial-pmix_shared-segment-0"))?;
        let entries = layout::initial_entries(
            &initial,
            &Sizes {
                initial: initial.len(),
                ..Sizes::default()
            },
        );
        let mut spaces = Vec::new();
        let mut sizes = Sizes {
            initial: initial.len(),
            ..Sizes::default()
        };
        for (name, entry) in entries {
            if name.contains('/') || name.is_empty() {
                return Err(io::Error::other(format!(
                    "namespace {name:?} is no file name"
                )));
            }
            let count = |off: usize| layout::get_u64(&entry, off).unwrap_or(0).min(MAX_SEGS);
            let read = |kind: &str, n: u64| -> io::Result<Vec<Vec<u8>>> {
                (0..n)
                    .map(|i| std::fs::read(dir.join(format!("{kind}-{name}-{i}"))))
                    .collect()
            };
            let meta = read("smseg", count(272))?;
            let data = read("smdataseg", count(280))?;
            let (Some(m0), Some(d0)) = (meta.first(), data.first()) else {
                return Err(io::Error::other(format!("{name}: no meta or data segment")));
            };
            sizes.meta = m0.len();
            sizes.data = d0.len();
            if meta.iter().any(|m| m.len() != sizes.meta)
                || data.iter().any(|d| d.len() != sizes.data)
                || sizes.data == 0
            {
                return Err(io::Error::other(format!(
                    "{name}: segments of unequal sizes"
                )));
            }
            let segs = VecSegs { sizes, meta, data };
            let ns = Namespace::new(segs, sizes).map_err(io::Error::other)?;
            let lock = std::fs::read(dir.join(format!("smlockseg-{name}"))).ok();
            spaces.push(SnapNs {
                name,
                entry,
                lock,
                ns,
            });
        }
        Ok(Snapshot { sizes, spaces })
    }
}
