//! Replays every fuzz corpus file (seeds and any saved crash inputs)
//! through the three fuzz entry points, on stable Rust.

use std::path::PathBuf;

#[test]
fn every_corpus_file_passes_every_target() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/fuzz");
    let mut n = 0;
    for dir in std::fs::read_dir(&root).expect("corpus/fuzz") {
        for f in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            let data = std::fs::read(f.unwrap().path()).unwrap();
            pmix_codec::fuzz::roundtrip(&data);
            pmix_codec::fuzz::unpack_any(&data);
            pmix_codec::fuzz::buffer_ops(&data);
            n += 1;
        }
    }
    assert!(n > 1000, "only {n} corpus files");
}
