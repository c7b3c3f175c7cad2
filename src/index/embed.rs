//! Optional embeddings (`[index] embedding_model`): a local static-embedding
//! model folder in model2vec's layout (`tokenizer.json`,
//! `model.safetensors`, `config.json`), read from that folder only, never
//! downloaded. A file's vector embeds its path, the names it defines and its
//! first lines; a query's is compared by cosine, and the two rankings are
//! fused (reciprocal rank fusion) with the lexical one leading.

use std::path::Path;

use model2vec_rs::model::StaticModel;

/// Characters of a file's text that go into its vector, after its path
/// and names.
const TEXT_CHARS: usize = 2000;
/// Files the cosine ranking contributes, at most.
pub const NEAREST: usize = 100;
/// Reciprocal rank fusion's constant, and the meaning's weight beside the
/// words' (1.0).
const RRF_K: f32 = 60.0;
const MEANING_WEIGHT: f32 = 0.5;

pub struct Embedder {
    model: StaticModel,
    /// The folder and its model file's size and time: another model, or
    /// the same one changed, rebuilds the index.
    pub fingerprint: String,
}

impl Embedder {
    /// The model in `dir`; an error names the file and what is wrong.
    pub fn load(dir: &Path) -> Result<Embedder, String> {
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))
        };
        let (tokenizer, weights, config) = (
            read("tokenizer.json")?,
            read("model.safetensors")?,
            read("config.json")?,
        );
        let stamp = std::fs::metadata(dir.join("model.safetensors"))
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        let model = StaticModel::from_bytes(tokenizer, &weights, config, Some(true))
            .map_err(|e| format!("{}: not a model2vec model: {e}", dir.display()))?;
        Ok(Embedder {
            model,
            fingerprint: format!("{}:{}:{stamp}", dir.display(), weights.len()),
        })
    }

    pub fn dim(&self) -> usize {
        self.model.dim()
    }

    /// The unit vector of `text`.
    pub fn embed(&self, text: &str) -> Vec<f32> {
        self.model.encode_single(text)
    }
}

/// What a file's vector is made of: its path's words, the names it
/// defines, its first lines.
pub fn file_text(path: &str, names: &[&str], body: &str) -> String {
    let mut text = path.replace(['/', '_', '-', '.'], " ");
    for name in names {
        text.push(' ');
        text.push_str(name);
    }
    text.push('\n');
    text.extend(body.chars().take(TEXT_CHARS));
    text
}

pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Fuses a lexical order with a nearest-by-meaning order (file, cosine):
/// each file scores `1/(k + rank)` in the first plus half that in the
/// second; returns the fused order (file, score) and the cosine of each
/// file the second named.
pub fn fuse(lexical: &[(u32, f32)], nearest: &[(u32, f32)]) -> Vec<(u32, f32)> {
    let mut fused: std::collections::HashMap<u32, f32> = std::collections::HashMap::new();
    for (rank, (doc, _)) in lexical.iter().enumerate() {
        *fused.entry(*doc).or_default() += 1.0 / (RRF_K + rank as f32 + 1.0);
    }
    for (rank, (doc, _)) in nearest.iter().enumerate() {
        *fused.entry(*doc).or_default() += MEANING_WEIGHT / (RRF_K + rank as f32 + 1.0);
    }
    let mut out: Vec<(u32, f32)> = fused.into_iter().collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_lead_and_meaning_adds() {
        let lexical = [(1, 9.0), (2, 5.0), (3, 1.0)];
        let nearest = [(3, 0.9), (4, 0.8)];
        let fused = fuse(&lexical, &nearest);
        let order: Vec<u32> = fused.iter().map(|f| f.0).collect();
        assert_eq!(
            order[0], 3,
            "first by meaning and third by words: {fused:?}"
        );
        assert!(order.contains(&4));
        assert_eq!(order.len(), 4);
        assert_eq!(
            file_text("src/fs_ops.rs", &["read"], "x"),
            "src fs ops rs read\nx"
        );
    }
}
