//! The file tree as a pure model: a flat list of visible nodes (with depth)
//! that expands directories lazily, honours `.gitignore`, never enters
//! `.git/`, and keeps a selection. No rendering here.

use crate::workspace::{Access, EntryKind, Workspace, walk_beneath};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    Dir { expanded: bool },
    File,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// As tools spell it: relative to the agent root, or `@scope/…`.
    pub rel: String,
    pub name: String,
    pub depth: usize,
    pub kind: NodeKind,
    /// Shown dimmed after the name (a read-only scope says so).
    pub note: Option<&'static str>,
}

#[derive(Debug, Clone)]
pub struct Tree {
    nodes: Vec<Node>,
    selected: usize,
}

/// The entries of one directory: directories first, then files, by name.
/// Read through the root's directory handle (a folder swapped for a link
/// shows nothing from outside). File I/O: the event loop runs it on the
/// blocking pool (`Load::TreeDir`), the model only places the result.
pub fn children(ws: &Workspace, rel: &str, depth: usize) -> Vec<Node> {
    let mut out: Vec<Node> = Vec::new();
    if let Ok(start) = ws.resolve(rel) {
        let _ = walk_beneath(ws, &start, true, 1, &mut |met| {
            let name = met.rel.rsplit('/').next().unwrap_or(&met.rel).to_string();
            out.push(Node {
                rel: met.rel,
                name,
                depth,
                note: None,
                kind: if met.kind == EntryKind::Dir {
                    NodeKind::Dir { expanded: false }
                } else {
                    NodeKind::File
                },
            });
            true
        });
    }
    out.sort_by(|a, b| {
        let dir = |n: &Node| matches!(n.kind, NodeKind::Dir { .. });
        dir(b)
            .cmp(&dir(a))
            .then_with(|| a.name.to_lowercase().cmp(&b.name.to_lowercase()))
    });
    out
}

impl Tree {
    /// The root's top level (one directory read). With folders added
    /// beside the root, each scope is a top-level node and the root's is
    /// open.
    pub fn open(ws: &Workspace) -> Tree {
        if ws.scopes().len() == 1 {
            return Tree {
                nodes: children(ws, "", 0),
                selected: 0,
            };
        }
        let mut nodes = Vec::new();
        for scope in ws.scopes() {
            nodes.push(Node {
                rel: scope.spell(""),
                name: scope.to_string(),
                depth: 0,
                kind: NodeKind::Dir {
                    expanded: scope.primary(),
                },
                note: (scope.access == Access::ReadOnly).then_some("read-only"),
            });
            if scope.primary() {
                nodes.extend(children(ws, "", 1));
            }
        }
        Tree { nodes, selected: 0 }
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

    /// Collapses the selected directory, or expands it: then its entries
    /// are to be loaded, `Some((rel, depth))`, and given to `children_loaded`.
    pub fn toggle(&mut self) -> Option<(String, usize)> {
        let node = self.nodes.get(self.selected).cloned()?;
        let NodeKind::Dir { expanded } = node.kind else {
            return None;
        };
        if expanded {
            let end = self.subtree_end(self.selected);
            self.nodes.drain(self.selected + 1..end);
        }
        if let Some(n) = self.nodes.get_mut(self.selected) {
            n.kind = NodeKind::Dir {
                expanded: !expanded,
            };
        }
        (!expanded).then(|| (node.rel, node.depth + 1))
    }

    /// A directory's entries, loaded: shown under it if it is still
    /// expanded and not filled already.
    pub fn children_loaded(&mut self, rel: &str, kids: Vec<Node>) {
        let Some(i) = self.nodes.iter().position(|n| n.rel == rel) else {
            return;
        };
        let filled = self.subtree_end(i) > i + 1;
        if self.nodes[i].kind == (NodeKind::Dir { expanded: true }) && !filled {
            self.nodes.splice(i + 1..i + 1, kids);
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
        let t = Tree::open(&Workspace::open(dir.path()).unwrap());
        assert_eq!(names(&t), [".github", "src", ".gitignore", "README.md"]);
    }

    /// What the event loop does with a toggle's load.
    fn toggle(t: &mut Tree, ws: &Workspace) {
        if let Some((rel, depth)) = t.toggle() {
            t.children_loaded(&rel, children(ws, &rel, depth));
        }
    }

    #[test]
    fn expand_collapse_and_jump() {
        let dir = fixture();
        let ws = Workspace::open(dir.path()).unwrap();
        let mut t = Tree::open(&ws);
        t.jump("s");
        assert_eq!(t.selected().unwrap().name, "src");
        toggle(&mut t, &ws);
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
        toggle(&mut t, &ws);
        assert_eq!(t.nodes()[3].rel, "src/deep/x.rs");
        t.move_by(-1);
        toggle(&mut t, &ws);
        assert_eq!(names(&t), [".github", "src", ".gitignore", "README.md"]);
        t.jump("r");
        assert_eq!(t.selected().unwrap().name, "README.md");
        t.move_by(10);
        assert_eq!(t.selected_index(), 3);
        assert_eq!(t.offset(2), 2);
    }

    #[test]
    fn scopes_are_top_level_nodes_and_read_only_ones_say_so() {
        let dir = fixture();
        let docs = tempfile::tempdir().unwrap();
        std::fs::write(docs.path().join("guide.md"), "x").unwrap();
        let ws = Workspace::open_scoped(
            dir.path(),
            &[crate::workspace::ScopeSpec {
                path: docs.path().to_path_buf(),
                access: Access::ReadOnly,
            }],
        )
        .unwrap();
        let mut t = Tree::open(&ws);
        let docs_id = format!("@{}", ws.scopes()[1].id);
        assert_eq!(
            names(&t),
            [
                "@root".to_string(),
                "  .github".into(),
                "  src".into(),
                "  .gitignore".into(),
                "  README.md".into(),
                docs_id.clone()
            ]
        );
        assert_eq!(t.nodes()[5].note, Some("read-only"));
        t.move_by(5);
        toggle(&mut t, &ws);
        assert_eq!(t.nodes()[6].rel, format!("{docs_id}/guide.md"));
        assert_eq!(t.nodes()[6].depth, 1);
    }
}
