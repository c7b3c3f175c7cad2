//! `agent-tui review`: show the pending diff bundle of a session, record
//! decisions (`--accept/--reject/--accept-all`, hunk ids or file paths) and
//! apply the accepted hunks (`--apply`, exit 3 on conflict).

use super::Exit;
use super::args::{GlobalArgs, ReviewArgs};
use super::context::{
    drive_ops, engine_context, open_root_reported, open_workspace, store_error, usage,
};
use super::output::{colour, render_bundle};
use crate::agent::SessionChoice;
use crate::protocol::{EventBody, Op};
use crate::review::DiffBundle;

pub fn run(global: &GlobalArgs, args: &ReviewArgs) -> Exit {
    let config = match super::load_config(global) {
        Ok(c) => c.config,
        Err(exit) => return exit,
    };
    let workspace = match open_workspace(global, &config, &args.root) {
        Ok(w) => w,
        Err(exit) => return exit,
    };
    let root = match open_root_reported(&config, &workspace) {
        Ok(s) => s,
        Err(exit) => return exit,
    };
    let id = match &args.session {
        Some(id) => id.clone(),
        None => match root.latest_session() {
            Ok(Some(id)) => id,
            Ok(None) => return nothing(args.json, "there are no sessions in this agent root yet"),
            Err(e) => return store_error(e),
        },
    };
    let state = match crate::agent::read_session(&root, &id) {
        Ok(s) => s,
        Err(e) => return usage(format!("cannot read session {id}: {e}")),
    };
    let Some(job) = state.pending_review() else {
        return nothing(args.json, &format!("nothing to review in session {id}"));
    };
    let Some(mut bundle) = job.bundle.clone() else {
        return nothing(args.json, &format!("nothing to review in session {id}"));
    };
    let job_id = job.job_id.clone();
    let decides = !args.accept.is_empty() || !args.reject.is_empty() || args.accept_all;
    if decides || args.apply {
        let mut ops = Vec::new();
        if decides {
            ops.push(Op::Decide {
                job_id: job_id.clone(),
                accept: expand(&bundle, &args.accept),
                reject: expand(&bundle, &args.reject),
                accept_all: args.accept_all,
            });
        }
        if args.apply {
            ops.push(Op::Apply {
                job_id: job_id.clone(),
            });
        }
        let ctx = match engine_context(
            global,
            &args.root,
            SessionChoice::Resume(id),
            false,
            (root, Vec::new()),
        ) {
            Ok(c) => c,
            Err(exit) => return exit,
        };
        let mut latest: Option<DiffBundle> = None;
        let exit = drive_ops(ctx, ops, false, |event| match &event.body {
            EventBody::ReviewUpdated { unknown, .. } if !unknown.is_empty() => Some(Exit::Usage),
            EventBody::ReviewUpdated { bundle, .. } => {
                latest = Some(bundle.clone());
                (!args.apply).then_some(Exit::Ok)
            }
            EventBody::ApplyCompleted { bundle, .. } => {
                latest = Some(bundle.clone());
                Some(Exit::Ok)
            }
            EventBody::ApplyFailed { code, .. } => {
                Some(if *code == crate::protocol::ApplyFailure::Conflict {
                    Exit::Conflict
                } else {
                    Exit::Failed
                })
            }
            _ => None,
        });
        if let Some(b) = latest {
            bundle = b;
        }
        if exit != Exit::Ok {
            return exit;
        }
    }
    print(&bundle, args.json);
    Exit::Ok
}

/// File paths given to --accept/--reject stand for all of their hunks.
fn expand(bundle: &DiffBundle, items: &[String]) -> Vec<String> {
    items
        .iter()
        .flat_map(
            |item| match bundle.files.iter().find(|f| &f.file_path == item) {
                Some(file) => file.hunks.iter().map(|h| h.hunk_id.clone()).collect(),
                None => vec![item.clone()],
            },
        )
        .collect()
}

fn print(bundle: &DiffBundle, json: bool) {
    if json {
        match serde_json::to_string_pretty(bundle) {
            Ok(text) => println!("{text}"),
            Err(e) => eprintln!("agent-tui: {e}"),
        }
    } else {
        print!("{}", render_bundle(bundle, colour()));
    }
}

fn nothing(json: bool, message: &str) -> Exit {
    if json {
        println!("null");
    }
    eprintln!("{message}");
    Exit::Ok
}
