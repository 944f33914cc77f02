#!/usr/bin/env bash
# The speed targets of plugkit gateway (issue 12), measured with real
# processes: the plugkit binary as the gateway over stdio, the MCP servers
# as its children, the go-sdk client on the other side.
#
#   - a tool call through the gateway against the same call made directly
#     to the same server program, interleaved in the same run (target: the
#     gateway adds under 1 ms);
#   - tools/list over 50 installed plugins x 4 servers (1,000 tools) once
#     the servers have started (target: under 50 ms);
#   - gateway start to the end of the MCP handshake with 50 installed
#     plugins, servers starting lazily, beside the same with an empty home
#     (target: under 100 ms), and to the answer of prompts/get of a skill,
#     which waits for every plugin to be verified and loaded;
#   - verifying and loading those 50 plugins in process, the bulk of start;
#   - the host's own work per tool call in process (the gateway adds one
#     process hop on top of it).
#
# tools/list is timed with a client that does not decode the answer: the
# go-sdk client validates every tool's schema, which costs more than the
# gateway's whole answer and is the client's, not the gateway's.
# Usage: bench/gateway.sh [ITERATIONS]   (default 50)
set -euo pipefail
N=${1:-50}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
go test ./cmd/plugkit -run '^$' -bench 'BenchmarkGateway(Call|ToolsList|Start)$' -benchtime "${N}x" |
	awk '
	/^BenchmarkGatewayCall/ {
		for (i = 1; i < NF; i++) m[$(i+1)] = $i
		printf "tool call:   gateway %.0f µs, direct %.0f µs, overhead %.0f µs (target < 1000 µs)\n", m["gateway-µs/call"], m["direct-µs/call"], m["overhead-µs/call"]
		printf "call CPU:    %.0f µs of the gateway process per call, %.0f µs of the server process\n", m["gateway-cpu-µs/call"], m["server-cpu-µs/call"]
	}
	/^BenchmarkGatewayToolsList/ {
		for (i = 1; i < NF; i++) m[$(i+1)] = $i
		printf "tools/list:  %.1f ms for 1,000 tools of 200 servers once started (target < 50 ms); first list, starting them: %.0f ms\n", m["list-ms"], m["first-list-ms"]
	}
	/^BenchmarkGatewayStart/ {
		for (i = 1; i < NF; i++) m[$(i+1)] = $i
		printf "start:       %.1f ms to the end of the handshake with 50 installed plugins, %.1f ms with an empty home (target < 100 ms)\n", m["start-50-plugins-ms"], m["start-empty-home-ms"]
		printf "loaded:      %.1f ms from start to the answer of prompts/get of a skill with 50 installed plugins (all verified and loaded first), %.1f ms with an empty home (an error)\n", m["skill-50-plugins-ms"], m["skill-empty-home-ms"]
	}
	/^(FAIL|panic)/ { print; failed = 1 }
	END { exit failed }'
go test ./host -run '^$' -bench 'Benchmark(HomePluginsLoad|CallTool)$' -benchtime "${N}x" -benchmem |
	awk '
	/^BenchmarkHomePluginsLoad/ { printf "load:        %.1f ms to verify and load 50 installed plugins\n", $3 / 1e6 }
	/^BenchmarkCallTool/ {
		for (i = 1; i < NF; i++) m[$(i+1)] = $i
		printf "host call:   %.0f µs through Host.CallTool, %.0f µs on the session directly: %.0f µs of plugkit per call\n", m["host-µs/call"], m["session-µs/call"], m["overhead-µs/call"]
	}'
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
