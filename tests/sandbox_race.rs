//! The sandbox against a swapping adversary (issue 13): while a thread
//! exchanges a folder inside the root with a symlink to a folder outside
//! (renameat2 RENAME_EXCHANGE, in a loop), reads, listings, searches and
//! writes under that folder must never reach the outside one: in the
//! agent root, and in a scope added beside it (issue 15).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use agent_tui::workspace::{Access, ScopeSpec, Workspace};
use rustix::fs::{CWD, RenameFlags, renameat_with};
use support::Env;

const SECRET: &str = "OUTSIDE-SECRET-7d1f";

struct Swapper {
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Swapper {
    /// Exchanges `a` and `b` as fast as it can until dropped.
    fn start(a: PathBuf, b: PathBuf) -> Swapper {
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicU64::new(0));
        let (s, n) = (stop.clone(), swaps.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).unwrap();
                n.fetch_add(1, Ordering::Relaxed);
                // Each state holds for a moment, so operations also start
                // (not only end) in the swapped one.
                std::thread::sleep(std::time::Duration::from_micros(20));
            }
        });
        Swapper {
            stop,
            swaps,
            thread: Some(thread),
        }
    }
}

impl Drop for Swapper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

/// Where the swapped folders live: the agent root itself, or a scope
/// `@docs` (read-write) beside it.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    Root,
    Scope,
}

/// A root; in the place's folder `sub/` (a real folder) and `link` (a
/// symlink to a folder outside holding the secret); that outside folder.
/// Returns (guard, agent root, the place's folder, outside).
fn arena(place: Place) -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("root");
    let area = match place {
        Place::Root => root.clone(),
        Place::Scope => base.join("docs"),
    };
    let outside = base.join("outside");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(area.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(area.join("sub/secret.txt"), "inside\n").unwrap();
    std::fs::write(area.join("sub/inside.txt"), "inside\n").unwrap();
    std::fs::write(outside.join("secret.txt"), format!("{SECRET}\n")).unwrap();
    std::fs::write(outside.join("only-outside.txt"), format!("{SECRET}\n")).unwrap();
    std::os::unix::fs::symlink(&outside, area.join("link")).unwrap();
    (dir, root, area, outside)
}

#[test]
fn reads_listings_and_searches_never_reach_outside_while_a_folder_is_swapped() {
    reads_stay_inside(Place::Root);
}

#[test]
fn reads_through_a_scope_never_reach_outside_while_a_folder_is_swapped() {
    reads_stay_inside(Place::Scope);
}

fn reads_stay_inside(place: Place) {
    let (_dir, root, area, _outside) = arena(place);
    let env = Env::new();
    let swapper = Swapper::start(area.join("sub"), area.join("link"));
    let mut answered = 0;
    let mut leaks = Vec::new();
    let calls = [
        ("read_file", r#"{"file_path": "sub/secret.txt"}"#),
        ("read_file", r#"{"file_path": "sub/only-outside.txt"}"#),
        ("list_files", r#"{"prefix": "sub"}"#),
        ("list_files", r#"{}"#),
        ("search_project", r#"{"query": "OUTSIDE-SECRET"}"#),
    ];
    for i in 0..400 {
        let (tool, args) = calls[i % calls.len()];
        let (code, out) = match place {
            Place::Root => env.tool(&root, tool, args),
            Place::Scope => {
                let args = args.replace("\"sub", "\"@docs/sub");
                let out = env
                    .cmd()
                    .args(["tool", tool, &args, "--root"])
                    .arg(&root)
                    .arg("--add-dir")
                    .arg(format!("{}:rw", area.display()))
                    .output()
                    .unwrap();
                (support::code(&out), support::json_of(&out))
            }
        };
        let text = out.to_string();
        if code == 0 {
            answered += 1;
        }
        let leaked = text.contains(SECRET)
            || (tool == "list_files" && text.contains("only-outside"))
            || (args.contains("only-outside") && code == 0);
        if leaked {
            leaks.push(format!("{tool} {args}: {text}"));
        }
    }
    let swaps = swapper.swaps.load(Ordering::Relaxed);
    drop(swapper);
    assert!(swaps > 1000, "the adversary barely ran ({swaps} swaps)");
    assert!(
        answered > 20,
        "almost every call failed ({answered} answered)"
    );
    assert!(
        leaks.is_empty(),
        "{} of 400 calls reached outside: {:?}",
        leaks.len(),
        &leaks[..leaks.len().min(3)]
    );
}

#[test]
fn writes_and_removals_never_land_outside_while_a_folder_is_swapped() {
    writes_stay_inside(Place::Root);
}

#[test]
fn writes_in_a_scope_never_land_outside_while_a_folder_is_swapped() {
    writes_stay_inside(Place::Scope);
}

fn writes_stay_inside(place: Place) {
    let (_dir, root, area, outside) = arena(place);
    let extra = match place {
        Place::Root => Vec::new(),
        Place::Scope => vec![ScopeSpec {
            path: area.clone(),
            access: Access::ReadWrite,
        }],
    };
    let ws = Workspace::open_scoped(&root, &extra).unwrap();
    let before: Vec<_> = listing(&outside);
    let swapper = Swapper::start(area.join("sub"), area.join("link"));
    let mut written = 0;
    let mut attempts = 0;
    // Until 200 writes went through (most attempts fail closed), at most 20,000.
    for i in 0..20_000 {
        if written == 200 {
            break;
        }
        attempts += 1;
        let target = area.join("sub/written.txt");
        let removed = area.join("sub/secret.txt");
        let bytes = format!("write {i}\n");
        let writes: Vec<agent_tui::workspace::PathWrite> = if i % 2 == 0 {
            vec![(target.as_path(), Some(bytes.as_bytes()), None)]
        } else {
            vec![(removed.as_path(), None, None)]
        };
        if ws.write_files(&writes).is_ok() {
            written += 1;
        }
    }
    drop(swapper);
    // Many attempts fail closed (the kernel refuses a lookup that a rename
    // raced); enough succeed to show the writes were really made.
    assert!(written >= 20, "{written} of {attempts} writes went through");
    assert_eq!(
        listing(&outside),
        before,
        "something was written or removed outside"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        format!("{SECRET}\n")
    );
}

fn listing(dir: &Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().to_string(),
                std::fs::read_to_string(&p).unwrap_or_default(),
            )
        })
        .collect();
    out.sort();
    out
}
