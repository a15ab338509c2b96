#!/bin/bash
# ingot benchmarks: `make bench` runs bench/run.sh BUILD (not part of make check).
#   BENCH_SIZE_MB (1024)  input size; e.g. 256 for a quicker run
#   BENCH_ROUNDS  (3)     rounds, tools alternating within each
#   BENCH_LEVEL (3), BENCH_BLOCK (131072), BENCH_JOBS (2), BENCH_SMALL_REPS (15)
#   BENCH_REBUILD_LEVEL (19)  level of the *_l19 rows (block cache in use)
#   BENCH_REBUILD_ROUNDS (1)  rounds of those rows (0 skips them; the writer runs at that level too)
#   BENCH_WORK ($BUILD/bench)  generated input and outputs (kept: the input is reused)
#   BENCH_AUDIT_NODES ("10000 100000")  pool sizes of the `ingot audit` rows (0 skips them)
#   BENCH_ONLY    ("")    only these row sets: build, audit, sign, floor, serve (results go to bench/results-SET.json)
#   BENCH_SERVE_NODES (100000), BENCH_SERVE_PG_NODES (10000), BENCH_SERVE_CONC (1000), BENCH_SERVE_IDLE (10000)
#                         the verifier's rows (bench/serve_bench.py)
#   BENCH_RESULTS (bench/results.json)
# Prints a table and writes bench/results.json; see docs/bench.md.
set -euo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/.."
exec python3 bench/bench.py "$BUILD"
