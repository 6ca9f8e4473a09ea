/**
 * Crash safety: the real server (`registry-kit serve`) gets concurrent work,
 * is SIGKILLed at a random moment, and is restarted on the same data directory
 * (see test/crash/server.ts for why the real CLI). After every kill:
 * - on disk, through the fs driver: every blob matches its digest; every
 *   manifest parses and references only linked, present blobs; tags and
 *   referrers name existing revisions; user records parse (check.ts);
 * - through the restarted server: every acknowledged write (201/202/204) is
 *   there, every acknowledged delete stays deleted, users authenticate with the
 *   last acknowledged password;
 * - every upload left open (by design or by the kill) resumes with its old
 *   `_state` and completes, or fails cleanly with 404 BLOB_UPLOAD_UNKNOWN.
 *
 * `npm test` runs a short profile; `CRASH_TRIALS=100 npx vitest run test/crash`
 * is the long run (it also kills during start-up). The data directory starts
 * afresh every 20 trials so that the whole-tree hash stays quick.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkAcked, checkDisk, emptyFigures, resumeUploads } from "./check.js";
import { kill, spawnServer, started } from "./server.js";
import { Api, newModel, Problem, registryWorker, usersWorker, type Model } from "./workload.js";

const TRIALS = Number(process.env.CRASH_TRIALS ?? 5);
const LONG = TRIALS > 10;
const EPOCH = 20;
const WORKERS = 3;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dirs: string[] = [];

afterAll(async () => {
  for (const child of [...started]) await kill(child);
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** Errors a worker sees because the server died under it. */
function killedUnder(error: unknown): boolean {
  if (error instanceof Problem) return false;
  const e = error as { message?: string; name?: string };
  return e.message === "fetch failed" || e.name === "AbortError" || /terminated|socket|ECONN/i.test(e.message ?? "");
}

describe("crash safety (SIGKILL at random points)", () => {
  it(`survives ${TRIALS} kills`, { timeout: 60_000 + TRIALS * 20_000 }, async () => {
    const figures = emptyFigures();
    const problems: string[] = [];
    let data = "";
    let model: Model = newModel(WORKERS, 0);
    let startupKills = 0;
    let ackedBefore = 0; // acknowledgements of the finished epochs
    const t0 = Date.now();

    const verify = async (api: Api, trial: number): Promise<void> => {
      const found = [...(await checkAcked(api, model, figures)), ...(await resumeUploads(api, model, figures))];
      problems.push(...found.map((p) => `trial ${trial}, after restart: ${p}`));
    };

    for (let trial = 0; trial < TRIALS && problems.length === 0; trial++) {
      if (trial % EPOCH === 0) {
        if (data) await rm(data, { recursive: true, force: true });
        ackedBefore += model.acked;
        data = await mkdtemp(path.join(tmpdir(), "rk-crash-"));
        dirs.push(data);
        model = newModel(WORKERS, trial / EPOCH);
      }
      const { child, ready } = spawnServer(data);
      if (LONG && trial % EPOCH !== 0 && Math.random() < 0.1) {
        // Killed while starting (keys, admin bootstrap, listening): the next start must cope.
        await Promise.race([ready.catch(() => {}), sleep(Math.random() * 800)]);
        await kill(child);
        startupKills++;
        continue;
      }
      const server = await ready;
      const api = await Api.connect(server.url, model);
      await verify(api, trial);

      const workers = [
        ...model.repos.map((repo) => registryWorker(api, model, repo, () => false)),
        usersWorker(api, model, trial / EPOCH, () => false),
      ].map((w) => w.then(() => undefined, (error: unknown) => error));
      await sleep(100 + Math.random() * 1400);
      await kill(child);
      for (const error of await Promise.all(workers)) {
        if (error !== undefined && !killedUnder(error)) problems.push(`trial ${trial}, while running: ${String(error)}\n${server.output()}`);
      }
      problems.push(...(await checkDisk(data, figures)).map((p) => `trial ${trial}, on disk after the kill: ${p}`));
    }

    // One last restart: everything acknowledged before the last kill is there.
    if (problems.length === 0) {
      const { child, ready } = spawnServer(data);
      const server = await ready;
      await verify(await Api.connect(server.url, model), TRIALS);
      await kill(child);
      problems.push(...(await checkDisk(data, figures)).map((p) => `final: ${p}`));
    }

    console.log(
      `crash: ${TRIALS} trials (${startupKills} killed during start-up) in ${((Date.now() - t0) / 1000).toFixed(1)} s; ` +
        `${figures.blobsHashed} blob objects hashed, ${figures.metadataChecked} metadata objects parsed, ` +
        `${figures.ackedChecked} acknowledged objects read back (${ackedBefore + model.acked} acknowledgements received); ` +
        `uploads resumed ${figures.uploadsResumed}, unknown after the kill ${figures.uploadsUnknown}; ` +
        `temp files left by kills ${figures.tempFilesLeft}; problems ${problems.length}`,
    );
    expect(problems).toEqual([]);
  });
});
