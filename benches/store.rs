//! Store budgets (issue 19, SPEC section 15), on a real SQLite file:
//! warm open (schema check included) < 5 ms; `sessions` of 10,000 < 50 ms;
//! resuming the latest session as fast with 10,000 sessions as with 10;
//! a 500-file checkpoint < 100 ms. Run with `cargo bench --bench store`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use agent_tui::agent::{SessionState, read_session};
use agent_tui::checkpoint::{CheckpointKind, CheckpointStore, FileChange};
use agent_tui::protocol::{Event, EventBody, JobStatus, Mode, Usage};
use agent_tui::review::HunkRegion;
use agent_tui::store::{RecordRow, Store, Target};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn event(job: &str, cursor: u64, body: EventBody) -> Event {
    Event {
        cursor,
        body,
        ts: humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
        job_id: job.into(),
    }
}

/// `event` as the engine records it (its summary rows from the session's state).
fn row(state: &mut SessionState, event: &Event) -> RecordRow {
    RecordRow {
        job_id: Some(event.job_id.clone()),
        kind: event.body.kind().to_string(),
        cursor: Some(event.cursor as i64),
        ts: event.ts.clone(),
        body: serde_json::to_string(event).unwrap(),
        index: state.apply_event(event),
    }
}

/// `n` sessions of one job each (prompt, answer) in `root`'s part of `store`.
fn fill(store: &Store, root: &Path, n: usize) {
    let writer = store.root(root).writer();
    for i in 0..n {
        let id = format!("s_{i:08}_{}", root.display().to_string().len());
        writer.create_session(&id, None);
        let mut state = SessionState::default();
        let job = format!("job_{i:08}");
        let started = event(
            &job,
            1,
            EventBody::JobStarted {
                prompt: format!("question number {i} about the code"),
                mode: Mode::Ask,
                root: root.display().to_string(),
                provider: "bench".into(),
                model: "bench".into(),
                images: Vec::new(),
            },
        );
        writer.append(&id, row(&mut state, &started));
        let completed = event(
            &job,
            2,
            EventBody::JobCompleted {
                answer: "An answer of a few sentences. ".repeat(20),
                usage: Usage::default(),
                status: JobStatus::Completed,
                budget_exhausted: false,
                provider: "bench".into(),
                fallback_reason: None,
            },
        );
        writer.append(&id, row(&mut state, &completed));
    }
    store.flush().unwrap();
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.db");
    let target = Target::Sqlite(db.clone());
    let store = Store::open_target(&target).unwrap();
    let (small, large) = (Path::new("/bench/ten"), Path::new("/bench/ten-thousand"));
    let t = Instant::now();
    fill(&store, small, 10);
    fill(&store, large, 10_000);
    println!(
        "filled 10,010 sessions in {:.1} s",
        t.elapsed().as_secs_f64()
    );

    let opens: Vec<Duration> = (0..30)
        .map(|_| {
            let t = Instant::now();
            let s = Store::open_target(&target).unwrap();
            let d = t.elapsed();
            drop(s);
            d
        })
        .collect();
    let open = median(opens);
    println!("warm open + schema check: {open:.2?} (budget 5 ms)");

    for (label, root) in [("10", small), ("10,000", large)] {
        let r = store.root(root);
        let lists: Vec<Duration> = (0..10)
            .map(|_| {
                let t = Instant::now();
                let l = r.sessions().unwrap();
                assert!(l.len() >= 10);
                t.elapsed()
            })
            .collect();
        let resumes: Vec<Duration> = (0..20)
            .map(|_| {
                let t = Instant::now();
                let id = r.latest_session().unwrap().unwrap();
                let s = read_session(&r, &id).unwrap();
                assert_eq!(s.jobs.len(), 1);
                t.elapsed()
            })
            .collect();
        println!(
            "{label} sessions: list {:.2?} (budget 50 ms), find + replay the latest {:.2?}",
            median(lists),
            median(resumes)
        );
    }

    // A 500-file checkpoint: each file 4 KB before, one hunk changed.
    let files: Vec<FileChange> = (0..500)
        .map(|f| {
            let before: String = (0..100)
                .map(|i| format!("    let v{i} = compute({i}, {f}); // {f:04}\n"))
                .collect();
            let after = before.replacen("compute(0,", "recompute(0,", 1);
            FileChange {
                file_path: format!("src/m{f:03}.rs"),
                abs: dir.path().join(format!("m{f:03}.rs")),
                before: Some(before.clone().into_bytes()),
                after: Some(after.into_bytes()),
                regions: vec![HunkRegion {
                    hunk_id: format!("h_{f}"),
                    origin: Default::default(),
                    after_start: 0,
                    before_lines: vec![before.lines().next().unwrap().to_string() + "\n"],
                    after_lines: vec!["    let v0 = recompute(0);\n".into()],
                    ctx_before: vec![],
                    ctx_after: vec![],
                }],
                before_mode: None,
                after_mode: None,
            }
        })
        .collect();
    let cps = CheckpointStore::new(&store.root(Path::new("/bench/checkpoints")));
    let ws = agent_tui::workspace::Workspace::open(dir.path()).unwrap();
    let records: Vec<Duration> = (0..7)
        .map(|i| {
            // New bytes each run, so nothing is deduplicated away.
            let mut files = files.clone();
            for f in &mut files {
                if let Some(b) = &mut f.before {
                    b.extend_from_slice(format!("// run {i}\n").as_bytes());
                }
            }
            let t = Instant::now();
            cps.record(&ws, None, "bench", CheckpointKind::Apply, None, &files)
                .unwrap();
            t.elapsed()
        })
        .collect();
    println!(
        "500-file checkpoint: {:.2?} (budget 100 ms)",
        median(records)
    );
    let size = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0)
        + std::fs::metadata(db.with_extension("db-wal"))
            .map(|m| m.len())
            .unwrap_or(0);
    println!("store size: {:.1} MB", size as f64 / 1e6);
}
