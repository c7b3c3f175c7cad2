//! `build/startup.order` still names the functions of this build: a
//! release build lays the listed functions out together so the idle TUI
//! and server keep little code resident (build.rs), and a list whose names
//! are gone would silently do nothing. The names carry no crate hashes, so
//! a toolchain or dependency update keeps them; renaming or removing the
//! start-up code does not, and this fails once too much of the list is
//! gone (rerun `bench/startup-order.sh`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

#[path = "../build/listed.rs"]
mod listed;
use listed::as_listed;

/// Below this share of its names found, the list is stale. The list is
/// made from a release build and checked against this test's debug one,
/// which inlines differently: a list just regenerated finds 85 % of its
/// names here (with the code index's crates; 90 % and more before).
const LEAST: f64 = 0.80;

#[test]
fn the_startup_order_names_functions_this_build_has() {
    let order =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("build/startup.order"))
            .unwrap();
    let listed = listed::names(&order);
    assert!(listed.len() > 1000, "{} names", listed.len());
    assert!(
        listed
            .iter()
            .all(|l| !l.contains("17h") || !l.starts_with("_ZN")),
        "legacy names carry a hash that changes with every build: the list must be v0"
    );
    let have = listed::defined_in(Path::new(env!("CARGO_BIN_EXE_agent-tui"))).unwrap();
    let (found, gone) = listed::found(&listed, &have);
    assert!(
        found >= LEAST,
        "build/startup.order is stale: {} of its {} functions are gone from this build \
         ({:.0}% found, {:.0}% needed), e.g. {:?}; run bench/startup-order.sh",
        gone.len(),
        listed.len(),
        found * 100.0,
        LEAST * 100.0,
        &gone[..gone.len().min(5)]
    );
}

#[test]
fn crate_hashes_and_thinlto_suffixes_are_left_out() {
    assert_eq!(
        as_listed("_RNvNtCsgC6EdeGEOQL_9agent_tui4main.llvm.123"),
        "_RNvNtCs*_9agent_tui4main"
    );
    assert_eq!(
        as_listed("_RINvCsab_3fooNtCs12X_3bar3BazE"),
        "_RINvCs*_3fooNtCs*_3bar3BazE"
    );
    assert_eq!(as_listed("main"), "main");
    assert_eq!(as_listed("sqlite3Csx"), "sqlite3Csx");
}

/// What a release build says of its list, judged against a binary: nothing
/// while every listed function is there, a warning naming the script once
/// more than 1 % of them is gone (build.rs asks the same of the release
/// build it replaces).
#[test]
fn a_list_that_no_longer_fits_is_reported() {
    let binary = Path::new(env!("CARGO_BIN_EXE_agent-tui"));
    let have = listed::defined_in(binary).unwrap();
    let mut present: Vec<&String> = have.iter().filter(|n| n.starts_with("_R")).collect();
    present.sort();
    let present: Vec<&str> = present.iter().take(500).map(|n| n.as_str()).collect();
    assert_eq!(present.len(), 500);
    let fits = present.join("\n");
    assert_eq!(listed::stale(&fits, binary, 0.99), None);
    // 10 of 510 (2 %) renamed away: it says so, with one of them.
    let mut gone = fits.clone();
    for i in 0..10 {
        gone.push_str(&format!("\n_RNvCs*_9agent_tui{i}renamed_away"));
    }
    let why = listed::stale(&gone, binary, 0.99).expect("a stale list is reported");
    assert!(why.contains("10 of the 510 functions"), "{why}");
    assert!(why.contains("_RNvCs*_9agent_tui0renamed_away"), "{why}");
    assert!(why.contains("rerun bench/startup-order.sh"), "{why}");
    // 4 of 504 (0.8 %) gone still fits.
    let few = format!(
        "{fits}\n{}",
        (0..4)
            .map(|i| format!("_Rgone{i}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(listed::stale(&few, binary, 0.99), None);
}
