#!/usr/bin/env node
// node-http: a clean MCP server on the official TypeScript SDK over streamable HTTP, built as the
// reference `everything` server is: sessions, an event store (so each response stream starts with
// a priming event, an SSE event with an id and empty data, for clients of protocol 2025-11-25 to
// resume from) and a log line on stdout for every request, which over HTTP is a log, not the
// protocol. Nothing here is a bug: a run must report nothing.
//
//     node server.js PORT
//
// The SDK is found through NODE_PATH or a node_modules beside this file.
"use strict";

const http = require("http");
const { randomUUID } = require("crypto");
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { isInitializeRequest } = require("@modelcontextprotocol/sdk/types.js");
const { z } = require("zod");

const port = Number(process.argv[2] || 3001);
const text = (value) => ({ content: [{ type: "text", text: value }] });

// What resumability needs of an event store: an id per event, and replay after an id.
class EventStore {
  constructor() {
    this.events = [];
  }
  async storeEvent(streamId, message) {
    const id = `${streamId}_${this.events.length}`;
    this.events.push({ id, streamId, message });
    return id;
  }
  async replayEventsAfter(lastEventId, { send }) {
    const at = this.events.findIndex((event) => event.id === lastEventId);
    if (at < 0) return "";
    const { streamId } = this.events[at];
    for (const event of this.events.slice(at + 1)) {
      if (event.streamId === streamId) await send(event.id, event.message);
    }
    return streamId;
  }
}

function newServer() {
  const server = new McpServer({ name: "node-http", version: "1.0.0" });
  server.registerTool(
    "add",
    {
      description: "Add two integers.",
      inputSchema: { a: z.number().int().describe("The first."), b: z.number().int().describe("The second.") },
      annotations: { readOnlyHint: true },
    },
    async ({ a, b }) => text(String(a + b)),
  );
  server.registerTool(
    "shout",
    {
      description: "The text in capitals.",
      inputSchema: { text: z.string().max(200).describe("What to shout.") },
      annotations: { readOnlyHint: true },
    },
    async ({ text: said }) => text(said.toUpperCase()),
  );
  return server;
}

const sessions = new Map();

async function body(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const raw = Buffer.concat(chunks).toString("utf8");
  if (!raw) return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

http
  .createServer(async (req, res) => {
    console.log(`Received MCP ${req.method} request`);
    if (!req.url.startsWith("/mcp")) {
      res.writeHead(404).end();
      return;
    }
    const parsed = req.method === "POST" ? await body(req) : undefined;
    const id = req.headers["mcp-session-id"];
    let transport = id ? sessions.get(id) : undefined;
    if (!transport && req.method === "POST" && isInitializeRequest(parsed)) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: new EventStore(),
        onsessioninitialized: (sessionId) => sessions.set(sessionId, transport),
      });
      transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
      await newServer().connect(transport);
    }
    if (!transport) {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "No valid session" }, id: null }));
      return;
    }
    await transport.handleRequest(req, res, parsed);
  })
  .listen(port, "127.0.0.1", () => console.log(`node-http listening on ${port}`));
