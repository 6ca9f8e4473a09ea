/** The machine's own ceilings, measured the way the registries are (bench/run.ts). */
import { createHash, randomBytes } from "node:crypto";
import { closeSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { cpuOf, runCmd, sleep, wrk } from "../proc.js";
import { MiB, QUICK, WRK_SECONDS, ceilings, log, round, startHello, tools, work, WRK } from "./context.js";

// ---------------------------------------------------------------- ceilings
/** Write `mib` MiB to a new file without syncing; the system CPU seconds per GiB it took. */
export function pageCacheWrite(file: string, mib: number): number {
  const buf = randomBytes(MiB);
  const fd = openSync(file, "w");
  try {
    const before = process.cpuUsage();
    for (let i = 0; i < mib; i++) writeSync(fd, buf);
    return process.cpuUsage(before).system / 1e6 / (mib / 1024);
  } finally {
    closeSync(fd);
  }
}

export async function measureCeilings(): Promise<void> {
  log("== machine ceilings");
  {
    const buf = randomBytes(MiB);
    const total = QUICK ? 256 : 1024;
    const t0 = performance.now();
    const h = createHash("sha256");
    for (let i = 0; i < total; i++) h.update(buf);
    h.digest();
    const v = total / ((performance.now() - t0) / 1000);
    ceilings.sha256 = { value: round(v), unit: "MiB/s", label: "node:crypto SHA-256 (1 MiB updates)" };
  }
  {
    const count = QUICK ? 256 : 1024;
    const file = join(work, "dd.bin");
    const t0 = performance.now();
    const r = await runCmd(tools.dd!, ["if=/dev/zero", `of=${file}`, "bs=1M", `count=${count}`, "conv=fdatasync"]);
    const secs = (performance.now() - t0) / 1000;
    rmSync(file, { force: true });
    if (r.code !== 0) throw new Error(`dd failed: ${r.stderr}`);
    ceilings.disk = { value: round(count / secs), unit: "MiB/s", label: `disk write, dd ${count} MiB conv=fdatasync` };
  }
  {
    // The kernel's CPU cost of taking written bytes into the page cache, which both
    // registries pay for every byte pushed. On a VM that hands free memory back to its
    // host (virtio-balloon free page reporting), a page the guest must fault in again
    // costs several times more than one freed a moment ago: measured both ways, with
    // 1 GiB in quick runs too (smaller frees are not always handed back within seconds).
    const count = 1024;
    const first = join(work, "page-cache-1.bin");
    const second = join(work, "page-cache-2.bin");
    await sleep(5_000); // long enough for the dd file's freed pages to be handed back on this VM
    const settled = pageCacheWrite(first, count);
    rmSync(first, { force: true });
    const reused = pageCacheWrite(second, count);
    rmSync(second, { force: true });
    const label = (when: string): string => `page-cache write, pages freed ${when}, system CPU`;
    ceilings.pageCacheSettled = { value: round(settled, 2), unit: "s/GiB", label: label("≥ 5 s before") };
    ceilings.pageCacheReused = { value: round(reused, 2), unit: "s/GiB", label: label("just before") };
  }
  {
    const hello = await startHello();
    try {
      await wrk(tools.wrk!, `${hello.url}/`, { ...WRK, seconds: 1 });
      const cpu0 = cpuOf(hello.pid);
      const r = await wrk(tools.wrk!, `${hello.url}/`, { ...WRK, seconds: WRK_SECONDS });
      ceilings.hello = { value: round(r.requestsPerSec, 0), unit: "req/s", label: `bare node:http hello-world (wrk -t2 -c50)` };
      ceilings.helloCpu = { value: round(((cpuOf(hello.pid) - cpu0) / Math.max(1, r.requests)) * 1e6, 0), unit: "µs/req", label: "bare node:http hello-world, server CPU" };
    } finally {
      await hello.stop();
    }
  }
  for (const c of Object.values(ceilings)) log(`  ${c.label.padEnd(58)} ${String(c.value).padStart(10)} ${c.unit}`);
  log("");
}
