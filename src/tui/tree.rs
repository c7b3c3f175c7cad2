//! The file tree as a pure model: a flat list of visible nodes (with depth)
//! that expands directories lazily, honours `.gitignore`, never enters
//! `.git/`, and keeps a selection. No rendering here.

use std::path::{Path, PathBuf};

use ignore::WalkBuilder;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    Dir { expanded: bool },
    File,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Relative to the root, `/`-separated.
    pub rel: String,
    pub name: String,
    pub depth: usize,
    pub kind: NodeKind,
}

#[derive(Debug, Clone)]
pub struct Tree {
    root: PathBuf,
    nodes: Vec<Node>,
    selected: usize,
}

/// The entries of one directory: directories first, then files, by name.
fn children(root: &Path, rel: &str, depth: usize) -> Vec<Node> {
    let dir = if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel)
    };
    let mut out: Vec<Node> = WalkBuilder::new(&dir)
        .max_depth(Some(1))
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| !e.file_name().eq_ignore_ascii_case(".git"))
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.depth() == 1)
        .map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            Node {
                rel: if rel.is_empty() {
                    name.clone()
                } else {
                    format!("{rel}/{name}")
                },
                name,
                depth,
                kind: if is_dir {
                    NodeKind::Dir { expanded: false }
                } else {
                    NodeKind::File
                },
            }
        })
        .collect();
    out.sort_by(|a, b| {
        let dir = |n: &Node| matches!(n.kind, NodeKind::Dir { .. });
        dir(b)
            .cmp(&dir(a))
            .then_with(|| a.name.to_lowercase().cmp(&b.name.to_lowercase()))
    });
    out
}

impl Tree {
    /// The root's top level (one directory read).
    pub fn open(root: &Path) -> Tree {
        Tree {
            root: root.to_path_buf(),
            nodes: children(root, "", 0),
            selected: 0,
        }
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub fn selected_index(&self) -> usize {
        self.selected
    }

    pub fn selected(&self) -> Option<&Node> {
        self.nodes.get(self.selected)
    }

    pub fn move_by(&mut self, delta: isize) {
        if self.nodes.is_empty() {
            return;
        }
        let last = self.nodes.len() - 1;
        self.selected = (self.selected as isize + delta).clamp(0, last as isize) as usize;
    }

    /// Expands a collapsed directory (reading it now) or collapses it.
    pub fn toggle(&mut self) {
        let Some(node) = self.nodes.get(self.selected).cloned() else {
            return;
        };
        let NodeKind::Dir { expanded } = node.kind else {
            return;
        };
        if expanded {
            let end = self.subtree_end(self.selected);
            self.nodes.drain(self.selected + 1..end);
        } else {
            let kids = children(&self.root, &node.rel, node.depth + 1);
            self.nodes
                .splice(self.selected + 1..self.selected + 1, kids);
        }
        if let Some(n) = self.nodes.get_mut(self.selected) {
            n.kind = NodeKind::Dir {
                expanded: !expanded,
            };
        }
    }

    /// Index after the last descendant of node `i`.
    fn subtree_end(&self, i: usize) -> usize {
        let depth = self.nodes[i].depth;
        self.nodes[i + 1..]
            .iter()
            .position(|n| n.depth <= depth)
            .map_or(self.nodes.len(), |p| i + 1 + p)
    }

    /// Selects the next visible node whose name starts with `prefix`
    /// (case-insensitive), searching from the one after the selection.
    pub fn jump(&mut self, prefix: &str) {
        let prefix = prefix.to_lowercase();
        let n = self.nodes.len();
        for step in 1..=n {
            let i = (self.selected + step) % n;
            if self.nodes[i].name.to_lowercase().starts_with(&prefix) {
                self.selected = i;
                return;
            }
        }
    }

    /// First visible row for a window of `height` rows keeping the selection in view.
    pub fn offset(&self, height: usize) -> usize {
        if height == 0 || self.selected < height {
            0
        } else {
            self.selected + 1 - height
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        for f in [
            "src/main.rs",
            "src/lib.rs",
            "src/deep/x.rs",
            "README.md",
            "target/junk.o",
            ".git/HEAD",
            ".github/ci.yml",
        ] {
            std::fs::create_dir_all(p.join(f).parent().unwrap()).unwrap();
            std::fs::write(p.join(f), "x").unwrap();
        }
        std::fs::write(p.join(".gitignore"), "target/\n").unwrap();
        dir
    }

    fn names(t: &Tree) -> Vec<String> {
        t.nodes()
            .iter()
            .map(|n| format!("{}{}", "  ".repeat(n.depth), n.name))
            .collect()
    }

    #[test]
    fn top_level_is_sorted_dirs_first_without_ignored_or_git() {
        let dir = fixture();
        let t = Tree::open(dir.path());
        assert_eq!(names(&t), [".github", "src", ".gitignore", "README.md"]);
    }

    #[test]
    fn expand_collapse_and_jump() {
        let dir = fixture();
        let mut t = Tree::open(dir.path());
        t.jump("s");
        assert_eq!(t.selected().unwrap().name, "src");
        t.toggle();
        assert_eq!(
            names(&t),
            [
                ".github",
                "src",
                "  deep",
                "  lib.rs",
                "  main.rs",
                ".gitignore",
                "README.md"
            ]
        );
        t.move_by(1);
        t.toggle();
        assert_eq!(t.nodes()[3].rel, "src/deep/x.rs");
        t.move_by(-1);
        t.toggle();
        assert_eq!(names(&t), [".github", "src", ".gitignore", "README.md"]);
        t.jump("r");
        assert_eq!(t.selected().unwrap().name, "README.md");
        t.move_by(10);
        assert_eq!(t.selected_index(), 3);
        assert_eq!(t.offset(2), 2);
    }
}
