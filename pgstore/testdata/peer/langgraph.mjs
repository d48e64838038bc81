// The LangGraph.js side of BenchmarkPeer (pgstore/peer_bench_test.go):
// PostgresSaver.put of @langchain/langgraph-checkpoint-postgres by
// PEER_WRITERS concurrent writers, each on its own thread, through one
// pg.Pool of that many connections (the saver's own way to share a
// database). It reads commands on stdin, one a line:
//
//	run K   every writer puts K checkpoints; answers one JSON line
//	        {"puts":…, "seconds":…, "cpu_seconds":…}
//
// and exits at the end of its input. The package is loaded from
// PEER_LANGGRAPH (an npm prefix holding it, see bench/peer).
import { createRequire } from "node:module";
import { createInterface } from "node:readline";

const require = createRequire(process.env.PEER_LANGGRAPH + "/node_modules/");
const { PostgresSaver } = require("@langchain/langgraph-checkpoint-postgres");
const pg = require("pg");

const writers = Number(process.env.PEER_WRITERS);
const pool = new pg.Pool({
	host: process.env.PEER_PG_HOST,
	user: process.env.PEER_PG_USER,
	database: process.env.PEER_PG_DB,
	max: writers,
});
const saver = new PostgresSaver(pool);
await saver.setup();

// Each writer's last checkpoint, as a graph's run would chain them.
const last = Array.from({ length: writers }, () => undefined);
let seq = 0;

async function writer(w, k) {
	for (let i = 0; i < k; i++) {
		const n = ++seq;
		const id = String(n).padStart(12, "0");
		const step = `step ${n}`;
		const checkpoint = {
			v: 4,
			id,
			ts: new Date().toISOString(),
			channel_values: { step },
			channel_versions: { step: n },
			versions_seen: {},
		};
		const config = { configurable: { thread_id: `peer/w${w}`, checkpoint_ns: "", checkpoint_id: last[w] } };
		await saver.put(config, checkpoint, { source: "loop", step: n, parents: {} }, { step: n });
		last[w] = id;
	}
}

for await (const line of createInterface({ input: process.stdin })) {
	const [cmd, arg] = line.trim().split(/\s+/);
	if (cmd !== "run") continue;
	const k = Number(arg);
	const cpu0 = process.cpuUsage();
	const t0 = process.hrtime.bigint();
	await Promise.all(Array.from({ length: writers }, (_, w) => writer(w, k)));
	const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
	const cpu = process.cpuUsage(cpu0);
	process.stdout.write(JSON.stringify({ puts: writers * k, seconds, cpu_seconds: (cpu.user + cpu.system) / 1e6 }) + "\n");
}
await pool.end();
