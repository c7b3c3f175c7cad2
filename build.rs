//! Release builds of the binary on x86_64 Linux place the functions an
//! idle TUI and a starting `serve` run side by side (`build/startup.order`,
//! made by `bench/startup-order.sh`): the kernel maps code in 64 KB at a
//! time, and scattered start-up code kept most of the binary resident
//! where a few MB ran. The list names functions in the v0 scheme without
//! their crates' hashes (`.cargo/config.toml` asks for v0 names), which
//! change with the toolchain and every dependency; it becomes a linker
//! script that gathers the sections of those functions into one output
//! section ahead of `.text`, whatever their hashes are in this build.
//! Skipped where the linker may not be lld (another target, a linker
//! chosen in RUSTFLAGS) or with `AGENT_TUI_NO_ORDER` set; a release build
//! whose names are not v0 (RUSTFLAGS replaced the config's) says so, and
//! so does one whose list no longer fits the code: the release binary it
//! replaces (built from the code before this change) is read, and when
//! fewer than 99 % of the listed functions are still in it, the start-up
//! path has moved on from the list (a fresh list finds all of them; one
//! that found 90 % left the idle TUI 5 MB heavier).

use std::env;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[path = "build/listed.rs"]
mod listed;

/// Below this share of its functions in the last release build, the
/// start-up order no longer fits.
const FITS: f64 = 0.99;

fn main() {
    println!("cargo:rerun-if-changed=build/startup.order");
    println!("cargo:rerun-if-env-changed=AGENT_TUI_NO_ORDER");
    // Run again when the code changes, to say whether the list still fits.
    println!("cargo:rerun-if-changed=src");
    let target = env::var("TARGET").unwrap_or_default();
    let profile = env::var("PROFILE").unwrap_or_default();
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    // rustc links x86_64-unknown-linux-gnu with its own lld since 1.90
    // (the crate's rust-version); a linker picked by hand may be another.
    let own_linker = !["linker", "fuse-ld", "link-self-contained"]
        .iter()
        .any(|f| flags.contains(f))
        && env::var_os("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_none();
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let order = manifest.join("build/startup.order");
    if target != "x86_64-unknown-linux-gnu"
        || profile != "release"
        || !own_linker
        || env::var_os("AGENT_TUI_NO_ORDER").is_some()
        || !order.is_file()
    {
        return;
    }
    if !flags.contains("symbol-mangling-version=v0") {
        println!(
            "cargo:warning=build/startup.order is not applied: the build's symbol names are not \
             v0 (RUSTFLAGS replaced .cargo/config.toml's), so the idle binary keeps more of its \
             code resident"
        );
        return;
    }
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap_or_default());
    warn_when_stale(&order, &out_dir);
    let out = out_dir.join("startup.ld");
    match write_script(&order, &out) {
        Ok(()) => println!("cargo:rustc-link-arg-bins=-Wl,-T,{}", out.display()),
        Err(e) => println!("cargo:warning=build/startup.order is not applied: {e}"),
    }
    // The relocations the loader applies at start, packed (DT_RELR): 1.4
    // MB of `.rela.dyn` read at every start, and kept resident, become a
    // few KB. Only where the C library that will run it knows them (glibc
    // 2.36): the binary is built where it is installed.
    if glibc_at_least(2, 36) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Says so when the list no longer fits the release binary this build
/// replaces (`target/release/agent-tui`, three folders above OUT_DIR);
/// nothing when there is none yet or nm is missing.
fn warn_when_stale(order: &Path, out_dir: &Path) {
    let Some(last) = out_dir.ancestors().nth(3).map(|d| d.join("agent-tui")) else {
        return;
    };
    let (Ok(list), true) = (std::fs::read_to_string(order), last.is_file()) else {
        return;
    };
    if let Some(why) = listed::stale(&list, &last, FITS) {
        println!("cargo:warning={why}");
    }
}

/// Whether this machine's glibc is `major.minor` or newer.
fn glibc_at_least(major: u32, minor: u32) -> bool {
    let Ok(out) = std::process::Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
    else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(version) = text.trim().strip_prefix("glibc ") else {
        return false;
    };
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let found = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    found >= (major, minor)
}

/// The linker script: every listed function's section, in the list's
/// order, in `.text.hot`, which goes right before `.text`. A function LLVM
/// takes for cold (run once, at start) is in `.text.unlikely.<name>`, a C
/// constructor in `.text.startup.<name>`; a ThinLTO-local one's name ends
/// in `.llvm.<n>`.
fn write_script(order: &Path, out: &Path) -> std::io::Result<()> {
    let list = std::fs::read_to_string(order)?;
    let mut script = String::from("SECTIONS {\n  .text.hot : {\n");
    for name in listed::names(&list) {
        let _ = writeln!(
            script,
            "    *(.text.{name} .text.{name}.llvm.* .text.unlikely.{name} \
             .text.unlikely.{name}.llvm.* .text.startup.{name})"
        );
    }
    script.push_str("  }\n}\nINSERT BEFORE .text;\n");
    std::fs::write(out, script)
}
