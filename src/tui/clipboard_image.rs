//! The clipboard's image, for Ctrl+V (SPEC 20): read through `wl-paste`
//! under Wayland or `xclip` under X11, whichever is installed for the
//! session's display; a clear message names what is missing, or what the
//! clipboard holds instead of an image.

use std::path::PathBuf;
use std::time::Duration;

use tokio::process::Command;

/// Longest wait for a clipboard tool.
const WAIT: Duration = Duration::from_secs(3);
/// The image types asked for, in order of preference.
const TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// A program on `PATH`, if it is there.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// The clipboard's image: its bytes and its media type.
pub async fn read() -> Result<(Vec<u8>, &'static str), String> {
    let wayland = std::env::var_os("WAYLAND_DISPLAY").is_some();
    let x11 = std::env::var_os("DISPLAY").is_some();
    let wl = on_path("wl-paste");
    let xclip = on_path("xclip");
    match (wl, xclip) {
        (Some(wl), _) if wayland => {
            from(&wl, &["--list-types"], |t| {
                vec!["--no-newline", "--type", t]
            })
            .await
        }
        (_, Some(x)) if x11 => {
            from(
                &x,
                &["-selection", "clipboard", "-t", "TARGETS", "-o"],
                |t| vec!["-selection", "clipboard", "-t", t, "-o"],
            )
            .await
        }
        (None, None) => Err(
            "Ctrl+V reads an image from the clipboard through wl-paste (Wayland) or xclip (X11), \
             and neither is installed: install wl-clipboard or xclip"
                .into(),
        ),
        (Some(_), None) => Err("wl-paste is installed, but WAYLAND_DISPLAY is not set: \
             this terminal is not in a Wayland session (install xclip for X11)"
            .into()),
        (_, Some(_)) => Err(
            "xclip is installed, but DISPLAY is not set: this terminal has no X display \
             (over ssh, paste the image's path instead)"
                .into(),
        ),
    }
}

/// Lists the clipboard's types with `list`, then reads the first image type.
async fn from(
    tool: &std::path::Path,
    list: &[&str],
    get: impl Fn(&'static str) -> Vec<&'static str>,
) -> Result<(Vec<u8>, &'static str), String> {
    let name = tool
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let listed = run(tool, list, &name).await?;
    let listed = String::from_utf8_lossy(&listed);
    let Some(kind) = TYPES
        .into_iter()
        .find(|t| listed.lines().any(|l| l.trim() == *t))
    else {
        let held: Vec<&str> = listed
            .lines()
            .map(str::trim)
            .filter(|l| l.contains('/'))
            .take(4)
            .collect();
        return Err(if held.is_empty() {
            "the clipboard is empty".into()
        } else {
            format!(
                "the clipboard holds no image (it holds {})",
                held.join(", ")
            )
        });
    };
    let bytes = run(tool, &get(kind), &name).await?;
    Ok((bytes, kind))
}

async fn run(tool: &std::path::Path, args: &[&str], name: &str) -> Result<Vec<u8>, String> {
    let child = Command::new(tool)
        .args(args)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(WAIT, child)
        .await
        .map_err(|_| format!("{name} did not answer within {} s", WAIT.as_secs()))?
        .map_err(|e| format!("{name} could not run: {e}"))?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        let said = said.trim();
        return Err(if said.is_empty() {
            format!("{name} failed ({})", out.status)
        } else {
            format!("{name}: {said}")
        });
    }
    Ok(out.stdout)
}
