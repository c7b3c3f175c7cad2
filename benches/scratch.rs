//! The scratch copy a verify runs in (SPEC 17): a 10,000-file root (a
//! source-tree shape: 100 folders of 100 files of 1-8 KB) copied and the
//! copy removed, five times, beside the root and with a tmpfs allowed;
//! the median of each against its budget (copy
//! < 300 ms, removal < 100 ms), and the copy mechanism this machine's
//! filesystem allowed. Run with `cargo bench --bench scratch`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use agent_tui::workspace::{Scratch, Workspace};

const FILES: usize = 10_000;
const RUNS: usize = 5;

fn main() {
    let root = tempfile::tempdir().unwrap();
    for i in 0..FILES {
        let p = root
            .path()
            .join(format!("pkg{:03}/src/file{:03}.rs", i / 100, i % 100));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let line = format!("pub fn f{i}() -> usize {{ {i} }}\n");
        std::fs::write(&p, line.repeat(30 + (i % 7) * 40)).unwrap();
    }
    let ws = Workspace::open(root.path()).unwrap();
    let parent = tempfile::tempdir().unwrap();
    let shm = std::path::Path::new("/dev/shm");
    let memory = tempfile::tempdir_in(if shm.is_dir() { shm } else { parent.path() }).unwrap();
    for (label, memory) in [
        ("beside the root", None),
        ("memory allowed", Some(memory.path())),
    ] {
        let (mut copies, mut removals) = (Vec::new(), Vec::new());
        let mut kind = None;
        for _ in 0..RUNS {
            let s = Scratch::placed(&ws, parent.path(), memory).unwrap();
            assert_eq!(s.files, FILES);
            kind = Some(s.kind);
            copies.push(s.took);
            removals.push(s.remove().unwrap());
        }
        let median = |v: &mut Vec<Duration>| {
            v.sort();
            v[v.len() / 2]
        };
        let (copy, removal) = (median(&mut copies), median(&mut removals));
        println!(
            "scratch copy of {FILES} files, {label} ({:?}): median {copy:?} (budget 300 ms); removal median {removal:?} (budget 100 ms)",
            kind.unwrap()
        );
    }
}
