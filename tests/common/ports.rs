//! Loopback ports for the servers the tests start.
//!
//! A port found free by binding port 0 comes from the kernel's ephemeral range, the same
//! range every outgoing connection takes its local port from: between the moment the test
//! picks it and the moment its server binds it (a Qdrant cluster starts its nodes one after
//! another), a connection of another process, or of a node already running, can take it,
//! and the server then cannot start. Ports are therefore picked below the ephemeral range,
//! where nothing is handed out by the kernel, checked free by binding them, and never
//! handed out twice by one test process.

use std::collections::HashSet;
use std::net::TcpListener;
use std::sync::Mutex;

static GIVEN: Mutex<Option<HashSet<u16>>> = Mutex::new(None);

/// The lowest port of the kernel's ephemeral range (32768 when it cannot be read).
fn ephemeral_floor() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
}

/// A loopback port no server listens on, below the ephemeral range, not handed out before
/// by this process.
pub fn free_port() -> u16 {
    let top = ephemeral_floor();
    let bottom = 20_000.min(top.saturating_sub(1_000)).max(1_024);
    let mut given = GIVEN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let given = given.get_or_insert_with(HashSet::new);
    // A start that differs per process (tests of several binaries run at once) and per call.
    let mut x = u64::from(std::process::id()).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (given.len() as u64).wrapping_mul(0xBF58_476D_1CE4_E5B9)
        | 1;
    for _ in 0..10_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let port = bottom + (x % u64::from(top - bottom)) as u16;
        if !given.contains(&port) && TcpListener::bind(("127.0.0.1", port)).is_ok() {
            given.insert(port);
            return port;
        }
    }
    // Everything below the range is taken: the kernel's choice, as before.
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port");
    given.insert(port);
    port
}
