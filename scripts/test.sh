#!/usr/bin/env bash
# The test command (README "Testing"): the whole default (lite) suite and the quick-start
# example as an end-to-end smoke test, then the hdv suite again with the portable scalar
# kernel forced (and with AVX2 on an AVX-512 CPU), and on CPUs without AVX-512 and without
# AVX2 emulated by QEMU (installed from Debian), then the Python package, then the
# standard and scale profiles' suites against a real redis-server (installed from Debian
# if missing) and a real Qdrant (`$QDRANT_URL` if the user runs one, else
# ../shared/qdrant/qdrant) and a real PostgreSQL (its Debian server binaries, installed if
# missing), each started here on free loopback ports and stopped by pid on exit. The
# sentence model's suite runs in the scale build (one compile). Each phase prints the
# seconds since the start.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -d ../shared/models/m2v-minilm-256 ]; then
  echo "!! ../shared/models/m2v-minilm-256 is missing: the test against the shared static model SKIPS (tests with a model they write themselves still run)"
fi
if [ ! -d ../shared/models/minilm-l6-v2 ]; then
  echo "!! ../shared/models/minilm-l6-v2 is missing: the sentence-model tests that need it SKIP (they say so one by one)"
fi

# The kernel tiers this CPU runs (and so tests); a missing tier is untested here. Linux
# lists the flag as `avx512_vpopcntdq`.
has_avx512() { grep -qE '\bavx512_?vpopcntdq\b' /proc/cpuinfo 2>/dev/null; }
if has_avx512; then
  echo "== this CPU runs the AVX-512 (VPOPCNTDQ), AVX2 and scalar kernels: all three are tested"
elif grep -q avx2 /proc/cpuinfo 2>/dev/null; then
  echo "!! this CPU has no AVX-512 VPOPCNTDQ: the AVX-512 kernels are NOT tested here (AVX2 and scalar are)"
else
  echo "!! this CPU has neither AVX-512 nor AVX2: only the scalar kernels are tested here"
fi

# One feature universe for every Rust build of this first part: `cargo test` over the
# default members (the engine and hdv), the quick-start example, and hdv's test binaries
# run again under other kernels and emulated CPUs. (`--workspace` would add the Python
# member, whose pyo3 macros change the features of syn and so of every derive: the example
# and `-p hypermem-hdv` would then rebuild most of the dependency tree; pytest below tests
# that member as users load it.)
phase() { echo "[$SECONDS s] == $*"; }
phase "cargo test (the engine and hdv; kernel: auto-detected)"
cargo test

phase "quick-start example (end-to-end smoke test)"
cargo run --example quickstart >/dev/null

# hdv's test binaries, as the run above built them.
hdv_tests=$(cargo test --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if (m.get("reason") == "compiler-artifact" and m.get("profile", {}).get("test")
            and m.get("executable") and m["target"]["src_path"].find("/hdv/") >= 0):
        print(m["executable"])')
[ -n "$hdv_tests" ] || { echo "!! no hdv test binaries were found"; exit 1; }
# Runs each hdv test binary as cargo would (from hdv/), with the given command prefix.
run_hdv() {
  local label=$1; shift
  for t in $hdv_tests; do
    rc=0
    out=$(cd hdv && "$@" "$t" -q --nocapture 2>&1) || rc=$?
    echo "$out" | grep -E '^(test result|!! SKIP|available kernels)' || true
    [ "$rc" -eq 0 ] || { echo "$out" | tail -40; echo "!! $t failed ($label)"; exit 1; }
  done
}

phase "hdv suite with HDV_KERNEL=scalar"
run_hdv "HDV_KERNEL=scalar" env HDV_KERNEL=scalar
if has_avx512; then
  # The auto-detected run above took the AVX-512 copies; the AVX2 ones run here.
  phase "hdv suite with HDV_KERNEL=avx2"
  run_hdv "HDV_KERNEL=avx2" env HDV_KERNEL=avx2
fi

# --- The hdv suite on emulated CPUs (QEMU user mode, from Debian): one without AVX-512
# (`-cpu max`: QEMU 7.2's TCG has AVX2, not AVX-512) and one without AVX2 (`-cpu
# Nehalem`), so run-time detection picks AVX2 and scalar on its own and the AVX-512 tests
# say that they skip, as on such machines. No emulator in the package registries runs
# AVX-512 (Intel SDE is not in them; QEMU's TCG refuses avx512f): the AVX-512 kernels are
# tested only where the CPU has them.
as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)
if ! command -v qemu-x86_64 >/dev/null 2>&1 && [ "$(uname -m)" = x86_64 ]; then
  phase "installing qemu-user (apt-get install -y qemu-user)"
  "${as_root[@]}" apt-get install -y qemu-user >/dev/null 2>&1 || {
    "${as_root[@]}" apt-get update >/dev/null && "${as_root[@]}" apt-get install -y qemu-user >/dev/null
  } || true
fi
if command -v qemu-x86_64 >/dev/null 2>&1 && [ "$(uname -m)" = x86_64 ]; then
  for cpu in max Nehalem; do
    phase "hdv suite under qemu-x86_64 -cpu $cpu (a CPU without $([ $cpu = max ] && echo AVX-512 || echo AVX2))"
    run_hdv "qemu-x86_64 -cpu $cpu" qemu-x86_64 -cpu "$cpu"
  done
else
  echo "!! qemu-x86_64 is not available: the hdv suite was NOT run on emulated CPUs without AVX-512 / AVX2"
fi

# --- The Python package (python/): its wheel, built here, in a venv; then pytest and the
# examples as the README runs them. maturin, numpy and pytest come from PyPI.
phase "Python package: wheel into target/python-venv, pytest python/tests, python/examples"
py_venv=target/python-venv
[ -x "$py_venv/bin/python" ] || python3 -m venv "$py_venv"
if ! "$py_venv/bin/python" -c "import maturin, numpy, pytest" 2>/dev/null; then
  "$py_venv/bin/pip" install -q "maturin>=1.8,<2" numpy pytest || {
    echo "!! could not install maturin, numpy and pytest from PyPI: the Python suite cannot run"
    exit 1
  }
fi
rm -rf target/python-wheel
"$py_venv/bin/maturin" build -q -m python/Cargo.toml -o target/python-wheel
"$py_venv/bin/pip" install -q --force-reinstall --no-deps target/python-wheel/hypermem-*.whl
# From the repository root, so `import hypermem` is the installed wheel, not python/hypermem.
"$py_venv/bin/python" -m pytest -q python/tests
for example in python/examples/*.py; do
  "$py_venv/bin/python" "$example" >/dev/null
done

# --- Redis for the standard profile -------------------------------------------------------
if ! command -v redis-server >/dev/null 2>&1; then
  phase "installing redis-server (apt-get install -y redis-server)"
  "${as_root[@]}" apt-get install -y redis-server >/dev/null 2>&1 || {
    "${as_root[@]}" apt-get update >/dev/null && "${as_root[@]}" apt-get install -y redis-server >/dev/null
  }
fi
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
redis_dir=$(mktemp -d)
qdrant_dir=$(mktemp -d)
qdrant_pid=""
pg_dir=$(mktemp -d)
stop_services() {
  # PostgreSQL by the pid its postmaster wrote (a fast shutdown), waited for.
  if [ -s "$pg_dir/data/postmaster.pid" ]; then
    pg_main=$(head -1 "$pg_dir/data/postmaster.pid")
    kill -INT "$pg_main" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pg_main" 2>/dev/null || break; sleep 0.1; done
  fi
  if [ -s "$redis_dir/redis.pid" ]; then
    kill "$(cat "$redis_dir/redis.pid")" 2>/dev/null || true
  fi
  if [ -n "$qdrant_pid" ]; then
    kill -TERM "$qdrant_pid" 2>/dev/null || true
    wait "$qdrant_pid" 2>/dev/null || true
  fi
  rm -rf "$redis_dir" "$qdrant_dir" "$pg_dir"
}
trap stop_services EXIT
redis_port=$(free_port)
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

# --- Qdrant for the scale profile ---------------------------------------------------------
qdrant_bin=../shared/qdrant/qdrant
if [ -n "${QDRANT_URL:-}" ]; then
  phase "Qdrant: using QDRANT_URL=$QDRANT_URL"
  export HYPERMEM_TEST_QDRANT_URL="$QDRANT_URL"
elif [ -x "$qdrant_bin" ]; then
  qdrant_bin=$(realpath "$qdrant_bin")
  q_rest=$(free_port)
  q_grpc=$(free_port)
  ( cd "$qdrant_dir" && exec env \
      QDRANT__SERVICE__HOST=127.0.0.1 \
      QDRANT__SERVICE__HTTP_PORT="$q_rest" QDRANT__SERVICE__GRPC_PORT="$q_grpc" \
      QDRANT__SERVICE__ENABLE_STATIC_CONTENT=false \
      QDRANT__STORAGE__STORAGE_PATH="$qdrant_dir/storage" \
      QDRANT__STORAGE__SNAPSHOTS_PATH="$qdrant_dir/snapshots" \
      QDRANT__STORAGE__TEMP_PATH="$qdrant_dir/tmp" QDRANT__TELEMETRY_DISABLED=true \
      QDRANT_INIT_FILE_PATH="$qdrant_dir/.qdrant-initialized" \
      "$qdrant_bin" --disable-telemetry ) >"$qdrant_dir/qdrant.log" 2>&1 &
  qdrant_pid=$!
  for _ in $(seq 300); do
    python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$q_rest/readyz', timeout=1)" 2>/dev/null && break
    sleep 0.1
  done
  python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$q_rest/readyz', timeout=1)" 2>/dev/null || {
    echo "!! Qdrant did not become ready; its log:"; cat "$qdrant_dir/qdrant.log"; exit 1
  }
  export HYPERMEM_TEST_QDRANT_URL="http://127.0.0.1:$q_grpc" HYPERMEM_TEST_QDRANT_REST="127.0.0.1:$q_rest"
  # The fault tests start their own from the same binary.
  export HYPERMEM_REQUIRE_QDRANT=1
  phase "Qdrant $("$qdrant_bin" --version 2>/dev/null | awk '{print $2}') on $HYPERMEM_TEST_QDRANT_URL (pid $qdrant_pid)"
else
  echo "!! SKIP: no QDRANT_URL and no $qdrant_bin: the scale profile's Qdrant tests SKIP (they say so one by one)"
fi

# --- PostgreSQL for the scale profile's event log (`tests/ledger_contract.rs`) -------------
# The newest server binaries installed (Debian's layout, else on PATH), else installed from
# Debian; initialised in a temporary directory, listening on a free loopback port only,
# stopped by its postmaster's pid on exit. The server refuses to run as root: as root it
# runs as `nobody`.
find_pg() {
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$d/initdb" ] && [ -x "$d/postgres" ] && { echo "$d"; return; }
  done
  command -v initdb >/dev/null 2>&1 && dirname "$(command -v initdb)"
}
pg_bin=$(find_pg || true)
if [ -z "$pg_bin" ]; then
  phase "installing postgresql (apt-get install -y postgresql)"
  "${as_root[@]}" apt-get install -y postgresql >/dev/null 2>&1 || {
    "${as_root[@]}" apt-get update >/dev/null && "${as_root[@]}" apt-get install -y postgresql >/dev/null
  }
  pg_bin=$(find_pg || true)
fi
[ -n "$pg_bin" ] || { echo "!! no PostgreSQL server binaries after installing: the event log's PostgreSQL contract cannot run"; exit 1; }
pg_as=()
if [ "$(id -u)" -eq 0 ]; then
  chown nobody "$pg_dir"
  pg_as=(runuser -u nobody --)
fi
pg_port=$(free_port)
"${pg_as[@]}" "$pg_bin/initdb" -D "$pg_dir/data" -A trust -U hm --no-sync >"$pg_dir/initdb.log" 2>&1 || {
  echo "!! initdb failed; its log:"; cat "$pg_dir/initdb.log"; exit 1
}
"${pg_as[@]}" "$pg_bin/postgres" -D "$pg_dir/data" -h 127.0.0.1 -p "$pg_port" -k "$pg_dir" \
  -c fsync=off >"$pg_dir/postgres.log" 2>&1 &
for _ in $(seq 300); do
  "$pg_bin/pg_isready" -q -h 127.0.0.1 -p "$pg_port" && break
  sleep 0.1
done
"$pg_bin/pg_isready" -q -h 127.0.0.1 -p "$pg_port" || {
  echo "!! PostgreSQL did not become ready; its log:"; cat "$pg_dir/postgres.log"; exit 1
}
export HYPERMEM_TEST_POSTGRES_URL="postgres://hm@127.0.0.1:$pg_port/postgres"
# A server that cannot start is a failure here, not a skip.
export HYPERMEM_REQUIRE_POSTGRES=1
phase "PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$pg_port (pid $(head -1 "$pg_dir/data/postmaster.pid"))"

# The library and binary with Redis and without Qdrant (the code only this combination
# compiles); the standard profile's tests run in the scale build below.
phase "cargo check --features standard --lib --bins (the standard profile builds on its own)"
cargo check --features standard --lib --bins
phase "cargo test --features scale,sentence (Redis $(redis-server --version | awk '{print $3}') on $HYPERMEM_TEST_REDIS_URL; the standard and scale suites, and the sentence model's in the same build)"
cargo test --features scale,sentence --lib --test redis --test qdrant --test qdrant_cluster --test tier_contract --test profiles --test sentence --test load --test ledger_contract --test nodes

echo "[$SECONDS s] all tests passed"
