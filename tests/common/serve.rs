//! A `hypermem serve` child process on a free loopback port, and the HTTP client calls the
//! server tests make of it.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// A running server: its process and base URL (`http://127.0.0.1:port`).
pub struct Server {
    pub child: Child,
    pub url: String,
}

impl Server {
    /// Starts `hypermem serve` on `dir` (created) with `extra` arguments, on a free port.
    pub fn start(dir: &Path, extra: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_hypermem"))
            .arg("--data-dir")
            .arg(dir)
            .args(["--create", "serve", "--listen", "localhost:0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("no address: {line:?}"))
            .to_owned();
        Self { child, url }
    }

    /// Sends `sig` (`-TERM`, `-KILL`) and waits for the process to end.
    pub fn signal(&mut self, sig: &str) {
        let ok = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok);
        self.child.wait().unwrap();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client that reads every status as an answer.
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// (status, body) of a POST.
pub fn post(url: &str, token: Option<&str>, body: &str) -> (u16, Value) {
    let mut req = agent().post(url).header("Content-Type", "application/json");
    if let Some(t) = token {
        req = req.header("Authorization", &format!("Bearer {t}"));
    }
    let mut resp = req.send(body).unwrap();
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// (status, body) of a POST, or `None` when the server is gone (connection refused or
/// reset).
pub fn try_post(url: &str, body: &str) -> Option<(u16, Value)> {
    let mut resp = agent()
        .post(url)
        .header("Content-Type", "application/json")
        .send(body)
        .ok()?;
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().ok()?;
    Some((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
}

/// (status, body) of a GET.
pub fn get(url: &str) -> (u16, Value) {
    let mut resp = agent().get(url).call().unwrap();
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// The reason of an error document.
pub fn reason(v: &Value) -> &str {
    v["error"]["reason"].as_str().unwrap_or("<none>")
}
