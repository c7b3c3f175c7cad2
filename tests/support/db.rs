//! Reading and tampering with a test's SQLite store from outside the
//! product, the way a curious (or hostile) user could with any SQLite tool.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{Connection, Row, SqliteConnection};

/// The default store of a state home.
pub fn state_db(home: &Path) -> PathBuf {
    home.join("state.db")
}

fn run<T>(fut: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(fut)
}

async fn connect(db: &Path) -> SqliteConnection {
    let options = SqliteConnectOptions::new()
        .filename(db)
        .busy_timeout(std::time::Duration::from_secs(30));
    SqliteConnection::connect_with(&options).await.unwrap()
}

/// Runs statements that change the database.
pub fn exec(db: &Path, sql: &str) {
    run(async {
        let mut conn = connect(db).await;
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_string()))
            .execute(&mut conn)
            .await
            .unwrap();
        conn.close().await.unwrap();
    })
}

/// The first column of every row, as text.
pub fn column(db: &Path, sql: &str) -> Vec<String> {
    run(async {
        let mut conn = connect(db).await;
        let out = sqlx::query(sqlx::AssertSqlSafe(sql.to_string()))
            .fetch_all(&mut conn)
            .await
            .unwrap()
            .iter()
            .map(|r| {
                r.try_get::<String, _>(0)
                    .or_else(|_| r.try_get::<i64, _>(0).map(|n| n.to_string()))
                    .unwrap()
            })
            .collect();
        conn.close().await.unwrap();
        out
    })
}

/// Every audit record, as the JSON the audit log used to hold.
pub fn audit_records(db: &Path) -> Vec<Value> {
    if !db.exists() {
        return Vec::new();
    }
    run(async {
        let mut conn = connect(db).await;
        let out = sqlx::query(
            "SELECT seq, session_id, job_id, action, target, approved, outcome FROM audit
             ORDER BY root_key, seq",
        )
        .fetch_all(&mut conn)
        .await
        .unwrap()
        .iter()
        .map(|r| {
            json!({
                "seq": r.get::<i64, _>(0),
                "session": r.get::<Option<String>, _>(1),
                "job": r.get::<Option<String>, _>(2),
                "action": r.get::<String, _>(3),
                "target": r.get::<String, _>(4),
                "approved": r.get::<Option<i64>, _>(5).map(|a| a != 0),
                "outcome": r.get::<String, _>(6),
            })
        })
        .collect();
        conn.close().await.unwrap();
        out
    })
}

/// Every recorded event and conversation record, in order.
pub fn session_text(db: &Path) -> String {
    column(
        db,
        "SELECT body FROM session_records ORDER BY session_id, seq",
    )
    .join("\n")
}
