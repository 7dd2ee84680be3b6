#!/usr/bin/env node
// node-nested: an MCP server on the official TypeScript SDK whose four bugs each sit behind two to
// four nested conditions gated by constants only this file holds (no schema, description or example
// names them), beside clean look-alikes that handle the same inputs. fuzzgate's Node coverage
// collector is what hands a fuzzer those constants and shows it each step it gets past.
//
// | bug  | tool                          | steps                                               | symptom |
// | NB-1 | render_theme                  | theme === "xylophone-7", then depth > 8             | crash (an uncaught TypeError in a callback) |
// | NB-2 | allocate_buffer               | 4094 <= size <= 4098, then not aligned              | hang (the call never answers) |
// | NB-3 | set_profile -> run_batch      | armed profile === "overdrive", then jobs > 50       | crash (exit 70 after an assertion message) |
// | NB-4 | export_report                 | format === "diagnostic", include_env, verbosity >= 4 | leaks the service account's key |
//
// Clean look-alikes: render_preview, allocate_pool and export_summary meet the same conditions and
// answer properly. The SDK is found through NODE_PATH or a node_modules beside this file.
"use strict";

const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { z } = require("zod");

const SERVICE_KEY = "AKIAJ3NODENESTED7QXZ";
const LEVELS = ["body", "section", "article", "aside", "div", "p", "span", "em", "code"];
const armed = { profile: "balanced" };

const server = new McpServer({ name: "node-nested", version: "1.0.0" });
const text = (value) => ({ content: [{ type: "text", text: value }] });
const refusal = (value) => ({ content: [{ type: "text", text: value }], isError: true });

const Theme = { theme: z.string().min(1).max(64).describe("The theme's name."), depth: z.number().int().min(0).max(10).describe("How many nesting levels to style.") };

server.registerTool("render_theme", { description: "Render a theme's stylesheet down to a nesting depth.", inputSchema: Theme }, async ({ theme, depth }) => {
  if (theme === "xylophone-7") {
    // The legacy theme keeps one palette per level, and has nine of them.
    if (depth > 8) {
      // NB-1: the palette lookup runs past the ninth level in a callback, where nothing catches it.
      const palette = await new Promise((resolve) => {
        setImmediate(() => resolve(LEVELS.map((level) => ({ level })).at(depth).level.toUpperCase()));
      });
      return text(`rendered the legacy theme in ${palette}`);
    }
    return text(`rendered the legacy theme down to ${LEVELS[depth]}`);
  }
  return text(`rendered ${theme.length}-letter theme with ${depth * 3 + 4} rules`);
});

server.registerTool("render_preview", { description: "Preview a theme down to a nesting depth.", inputSchema: Theme }, async ({ theme, depth }) => {
  if (theme === "xylophone-7") {
    if (depth > 8) return refusal("the legacy theme styles at most 8 nesting levels");
    return text(`previewed the legacy theme down to ${LEVELS[depth]}`);
  }
  return text(`previewed ${theme.length}-letter theme`);
});

const Allocation = { size: z.number().int().min(0).max(65536).describe("Bytes to allocate."), aligned: z.boolean().describe("Round the buffer up to whole pages.") };

server.registerTool("allocate_buffer", { description: "Allocate a scratch buffer and say where it landed.", inputSchema: Allocation }, async ({ size, aligned }) => {
  const pages = Math.ceil(size / 4096);
  if (size >= 4094) {
    if (size <= 4098) {
      // Sizes just around a page share the arena's last slot with its header.
      if (aligned === false) {
        // NB-2: the slot never frees: the call waits forever.
        await new Promise(() => {});
      }
    }
  }
  return text(`allocated ${size} bytes in ${Math.max(pages, 1)} pages`);
});

server.registerTool("allocate_pool", { description: "Allocate a pool of buffers.", inputSchema: Allocation }, async ({ size, aligned }) => {
  if (size >= 4094) {
    if (size <= 4098) {
      if (aligned === false) return text(`allocated a pool of ${size} bytes in 2 pages`);
    }
  }
  return text(`allocated a pool of ${size} bytes`);
});

server.registerTool(
  "set_profile",
  { description: "Choose the batch scheduler's profile for the next batches.", inputSchema: { profile: z.string().min(1).max(32).describe("Scheduler profile name.") } },
  async ({ profile }) => {
    armed.profile = profile;
    return text("profile set");
  },
);

server.registerTool(
  "run_batch",
  { description: "Run a batch of jobs under the current profile.", inputSchema: { jobs: z.number().int().min(1).max(100).describe("Jobs in the batch.") } },
  async ({ jobs }) => {
    if (armed.profile === "overdrive") {
      // The boosted scheduler keeps one worker slot per job, and has fifty.
      if (jobs > 50) {
        // NB-3: the slot table overflows; an assertion ends the process.
        process.stderr.write("node: sched.cc:88: take_slot: Assertion `n < MAX_SLOTS' failed.\n");
        process.exit(70);
      }
      return text(`ran ${jobs} jobs with the boosted scheduler`);
    }
    return text(`ran ${jobs} jobs`);
  },
);

const Report = {
  format: z.string().min(1).max(32).describe("The report's format."),
  verbosity: z.number().int().min(0).max(5).describe("How much detail."),
  include_env: z.boolean().describe("Add the service's settings."),
};

server.registerTool("export_report", { description: "Export the service's status report.", inputSchema: Report }, async ({ format, verbosity, include_env }) => {
  if (format === "diagnostic") {
    if (include_env === true) {
      if (verbosity >= 4) {
        // NB-4: the most verbose diagnostic dumps the proxy's credentials unredacted.
        return text(`diagnostic report: proxy=proxy.internal:8080 access_key=${SERVICE_KEY}`);
      }
      return text("diagnostic report: proxy=proxy.internal:8080");
    }
    return text("diagnostic report");
  }
  return text(`${format} report at verbosity ${verbosity}`);
});

server.registerTool("export_summary", { description: "Export a summary of the service's status.", inputSchema: Report }, async ({ format, verbosity, include_env }) => {
  if (format === "diagnostic") {
    if (include_env === true) {
      if (verbosity >= 4) return text(`diagnostic summary: proxy=proxy.internal:8080 access_key=(redacted)`);
    }
  }
  return text(`${format} summary`);
});

server.connect(new StdioServerTransport()).catch((error) => {
  process.stderr.write(`node-nested: ${error}\n`);
  process.exit(1);
});
