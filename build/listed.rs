//! How `build/startup.order` writes a function's name, shared by build.rs
//! and tests/startup_order.rs: v0 names with crate hashes (`Cs<hash>_`) as
//! `Cs*_` and no ThinLTO `.llvm.<n>` suffix, so a list outlives toolchain
//! and dependency updates.

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

/// A symbol as the list writes it.
pub fn as_listed(symbol: &str) -> String {
    let symbol = match symbol.find(".llvm.") {
        Some(at) => &symbol[..at],
        None => symbol,
    };
    let mut out = String::with_capacity(symbol.len());
    let mut rest = symbol;
    while let Some(at) = rest.find("Cs") {
        out.push_str(&rest[..at + 2]);
        rest = &rest[at + 2..];
        let hash = rest
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(rest.len());
        if hash > 0 && rest[hash..].starts_with('_') {
            out.push('*');
            rest = &rest[hash..];
        }
    }
    out.push_str(rest);
    out
}

/// The names the list holds, in its order.
pub fn names(list: &str) -> Vec<&str> {
    list.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

/// The functions a binary defines, as the list writes them (binutils' nm).
pub fn defined_in(binary: &Path) -> Result<HashSet<String>, String> {
    let out = Command::new("nm")
        .arg("--defined-only")
        .arg(binary)
        .output()
        .map_err(|e| format!("nm (binutils): {e}"))?;
    if !out.status.success() {
        return Err(format!("nm {}: {}", binary.display(), out.status));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .map(as_listed)
        .collect())
}

/// What a release build says when `list` no longer fits `binary` (the
/// release build before it): fewer than `fits` of its functions are still
/// there. `None` when it fits, or the binary cannot be read.
pub fn stale(list: &str, binary: &Path, fits: f64) -> Option<String> {
    let have = defined_in(binary).ok()?;
    let names = names(list);
    let (share, gone) = found(&names, &have);
    (share < fits).then(|| {
        format!(
            "build/startup.order no longer fits the code: {} of the {} functions it lays out \
             first are gone from the last release build ({:.1}% found, e.g. {}), so the idle \
             TUI and server keep more code resident; rerun bench/startup-order.sh",
            gone.len(),
            names.len(),
            share * 100.0,
            gone.first().copied().unwrap_or_default()
        )
    })
}

/// The share of `listed` that `have` defines, and the names it does not.
pub fn found<'a>(listed: &[&'a str], have: &HashSet<String>) -> (f64, Vec<&'a str>) {
    let gone: Vec<&str> = listed
        .iter()
        .copied()
        .filter(|l| !have.contains(*l))
        .collect();
    let share = 1.0 - gone.len() as f64 / listed.len().max(1) as f64;
    (share, gone)
}
