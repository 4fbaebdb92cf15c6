#!/usr/bin/env bash
# Fuzzes RunwayLinks' router with libFuzzer: ./Fuzz/fuzz-router.sh [RUNS] (default 1,000,000).
# Builds into .build-fuzz/ (ignored by git), starts from the seed corpus in Fuzz/corpus, and
# writes any crashing input to .build-fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-1000000}"
mkdir -p .build-fuzz/artifacts .build-fuzz/corpus
cp -n Fuzz/corpus/* .build-fuzz/corpus/ 2>/dev/null || true
swiftc -sanitize=fuzzer,address -parse-as-library -O \
  $(find Sources/RunwayLinks -name '*.swift' ! -path '*/Registration/*') Fuzz/RouterFuzzTarget.swift \
  -o .build-fuzz/router-fuzz
.build-fuzz/router-fuzz -runs="$runs" -max_len=4096 -artifact_prefix=.build-fuzz/artifacts/ \
  -print_final_stats=1 .build-fuzz/corpus
