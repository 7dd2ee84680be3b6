// A minimal MCP server on Node.js, without dependencies: the coverage collector's tests need a
// server that is not Python. It answers initialize, tools/list and one tool, `echo`.
//
// With `--sync-rejects` it also has `sync`, which answers, then dies of a promise rejected 5 ms
// later (a rejection nobody handles: Node prints the error and exits 1).
"use strict";
const readline = require("readline");

const SYNC = process.argv.includes("--sync-rejects");
const TOOLS = [{ name: "echo", inputSchema: { type: "object", properties: { text: { type: "string" } } } }];
if (SYNC) TOOLS.push({ name: "sync", inputSchema: { type: "object", properties: {} } });

const lines = readline.createInterface({ input: process.stdin });
const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");

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
        serverInfo: { name: "node-minimal", version: "1.0.0" },
      });
      break;
    case "tools/list":
      reply({ tools: TOOLS });
      break;
    case "tools/call":
      if (SYNC && request.params.name === "sync") {
        // The reply goes out first; the rejection nobody handles comes after it.
        setTimeout(() => Promise.reject(new Error("sync failed: the cache is gone")), 5);
      }
      reply({ content: [{ type: "text", text: String((request.params.arguments || {}).text) }] });
      break;
    case "ping":
      reply({});
      break;
    default:
      send({ jsonrpc: "2.0", id: request.id, error: { code: -32601, message: "Method not found" } });
  }
});
