#!/usr/bin/env bash
# bench/trust.sh: signing and verifying against a local docker-registry (CNCF
# distribution 2.8, no referrers API: the referrers tag schema), on 127.0.0.1.
#
#   verify: a plugin with 3 signatures (cosign's golden one and two of plugkit's), on a
#           client whose connection is up.  Target: under 50 ms.
#   sign:   one signature, read back after the write.  Target: dominated by the
#           registry round trips: the figure is set beside the raw push of the same content
#           (bundle and referrer manifest, no signing, no read-back) measured in the same
#           run, the requests it makes, and the CPU the signing itself costs. The read-back
#           waits two to three times the manifest push (docs/trust.md), so sign is about
#           3-4x the raw push, all of it registry time.
#
# The benchmarks start their own registry (internal/testservice). BENCHTIME (default
# 50x) is passed to -benchtime. The load average is printed: figures from a loaded
# machine are not the machine's.
# Needs Go and docker-registry.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCHTIME=${BENCHTIME:-50x}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
out=$(PLUGKIT_TEST_REQUIRE_SERVICES=1 go test ./trust -run '^$' -bench 'Registry' -benchtime "$BENCHTIME" -count 1)
echo "$out" | grep -E '^Benchmark' || { echo "$out"; exit 1; }
echo "$out" | awk '
/^BenchmarkVerifyRegistry3Signatures/ {
	for (i = 1; i <= NF; i++) { if ($(i+1) == "ms/verify") v = $i; if ($(i+1) == "ms/round-trip") r = $i; if ($(i+1) == "requests/op") q = $i }
	printf "verify, 3 signatures: %.2f ms (target < 50 ms: %s); %d requests, round trip %.2f ms\n", v, (v < 50 ? "met" : "MISSED"), q, r
}
/^BenchmarkSignRegistry/ {
	for (i = 1; i <= NF; i++) { if ($(i+1) == "ms/sign") s = $i; if ($(i+1) == "ms/round-trip") r = $i; if ($(i+1) == "requests/op") q = $i; if ($(i+1) == "cpu-ms/op") c = $i; if ($(i+1) == "raw-ms/op") w = $i }
	printf "sign: %.2f ms = %.1f x the raw push of the same content (%.2f ms); %d requests (round trip %.2f ms); signing CPU %.3f ms (%.2f%% of the time)\n", s, s / w, w, q, r, c, 100 * c / s
}'
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
