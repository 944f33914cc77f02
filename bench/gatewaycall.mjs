// bench/gatewaycall.mjs: the latency plugkit gateway adds to a tool call,
// seen by the official TypeScript SDK's client. Run by bench/gateway.sh:
//   node gatewaycall.mjs N GATEWAY_CMD... -- DIRECT_CMD...
// It calls the echo tool N times through the gateway and N times directly
// on the same server program, interleaved, and prints the median and p99
// of the differences and of each path, in microseconds.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [n, ...rest] = process.argv.slice(2);
const cut = rest.indexOf("--");
const [gwCmd, directCmd] = [rest.slice(0, cut), rest.slice(cut + 1)];

async function connect([command, ...args]) {
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(new StdioClientTransport({ command, args, stderr: "ignore" }));
  return client;
}

async function timed(client, name) {
  const begin = process.hrtime.bigint();
  const res = await client.callTool({ name, arguments: { n: 1 } });
  if (res.isError) throw new Error(`${name}: tool error`);
  return Number(process.hrtime.bigint() - begin) / 1e3;
}

const gw = await connect(gwCmd);
const direct = await connect(directCmd);
for (let i = 0; i < 20; i++) {
  await timed(gw, "bench_s_echo");
  await timed(direct, "echo");
}
const added = [], through = [], alone = [];
for (let i = 0; i < Number(n); i++) {
  const g = await timed(gw, "bench_s_echo");
  const d = await timed(direct, "echo");
  through.push(g); alone.push(d); added.push(g - d);
}
const q = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(Math.floor(p * s.length), s.length - 1)]; };
console.log(`typescript-sdk added-median-µs ${q(added, 0.5).toFixed(1)} added-p99-µs ${q(added, 0.99).toFixed(1)} gateway-median-µs ${q(through, 0.5).toFixed(1)} direct-median-µs ${q(alone, 0.5).toFixed(1)}`);
await gw.close();
await direct.close();
