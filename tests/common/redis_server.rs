//! A real `redis-server` for the standard profile's tests: the shared one `scripts/test.sh`
//! starts (`HYPERMEM_TEST_REDIS_URL`), or one started here on a free loopback port (fault
//! tests stop, restart and flush their own). Never a mock. Without `redis-server` on the
//! PATH the tests say loudly that they skip, unless `HYPERMEM_REQUIRE_REDIS=1` (CI), where
//! that is a failure.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A redis-server child process without persistence, stopped on drop.
pub struct RedisServer {
    pub port: u16,
    child: Option<Child>,
    dir: tempfile::TempDir,
}

fn binary() -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("redis-server"))
            .find(|p| p.is_file())
    })
}

fn skip(what: &str) -> Option<RedisServer> {
    if std::env::var("HYPERMEM_REQUIRE_REDIS").as_deref() == Ok("1") {
        panic!("HYPERMEM_REQUIRE_REDIS=1 but {what}");
    }
    eprintln!("!! SKIP: {what}: the Redis tests did not run (install redis-server)");
    None
}

impl RedisServer {
    /// Starts a server on a free loopback port, or `None` (after saying so) without one.
    pub fn start() -> Option<Self> {
        let Some(bin) = binary() else {
            return skip("redis-server is not on the PATH");
        };
        let port = super::ports::free_port();
        let mut server = Self {
            port,
            child: None,
            dir: tempfile::tempdir().unwrap(),
        };
        server.spawn(&bin);
        Some(server)
    }

    fn spawn(&mut self, bin: &std::path::Path) {
        let child = Command::new(bin)
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(self.dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if ping(&self.url()) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server on port {} did not answer", self.port);
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Kills the server (SIGKILL: nothing is saved, it has no persistence anyway).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts the server again on the same port, empty.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn(&binary().unwrap());
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

fn ping(url: &str) -> bool {
    redis::Client::open(url)
        .and_then(|c| c.get_connection_with_timeout(Duration::from_millis(200)))
        .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c))
        .is_ok()
}

/// The shared server's URL (`HYPERMEM_TEST_REDIS_URL`), else a server started for this test
/// binary (kept alive in `keep`).
pub fn shared(keep: &mut Option<RedisServer>) -> Option<String> {
    if let Ok(url) = std::env::var("HYPERMEM_TEST_REDIS_URL") {
        assert!(
            ping(&url),
            "HYPERMEM_TEST_REDIS_URL={url} does not answer PING"
        );
        return Some(url);
    }
    *keep = Some(RedisServer::start()?);
    keep.as_ref().map(RedisServer::url)
}

/// A key prefix no other test (or earlier run) uses.
pub fn unique_prefix(test: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "t{}-{}-{}-{test}",
        std::process::id(),
        nanos % 1_000_000_000,
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// A direct connection for inspecting or damaging what the tier wrote.
pub fn connect(url: &str) -> redis::Connection {
    redis::Client::open(url)
        .unwrap()
        .get_connection_with_timeout(Duration::from_secs(2))
        .unwrap()
}

/// Every key under `prefix` (SCAN).
pub fn keys(url: &str, prefix: &str) -> Vec<String> {
    let mut c = connect(url);
    let mut out = Vec::new();
    let mut cursor = 0u64;
    loop {
        let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(format!("{prefix}:*"))
            .arg("COUNT")
            .arg(1000)
            .query(&mut c)
            .unwrap();
        out.extend(batch);
        if next == 0 {
            break;
        }
        cursor = next;
    }
    out.sort();
    out
}
