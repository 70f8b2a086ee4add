//! Layout inference (issue 26 item 3) on buffers libpmix 4.2.2 packs in
//! the test itself, which no corpus file holds.

use pmix_codec::Dialect;
use pmixw::infer::infer;

/// Issue 26 item 3: buffers libpmix 4.2.2 packs now, in this test, that
/// no file of the corpus holds: a BYTE_OBJECT unit next to a unit of a
/// small scalar type (a BOOL after a byte object was not in the first 3),
/// either order, in v41, v3 and v20. Two units packed into one
/// non-described buffer are the two packs' bytes one after the other, so
/// each buffer is two of `gen`'s cases joined. The true layout (each
/// unit's type, or a type that reads the same values from the same bytes:
/// `Unit::aliases`) must be among the first 3 candidates.
#[test]
fn byte_objects_next_to_small_scalars_libpmix_packed_now() {
    use pmix_codec::{BufferType, Format};
    use pmixw::infer::Candidate;
    let Some(tools) = pmix_test_kit::hosts::libpmix4_dev()
        .and_then(|_| pmix_test_kit::interop::Tools::build())
        .map_or_else(
            |e| {
                assert!(!pmix_test_kit::hosts::in_ci(), "CI: libpmix harness: {e}");
                eprintln!("SKIPPED: libpmix harness: {e}");
                None
            },
            Some,
        )
    else {
        return;
    };
    const SCALARS: &[&str] = &["BOOL", "UINT8", "INT8", "BYTE", "INT16", "UINT16"];
    let holds = |c: &Candidate, want: &[(&str, usize)]| {
        c.units.len() == want.len()
            && c.units.iter().zip(want).all(|(u, (ty, n))| {
                let ty = format!("PMIX_{ty}");
                u.count == *n && (u.ty == ty || u.aliases.contains(&ty))
            })
    };
    for d in [Dialect::V41, Dialect::V3, Dialect::V20] {
        let cases = tools
            .gen(&Format::new(d, BufferType::NonDesc))
            .unwrap_or_else(|e| panic!("{e}"));
        let ok = |ty: &str| {
            cases
                .iter()
                .filter(|c| c.ty == ty && c.pack_rc == 0 && c.num_vals > 0)
                .map(|c| {
                    let b = pmix_types::hex::decode(&c.hex).unwrap();
                    (c.case.clone(), c.num_vals as usize, b)
                })
                .collect::<Vec<_>>()
        };
        // not libpmix's empty byte object: its bytes (a count of one and a
        // size of zero) are the start of most units (spec-notes/infer.md)
        let objects: Vec<_> = ok("BYTE_OBJECT")
            .into_iter()
            .filter(|o| o.0 != "empty")
            .collect();
        assert!(objects.len() >= 3, "{d:?}: {objects:?}");
        let (mut n, mut top3, mut bools) = (0, 0, 0);
        let mut missed = Vec::new();
        for s in SCALARS {
            for (sc, sn, sb) in ok(s) {
                for (oc, on, ob) in &objects {
                    for scalar_first in [false, true] {
                        let (bytes, want, name) = if scalar_first {
                            (
                                [sb.as_slice(), ob].concat(),
                                [(*s, sn), ("BYTE_OBJECT", *on)],
                                format!("{s}/{sc}+BYTE_OBJECT/{oc}"),
                            )
                        } else {
                            (
                                [ob.as_slice(), &sb].concat(),
                                [("BYTE_OBJECT", *on), (*s, sn)],
                                format!("BYTE_OBJECT/{oc}+{s}/{sc}"),
                            )
                        };
                        n += 1;
                        let c = infer(Some(d), &bytes, 3);
                        if c.iter().any(|x| holds(x, &want)) {
                            top3 += 1;
                            if *s == "BOOL" && !scalar_first {
                                bools += 1;
                            }
                        } else {
                            missed.push(name);
                        }
                    }
                }
            }
        }
        eprintln!("{d:?}: {n} buffers, true layout in the first 3: {top3}; missed {missed:?}");
        assert!(n >= 50, "{d:?}: {n}");
        // every byte object followed by a bool (the case the issue names)
        let bool_after: usize = ok("BOOL").len() * objects.len();
        assert!(
            bools == bool_after,
            "{d:?}: BYTE_OBJECT+BOOL found {bools} of {bool_after}: {missed:?}"
        );
        assert!(top3 * 100 >= n * 90, "{d:?}: {top3} of {n}: {missed:?}");
    }
}
