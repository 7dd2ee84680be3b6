// A dependency-free MCP server on Node.js for the Node coverage collector's tests: tools whose
// branches and constants a test can point at, and one that starts a child Node process.
//
// - `check(word)`: one branch for "open-sesame", one for a seven-letter word, one for the rest;
// - `count(n)`: a loop run n times;
// - `child()`: what a child Node process the server starts sees of fuzzgate's collector (its
//   settings variable, NODE_OPTIONS), as JSON.
"use strict";
const readline = require("readline");
const { execFileSync } = require("child_process");

const lines = readline.createInterface({ input: process.stdin });
const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");

function check(word) {
  if (word === "open-sesame") {
    return "opened";
  }
  if (word.length === 7) {
    return "seven letters";
  }
  return "closed";
}

function count(n) {
  let total = 0;
  for (let i = 0; i < n; i++) {
    total += i;
  }
  return String(total);
}

function child() {
  const script = "process.stdout.write(JSON.stringify([process.env.FUZZGATE_NODE_COLLECTOR || null, process.env.NODE_OPTIONS || null]))";
  return execFileSync(process.execPath, ["-e", script], { encoding: "utf8" });
}

const TOOLS = {
  check: (args) => check(String(args.word || "")),
  count: (args) => count(Number(args.n) || 0),
  child: () => child(),
};

lines.on("line", (line) => {
  let request;
  try {
    request = JSON.parse(line);
  } catch {
    return;
  }
  if (request.id === undefined) return;
  const reply = (result) => send({ jsonrpc: "2.0", id: request.id, result });
  switch (request.method) {
    case "initialize":
      reply({
        protocolVersion: request.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "node-coverage-target", version: "1.0.0" },
      });
      break;
    case "tools/list":
      reply({
        tools: Object.keys(TOOLS).map((name) => ({ name, inputSchema: { type: "object" } })),
      });
      break;
    case "tools/call": {
      const tool = TOOLS[request.params.name];
      reply({ content: [{ type: "text", text: tool ? tool(request.params.arguments || {}) : "unknown" }] });
      break;
    }
    case "ping":
      reply({});
      break;
    default:
      send({ jsonrpc: "2.0", id: request.id, error: { code: -32601, message: "Method not found" } });
  }
});
