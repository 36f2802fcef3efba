//! A real Qdrant server for the scale profile's tests: `HYPERMEM_TEST_QDRANT_URL` (the one
//! `scripts/test.sh` starts, or the user's), else `../shared/qdrant/qdrant` (or
//! `$HYPERMEM_QDRANT_BIN`) started here on free loopback ports with storage in a temp dir.
//! Never a mock. Without a binary the tests say loudly that they skip, unless
//! `HYPERMEM_REQUIRE_QDRANT=1` (CI), where that is a failure.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A Qdrant child process with its own storage, stopped on drop.
pub struct QdrantServer {
    pub grpc_port: u16,
    pub http_port: u16,
    /// In cluster mode: the port peers talk on, and the peer it joined through (none for
    /// the first node).
    cluster: Option<(u16, Option<u16>)>,
    child: Option<Child>,
    dir: tempfile::TempDir,
    bin: PathBuf,
}

fn binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HYPERMEM_QDRANT_BIN") {
        return Some(PathBuf::from(p));
    }
    let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/qdrant/qdrant");
    shared.is_file().then_some(shared)
}

use super::ports::free_port;

/// Starts of a server (or a cluster) tried with fresh ports before a test fails: a port
/// can still be taken between its choice and the server's bind.
const ATTEMPTS: usize = 3;

fn skip<T>(what: &str) -> Option<T> {
    if std::env::var("HYPERMEM_REQUIRE_QDRANT").as_deref() == Ok("1") {
        panic!("HYPERMEM_REQUIRE_QDRANT=1 but {what}");
    }
    eprintln!("!! SKIP: {what}: the Qdrant tests did not run");
    None
}

impl QdrantServer {
    /// Starts a server, or `None` (after saying so) without a binary.
    pub fn start() -> Option<Self> {
        let Some(bin) = binary() else {
            return skip("no Qdrant binary (../shared/qdrant/qdrant or HYPERMEM_QDRANT_BIN)");
        };
        let mut failures = Vec::new();
        for _ in 0..ATTEMPTS {
            let mut server = Self::new(bin.clone(), None);
            match server.spawn() {
                Ok(()) => return Some(server),
                Err(e) => failures.push(e),
            }
        }
        panic!("qdrant did not start: {}", failures.join("\n"));
    }

    fn new(bin: PathBuf, cluster: Option<(u16, Option<u16>)>) -> Self {
        Self {
            grpc_port: free_port(),
            http_port: free_port(),
            cluster,
            child: None,
            dir: tempfile::tempdir().unwrap(),
            bin,
        }
    }

    /// Starts `n` nodes of one Qdrant cluster (cluster mode, peers on loopback; the others
    /// join through the first) and waits until the first sees them all, or `None` (after
    /// saying so) without a binary.
    pub fn start_cluster(n: usize) -> Option<Vec<Self>> {
        let Some(bin) = binary() else {
            return skip("no Qdrant binary (../shared/qdrant/qdrant or HYPERMEM_QDRANT_BIN)");
        };
        let mut failures = Vec::new();
        for _ in 0..ATTEMPTS {
            match Self::try_cluster(&bin, n) {
                Ok(nodes) => return Some(nodes),
                Err(e) => failures.push(e),
            }
        }
        panic!(
            "the {n} Qdrant nodes did not start: {}",
            failures.join("\n")
        );
    }

    /// One attempt of [`start_cluster`](Self::start_cluster): what went wrong, with the
    /// log of the node that did not start.
    fn try_cluster(bin: &std::path::Path, n: usize) -> Result<Vec<Self>, String> {
        let first = free_port();
        let mut nodes: Vec<Self> = (0..n)
            .map(|i| {
                let p2p = if i == 0 { first } else { free_port() };
                Self::new(bin.to_owned(), Some((p2p, (i > 0).then_some(first))))
            })
            .collect();
        for node in &mut nodes {
            node.spawn()?;
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        while peers(nodes[0].http_port) < n {
            if Instant::now() >= deadline {
                return Err(format!(
                    "the {n} Qdrant nodes did not form a cluster in 60 s"
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(nodes)
    }

    /// Runs the server and waits until it is ready; its output goes to `qdrant.log` in its
    /// directory. A server that exits or is not ready within 30 s is stopped, and the end
    /// of its log returned.
    fn spawn(&mut self) -> Result<(), String> {
        let d = self.dir.path();
        let mut command = Command::new(&self.bin);
        if let Some((p2p, bootstrap)) = self.cluster {
            command
                .env("QDRANT__CLUSTER__ENABLED", "true")
                .env("QDRANT__CLUSTER__P2P__PORT", p2p.to_string())
                .arg("--uri")
                .arg(format!("http://127.0.0.1:{p2p}"));
            if let Some(b) = bootstrap {
                command
                    .arg("--bootstrap")
                    .arg(format!("http://127.0.0.1:{b}"));
            }
        }
        let log_path = d.join("qdrant.log");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .expect("qdrant's log file");
        let child = command
            .arg("--disable-telemetry")
            .current_dir(d)
            .env("QDRANT__SERVICE__HOST", "127.0.0.1")
            .env("QDRANT__SERVICE__HTTP_PORT", self.http_port.to_string())
            .env("QDRANT__SERVICE__GRPC_PORT", self.grpc_port.to_string())
            .env("QDRANT__SERVICE__ENABLE_STATIC_CONTENT", "false")
            .env("QDRANT__STORAGE__STORAGE_PATH", d.join("storage"))
            .env("QDRANT__STORAGE__SNAPSHOTS_PATH", d.join("snapshots"))
            .env("QDRANT__STORAGE__TEMP_PATH", d.join("tmp"))
            .env("QDRANT__TELEMETRY_DISABLED", "true")
            .env("QDRANT_INIT_FILE_PATH", d.join(".qdrant-initialized"))
            .stdout(Stdio::from(log.try_clone().expect("qdrant's log file")))
            .stderr(Stdio::from(log))
            .spawn()
            .expect("qdrant starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        let failure = loop {
            if ready(self.http_port) {
                return Ok(());
            }
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                break format!("it exited ({status})");
            }
            if Instant::now() >= deadline {
                break "it was not ready in 30 s".to_owned();
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        self.kill();
        let text = std::fs::read_to_string(&log_path).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(15).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        Err(format!(
            "qdrant on ports {} (REST) and {} (gRPC): {failure}; the end of its log:\n{}",
            self.http_port,
            self.grpc_port,
            tail.join("\n")
        ))
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.grpc_port)
    }

    /// Kills the server (SIGKILL: what is in its WAL survives).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts it again on the same ports and storage.
    pub fn restart(&mut self) {
        self.kill();
        if let Err(e) = self.spawn() {
            panic!("qdrant did not restart: {e}");
        }
    }
}

impl Drop for QdrantServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `GET /readyz` on the REST port answers 200.
fn ready(port: u16) -> bool {
    get(port, "/readyz").is_some()
}

/// The body of `GET path` on the REST port when it answers 200.
pub fn get(port: u16, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    let _ = s.set_read_timeout(Some(Duration::from_millis(2000)));
    let request = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    s.write_all(request.as_bytes()).ok()?;
    let mut response = Vec::new();
    let _ = s.read_to_end(&mut response);
    let response = String::from_utf8_lossy(&response);
    if response.get(9..12) != Some("200") {
        return None;
    }
    response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
}

/// Peers the node on REST port `port` knows (0 when it does not answer).
fn peers(port: u16) -> usize {
    get(port, "/cluster")
        .and_then(|body| serde_json::from_str::<serde_json::Value>(&body).ok())
        .and_then(|v| v["result"]["peers"].as_object().map(|p| p.len()))
        .unwrap_or(0)
}

/// Whether every replica of every shard of `collection` is active, as the node on REST
/// port `port` sees them (its own and the other peers').
pub fn replicas_active(port: u16, collection: &str) -> bool {
    let Some(v) = get(port, &format!("/collections/{collection}/cluster"))
        .and_then(|body| serde_json::from_str::<serde_json::Value>(&body).ok())
    else {
        return false;
    };
    let shards = |key: &str| v["result"][key].as_array().cloned().unwrap_or_default();
    let all: Vec<_> = shards("local_shards")
        .into_iter()
        .chain(shards("remote_shards"))
        .collect();
    !all.is_empty() && all.iter().all(|s| s["state"] == "Active")
}

/// The shared server's gRPC URL (`HYPERMEM_TEST_QDRANT_URL`), else a server started for
/// this test binary (kept alive in `keep`).
pub fn shared(keep: &mut Option<QdrantServer>) -> Option<String> {
    if let Ok(url) = std::env::var("HYPERMEM_TEST_QDRANT_URL") {
        return Some(url);
    }
    *keep = Some(QdrantServer::start()?);
    keep.as_ref().map(QdrantServer::url)
}

/// The scale profile at 1,024 bits on Qdrant `settings` (its `collection` also names the
/// Redis prefix) and the Redis at `redis`.
pub fn scale_profile(settings: hypermem::QdrantSettings, redis: &str) -> hypermem::Profile {
    use hypermem::{Profile, ProfileKind, RedisSettings};
    let mut p = Profile::load(Profile::bundled_path(ProfileKind::Scale)).unwrap();
    p.dim = hypermem::hdv::Dim::new(1024).unwrap();
    p.redis = Some(RedisSettings {
        url: redis.to_owned(),
        prefix: super::redis_server::unique_prefix(&settings.collection),
        ..RedisSettings::default()
    });
    p.qdrant = Some(settings);
    p
}
