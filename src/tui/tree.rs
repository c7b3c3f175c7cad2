//! The file tree as a pure model: a flat list of visible nodes (with depth)
//! that expands folders lazily (their entries come from the engine's
//! `folder` query, in the order it gives: folders first, `.gitignore`d ones
//! and `.git/` left out) and keeps a selection. No rendering, no I/O here.

use crate::protocol::{EntryKind, FolderEntry, ScopeInfo};

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

#[derive(Debug, Clone, Default)]
pub struct Tree {
    nodes: Vec<Node>,
    selected: usize,
}

/// A folder's entries as nodes at `depth`.
fn nodes(entries: Vec<FolderEntry>, depth: usize) -> Vec<Node> {
    entries
        .into_iter()
        .map(|e| Node {
            rel: e.path,
            name: e.name,
            depth,
            note: None,
            kind: match e.kind {
                EntryKind::Dir => NodeKind::Dir { expanded: false },
                EntryKind::File => NodeKind::File,
            },
        })
        .collect()
}

impl Tree {
    /// The tree of a root with `scopes`, its top still to load: the root's
    /// entries, or with folders added beside the root, each scope as a
    /// top-level node (the root's open). The folder to load first is
    /// returned with the depth of its entries.
    pub fn new(scopes: &[ScopeInfo]) -> (Tree, (String, usize)) {
        if scopes.len() <= 1 {
            return (Tree::default(), (String::new(), 0));
        }
        let nodes = scopes
            .iter()
            .map(|scope| Node {
                rel: if scope.primary {
                    String::new()
                } else {
                    scope.id.clone()
                },
                name: scope.id.clone(),
                depth: 0,
                kind: NodeKind::Dir {
                    expanded: scope.primary,
                },
                note: (scope.access == "read_only").then_some("read-only"),
            })
            .collect();
        (Tree { nodes, selected: 0 }, (String::new(), 1))
    }

    /// A tree of one folder's entries (tests).
    pub fn of(entries: Vec<FolderEntry>) -> Tree {
        Tree {
            nodes: nodes(entries, 0),
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

    /// A folder's entries, loaded: shown under it if it is still expanded
    /// (the root's top, at depth 0, fills the tree). Entries it showed
    /// already keep what is open under them; new ones are added, gone ones
    /// dropped, so listing a folder again refreshes it.
    pub fn children_loaded(&mut self, rel: &str, depth: usize, entries: Vec<FolderEntry>) {
        let kids = nodes(entries, depth);
        let (start, end) = if rel.is_empty() && depth == 0 {
            (0, self.nodes.len())
        } else {
            let Some(i) = self
                .nodes
                .iter()
                .position(|n| n.rel == rel && n.depth + 1 == depth)
            else {
                return;
            };
            if self.nodes[i].kind != (NodeKind::Dir { expanded: true }) {
                return;
            }
            (i + 1, self.subtree_end(i))
        };
        self.merge(start..end, depth, kids);
    }

    /// Puts `kids` (entries at `depth`) in place of the nodes in `range`;
    /// an entry shown already keeps its node and what is under it. The
    /// selection stays on its node when that is still there.
    fn merge(&mut self, range: std::ops::Range<usize>, depth: usize, kids: Vec<Node>) {
        let selected = self.selected().map(|n| n.rel.clone());
        let mut shown: Vec<Vec<Node>> = Vec::new();
        for node in self.nodes.drain(range.clone()) {
            match shown.last_mut() {
                Some(group) if node.depth > depth => group.push(node),
                _ => shown.push(vec![node]),
            }
        }
        let is_dir = |n: &Node| matches!(n.kind, NodeKind::Dir { .. });
        let mut merged = Vec::new();
        for kid in kids {
            match shown
                .iter()
                .position(|g| g[0].rel == kid.rel && is_dir(&g[0]) == is_dir(&kid))
            {
                Some(i) => merged.extend(shown.swap_remove(i)),
                None => merged.push(kid),
            }
        }
        self.nodes.splice(range.start..range.start, merged);
        let last = self.nodes.len().saturating_sub(1);
        self.selected = selected
            .and_then(|rel| self.nodes.iter().position(|n| n.rel == rel))
            .unwrap_or(self.selected.min(last));
    }

    /// The folders to list again to refresh the tree, each with the depth
    /// of its entries: the root's top and every open folder.
    pub fn refreshes(&self) -> Vec<(String, usize)> {
        let root_node = self.nodes.iter().any(|n| n.rel.is_empty() && n.depth == 0);
        let mut out = Vec::new();
        if !root_node {
            out.push((String::new(), 0));
        }
        for n in &self.nodes {
            if n.kind == (NodeKind::Dir { expanded: true }) {
                out.push((n.rel.clone(), n.depth + 1));
            }
        }
        out
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

    fn entry(path: &str, dir: bool) -> FolderEntry {
        FolderEntry {
            path: path.into(),
            name: path.rsplit('/').next().unwrap_or(path).into(),
            kind: if dir { EntryKind::Dir } else { EntryKind::File },
        }
    }

    fn top() -> Vec<FolderEntry> {
        vec![
            entry(".github", true),
            entry("src", true),
            entry(".gitignore", false),
            entry("README.md", false),
        ]
    }

    fn src() -> Vec<FolderEntry> {
        vec![
            entry("src/deep", true),
            entry("src/lib.rs", false),
            entry("src/main.rs", false),
        ]
    }

    fn names(t: &Tree) -> Vec<String> {
        t.nodes()
            .iter()
            .map(|n| format!("{}{}", "  ".repeat(n.depth), n.name))
            .collect()
    }

    #[test]
    fn expand_collapse_and_jump() {
        let (mut t, (rel, depth)) = Tree::new(&[]);
        t.children_loaded(&rel, depth, top());
        t.jump("s");
        assert_eq!(t.selected().unwrap().name, "src");
        let (rel, depth) = t.toggle().unwrap();
        assert_eq!((rel.as_str(), depth), ("src", 1));
        t.children_loaded(&rel, depth, src());
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
        // Entries that come again are not placed twice.
        t.children_loaded("src", 1, src());
        assert_eq!(t.nodes().len(), 7);
        assert!(t.toggle().is_none(), "collapsing loads nothing");
        assert_eq!(names(&t), [".github", "src", ".gitignore", "README.md"]);
        t.jump("r");
        assert_eq!(t.selected().unwrap().name, "README.md");
        t.move_by(10);
        assert_eq!(t.selected_index(), 3);
        assert_eq!(t.offset(2), 2);
    }

    #[test]
    fn listing_a_folder_again_adds_new_entries_and_keeps_open_ones() {
        let (mut t, (rel, depth)) = Tree::new(&[]);
        t.children_loaded(&rel, depth, top());
        t.jump("s");
        let (rel, depth) = t.toggle().unwrap();
        t.children_loaded(&rel, depth, src());
        t.jump("m");
        assert_eq!(t.selected().unwrap().name, "main.rs");
        assert_eq!(t.refreshes(), [("".to_string(), 0), ("src".to_string(), 1)]);
        // A file made at the top (by an apply, a command, by hand), one gone.
        let mut again = top();
        again.insert(3, entry("copy.py", false));
        again.retain(|e| e.path != ".gitignore");
        t.children_loaded("", 0, again);
        assert_eq!(
            names(&t),
            [
                ".github",
                "src",
                "  deep",
                "  lib.rs",
                "  main.rs",
                "copy.py",
                "README.md"
            ]
        );
        assert_eq!(t.selected().unwrap().name, "main.rs", "the selection stays");
        let mut more = src();
        more.push(entry("src/new.rs", false));
        t.children_loaded("src", 1, more);
        assert_eq!(t.nodes()[5].rel, "src/new.rs");
    }

    #[test]
    fn scopes_are_top_level_nodes_and_read_only_ones_say_so() {
        let scope = |id: &str, primary: bool, access: &str| ScopeInfo {
            id: id.into(),
            path: format!("/x/{id}"),
            access: access.into(),
            primary,
        };
        let (mut t, (rel, depth)) = Tree::new(&[
            scope("@root", true, "read_write"),
            scope("@docs", false, "read_only"),
        ]);
        assert_eq!((rel.as_str(), depth), ("", 1));
        t.children_loaded(&rel, depth, top());
        assert_eq!(
            names(&t),
            [
                "@root",
                "  .github",
                "  src",
                "  .gitignore",
                "  README.md",
                "@docs"
            ]
        );
        assert_eq!(t.nodes()[5].note, Some("read-only"));
        t.move_by(5);
        let (rel, depth) = t.toggle().unwrap();
        assert_eq!((rel.as_str(), depth), ("@docs", 1));
        t.children_loaded(&rel, depth, vec![entry("@docs/guide.md", false)]);
        assert_eq!(t.nodes()[6].rel, "@docs/guide.md");
        assert_eq!(t.nodes()[6].depth, 1);
    }
}
