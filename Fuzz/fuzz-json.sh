#!/usr/bin/env bash
# Fuzzes Runway's JSON parser against Foundation's JSONSerialization with libFuzzer:
# ./Fuzz/fuzz-json.sh [RUNS] (default 1,000,000). Builds into .build-fuzz/ (ignored by git),
# starts from Fuzz/json-corpus, and writes any input where the two disagree to
# .build-fuzz/json-artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-1000000}"
mkdir -p .build-fuzz/json-artifacts .build-fuzz/json-corpus
cp -n Fuzz/json-corpus/* .build-fuzz/json-corpus/ 2>/dev/null || true
swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name RunwayJSONFuzz \
  Sources/Runway/JSON/JSON.swift Sources/Runway/JSON/JSONParser.swift Sources/Runway/JSON/JSON+Encoding.swift \
  Sources/Runway/JSON/UTF8Validation.swift Sources/Runway/Errors/RunwayError.swift Fuzz/JSONFuzzTarget.swift \
  -o .build-fuzz/json-fuzz
.build-fuzz/json-fuzz -runs="$runs" -max_len=4096 -artifact_prefix=.build-fuzz/json-artifacts/ \
  -print_final_stats=1 .build-fuzz/json-corpus
