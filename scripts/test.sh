#!/usr/bin/env bash
# The test command (README "Testing"): the whole default (lite) suite, then the hdv suite
# again with the portable scalar kernel forced, then the standard profile's suite against a
# real redis-server (installed from Debian if missing, started here on a free loopback
# port, stopped by pid on exit), then the quick-start example as an end-to-end smoke test.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -d ../shared/models/m2v-minilm-256 ]; then
  echo "!! ../shared/models/m2v-minilm-256 is missing: the test against the shared static model SKIPS (tests with a model they write themselves still run)"
fi

echo "== cargo test --workspace (kernel: auto-detected)"
cargo test --workspace

echo "== cargo test -p hypermem-hdv with HDV_KERNEL=scalar"
HDV_KERNEL=scalar cargo test -p hypermem-hdv

# --- Redis for the standard profile -------------------------------------------------------
if ! command -v redis-server >/dev/null 2>&1; then
  echo "== installing redis-server (apt-get install -y redis-server)"
  as_root=()
  [ "$(id -u)" -eq 0 ] || as_root=(sudo)
  "${as_root[@]}" apt-get install -y redis-server >/dev/null 2>&1 || {
    "${as_root[@]}" apt-get update >/dev/null && "${as_root[@]}" apt-get install -y redis-server >/dev/null
  }
fi
redis_dir=$(mktemp -d)
redis_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
stop_redis() {
  if [ -s "$redis_dir/redis.pid" ]; then
    kill "$(cat "$redis_dir/redis.pid")" 2>/dev/null || true
  fi
  rm -rf "$redis_dir"
}
trap stop_redis EXIT
redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no \
  --daemonize yes --pidfile "$redis_dir/redis.pid" --dir "$redis_dir" --logfile "$redis_dir/redis.log"
for _ in $(seq 100); do
  redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break
  sleep 0.1
done
redis-cli -p "$redis_port" ping >/dev/null
export HYPERMEM_TEST_REDIS_URL="redis://127.0.0.1:$redis_port"
# A missing redis-server is a failure here, not a skip.
export HYPERMEM_REQUIRE_REDIS=1
echo "== cargo test --features standard (Redis $(redis-server --version | awk '{print $3}') on $HYPERMEM_TEST_REDIS_URL)"
cargo test --features standard --test redis --test tier_contract --test profiles

echo "== quick-start example"
cargo run --example quickstart >/dev/null

echo "all tests passed"
