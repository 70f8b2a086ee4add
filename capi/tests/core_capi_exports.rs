//! spec-notes/capi.md's "The exported set" names exactly the functions of
//! the export tables (`pmix::exported()`, the data symbol included), so the page cannot go stale.

use std::collections::BTreeSet;

#[test]
fn the_spec_notes_list_every_export_and_no_other() {
    let page = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../spec-notes/capi.md"
    ))
    .unwrap();
    let section = page
        .split("\n## The exported set\n")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("capi.md has an exported-set section");
    let listed: BTreeSet<&str> = section
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| w.starts_with("PMIx_") || *w == "pmix_framework_names")
        .collect();
    let ours: BTreeSet<&str> = pmix::exported().collect();
    assert_eq!(listed, ours);
    assert_eq!(
        ours.len(),
        pmix::exported().count(),
        "a name is exported twice"
    );
}
