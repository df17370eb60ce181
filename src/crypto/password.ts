import { hash, verify } from "@node-rs/argon2";

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
export function createPasswordHasher(params: Argon2Params): PasswordHasher {
  const options = { ...params, algorithm: ARGON2ID };
  let dummy: Promise<string> | undefined;
  return {
    hash: (password) => hash(password, options),
    verify: async (hashed, password) => {
      try {
        return await verify(hashed, password);
      } catch {
        return false;
      }
    },
    async verifyDummy(password) {
      dummy ??= hash("tenantd-dummy-password", options);
      await verify(await dummy, password).catch(() => false);
      return false;
    },
  };
}
