#!/bin/bash
# Instructions per request of one server alone, in steady state (docs/performance.md, ninth round).
# Needs valgrind (apt install valgrind) and a built dist/ (npm run build).
#   bench/instructions/count.sh tenantd|raw me|get|usage|introspect|refresh|upsert|list-indexed|list-unindexed|list-indexed-8|list-unindexed-8 [requests=3000] [warm-up=20000]
# (the "-8" lists ask for 8 tenants' records in turn, as the bench's lists over 10,000 tenants do)
# KEEP=dir keeps callgrind's output and the JIT's symbol map (node --perf-basic-prof) there.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
KIND=${1:?tenantd or raw}; SCENARIO=${2:?a scenario}; N=${3:-3000}; WARM=${4:-20000}
D=$(mktemp -d)
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$D/cg.out" \
  node --single-threaded --perf-basic-prof "$HERE/server.mjs" "$KIND" "$SCENARIO" > "$D/line" 2> "$D/err" &
VP=$!
until grep -q port "$D/line" 2>/dev/null; do
  sleep 0.5
  kill -0 $VP 2>/dev/null || { cat "$D/err"; exit 1; }
done
node "$HERE/client.mjs" "$(head -1 "$D/line")" "$WARM" "$N" $VP
callgrind_control -d $VP > /dev/null 2>&1
sleep 1
kill -9 $VP; wait $VP 2>/dev/null || true
TOTAL=$(cat "$D"/cg.out.* | awk '/^totals:/ {s += $2} END {print s}')
echo "$KIND $SCENARIO: $((TOTAL / N)) instructions per request ($N requests after $WARM)"
if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp "$D"/cg.out.* "$KEEP/" && cp "/tmp/perf-$VP.map" "$KEEP/perf.map"; fi
rm -rf "$D" "/tmp/perf-$VP.map"
