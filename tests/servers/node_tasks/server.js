#!/usr/bin/env node
// node-tasks: a clean MCP server on the official TypeScript SDK over stdio, a task list in memory.
// Nothing in its own code is a bug. Run on zod before 4.1.13 (as the SDK 1.x installs beside a server
// that pins zod 3), the SDK itself refuses `{"constructor": {}}` as a tool's arguments with -32603:
// the SDK's finding, not the server's.
//
//     node server.js
//
// The SDK and zod are found through NODE_PATH or a node_modules beside this file.
"use strict";

const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { z } = require("zod");

const tasks = [];
const text = (value) => ({ content: [{ type: "text", text: value }] });
const server = new McpServer({ name: "node-tasks", version: "1.0.0" });

server.registerTool(
  "list_tasks",
  { description: "List the tasks.", annotations: { readOnlyHint: true } },
  async () => text(tasks.length ? tasks.map((task, i) => `${i + 1}. ${task}`).join("\n") : "no tasks"),
);

server.registerTool(
  "add_task",
  { description: "Add a task.", inputSchema: { title: z.string().min(1).max(200).describe("What to do.") } },
  async ({ title }) => {
    tasks.push(title);
    return text(`added task ${tasks.length}`);
  },
);

server.connect(new StdioServerTransport()).catch((error) => {
  process.stderr.write(`node-tasks: ${error}\n`);
  process.exit(1);
});
