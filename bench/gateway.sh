#!/usr/bin/env bash
# The speed targets of plugkit gateway, measured with real processes: the
# plugkit binary as the gateway over stdio, the MCP servers as its
# children, clients of three SDKs on the other side.
#
#   - the latency the gateway adds to a tool call: CALLS (default 2,000)
#     calls through the gateway and CALLS made directly to the same server
#     program, interleaved in the same run, for each client (go-sdk,
#     mark3labs/mcp-go, the official TypeScript SDK); printed as the median
#     and p99 of the differences (target: median under 0.3 ms, p99 under
#     1 ms, on a quiet 2-core machine: the load average is printed too);
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
# gateway's whole answer and is the client's, not the gateway's. The
# TypeScript client is installed from the npm registry into a scratch
# directory (needs node and npm; skipped with a message without them).
# Usage: bench/gateway.sh [ITERATIONS]   (default 50; CALLS=N for the calls)
set -euo pipefail
N=${1:-50}
CALLS=${CALLS:-2000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
go test ./cmd/plugkit/internal/run -run '^$' -bench 'BenchmarkGatewayCall' -benchtime "${CALLS}x" |
	awk '/^BenchmarkGatewayCall\// {
		for (i = 1; i < NF; i++) m[$(i+1)] = $i
		sub(/^BenchmarkGatewayCall\//, "", $1); sub(/-[0-9]+$/, "", $1)
		printf "tool call (%s): the gateway adds %.0f µs median, %.0f µs p99 (target < 300, < 1000); gateway %.0f µs, direct %.0f µs median\n", $1, m["added-median-µs"], m["added-p99-µs"], m["gateway-median-µs"], m["direct-median-µs"]
	}
	/^(FAIL|panic)/ { print; failed = 1 }
	END { exit failed }'
if command -v node >/dev/null && command -v npm >/dev/null; then
	go build -o "$work/plugkit" ./cmd/plugkit
	go build -o "$work/testserver" ./mcprun/internal/testserver
	mkdir -p "$work/bench/bin" "$work/node"
	printf '{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "bench"}\n' >"$work/bench/plugin.json"
	printf '{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": {"s": {"type": "stdio", "command": "./bin/run"}}}\n' >"$work/bench/mcp.json"
	printf '#!/bin/sh\nexec %s "$@"\n' "$work/testserver" >"$work/bench/bin/run" && chmod +x "$work/bench/bin/run"
	(cd "$work/node" && npm init -y >/dev/null && npm install --silent @modelcontextprotocol/sdk@1 >/dev/null)
	cp bench/gatewaycall.mjs "$work/node/"
	node "$work/node/gatewaycall.mjs" "$CALLS" "$work/plugkit" gateway --home "$work/home" "$work/bench" -- "$work/testserver" |
		awk '{ for (i = 2; i < NF; i++) m[$i] = $(i+1)
			printf "tool call (%s): the gateway adds %.0f µs median, %.0f µs p99 (target < 300, < 1000); gateway %.0f µs, direct %.0f µs median\n", $1, m["added-median-µs"], m["added-p99-µs"], m["gateway-median-µs"], m["direct-median-µs"] }'
else
	echo "tool call (typescript-sdk): skipped: needs node and npm"
fi
go test ./cmd/plugkit/internal/run -run '^$' -bench 'BenchmarkGateway(ToolsList|Start)$' -benchtime "${N}x" |
	awk '
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
go test ./host ./install/hostplugins -run '^$' -bench 'Benchmark(HomePluginsLoad|CallTool)$' -benchtime "${N}x" -benchmem |
	awk '
	/^BenchmarkHomePluginsLoad/ { printf "load:        %.1f ms to verify and load 50 installed plugins\n", $3 / 1e6 }
	/^BenchmarkCallTool/ {
		for (i = 1; i < NF; i++) m[$(i+1)] = $i
		printf "host call:   %.0f µs through Host.CallTool, %.0f µs on the session directly: %.0f µs of plugkit per call\n", m["host-µs/call"], m["session-µs/call"], m["overhead-µs/call"]
	}'
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
