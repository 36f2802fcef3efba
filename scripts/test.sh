#!/usr/bin/env bash
# The test command (README "Testing"): the whole default suite, then the hdv suite again with
# the portable scalar kernel forced, then the quick-start example as an end-to-end smoke test.
# Installs nothing today: the lite profile needs no service. Later tiers that need Redis
# start it here, on a loopback port, and stop it by pid on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -d ../shared/models/m2v-minilm-256 ]; then
  echo "!! ../shared/models/m2v-minilm-256 is missing: the test against the shared static model SKIPS (tests with a model they write themselves still run)"
fi

echo "== cargo test --workspace (kernel: auto-detected)"
cargo test --workspace

echo "== cargo test -p hypermem-hdv with HDV_KERNEL=scalar"
HDV_KERNEL=scalar cargo test -p hypermem-hdv

echo "== quick-start example"
cargo run --example quickstart >/dev/null

echo "all tests passed"
