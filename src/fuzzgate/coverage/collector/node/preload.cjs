// fuzzgate's Node coverage collector (fuzzgate/coverage/collector/node/__init__.py says what and why).
// Loaded through NODE_OPTIONS=--require into every Node process started with fuzzgate's environment;
// only the server's entry process measures. Node's built-in modules only; never writes to stdout.
"use strict";

(() => {
  const ENV = "FUZZGATE_NODE_COLLECTOR";
  const raw = process.env[ENV];
  if (raw === undefined) return;
  let settings;
  try {
    settings = JSON.parse(raw);
  } catch {
    return;
  }
  const fs = require("fs");
  const path = require("path");
  const { fileURLToPath } = require("url");

  const MAX_CONSTANTS = 2000;
  const PER_FILE = 200;
  const MAX_STRING_CHARS = 256;
  const TYPESCRIPT = /\.[cm]?tsx?$/;

  function main() {
    if (!isEntry()) {
      // A wrapper (npm, a launcher) is Node too, and Node keeps what it inherits from its own
      // children: the first Node process says it holds the pipes, so the entry opens them there.
      if (!settings.holder && ours(`/proc/self/fd/${settings.request_fd}`, settings.request_ino)) {
        settings.holder = process.pid;
        process.env[ENV] = JSON.stringify(settings);
      }
      return;
    }
    // The server's own children start as they would without fuzzgate.
    delete process.env[ENV];
    if (typeof settings.node_options === "string" && settings.node_options) {
      process.env.NODE_OPTIONS = settings.node_options;
    } else {
      delete process.env.NODE_OPTIONS;
    }
    let channel;
    try {
      channel = new Channel(Number(settings.request_fd), Number(settings.reply_fd));
    } catch {
      return;
    }
    let recorder = null;
    try {
      recorder = new Recorder();
      recorder.start();
      channel.send({ hello: recorder.hello() });
      channel.serve((seq) => ({ ...recorder.take(), seq }), () => recorder.stop());
    } catch (error) {
      if (recorder !== null) recorder.stop();
      channel.fail(error);
    }
  }

  function realpath(file) {
    try {
      return fs.realpathSync(file);
    } catch {
      return path.resolve(file);
    }
  }

  /** Whether this process runs the server's entry point: not npm, npx, a launcher, a worker. */
  function isEntry() {
    try {
      if (!require("worker_threads").isMainThread) return false;
    } catch {
      // No worker threads: this is the main thread.
    }
    const main = process.argv[1];
    if (typeof settings.entry === "string" && settings.entry) {
      const wanted = realpath(settings.entry);
      const candidates = settings.entry_in_argv ? process.argv.slice(1) : [main];
      return candidates.some((arg) => typeof arg === "string" && !arg.startsWith("-") && realpath(arg) === wanted);
    }
    return typeof main === "string" && packageRoot(realpath(main)) !== null;
  }

  /** The directory of the measured package `file` belongs to (`.../node_modules/@scope/name`), or null. */
  function packageRoot(file) {
    const packages = Array.isArray(settings.packages) ? settings.packages : [];
    const parts = file.split(path.sep);
    for (let index = parts.length - 1; index >= 0; index--) {
      if (parts[index] !== "node_modules") continue;
      for (const name of packages) {
        const names = String(name).split("/");
        if (names.every((part, k) => parts[index + 1 + k] === part)) {
          return { root: parts.slice(0, index + 1 + names.length).join(path.sep), name: String(name) };
        }
      }
    }
    return null;
  }

  /** Whether `link` (a /proc fd link) is the pipe fuzzgate made (its inode, as a string). */
  function ours(link, inode) {
    try {
      return fs.statSync(link, { bigint: true }).ino.toString() === String(inode);
    } catch {
      return false;
    }
  }

  /**
   * The collector's end of the side channel: one request line in, one JSON line out. Its pipes are
   * this process's inherited descriptors, or the wrapper's that holds them (`settings.holder`).
   */
  function Channel(requestFd, replyFd) {
    this.closed = false;
    this.socket = null;
    const own = ours(`/proc/self/fd/${requestFd}`, settings.request_ino);
    const holder = own || !settings.holder ? "self" : String(Number(settings.holder));
    if (!own && holder === "self" && fs.existsSync("/proc/self/fd")) throw new Error("the collector's pipes are gone");
    // New descriptors of the same pipes, opened close-on-exec (libuv's default), so the server's
    // children do not hold them; inherited ones are closed. Where /proc is missing, kept.
    this.requestFd = reopen(holder, requestFd, settings.request_ino, fs.constants.O_RDONLY);
    this.replyFd = reopen(holder, replyFd, settings.reply_ino, fs.constants.O_WRONLY);
  }

  function reopen(holder, fd, inode, mode) {
    const link = `/proc/${holder}/fd/${fd}`;
    if (holder !== "self" && !ours(link, inode)) throw new Error(`the collector's pipe ${link} is gone`);
    try {
      const again = fs.openSync(link, mode | fs.constants.O_NONBLOCK);
      if (holder === "self") fs.closeSync(fd);
      return again;
    } catch (error) {
      if (holder !== "self") throw error;
      return fd;
    }
  }

  Channel.prototype.send = function send(message) {
    const data = Buffer.from(JSON.stringify(message) + "\n", "utf8");
    let offset = 0;
    while (offset < data.length) {
      try {
        offset += fs.writeSync(this.replyFd, data, offset, data.length - offset);
      } catch (error) {
        if (error.code !== "EAGAIN") throw error;
        // fuzzgate reads as it waits for the answer: a full pipe drains in a moment.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
      }
    }
  };

  Channel.prototype.serve = function serve(answer, stop) {
    const net = require("net");
    const socket = new net.Socket({ fd: this.requestFd, readable: true, writable: false });
    this.socket = socket;
    // The channel never keeps the server alive.
    socket.unref();
    let pending = "";
    socket.setEncoding("ascii");
    socket.on("data", (chunk) => {
      pending += chunk;
      let end;
      while ((end = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, end).trim();
        pending = pending.slice(end + 1);
        if (this.closed) return;
        try {
          this.send(answer(Number.parseInt(line, 10)));
        } catch (error) {
          stop();
          this.fail(error);
          return;
        }
      }
    });
    const hangUp = () => {
      stop();
      this.close();
    };
    socket.on("end", hangUp);
    socket.on("error", hangUp);
  };

  Channel.prototype.fail = function fail(error) {
    if (this.closed) return;
    try {
      const text = error && error.message ? `${error.name || "Error"}: ${error.message}` : String(error);
      this.send({ error: text.slice(0, 500) });
    } catch {
      // fuzzgate no longer listens.
    }
    this.close();
  };

  Channel.prototype.close = function close() {
    if (this.closed) return;
    this.closed = true;
    if (this.socket !== null) {
      this.socket.destroy();
    } else {
      try {
        fs.closeSync(this.requestFd);
      } catch {
        // Already closed.
      }
    }
    try {
      fs.closeSync(this.replyFd);
    } catch {
      // Already closed.
    }
  };

  /** The running measurement: V8's precise coverage, taken and reset at every answer. */
  function Recorder() {
    this.session = null;
    this.files = new Map();
    this.mined = 0;
    this.debugger = false;
    this.preload = realpath(__filename);
    this.roots = [];
    for (const directory of Array.isArray(settings.dirs) ? settings.dirs : []) {
      for (const spelling of new Set([path.resolve(String(directory)), realpath(String(directory))])) {
        this.roots.push(spelling.endsWith(path.sep) ? spelling : spelling + path.sep);
      }
    }
    this.roots.sort((a, b) => b.length - a.length);
  }

  Recorder.prototype.start = function start() {
    let inspector;
    try {
      inspector = require("inspector");
      this.session = new inspector.Session();
      this.session.connect();
    } catch (error) {
      throw new Error(`Node ${process.version} has no usable inspector (${error.message})`);
    }
    this.post("Profiler.enable");
    this.post("Profiler.startPreciseCoverage", { callCount: true, detailed: true });
  };

  Recorder.prototype.post = function post(method, params) {
    let answered = false;
    let failure = null;
    let result = null;
    this.session.post(method, params || {}, (error, value) => {
      answered = true;
      failure = error;
      result = value;
    });
    if (!answered) throw new Error(`the inspector did not answer ${method} at once`);
    if (failure) throw new Error(`${method}: ${failure.message || failure}`);
    return result;
  };

  Recorder.prototype.hello = function hello() {
    const measured = [...(settings.dirs || []), ...(settings.packages || [])].map(String);
    return { runtime: "node", node: process.versions.node, v8: process.versions.v8, core: "v8", per_call: true, measured };
  };

  Recorder.prototype.stop = function stop() {
    if (this.session === null) return;
    try {
      this.post("Profiler.stopPreciseCoverage");
      this.session.disconnect();
    } catch {
      // Measuring ends either way.
    }
    this.session = null;
  };

  Recorder.prototype.take = function take() {
    const { result } = this.post("Profiler.takePreciseCoverage");
    const lines = new Map();
    const arcs = new Map();
    const constants = [];
    for (const script of result) {
      const file = this.fileOf(script.url, script.scriptId);
      if (file === null) continue;
      for (const fn of script.functions) file.learn(fn);
      let ran = false;
      for (const fn of script.functions) {
        if (fn.ranges.length === 0 || fn.ranges[0].count === 0) continue;
        if (!ran) {
          ran = true;
          if (!lines.has(file.name)) lines.set(file.name, new Set());
          if (!arcs.has(file.name)) arcs.set(file.name, new Map());
        }
        file.ran(fn, lines.get(file.name), arcs.get(file.name));
      }
      if (ran && !file.mined) {
        file.mined = true;
        const room = MAX_CONSTANTS - this.mined;
        if (room > 0) {
          const found = mine(file.text(), Math.min(room, PER_FILE));
          this.mined += found.length;
          constants.push(...found);
        }
      }
    }
    const named = (map, values) => Object.fromEntries([...map].map(([name, found]) => [name, values(found)]));
    return {
      lines: named(lines, (found) => [...found].sort((a, b) => a - b)),
      arcs: named(arcs, (found) => [...found.values()]),
      constants,
    };
  };

  /** The measured file a script's URL names, or null (not own code, Node's own, the preload). */
  Recorder.prototype.fileOf = function fileOf(url, scriptId) {
    const known = this.files.get(url);
    if (known !== undefined) return known;
    let file = null;
    let found = null;
    try {
      if (url.startsWith("file://")) found = fileURLToPath(url.replace(/[?#].*$/, ""));
      else if (path.isAbsolute(url)) found = url;
    } catch {
      found = null;
    }
    const name = found === null || found === this.preload ? null : this.nameOf(found);
    if (name !== null) file = new MeasuredFile(found, name, () => this.source(found, scriptId));
    this.files.set(url, file);
    return file;
  };

  Recorder.prototype.nameOf = function nameOf(file) {
    for (const spelling of new Set([file, realpath(file)])) {
      for (const root of this.roots) {
        if (!spelling.startsWith(root)) continue;
        const parts = spelling.slice(root.length).split(path.sep);
        return parts.slice(0, -1).includes("node_modules") ? null : parts.join("/");
      }
      const owner = packageRoot(spelling);
      if (owner !== null) {
        const parts = spelling.slice(owner.root.length + 1).split(path.sep);
        return parts.slice(0, -1).includes("node_modules") ? null : [owner.name, ...parts].join("/");
      }
    }
    return null;
  };

  /** The source V8 ran: the file, or for TypeScript (transpiled in memory) V8's own copy. */
  Recorder.prototype.source = function source(file, scriptId) {
    if (TYPESCRIPT.test(file)) {
      try {
        if (!this.debugger) {
          this.post("Debugger.enable");
          // An in-process session must never pause its own thread (a `debugger;` statement).
          this.post("Debugger.setSkipAllPauses", { skip: true });
          this.debugger = true;
        }
        return this.post("Debugger.getScriptSource", { scriptId }).scriptSource;
      } catch {
        return "";
      }
    }
    try {
      return fs.readFileSync(file, "utf8");
    } catch {
      return "";
    }
  };

  /** One measured file: its line starts, the blocks and functions V8 has shown in it. */
  function MeasuredFile(file, name, read) {
    this.file = file;
    this.name = name;
    this.read = read;
    this.mined = false;
    this.source = null;
    this.starts = null;
    this.blocks = new Map();
    this.functions = new Map();
    this.byStart = null;
    this.linesOf = new Map();
  }

  MeasuredFile.prototype.text = function text() {
    if (this.source === null) {
      this.source = this.read();
      this.starts = [0];
      for (let index = this.source.indexOf("\n"); index >= 0; index = this.source.indexOf("\n", index + 1)) {
        this.starts.push(index + 1);
      }
    }
    return this.source;
  };

  /** The 1-based line and column of a source offset. */
  MeasuredFile.prototype.position = function position(offset) {
    this.text();
    let low = 0;
    let high = this.starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.starts[middle] <= offset) low = middle;
      else high = middle - 1;
    }
    return [low + 1, offset - this.starts[low] + 1];
  };

  MeasuredFile.prototype.learn = function learn(fn) {
    const ranges = fn.ranges;
    if (ranges.length === 0) return;
    const outer = ranges[0];
    if (this.functions.get(outer.startOffset) !== outer.endOffset) {
      this.functions.set(outer.startOffset, outer.endOffset);
      this.byStart = null;
    }
    let blocks = this.blocks.get(outer.startOffset);
    if (blocks === undefined) this.blocks.set(outer.startOffset, (blocks = new Map()));
    for (let index = 1; index < ranges.length; index++) {
      const range = ranges[index];
      const key = `${range.startOffset}:${range.endOffset}`;
      if (!blocks.has(key)) blocks.set(key, [range.startOffset, range.endOffset]);
    }
  };

  /**
   * What one function that ran ran: its blocks (V8 merges a block that ran as often as its
   * function into it, so a block an earlier answer showed counts as run unless inside a block
   * reported unrun now) and its lines (those not inside an unrun block or a function of its own).
   */
  MeasuredFile.prototype.ran = function ran(fn, lines, arcs) {
    const outer = fn.ranges[0];
    const unrun = fn.ranges.slice(1).filter((range) => range.count === 0);
    const holes = runs(unrun.map((range) => [range.startOffset, range.endOffset]));
    const inside = (start, end) => {
      const at = runAt(holes, start);
      return at >= 0 && end <= holes[at][1];
    };
    const block = (start) => {
      const [line, column] = this.position(start);
      arcs.set(`${line}:${column}`, [line, -column]);
    };
    block(outer.startOffset);
    for (const [start, end] of this.blocks.get(outer.startOffset).values()) {
      if (!inside(start, end)) block(start);
    }
    const key = `${outer.startOffset}|${unrun.map((range) => `${range.startOffset}-${range.endOffset}`).join(",")}`;
    let covered = this.linesOf.get(key);
    if (covered === undefined) {
      covered = this.coveredLines(outer, unrun);
      this.linesOf.set(key, covered);
    }
    for (const line of covered) lines.add(line);
  };

  /**
   * The lines of `outer` that ran: those whose first non-blank character is neither in a block
   * reported unrun nor in a function of its own. One pass over the lines beside one over the holes,
   * merged and in order: a bundled server is one function (the module) over a hundred thousand
   * lines holding thousands of functions, and testing every line against every hole took minutes,
   * in the server's own thread, before it answered the call.
   */
  MeasuredFile.prototype.coveredLines = function coveredLines(outer, unrun) {
    const text = this.text();
    const holes = runs([...unrun.map((range) => [range.startOffset, range.endOffset]), ...this.nested(outer)]);
    const covered = [];
    const [first] = this.position(outer.startOffset);
    const [last] = this.position(Math.max(outer.startOffset, outer.endOffset - 1));
    let hole = 0;
    for (let line = first; line <= last; line++) {
      let offset = Math.max(this.starts[line - 1], outer.startOffset);
      const end = Math.min(line < this.starts.length ? this.starts[line] : text.length, outer.endOffset);
      while (offset < end && /\s/.test(text[offset])) offset++;
      if (offset >= end) continue;
      while (hole < holes.length && holes[hole][1] <= offset) hole++;
      if (hole < holes.length && holes[hole][0] <= offset) continue;
      covered.push(line);
    }
    return covered;
  };

  /** The functions V8 has shown inside `outer` (not `outer` itself), as [start, end] offsets. */
  MeasuredFile.prototype.nested = function nested(outer) {
    if (this.byStart === null) this.byStart = [...this.functions].sort((a, b) => a[0] - b[0]);
    const found = [];
    for (let index = runAt(this.byStart, outer.startOffset) + 1; index < this.byStart.length; index++) {
      const [start, end] = this.byStart[index];
      if (start >= outer.endOffset) break;
      if (start > outer.startOffset && end <= outer.endOffset) found.push([start, end]);
    }
    return found;
  };

  /** Offset ranges [start, end), as the sorted, disjoint runs that cover what they cover. */
  function runs(ranges) {
    const merged = [];
    for (const [start, end] of [...ranges].sort((a, b) => a[0] - b[0])) {
      const last = merged[merged.length - 1];
      if (last !== undefined && start <= last[1]) last[1] = Math.max(last[1], end);
      else merged.push([start, end]);
    }
    return merged;
  }

  /** The index of the last of `sorted` ([start, ...] pairs by start) that starts at or before `offset`, or -1. */
  function runAt(sorted, offset) {
    let low = 0;
    let high = sorted.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (sorted[middle][0] <= offset) low = middle + 1;
      else high = middle;
    }
    return low - 1;
  }

  // ---- Constants: the literals the code compares against, from a light tokenizer. ----

  const COMPARE = new Set(["===", "!==", "==", "!=", "<", ">", "<=", ">="]);
  const AFFIXES = new Set(["startsWith", "endsWith", "includes", "indexOf", "has"]);
  const NAMING_CALLS = new Set(["get", "getItem", "getAll"]);
  const BEFORE_EXPRESSION = new Set([
    "return", "typeof", "case", "do", "else", "in", "instanceof", "new", "delete", "void", "throw", "yield", "await", "of",
  ]);
  const PUNCTUATORS = [
    ">>>=", "===", "!==", "...", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=", "==", "!=", "<=", ">=", "&&", "||",
    "??", "?.", "=>", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<", ">>", "**",
  ];
  const NUMBER = /^(?:0[xX][\da-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?)n?/;
  const IDENTIFIER = /^[A-Za-z_$\u0080-\uffff][\w$\u0080-\uffff]*/;

  function tokenize(text) {
    const tokens = [];
    const length = text.length;
    let index = text.startsWith("#!") ? text.indexOf("\n") : 0;
    if (index < 0) return tokens;
    while (index < length) {
      const c = text[index];
      if (c === " " || c === "\t" || c === "\n" || c === "\r" || /\s/.test(c)) {
        index++;
      } else if (c === "/" && text[index + 1] === "/") {
        index = text.indexOf("\n", index);
        if (index < 0) break;
      } else if (c === "/" && text[index + 1] === "*") {
        const end = text.indexOf("*/", index + 2);
        index = end < 0 ? length : end + 2;
      } else if (c === '"' || c === "'") {
        const [value, next] = readString(text, index + 1, c);
        tokens.push({ kind: "str", value });
        index = next;
      } else if (c === "`") {
        const [value, next] = readTemplate(text, index + 1);
        tokens.push(value === null ? { kind: "tpl" } : { kind: "str", value });
        index = next;
      } else if ((c >= "0" && c <= "9") || (c === "." && /\d/.test(text[index + 1] || ""))) {
        const match = NUMBER.exec(text.slice(index, index + 64));
        const literal = match ? match[0] : c;
        tokens.push({ kind: "num", value: numberOf(literal) });
        index += literal.length;
      } else if (IDENTIFIER.test(c)) {
        const match = IDENTIFIER.exec(text.slice(index, index + 256));
        tokens.push({ kind: "id", value: match[0] });
        index += match[0].length;
      } else if (c === "/" && startsExpression(tokens[tokens.length - 1])) {
        index = skipRegex(text, index + 1);
        tokens.push({ kind: "re" });
      } else {
        const punctuator = PUNCTUATORS.find((p) => text.startsWith(p, index)) || c;
        tokens.push({ kind: "p", value: punctuator });
        index += punctuator.length;
      }
    }
    return tokens;
  }

  function startsExpression(previous) {
    if (previous === undefined) return true;
    if (previous.kind === "p") return ![")", "]", "}"].includes(previous.value);
    return previous.kind === "id" && BEFORE_EXPRESSION.has(previous.value);
  }

  function numberOf(literal) {
    const clean = literal.replace(/_/g, "");
    if (clean.endsWith("n")) {
      const big = BigInt(clean.slice(0, -1));
      return big <= BigInt(Number.MAX_SAFE_INTEGER) && big >= BigInt(-Number.MAX_SAFE_INTEGER) ? Number(big) : null;
    }
    const value = Number(clean);
    return Number.isFinite(value) ? value : null;
  }

  const ESCAPES = { n: "\n", t: "\t", r: "\r", b: "\b", f: "\f", v: "\v", 0: "\0" };

  function readString(text, index, quote) {
    let value = "";
    while (index < text.length && text[index] !== quote && text[index] !== "\n") {
      if (text[index] === "\\") {
        const [escaped, next] = readEscape(text, index + 1);
        value += escaped;
        index = next;
      } else {
        value += text[index++];
      }
    }
    return [value, index + 1];
  }

  function readEscape(text, index) {
    const c = text[index];
    if (c === "x") return [String.fromCharCode(Number.parseInt(text.slice(index + 1, index + 3), 16) || 0), index + 3];
    if (c === "u" && text[index + 1] === "{") {
      const end = text.indexOf("}", index);
      const point = Number.parseInt(text.slice(index + 2, end), 16);
      return [Number.isInteger(point) && point <= 0x10ffff ? String.fromCodePoint(point) : "", end + 1];
    }
    if (c === "u") return [String.fromCharCode(Number.parseInt(text.slice(index + 1, index + 5), 16) || 0), index + 5];
    if (c === "\r" && text[index + 1] === "\n") return ["", index + 2];
    if (c === "\n" || c === "\r") return ["", index + 1];
    return [c in ESCAPES ? ESCAPES[c] : c || "", index + 1];
  }

  /** A template literal: its text when it has no `${...}`, else null; and where it ends. */
  function readTemplate(text, index) {
    let value = "";
    let plain = true;
    while (index < text.length && text[index] !== "`") {
      const c = text[index];
      if (c === "\\") {
        const [escaped, next] = readEscape(text, index + 1);
        value += escaped;
        index = next;
      } else if (c === "$" && text[index + 1] === "{") {
        plain = false;
        let depth = 1;
        index += 2;
        while (index < text.length && depth > 0) {
          const inner = text[index];
          if (inner === "{") depth++;
          else if (inner === "}") depth--;
          else if (inner === '"' || inner === "'") index = readString(text, index + 1, inner)[1] - 1;
          else if (inner === "`") index = readTemplate(text, index + 1)[1] - 1;
          index++;
        }
      } else {
        value += c;
        index++;
      }
    }
    return [plain ? value : null, index + 1];
  }

  function skipRegex(text, index) {
    let inClass = false;
    while (index < text.length && text[index] !== "\n") {
      const c = text[index];
      if (c === "\\") index++;
      else if (c === "[") inClass = true;
      else if (c === "]") inClass = false;
      else if (c === "/" && !inClass) break;
      index++;
    }
    index++;
    while (index < text.length && /[a-z]/i.test(text[index])) index++;
    return index;
  }

  /** The literal at `index` (`-` before a number included): [value, its last token's index], or null. */
  function literalAt(tokens, index) {
    const token = tokens[index];
    if (token === undefined) return null;
    if (token.kind === "p" && token.value === "-" && tokens[index + 1] && tokens[index + 1].kind === "num") {
      const value = tokens[index + 1].value;
      return value === null ? null : [-value, index + 1];
    }
    if (token.kind === "str" || token.kind === "num") return token.value === null ? null : [token.value, index];
    return null;
  }

  function isOperand(tokens, last) {
    const next = tokens[last + 1];
    return !(next && next.kind === "p" && [".", "[", "(", "?."].includes(next.value));
  }

  function matching(tokens, close, open, index) {
    let depth = 0;
    for (let k = index; k >= 0; k--) {
      const token = tokens[k];
      if (token.kind !== "p") continue;
      if (token.value === close) depth++;
      else if (token.value === open && --depth === 0) return k;
    }
    return -1;
  }

  /** The name an expression ending just before `index` goes by, and whether it is its length. */
  function nameBefore(tokens, index, depth = 0) {
    const token = tokens[index - 1];
    if (token === undefined || depth > 8) return [null, false];
    if (token.kind === "id") {
      const dot = tokens[index - 2];
      if (token.value === "length" && dot && dot.kind === "p" && (dot.value === "." || dot.value === "?.")) {
        return [nameBefore(tokens, index - 2, depth + 1)[0], true];
      }
      return BEFORE_EXPRESSION.has(token.value) ? [null, false] : [token.value, false];
    }
    if (token.kind !== "p") return [null, false];
    if (token.value === "]") {
      const open = matching(tokens, "]", "[", index - 1);
      if (open === index - 3 && tokens[open + 1].kind === "str") return [tokens[open + 1].value, false];
      return open > 0 ? [nameBefore(tokens, open, depth + 1)[0], false] : [null, false];
    }
    if (token.value === ")") {
      const open = matching(tokens, ")", "(", index - 1);
      if (open <= 0) return [null, false];
      const callee = tokens[open - 1];
      const dot = tokens[open - 2];
      if (callee.kind !== "id") return nameBefore(tokens, index - 1, depth + 1);
      const key = tokens[open + 1];
      if (NAMING_CALLS.has(callee.value) && key && key.kind === "str") return [key.value, false];
      // `mode.toLowerCase() === "wait"`, `String(n) === "7"`: still the value of `mode`, of `n`.
      if (dot && dot.kind === "p" && (dot.value === "." || dot.value === "?.")) return [nameBefore(tokens, open - 2, depth + 1)[0], false];
      return [nameBefore(tokens, index - 1, depth + 1)[0], false];
    }
    return [null, false];
  }

  /** The name an expression starting at `index` goes by (`a.b.c` is `c`, `a.length` is `a`'s length). */
  function nameAfter(tokens, index) {
    let name = null;
    let length = false;
    for (let k = index; k < tokens.length; k += 2) {
      const token = tokens[k];
      if (token.kind !== "id") break;
      if (token.value === "length" && name !== null) length = true;
      else name = token.value;
      const next = tokens[k + 1];
      if (!next || next.kind !== "p" || (next.value !== "." && next.value !== "?.")) break;
    }
    return [name, length];
  }

  /** The literals of an array display ending at `close` (`["a", "b"].includes(x)`), or null. */
  function arrayBefore(tokens, close) {
    const open = matching(tokens, "]", "[", close);
    if (open < 0) return null;
    const values = [];
    for (let k = open + 1; k < close; k++) {
      const literal = literalAt(tokens, k);
      if (literal !== null) {
        values.push(literal[0]);
        k = literal[1];
      }
    }
    return values;
  }

  function usable(value) {
    if (typeof value === "string") return value.length > 0 && value.length <= MAX_STRING_CHARS;
    return typeof value === "number" && Number.isFinite(value);
  }

  /** The constants `text` compares against, in source order, without duplicates, at most `limit`. */
  function mine(text, limit) {
    let tokens;
    try {
      tokens = tokenize(text);
    } catch {
      return [];
    }
    const found = [];
    const seen = new Set();
    const add = (value, name, length) => {
      if (!usable(value) || found.length >= limit) return;
      const key = JSON.stringify([typeof value, value, name, length]);
      if (seen.has(key)) return;
      seen.add(key);
      found.push([value, name, length]);
    };
    const switches = [];
    let depth = 0;
    for (let index = 0; index < tokens.length && found.length < limit; index++) {
      const token = tokens[index];
      if (token.kind === "p" && token.value === "{") depth++;
      if (token.kind === "p" && token.value === "}") {
        depth--;
        while (switches.length && switches[switches.length - 1].depth > depth) switches.pop();
      }
      if (token.kind === "p" && COMPARE.has(token.value)) {
        const right = literalAt(tokens, index + 1);
        if (right !== null && isOperand(tokens, right[1]) && literalAt(tokens, index - 1) === null) {
          const typeCheck = tokens[index - 2] && tokens[index - 2].kind === "id" && tokens[index - 2].value === "typeof";
          const [name, length] = nameBefore(tokens, index);
          if (!typeCheck) add(right[0], name, length);
        }
        const left = tokens[index - 1];
        if (left && (left.kind === "str" || left.kind === "num") && literalAt(tokens, index + 1) === null) {
          const negative = tokens[index - 2] && tokens[index - 2].kind === "p" && tokens[index - 2].value === "-";
          const [name, length] = nameAfter(tokens, index + 1);
          if (left.value !== null) add(negative ? -left.value : left.value, name, length);
        }
      } else if (token.kind === "id" && token.value === "switch" && tokens[index + 1] && tokens[index + 1].value === "(") {
        let close = index + 1;
        for (let open = 0; close < tokens.length; close++) {
          if (tokens[close].value === "(" && tokens[close].kind === "p") open++;
          if (tokens[close].value === ")" && tokens[close].kind === "p" && --open === 0) break;
        }
        switches.push({ name: nameBefore(tokens, close)[0], depth: depth + 1 });
      } else if (token.kind === "id" && token.value === "case") {
        const literal = literalAt(tokens, index + 1);
        const subject = switches.length ? switches[switches.length - 1].name : null;
        if (literal !== null) add(literal[0], subject, false);
      } else if (token.kind === "id" && AFFIXES.has(token.value) && tokens[index - 1] && tokens[index - 1].value === ".") {
        if (!tokens[index + 1] || tokens[index + 1].value !== "(") continue;
        const before = tokens[index - 2];
        const argument = literalAt(tokens, index + 2);
        if (before && before.kind === "p" && before.value === "]") {
          const [name] = nameAfter(tokens, index + 2);
          for (const value of arrayBefore(tokens, index - 2) || []) add(value, name, false);
        } else if (argument !== null && (typeof argument[0] === "string" || token.value === "has")) {
          add(argument[0], nameBefore(tokens, index - 1)[0], false);
        }
      }
    }
    return found;
  }

  try {
    main();
  } catch {
    // The server starts as it would have: fuzzgate sees no hello and says why.
  }
})();
