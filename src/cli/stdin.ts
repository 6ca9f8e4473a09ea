/**
 * Reading a secret (a password) from standard input: the first line of what
 * is piped in, or, at a terminal, a line typed after a prompt without echo.
 *
 * @module
 */
import type { CliIo } from "./io.js";

/** Most bytes read from a pipe: a password is at most 128 characters. */
const MAX_INPUT = 64 * 1024;

/** The first line of standard input, without its line break; throws when there is none. */
export async function readSecretLine(prompt: string, io: CliIo): Promise<string> {
  const line = process.stdin.isTTY ? await fromTerminal(prompt, io) : await fromPipe();
  if (line === undefined || line === "") throw new Error("no password on standard input (give it as the first line)");
  return line;
}

async function fromPipe(): Promise<string | undefined> {
  let text = "";
  for await (const chunk of process.stdin) {
    text += typeof chunk === "string" ? chunk : (chunk as Buffer).toString("utf8");
    if (text.includes("\n") || text.length > MAX_INPUT) break;
  }
  const end = text.indexOf("\n");
  return (end < 0 ? text : text.slice(0, end)).replace(/\r$/, "");
}

/** A line typed at the terminal, not echoed; Ctrl-C or Ctrl-D gives up. */
function fromTerminal(prompt: string, io: CliIo): Promise<string | undefined> {
  const stdin = process.stdin;
  io.err(prompt.trimEnd());
  return new Promise((resolve) => {
    let line = "";
    const done = (value: string | undefined) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off("data", onData);
      resolve(value);
    };
    const onData = (data: Buffer) => {
      for (const ch of data.toString("utf8")) {
        if (ch === "\r" || ch === "\n") return done(line);
        if (ch === "\u0003" || ch === "\u0004") return done(undefined);
        if (ch === "\u007f" || ch === "\b") line = line.slice(0, -1);
        else line += ch;
      }
    };
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on("data", onData);
  });
}
