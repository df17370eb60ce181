import { availableParallelism } from "node:os";
import { hash, verify } from "@node-rs/argon2";
import { createLimiter } from "../tools/limiter.ts";

// Algorithm.Argon2id; the package exports it as an ambient const enum, which isolated modules cannot read.
const ARGON2ID = 2;

export interface Argon2Params {
  memoryCost: number;
  timeCost: number;
  parallelism: number;
}

/** OWASP's argon2id recommendation; the production default. */
export const OWASP_ARGON2: Argon2Params = { memoryCost: 19456, timeCost: 2, parallelism: 1 };

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(hashed: string, password: string): Promise<boolean>;
  /** Spends the same time as a real verify, for unknown accounts (no user enumeration by timing). */
  verifyDummy(password: string): Promise<false>;
}

// @node-rs/argon2 hashes on libuv's thread pool, so the event loop keeps serving requests.
// At most one hash per core runs at once: more cannot finish sooner (argon2 is CPU-bound), and
// every extra hashing thread takes CPU from the event loop and a pool thread from file I/O.
export function createPasswordHasher(params: Argon2Params, maxConcurrent = availableParallelism()): PasswordHasher {
  const options = { ...params, algorithm: ARGON2ID };
  const limit = createLimiter(Math.max(1, maxConcurrent));
  let dummy: Promise<string> | undefined;
  const check = (hashed: string, password: string) => limit(() => verify(hashed, password)).catch(() => false);
  return {
    hash: (password) => limit(() => hash(password, options)),
    verify: check,
    async verifyDummy(password) {
      dummy ??= limit(() => hash("tenantd-dummy-password", options));
      await check(await dummy, password);
      return false;
    },
  };
}
