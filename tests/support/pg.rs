//! A private PostgreSQL cluster per test: `initdb` and `pg_ctl` from
//! Debian's package in a temporary folder (as the `postgres` user when the
//! tests run as root), listening on a free loopback port, stopped on drop.
//! Never a system cluster. Where PostgreSQL is not installed the test says
//! so in one line and returns; with AGENT_TUI_REQUIRE_POSTGRES=1 (CI) that
//! is a failure instead.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The password of the cluster's `agent` user.
pub const PASSWORD: &str = "pg-loopback-Secret-7";

pub struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub port: u16,
    as_postgres: bool,
}

fn bin_dir() -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("initdb").is_file() && b.join("pg_ctl").is_file())
        .collect();
    found.sort();
    found.pop()
}

fn is_root() -> bool {
    // SAFETY-free check: the effective uid via `id -u`.
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Cluster {
    /// Starts a cluster, or `None` (with one line saying why) where
    /// PostgreSQL is not installed.
    pub fn start() -> Option<Cluster> {
        let Some(bin) = bin_dir() else {
            assert!(
                std::env::var_os("AGENT_TUI_REQUIRE_POSTGRES").is_none(),
                "PostgreSQL is required here (AGENT_TUI_REQUIRE_POSTGRES) but not installed"
            );
            eprintln!("PostgreSQL not found under /usr/lib/postgresql: skipping this test");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        let as_postgres = is_root();
        let cluster = Cluster {
            dir,
            bin,
            port: free_port(),
            as_postgres,
        };
        if as_postgres {
            cluster.chown(cluster.dir.path());
        }
        let pwfile = cluster.dir.path().join("pw");
        std::fs::write(&pwfile, "superpw\n").unwrap();
        if as_postgres {
            cluster.chown(&pwfile);
        }
        let data = cluster.data();
        cluster.run(
            "initdb",
            &[
                "-D",
                &data.display().to_string(),
                "-U",
                "postgres",
                "--auth=scram-sha-256",
                "--pwfile",
                &pwfile.display().to_string(),
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        cluster.restart();
        cluster.psql(&format!("CREATE USER agent PASSWORD '{PASSWORD}'"));
        cluster.psql("CREATE DATABASE agent_tui OWNER agent");
        Some(cluster)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn chown(&self, path: &Path) {
        let ok = Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(path)
            .status()
            .unwrap()
            .success();
        assert!(ok, "chown {}", path.display());
    }

    fn command(&self, program: &str) -> Command {
        let exe = self.bin.join(program);
        if self.as_postgres {
            let mut cmd = Command::new("runuser");
            cmd.args(["-u", "postgres", "--"]).arg(exe);
            cmd
        } else {
            Command::new(exe)
        }
    }

    fn run(&self, program: &str, args: &[&str]) {
        let out = self.command(program).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{program} {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Runs SQL as the superuser.
    pub fn psql(&self, sql: &str) {
        let out = Command::new("psql")
            .env("PGPASSWORD", "superpw")
            .args(["-h", "127.0.0.1", "-U", "postgres", "-d", "postgres"])
            .args([
                "-p",
                &self.port.to_string(),
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                sql,
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The URL the product is given (never with the password).
    pub fn url(&self) -> String {
        format!("postgres://agent@127.0.0.1:{}/agent_tui", self.port)
    }

    pub fn stop(&self) {
        let _ = self
            .command("pg_ctl")
            .args([
                "-D",
                &self.data().display().to_string(),
                "-m",
                "immediate",
                "-w",
                "stop",
            ])
            .output();
    }

    /// Starts the server (again).
    pub fn restart(&self) {
        let opts = format!(
            "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data().display().to_string(),
                "-o",
                &opts,
                "-l",
                &self.dir.path().join("log").display().to_string(),
                "-w",
                "start",
            ],
        );
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}
