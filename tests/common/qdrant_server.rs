//! A real Qdrant server for the scale profile's tests: `HYPERMEM_TEST_QDRANT_URL` (the one
//! `scripts/test.sh` starts, or the user's), else `../shared/qdrant/qdrant` (or
//! `$HYPERMEM_QDRANT_BIN`) started here on free loopback ports with storage in a temp dir.
//! Never a mock. Without a binary the tests say loudly that they skip, unless
//! `HYPERMEM_REQUIRE_QDRANT=1` (CI), where that is a failure.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A Qdrant child process with its own storage, stopped on drop.
pub struct QdrantServer {
    pub grpc_port: u16,
    pub http_port: u16,
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

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn skip(what: &str) -> Option<QdrantServer> {
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
        let mut server = Self {
            grpc_port: free_port(),
            http_port: free_port(),
            child: None,
            dir: tempfile::tempdir().unwrap(),
            bin,
        };
        server.spawn();
        Some(server)
    }

    fn spawn(&mut self) {
        let d = self.dir.path();
        let child = Command::new(&self.bin)
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
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("qdrant starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if ready(self.http_port) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("qdrant on port {} did not become ready", self.http_port);
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
        self.spawn();
    }
}

impl Drop for QdrantServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `GET /readyz` on the REST port answers 200.
fn ready(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    if s.write_all(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut buf = [0u8; 16];
    matches!(s.read(&mut buf), Ok(n) if n >= 12 && &buf[9..12] == b"200")
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
