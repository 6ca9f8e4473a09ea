import { afterAll, expect } from "vitest";
import type { LogEvent } from "../../src/http/log.js";
import { createUserService, type Authenticator, hashPassword, memoryUserStore, type UserServiceOptions, type UserStore } from "../../src/users/index.js";

/** Cheap scrypt for tests; the default cost is measured in password.test.ts. */
export const FAST = { N: 16, r: 8, p: 1 };

export const PASSWORDS = { root: "Root1234", alice: "Alice1234", bob: "Bob123456" } as const;
export type Name = keyof typeof PASSWORDS;

/**
 * One test file's record of what must never leak and of everything its
 * fixtures let out. Each file makes its own (see {@link watchLeaks}): with
 * `isolate: false` this module is shared by the files of a worker, so nothing
 * here may live at module level.
 */
export interface LeakWatch {
  /** Everything the file's tests sent or saw that must never appear in a response or a log line. */
  secrets: Set<string>;
  /** Every response body and header block the file's fixtures produced, and every log line. */
  transcript: string[];
}

/**
 * A fresh {@link LeakWatch} for the calling test file, checked after all its
 * tests (no secret in any transcript entry), and a `fixture` that records into it.
 * Call once at the top level of a test file.
 */
export function watchLeaks() {
  const watch: LeakWatch = { secrets: new Set(), transcript: [] };
  afterAll(() => {
    // Plain includes() over secrets × transcript (thousands of each in matrix.test.ts);
    // one expect() a pair took seconds.
    const leaks: string[] = [];
    for (const secret of watch.secrets) {
      for (const text of watch.transcript) if (text.includes(secret)) leaks.push(`a secret leaked: ${secret} in ${text.slice(0, 200)}`);
    }
    expect(leaks).toEqual([]);
  });
  return {
    ...watch,
    fixture: (options: Partial<UserServiceOptions> = {}, authenticateWith?: (store: UserStore) => Authenticator) =>
      fixture(watch, options, authenticateWith),
  };
}

/** A store wrapper that remembers every password hash (and salt) it hands out. */
function spy(store: UserStore, secrets: Set<string>): UserStore {
  const note = <T>(value: T): T => {
    const records = Array.isArray((value as { users?: unknown })?.users) ? (value as unknown as { users: unknown[] }).users : [value];
    for (const r of records) {
      const hash = (r as { passwordHash?: string } | undefined)?.passwordHash;
      if (hash) {
        secrets.add(hash);
        const parts = hash.split("$");
        if (parts[4]) secrets.add(parts[4]);
        if (parts[5]) secrets.add(parts[5]);
      }
    }
    return value;
  };
  return {
    getById: async (id) => note(await store.getById(id)),
    getByUsername: async (n) => note(await store.getByUsername(n)),
    getByEmail: async (e) => note(await store.getByEmail(e)),
    list: async (q) => note(await store.list(q)),
    create: async (u) => note(await store.create(u)),
    update: async (id, p) => note(await store.update(id, p)),
    delete: (id) => store.delete(id),
    countAdmins: () => store.countAdmins(),
  };
}

export interface CallOptions {
  as?: Name | [string, string];
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

async function fixture({ secrets, transcript }: LeakWatch, options: Partial<UserServiceOptions>, authenticateWith?: (store: UserStore) => Authenticator) {
  const raw = options.store ?? memoryUserStore();
  const store = spy(raw, secrets);
  const make = async (username: Name, sysadmin: boolean) => {
    secrets.add(PASSWORDS[username]);
    return store.create({ username, email: `${username}@example.test`, realname: "", comment: "", sysadmin, passwordHash: await hashPassword(PASSWORDS[username], FAST) });
  };
  const root = await make("root", true);
  const alice = await make("alice", false);
  const bob = await make("bob", false);
  const logs: LogEvent[] = [];
  const handler = createUserService({
    scrypt: FAST,
    log: (event) => {
      logs.push(event);
      transcript.push(JSON.stringify(event));
    },
    ...options,
    ...(authenticateWith && { authenticate: authenticateWith(store) }),
    store,
  });

  async function call(method: string, path: string, opts: CallOptions = {}): Promise<Answer> {
    const headers = new Headers(opts.headers);
    if (opts.as) {
      const [user, password] = typeof opts.as === "string" ? [opts.as, PASSWORDS[opts.as]] : opts.as;
      headers.set("authorization", `Basic ${btoa(`${user}:${password}`)}`);
    }
    let body: string | undefined = opts.rawBody;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
    }
    const response = await handler(new Request(`http://registry.test${path}`, { method, headers, ...(body !== undefined && { body }) }));
    const text = await response.text();
    transcript.push(text, JSON.stringify([...response.headers]));
    let json: unknown;
    try {
      json = text === "" ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json };
  }

  return { store, raw, handler, call, logs, root, alice, bob };
}
