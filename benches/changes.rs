//! What a command changed: stat every file of a 10,000-file tree before and
//! after (issue 12: before + after < 30 ms warm), alone and with the file
//! index that makes the change a checkpoint (first use: every file read
//! into the store once). Run with `cargo bench --bench changes`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use agent_tui::checkpoint::ExecTracker;
use agent_tui::store::Store;
use agent_tui::store::Target;
use agent_tui::workspace::TreeStat;

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for d in 0..100 {
        let sub = root.join(format!("src/mod_{d:03}"));
        std::fs::create_dir_all(&sub).unwrap();
        for f in 0..100 {
            std::fs::write(sub.join(format!("f{f:03}.rs")), format!("// {d} {f}\n")).unwrap();
        }
    }
    // Cold caches are the kernel's business; warm up once.
    assert_eq!(TreeStat::scan(root).len(), 10_000);
    let mut runs: Vec<Duration> = (0..11)
        .map(|i| {
            let t = Instant::now();
            let before = TreeStat::scan(root);
            std::fs::write(root.join(format!("src/mod_000/f{i:03}.rs")), "changed\n").unwrap();
            let after = TreeStat::scan(root);
            let changed = after.changes_since(&before);
            let d = t.elapsed();
            assert_eq!(changed.len(), 1);
            d
        })
        .collect();
    runs.sort();
    println!(
        "10,000 files: before + after scan and compare {:.1?} median (min {:.1?}, max {:.1?}); budget 30 ms",
        runs[runs.len() / 2],
        runs[0],
        runs[runs.len() - 1]
    );
    let state = tempfile::tempdir().unwrap();
    let store = Store::open_target(&Target::Sqlite(state.path().join("state.db"))).unwrap();
    let ws = agent_tui::workspace::Workspace::open(root).unwrap();
    let tracker = ExecTracker::new(&store.root(ws.root()), &ws);
    let t = Instant::now();
    tracker.before().unwrap();
    let first = t.elapsed();
    let mut runs: Vec<Duration> = (0..11)
        .map(|i| {
            let t = Instant::now();
            let before = tracker.before().unwrap();
            std::fs::write(root.join(format!("src/mod_001/f{i:03}.rs")), "edit\n").unwrap();
            let rec = tracker.after(&before, None, "job_bench").unwrap();
            let d = t.elapsed();
            assert_eq!(rec.changed.len(), 1);
            assert!(rec.checkpoint.is_some());
            d
        })
        .collect();
    runs.sort();
    println!(
        "10,000 files with the file index: first index {first:.1?}; then before + after + \
         exec checkpoint {:.1?} median (min {:.1?}, max {:.1?})",
        runs[runs.len() / 2],
        runs[0],
        runs[runs.len() - 1]
    );
}
