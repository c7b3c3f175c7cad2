//! Images that go with an instruction (SPEC 20): read (bytes a front end
//! sent, or a file of the root through its sandbox), checked, kept in the
//! store by the sha256 of their bytes, and made messages for the job's
//! provider; a resumed session's images are read back from the store, and
//! a model that cannot see is told so before any request.

use std::sync::Arc;

use super::EngineContext;
use super::job::{Job, Outcome};
use crate::llm::{Image, Message, Sight};
use crate::protocol::image::{MAX_IMAGE_BYTES, MAX_IMAGES, decode_base64};
use crate::protocol::{EngineError, ImageError, ImageInput, ImageMeta, JobFailure};

/// An image read and checked, with its bytes (`None`: in the store, for
/// a queued job rebuilt after its process ended).
#[derive(Debug, Clone)]
pub(super) struct Attached {
    pub meta: ImageMeta,
    pub data: Option<Arc<Vec<u8>>>,
}

impl Attached {
    /// Images known by name only; their bytes are read from the store.
    pub fn named(metas: &[ImageMeta]) -> Vec<Attached> {
        metas
            .iter()
            .map(|meta| Attached {
                meta: meta.clone(),
                data: None,
            })
            .collect()
    }
}

/// Reads and checks what a front end attached; the first image that is
/// refused refuses the instruction, with its reason.
pub(super) fn read(
    ctx: &EngineContext,
    inputs: &[ImageInput],
) -> Result<Vec<Attached>, EngineError> {
    if inputs.len() > MAX_IMAGES {
        let e = ImageError::TooMany {
            given: inputs.len(),
        };
        return Err(EngineError::invalid(e.to_string()));
    }
    inputs
        .iter()
        .map(|input| read_one(ctx, input).map_err(|e| EngineError::invalid(e.to_string())))
        .collect()
}

pub(super) fn read_one(ctx: &EngineContext, input: &ImageInput) -> Result<Attached, ImageError> {
    let (name, data) = match input {
        ImageInput::Data {
            name, data_base64, ..
        } => {
            let name = file_name(name);
            // Four base64 characters are three bytes: a body far over the
            // limit is refused before it is decoded.
            let approx = data_base64.len() as u64 / 4 * 3;
            if approx > MAX_IMAGE_BYTES + 3 {
                return Err(ImageError::TooLarge {
                    name,
                    bytes: approx,
                    limit: MAX_IMAGE_BYTES,
                });
            }
            let data = decode_base64(&name, data_base64)?;
            (name, data)
        }
        ImageInput::Path { path } => (path.clone(), read_file(ctx, path)?),
    };
    let meta = ImageMeta::read(&name, &data)?;
    Ok(Attached {
        meta,
        data: Some(Arc::new(data)),
    })
}

/// An image file the user named outside any root (`exec --image`, a
/// pasted path): its size is checked before it is read; its format is
/// checked by the engine like any other image's.
pub fn image_from_file(path: &std::path::Path) -> Result<(ImageInput, ImageMeta), ImageError> {
    let name = path.display().to_string();
    let unreadable = |e: std::io::Error| ImageError::Unreadable {
        name: name.clone(),
        why: format!("cannot be read ({e})"),
    };
    let meta = std::fs::metadata(path).map_err(unreadable)?;
    if !meta.is_file() {
        return Err(ImageError::Unreadable {
            name,
            why: "is not a file".into(),
        });
    }
    if meta.len() > MAX_IMAGE_BYTES {
        return Err(ImageError::TooLarge {
            name,
            bytes: meta.len(),
            limit: MAX_IMAGE_BYTES,
        });
    }
    let data = std::fs::read(path).map_err(unreadable)?;
    let short = file_name(&name);
    let meta = ImageMeta::read(&short, &data)?;
    Ok((ImageInput::data(&short, &data), meta))
}

/// A name without the folders a client's path put before it.
fn file_name(name: &str) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or(name).trim();
    if last.is_empty() {
        "image".into()
    } else {
        last.chars().take(120).collect()
    }
}

/// A file of the root (or a scope), through the sandbox; its size is
/// checked before it is read.
fn read_file(ctx: &EngineContext, path: &str) -> Result<Vec<u8>, ImageError> {
    let unreadable = |why: String| ImageError::Unreadable {
        name: path.to_string(),
        why,
    };
    let at = ctx
        .workspace
        .resolve(path)
        .map_err(|e| unreadable(e.to_string()))?;
    let meta = ctx
        .workspace
        .metadata(&at)
        .map_err(|e| unreadable(format!("cannot be read ({e})")))?;
    if !meta.is_file() {
        return Err(unreadable("is not a file".into()));
    }
    if meta.len() > MAX_IMAGE_BYTES {
        return Err(ImageError::TooLarge {
            name: path.to_string(),
            bytes: meta.len(),
            limit: MAX_IMAGE_BYTES,
        });
    }
    ctx.workspace
        .read_opt(&at)
        .map_err(|e| unreadable(format!("cannot be read ({e})")))?
        .ok_or_else(|| unreadable("does not exist".into()))
}

/// Keeps the images' bytes in the store, off the engine's task (a queued
/// job rebuilt after a crash, and a resumed session, read them there).
pub(super) fn keep(ctx: &EngineContext, images: &[Attached]) {
    let Some(state) = &ctx.state else {
        return;
    };
    if images.is_empty() {
        return;
    }
    let store = state.store.clone();
    let images = images.to_vec();
    tokio::task::spawn_blocking(move || {
        let now = crate::store::session::now();
        for image in images {
            let Some(data) = &image.data else { continue };
            if let Err(e) = store.keep_image(&image.meta, data, &now) {
                tracing::warn!("image {} was not kept: {e}", image.meta.name);
            }
        }
    });
}

/// Fills in the bytes of the conversation's images from the store (a
/// session read back from its records names them only).
pub(super) async fn fill(ctx: &EngineContext, messages: &mut [Message]) {
    let Some(state) = &ctx.state else {
        return;
    };
    let wanted: Vec<String> = messages
        .iter()
        .filter_map(|m| match m {
            Message::Image(i) if i.data.is_none() => Some(i.meta.sha256.clone()),
            _ => None,
        })
        .collect();
    if wanted.is_empty() {
        return;
    }
    let store = state.store.clone();
    let found = tokio::task::spawn_blocking(move || {
        wanted
            .into_iter()
            .filter_map(|sha| Some((sha.clone(), store.image(&sha).ok().flatten()?)))
            .collect::<std::collections::HashMap<_, _>>()
    })
    .await
    .unwrap_or_default();
    for m in messages {
        if let Message::Image(i) = m
            && i.data.is_none()
        {
            i.data = found.get(&i.meta.sha256).map(|d| Arc::new(d.clone()));
        }
    }
}

impl Job<'_> {
    /// Before any request: a model that cannot see fails a job that brings
    /// images (naming the model and who said so); images earlier in the
    /// session are then named to it instead.
    pub(super) async fn check_sight(&mut self) -> Option<Outcome> {
        let earlier = self
            .conv
            .messages()
            .iter()
            .any(|m| matches!(m, Message::Image(_)));
        if self.spec.images.is_empty() && !earlier {
            return None;
        }
        let provider = self.provider()?;
        let Sight::Blind { how } = provider.sight().await else {
            return None;
        };
        if !self.spec.images.is_empty() {
            let error = format!(
                "model {} of provider {} cannot see images ({how}); send the instruction \
                 without them, or pick a model that reads images (/model, --provider)",
                provider.model(),
                provider.name()
            );
            return Some(Outcome::failed(error, JobFailure::NoVision));
        }
        let unseen: Vec<Message> = self
            .conv
            .messages()
            .iter()
            .map(|m| match m {
                Message::Image(i) => Message::User(i.unseen()),
                other => other.clone(),
            })
            .collect();
        self.conv.replace(unseen);
        None
    }

    /// The job's images as messages, counted by its provider's rule.
    pub(super) fn image_messages(&self) -> Vec<Message> {
        let rule = self
            .provider()
            .map_or(crate::protocol::ImageRule::Estimate, |p| p.images_counted());
        self.spec
            .images
            .iter()
            .map(|a| {
                Message::Image(Image {
                    meta: a.meta.clone(),
                    tokens: rule.tokens(a.meta.width, a.meta.height),
                    exact: rule.exact(),
                    data: a.data.clone(),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_lose_their_folders() {
        assert_eq!(file_name("/home/u/shot.png"), "shot.png");
        assert_eq!(file_name("C:\\pics\\a.jpg"), "a.jpg");
        assert_eq!(file_name(""), "image");
    }
}
