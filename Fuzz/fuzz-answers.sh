#!/usr/bin/env bash
# Fuzzes the engine with hostile answers (Tests/RunwayTests/Exchange/Fuzz): INPUTS answers through
# StubTransport, and INPUTS/10 over a real socket to each transport, seeded with SEED; and, over
# each transport, INPUTS/10 downloads whose resume gets a hostile answer (Tests/RunwayTests/Transfer/Fuzz).
# ./Fuzz/fuzz-answers.sh [INPUTS] [SEED] (default 1,000,000 and the suite's seed). The suite's
# own short run is part of `Scripts/test`; this is the long one. Each mode runs in a process of
# its own, so that a trap in one loses nothing of the others; the inputs each had started are in
# .build-fuzz/answers-MODE.trace (after a trap, its last lines name the inputs in flight).
set -uo pipefail
cd "$(dirname "$0")/.."
export RUNWAY_FUZZ_INPUTS="${1:-1000000}"
if [ -n "${2:-}" ]; then export RUNWAY_FUZZ_SEED="$2"; fi
swift build --build-tests || exit 1
mkdir -p .build-fuzz
for mode in stub asyncHTTPClient urlSession; do
  : > ".build-fuzz/answers-$mode.trace"
  RUNWAY_FUZZ_ONLY="$mode" RUNWAY_FUZZ_TRACE=".build-fuzz/answers-$mode.trace" \
    swift test --skip-build --filter "HostileAnswerFuzzTests|HostileResumeFuzzTests" > ".build-fuzz/answers-$mode.log" 2>&1
  echo "$mode: exit $?"
  grep -E "hostile (answers|resumes)|Expectation failed|Issue recorded|Fatal error|unexpected signal" ".build-fuzz/answers-$mode.log" | head -20
done
