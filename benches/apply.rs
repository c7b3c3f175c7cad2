//! Review budget: build the diff bundle for, then apply, 500 hunks across 50
//! files of 2,000 lines each (checkpoint included). Budget: 50 ms.
//! Run with `cargo bench --bench apply`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use agent_tui::checkpoint::{CheckpointKind, CheckpointStore, FileChange};
use agent_tui::config::Limits;
use agent_tui::review::{EditOperation, EditRequest, build_bundle, plan_apply, validate_edits};
use agent_tui::store::{Store, Target};
use agent_tui::workspace::Workspace;

const FILES: usize = 50;
const LINES: usize = 2_000;
const HUNKS_PER_FILE: usize = 10;
const RUNS: usize = 7;
const BUDGET: Duration = Duration::from_millis(50);

fn main() {
    let mut bundle_times = Vec::new();
    let mut apply_times = Vec::new();
    let mut totals = Vec::new();
    for _ in 0..RUNS {
        let dir = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let mut edits = Vec::new();
        for f in 0..FILES {
            let name = format!("src/module_{f:02}.rs");
            let text: String = (0..LINES)
                .map(|i| format!("    let value_{i} = compute({i}, {f}); // line {i}\n"))
                .collect();
            std::fs::create_dir_all(dir.path().join("src")).unwrap();
            std::fs::write(dir.path().join(&name), text).unwrap();
            for h in 0..HUNKS_PER_FILE {
                let line = h * (LINES / HUNKS_PER_FILE) + 7;
                edits.push(EditRequest {
                    file_path: name.clone(),
                    operation: EditOperation::Replace,
                    start_line: Some(line),
                    end_line: Some(line + 1),
                    old_text: None,
                    new_text: Some(format!(
                        "    let changed_{h} = better({h});\n    log(changed_{h});\n    done();\n"
                    )),
                    rationale: None,
                });
            }
        }
        let ws = Workspace::open(dir.path()).unwrap();
        let proposed = validate_edits(&ws, &edits, &[], &mut 1).unwrap();
        let opened = Store::open_target(&Target::Sqlite(state.path().join("state.db"))).unwrap();
        let store = CheckpointStore::new(&opened.root(ws.root()));

        let t0 = Instant::now();
        let mut bundle =
            build_bundle(&ws, "bench", &proposed, &Limits::default(), None, &mut 1).unwrap();
        let t1 = Instant::now();
        assert_eq!(bundle.hunks().count(), FILES * HUNKS_PER_FILE);
        bundle.decide(&[], &[], true);
        let plans = plan_apply(&ws, &bundle, &proposed).unwrap();
        let tp = Instant::now();
        let changes: Vec<FileChange> = plans.iter().map(FileChange::from).collect();
        let cp = store
            .record(&ws, None, "bench", CheckpointKind::Apply, None, &changes)
            .unwrap();
        let tr = Instant::now();
        store.write_journaled(&ws, &cp, &changes).unwrap();
        if std::env::var_os("BENCH_DETAIL").is_some() {
            eprintln!(
                "plan {:?} record {:?} write {:?}",
                tp - t1,
                tr - tp,
                tr.elapsed()
            );
        }
        let t2 = Instant::now();
        bundle_times.push(t1 - t0);
        apply_times.push(t2 - t1);
        totals.push(t2 - t0);
    }
    for v in [&mut bundle_times, &mut apply_times, &mut totals] {
        v.sort();
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "500 hunks / 50 files x 2000 lines: bundle {:.1} ms, apply+checkpoint {:.1} ms, total median {:.1} ms (min {:.1}, max {:.1}), budget {} ms",
        ms(bundle_times[RUNS / 2]),
        ms(apply_times[RUNS / 2]),
        ms(totals[RUNS / 2]),
        ms(totals[0]),
        ms(totals[RUNS - 1]),
        BUDGET.as_millis()
    );
    if totals[RUNS / 2] > BUDGET {
        eprintln!("over budget");
        std::process::exit(1);
    }
}
