//! The file graph: a file points at the files defining the names it refers
//! to (a name defined in many files counts little, one defined in over
//! eight not at all), ranked by PageRank, personalized for `repo_map`'s focus.

use std::collections::HashMap;

use super::model::{DocMeta, Symbol};

/// A name defined in more files than this says nothing about which one is meant.
const MAX_DEFINERS: usize = 8;
/// Names this short (`id`, `ok`) are everywhere.
const MIN_NAME: usize = 3;
const DAMPING: f32 = 0.85;
const ITERATIONS: usize = 30;

/// Weighted edges (from, to, weight), sorted by `from`.
pub fn edges(
    docs: &[DocMeta],
    symbols: &[Symbol],
    references: &[HashMap<String, u32>],
) -> Vec<(u32, u32, f32)> {
    let mut definers: HashMap<&str, Vec<u32>> = HashMap::new();
    for s in symbols {
        if s.name.len() >= MIN_NAME {
            let list = definers.entry(s.name.as_str()).or_default();
            if list.last() != Some(&s.doc) {
                list.push(s.doc);
            }
        }
    }
    let mut out = Vec::new();
    for (from, refs) in references.iter().enumerate() {
        let from = u32::try_from(from).unwrap_or(u32::MAX);
        let mut weights: HashMap<u32, f32> = HashMap::new();
        for (name, count) in refs {
            let Some(targets) = definers.get(name.as_str()) else {
                continue;
            };
            if targets.len() > MAX_DEFINERS {
                continue;
            }
            let share = (*count as f32).sqrt() / targets.len() as f32;
            for &to in targets {
                if to != from {
                    *weights.entry(to).or_default() += share;
                }
            }
        }
        let mut row: Vec<(u32, u32, f32)> =
            weights.into_iter().map(|(t, w)| (from, t, w)).collect();
        row.sort_unstable_by_key(|e| e.1);
        out.extend(row);
    }
    debug_assert!(docs.len() >= references.len());
    out
}

/// PageRank over `n` files, 1.0 on average. `focus`: the files a
/// personalized rank starts from (and jumps back to); `None`: all alike.
pub fn pagerank(n: usize, edges: &[(u32, u32, f32)], focus: Option<&[u32]>) -> Vec<f32> {
    if n == 0 {
        return Vec::new();
    }
    let mut out_weight = vec![0f32; n];
    for &(from, _, w) in edges {
        out_weight[from as usize] += w;
    }
    let mut jump = vec![1.0 / n as f32; n];
    if let Some(focus) = focus.filter(|f| !f.is_empty()) {
        jump.iter_mut().for_each(|j| *j = 0.0);
        for &f in focus {
            if let Some(j) = jump.get_mut(f as usize) {
                *j += 1.0 / focus.len() as f32;
            }
        }
    }
    let mut rank = jump.clone();
    let mut next = vec![0f32; n];
    for _ in 0..ITERATIONS {
        let dangling: f32 = (0..n)
            .filter(|&i| out_weight[i] == 0.0)
            .map(|i| rank[i])
            .sum();
        for (i, slot) in next.iter_mut().enumerate() {
            *slot = (1.0 - DAMPING + DAMPING * dangling) * jump[i];
        }
        for &(from, to, w) in edges {
            let f = from as usize;
            next[to as usize] += DAMPING * rank[f] * w / out_weight[f];
        }
        std::mem::swap(&mut rank, &mut next);
    }
    let scale = n as f32;
    rank.iter_mut().for_each(|r| *r *= scale);
    rank
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_everyone_uses_ranks_first() {
        // 1, 2 and 3 point at 0; 0 points at 1.
        let edges = [(0, 1, 1.0), (1, 0, 1.0), (2, 0, 1.0), (3, 0, 1.0)];
        let rank = pagerank(4, &edges, None);
        assert!(rank[0] > rank[1] && rank[1] > rank[2], "{rank:?}");
        assert!((rank.iter().sum::<f32>() - 4.0).abs() < 0.01);
        let focused = pagerank(4, &edges, Some(&[3]));
        assert!(focused[3] > rank[3], "{focused:?}");
    }
}
