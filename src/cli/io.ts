/**
 * Where the CLI writes and what it reads from its process: its own module, so
 * that every command can take one without importing `main.ts` (which imports
 * every command).
 *
 * @module
 */

/** Where the CLI writes; replaceable in tests. */
export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  env: Record<string, string | undefined>;
  cwd: string;
}

/** The process's own stdout, stderr, environment and working directory. */
export const defaultIo = (): CliIo => ({
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
  cwd: process.cwd(),
});
