// Sends `warm` requests, switches callgrind's counting on in process `pid`, sends `count`
// more on the same keep-alive connection (a new connection deoptimizes Node's socket code),
// then switches it off (pid 0: nothing to switch, for alloc.mjs). `node client.mjs '<server line>' warm count pid`
import { Agent, request } from "node:http";
import { execFileSync } from "node:child_process";

// A fifth element names the reply's field that the next request's body carries (a refresh chain).
// A list of requests (the "-8" lists) is sent in turn.
const line = JSON.parse(process.argv[2]);
const turns = Array.isArray(line.request[0]) ? line.request : [line.request];
const { port } = line;
let [method, path, headers, first, chain] = turns[0];
let body = first;
let turn = 0;
const [warm, count, pid] = process.argv.slice(3).map(Number);
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const call = () =>
  new Promise((resolve, reject) => {
    if (turns.length > 1) [method, path, headers] = turns[turn++ % turns.length];
    const sent = body ? { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) } : headers;
    const req = request({ host: "127.0.0.1", port, method, path, agent, headers: sent }, (res) => {
      let reply = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (reply += chunk));
      res.on("end", () => {
        if (res.statusCode >= 400) return reject(new Error(`${method} ${path}: ${res.statusCode} ${reply}`));
        if (chain) body = JSON.stringify({ [chain]: JSON.parse(reply)[chain] });
        resolve();
      });
    });
    req.on("error", reject);
    req.end(body);
  });
for (let i = 0; i < warm; i++) await call();
await new Promise((r) => setTimeout(r, 500));
if (pid) execFileSync("callgrind_control", ["-i", "on", String(pid)], { stdio: "ignore" });
for (let i = 0; i < count; i++) await call();
if (pid) execFileSync("callgrind_control", ["-i", "off", String(pid)], { stdio: "ignore" });
agent.destroy();
