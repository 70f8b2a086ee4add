//! Rendezvous files (protocol.md §1.4): the names a server writes, how it
//! writes them (fresh, mode 0600), and stale files of servers that died
//! without removing theirs (SIGKILL): a file whose pid no longer runs, or
//! now runs a process younger than the file, is not a server's, and is
//! removed when its name is needed again or when it is one of ours in the
//! same directory.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The pid line (third) of a rendezvous file's text.
fn pid_of(text: &str) -> Option<u32> {
    text.lines().nth(2).and_then(|l| l.trim().parse().ok())
}

/// A file at `path` is stale: the pid it names does not run (or is a
/// zombie), or runs a process that started after the file was written
/// (a CI job in a fresh pid namespace, sharing this /tmp with the last
/// one, gets the same pids, ours included), as the tool's search judges
/// (tool/mod.rs).
pub fn is_stale(path: &Path) -> bool {
    let Some(pid) = std::fs::read_to_string(path).ok().and_then(|t| pid_of(&t)) else {
        return false;
    };
    !crate::procfs::alive(pid)
        || std::fs::metadata(path)
            .and_then(|m| m.modified())
            .is_ok_and(|w| crate::procfs::written_before_start(pid, w))
}

/// Remove this node's tool rendezvous files in `dir` that a pmix-wire
/// server (URI `pmixw-server.<pid>;…`) left when it died, and that belong
/// to this user. Others' files are never touched.
pub fn remove_stale(dir: &Path, host: &str) {
    use std::os::unix::fs::MetadataExt;
    let prefix = format!("pmix.{host}.tool.");
    let me = unsafe { libc::geteuid() };
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Ok(md) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        if !name.starts_with(&prefix) || !md.is_file() || md.uid() != me {
            continue;
        }
        let ours = std::fs::read_to_string(e.path())
            .is_ok_and(|t| t.starts_with(&format!("{}.", super::SERVER_NSPACE)));
        if ours && is_stale(&e.path()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Write `text` to each of `names` in `dir`: mode 0600, never through an
/// existing file or symlink, and complete when it appears (written to a
/// private name first, then linked into place, which fails rather than
/// replace: a reader never sees an empty file). A name taken by a live
/// server is left alone; one taken by a dead server's file is reclaimed.
/// Returns the files written (to remove when the server stops).
pub fn write(dir: &Path, names: &[String], text: &str) -> std::io::Result<Vec<PathBuf>> {
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = dir.join(format!(".pmixw-rndz.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    let written = f.write_all(text.as_bytes()).and_then(|_| f.sync_all());
    drop(f);
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    let mut out = Vec::new();
    for name in names {
        let path = dir.join(name);
        let mut r = std::fs::hard_link(&tmp, &path);
        if matches!(&r, Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists)
            && std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file())
            && is_stale(&path)
        {
            let _ = std::fs::remove_file(&path);
            r = std::fs::hard_link(&tmp, &path);
        }
        match r {
            Ok(()) => out.push(path),
            // a live server's file by that name: leave it alone
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                for p in &out {
                    let _ = std::fs::remove_file(p);
                }
                let _ = std::fs::remove_file(&tmp);
                return Err(e);
            }
        }
    }
    let _ = std::fs::remove_file(&tmp);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_servers_file_is_reclaimed_a_live_ones_kept() {
        let dir = std::env::temp_dir().join(format!("rndz-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // pid 0x7ffffffe does not run; our own pid does
        let dead = "pmixw-server.1;tcp4://127.0.0.1:1\n4.2.2\n2147483646\n0:0\nx\n\n";
        let live = format!(
            "pmixw-server.1;tcp4://127.0.0.1:1\n4.2.2\n{}\n0:0\nx\n\n",
            std::process::id()
        );
        std::fs::write(dir.join("a"), dead).unwrap();
        std::fs::write(dir.join("b"), &live).unwrap();
        let got = write(&dir, &["a".into(), "b".into()], "new\n").unwrap();
        assert_eq!(got, vec![dir.join("a")]);
        assert_eq!(std::fs::read_to_string(dir.join("a")).unwrap(), "new\n");
        assert_eq!(std::fs::read_to_string(dir.join("b")).unwrap(), live);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A file naming a running pid but written before that process began
    /// (our own pid here: a run in another pid namespace had it too) is
    /// a dead server's, reclaimed.
    #[test]
    fn a_file_older_than_the_process_of_its_pid_is_reclaimed() {
        let dir = std::env::temp_dir().join(format!("rndz-reuse-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let old = format!(
            "pmixw-server.1;tcp4://127.0.0.1:1\n4.2.2\n{}\n0:0\nx\n\n",
            std::process::id()
        );
        let path = dir.join("c");
        std::fs::write(&path, &old).unwrap();
        assert!(!is_stale(&path), "written after this process began");
        let before = crate::procfs::started(std::process::id()).unwrap()
            - std::time::Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(before)
            .unwrap();
        assert!(is_stale(&path));
        let got = write(&dir, &["c".into()], "new\n").unwrap();
        assert_eq!(got, vec![path.clone()]);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
