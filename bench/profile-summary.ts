/**
 * Summarise a V8 `.cpuprofile` (from `bench/run.ts --profile`, which runs
 * registry-kit's server with `node --cpu-prof`): self time per function and
 * total (inclusive) time for registry-kit's own functions.
 *
 *   node --import tsx bench/profile-summary.ts bench/profiles/<file>.cpuprofile [top=25]
 */
import { readFileSync } from "node:fs";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const file = process.argv[2];
if (!file) {
  console.error("usage: bench/profile-summary.ts <file.cpuprofile> [top]");
  process.exit(2);
}
const top = Number(process.argv[3] ?? 25);
const p = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const selfUs = new Map<number, number>();
p.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

const key = (n: Node): string => {
  const url = n.callFrame.url.replace(/^.*\/(src|node_modules)\//, "$1/").replace(/^file:\/\//, "");
  return `${n.callFrame.functionName || "(anonymous)"} ${url ? `${url}:${n.callFrame.lineNumber + 1}` : ""}`.trim();
};
const self = new Map<string, number>();
const incl = new Map<string, number>();
for (const [id, us] of selfUs) {
  const n = byId.get(id)!;
  self.set(key(n), (self.get(key(n)) ?? 0) + us);
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const k = key(byId.get(cur)!);
    if (seen.has(k)) continue;
    seen.add(k);
    incl.set(k, (incl.get(k) ?? 0) + us);
  }
}
const pct = (us: number): string => `${((us / total) * 100).toFixed(1).padStart(5)} %`;
console.log(`profile ${file}: ${(total / 1e6).toFixed(2)} s sampled\n\nself time:`);
for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${k}`);
console.log(`\ninclusive time, registry-kit code:`);
for (const [k, us] of [...incl].filter(([k]) => k.includes("src/")).sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${k}`);
