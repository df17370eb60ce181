// The ceiling login and signup cannot pass: argon2id hashes per second at tenantd's configured
// cost with 8 in flight, measured here in the parent while both servers sit idle.
import { hash } from "@node-rs/argon2";
import { OWASP_ARGON2 } from "../dist/crypto/password.js";

export async function measureArgon2Bound({ inFlight = 8, seconds = 3 } = {}) {
  const options = { ...OWASP_ARGON2, algorithm: 2 };
  await hash("warm up the thread pool", options);
  let done = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      await hash("correct horse battery staple", options);
      done++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const elapsed = (performance.now() - started) / 1000;
  return { hashesPerSecond: done / elapsed, inFlight, params: OWASP_ARGON2, threadPool: Number(process.env.UV_THREADPOOL_SIZE ?? 4) };
}
