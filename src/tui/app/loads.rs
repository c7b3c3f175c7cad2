//! Scrolling and the results of work done off the UI task: previews,
//! the whole-file view, the checkpoints list and its three-way view.

use super::{App, CheckpointRow, Load, Overlay, WholeFileRow};
use crate::checkpoint::ThreeWay;
use crate::protocol::Op;
use crate::tui::highlight::StyledLine;

impl App {
    /// Scrolls the transcript up (positive) or down; 0 follows the newest text.
    pub fn scroll_by(&mut self, rows: isize) -> Vec<Op> {
        if let Overlay::Preview { scroll, lines, .. } = &mut self.overlay {
            // In a preview, "up" means towards the top of the file.
            let max = lines.len().saturating_sub(1) as isize;
            *scroll = (*scroll as isize - rows).clamp(0, max.max(0)) as usize;
            return Vec::new();
        }
        self.scroll = (self.scroll as isize + rows).max(0) as usize;
        Vec::new()
    }

    /// What a workspace-only load gave: a folder's entries go under it in
    /// the tree, hunk colours into the review.
    pub fn loaded(&mut self, done: crate::tui::Loaded) {
        match done {
            crate::tui::Loaded::TreeDir { rel, nodes } => self.tree.children_loaded(&rel, nodes),
            crate::tui::Loaded::HunkColours { job_id, colours } => {
                self.hunks_coloured(&job_id, colours)
            }
        }
    }

    pub(super) fn open_preview(&mut self, path: String) {
        self.preview_generation += 1;
        self.loads.push(Load::Preview {
            generation: self.preview_generation,
            path: path.clone(),
        });
        self.overlay = Overlay::Preview {
            path,
            lines: Vec::new(),
            scroll: 0,
            error: None,
            mark: None,
        };
    }

    /// The whole-file view of `path` arrived.
    pub fn whole_file_loaded(&mut self, path: String, rows: Vec<WholeFileRow>) {
        if let Some(review) = &mut self.review {
            review.whole_file = Some((path, rows));
        }
    }

    /// The checkpoints list arrived (newest first).
    pub fn checkpoints_loaded(&mut self, list: Vec<CheckpointRow>) {
        if let Overlay::Checkpoints { rows, .. } = &mut self.overlay {
            *rows = list;
        }
    }

    /// A checkpoint's three-way view arrived.
    pub fn three_way_loaded(&mut self, id: &str, views: Vec<ThreeWay>) {
        if let Overlay::Checkpoints {
            rows,
            cursor,
            three_way,
            file,
        } = &mut self.overlay
            && rows.get(*cursor).is_some_and(|r| r.id == id)
        {
            *three_way = Some(views);
            *file = 0;
        }
    }

    /// A preview finished loading; stale generations are dropped.
    pub fn preview_loaded(&mut self, generation: u64, result: Result<Vec<StyledLine>, String>) {
        if generation != self.preview_generation {
            return;
        }
        if let Overlay::Preview { lines, error, .. } = &mut self.overlay {
            match result {
                Ok(l) => *lines = l,
                Err(e) => *error = Some(e),
            }
        }
    }
}
