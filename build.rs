//! Release builds of the binary on x86_64 Linux place the functions an
//! idle TUI runs side by side (`build/startup.order`, made by
//! `bench/startup-order.sh`), through lld's `--symbol-ordering-file`: the
//! kernel maps code in 64 KB at a time, and scattered start-up code kept
//! ~11 MB of the binary resident where ~2.5 MB ran. Skipped where the
//! linker may not be lld (another target, a linker chosen in RUSTFLAGS) or
//! with `AGENT_TUI_NO_ORDER` set.

use std::env;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=build/startup.order");
    println!("cargo:rerun-if-env-changed=AGENT_TUI_NO_ORDER");
    let target = env::var("TARGET").unwrap_or_default();
    let profile = env::var("PROFILE").unwrap_or_default();
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    // rustc links x86_64-unknown-linux-gnu with its own lld since 1.90
    // (the crate's rust-version); a linker picked by hand may be another.
    let own_linker = !["linker", "fuse-ld", "link-self-contained"]
        .iter()
        .any(|f| flags.contains(f))
        && env::var_os("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_none();
    let order =
        Path::new(&env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join("build/startup.order");
    if target == "x86_64-unknown-linux-gnu"
        && profile == "release"
        && own_linker
        && env::var_os("AGENT_TUI_NO_ORDER").is_none()
        && order.is_file()
    {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}
