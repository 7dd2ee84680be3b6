"""Popular MCP servers from npm and PyPI, each fuzzed for a short budget by one fuzzgate, in the sandbox.

    python bench/popular.py [--budget 30] [--servers a,b,...] [--install-only] [--before-venv V] [--label after]
    python bench/popular.py --compare BEFORE.json AFTER.json

The catalog below is the reference servers and popular community servers that install from the
registries alone and start without credentials or outside services; a server whose tools reach the
network starts all the same and meets the jail's loopback. Each is installed once under
bench/.work/popular/ (npm packages with `npm install --prefix`, one prefix per package; PyPI
packages each in its own venv) and fuzzed with realworld.py's `fuzz`: fuzzgate's sandbox `required`,
the whole run inside ../shared/tools/netjail.sh (`NETJAIL` names it from a worktree), one seed, a
plain config (no hints, no allowlist). A file server's scope is its own scratch directory,
re-created with a few files before each run; a file a server creates goes in its working directory.

Before/after a change: `--before-venv V` runs V's fuzzgate (a venv with the old commit installed)
on each server just before this checkout's, so both see the same load. The result files are
bench/.work/results/popular-before.json and popular-LABEL.json, one entry per server with every
finding and the run's notes; a run of some servers keeps the others' earlier entries."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from procs import FUZZGATE, RESULTS, WORK, log, save_json
from realworld import GIT_SCRATCH, reset_git_scratch

HOME = WORK / "popular"
SCRATCH = HOME / "scratch"

# name: ecosystem, package, version (absent: the newest), the command's program inside the install
# (npm: a name in node_modules/.bin; pypi: a name in the venv's bin), its arguments ({scratch} is
# the server's scratch directory, a directory argument and so in its scope; {cwd} its working
# directory, where a file it creates must be: fuzzgate's scope holds the working directory and the
# directories the arguments name, not the parent of a file they name; {git} a small repository),
# environment for the server, extra packages to install beside it, the Python X.Y a PyPI server
# needs when this one is too old for it, and what it needs or does.
CATALOG: dict[str, dict[str, Any]] = {
    "everything": {"eco": "npm", "package": "@modelcontextprotocol/server-everything", "bin": "mcp-server-everything",
                   "args": ["stdio"], "what": "reference: every protocol feature"},
    "filesystem": {"eco": "npm", "package": "@modelcontextprotocol/server-filesystem", "bin": "mcp-server-filesystem",
                   "args": ["{scratch}"], "what": "reference: files under an allowed directory"},
    "memory": {"eco": "npm", "package": "@modelcontextprotocol/server-memory", "bin": "mcp-server-memory",
               "env": {"MEMORY_FILE_PATH": "/tmp/memory.jsonl"}, "what": "reference: a knowledge graph in a file"},
    "sequential-thinking": {"eco": "npm", "package": "@modelcontextprotocol/server-sequential-thinking",
                            "bin": "mcp-server-sequential-thinking", "what": "reference: a thinking log"},
    "desktop-commander": {"eco": "npm", "package": "@wonderwhy-er/desktop-commander", "bin": "desktop-commander",
                          "what": "shell commands, processes and file edits"},
    "dbhub": {"eco": "npm", "package": "@bytebase/dbhub", "bin": "dbhub",
              "args": ["--transport", "stdio", "--demo"],
              "what": "SQL on its demo SQLite database"},
    "hello-world": {"eco": "npm", "package": "mcp-hello-world", "bin": "mcp-hello-world", "what": "a minimal server"},
    "chart": {"eco": "npm", "package": "@antv/mcp-server-chart", "bin": "mcp-server-chart",
              "what": "charts, rendered by a remote service (network)"},
    "eslint": {"eco": "npm", "package": "@eslint/mcp", "bin": "mcp", "what": "lints files"},
    "context7": {"eco": "npm", "package": "@upstash/context7-mcp", "bin": "context7-mcp",
                 "what": "library documentation from a remote service (network)"},
    "time": {"eco": "pypi", "package": "mcp-server-time", "bin": "mcp-server-time",
             "args": ["--local-timezone", "UTC"], "what": "reference: time zones"},
    "git": {"eco": "pypi", "package": "mcp-server-git", "bin": "mcp-server-git", "args": ["--repository", "{git}"],
            "what": "reference: a git repository"},
    "fetch": {"eco": "pypi", "package": "mcp-server-fetch", "bin": "mcp-server-fetch",
              "what": "reference: fetches URLs (network)"},
    "sqlite": {"eco": "pypi", "package": "mcp-server-sqlite", "bin": "mcp-server-sqlite",
               "args": ["--db-path", "{cwd}/test.db"], "extra": ["mcp<2"], "what": "SQL on a SQLite file"},
    "calculator": {"eco": "pypi", "package": "mcp-server-calculator", "bin": "mcp-server-calculator",
                   "what": "evaluates arithmetic expressions"},
    "markitdown": {"eco": "pypi", "package": "markitdown-mcp", "bin": "markitdown-mcp",
                   "what": "converts a URI (file, http, data) to Markdown"},
    "excel": {"eco": "pypi", "package": "excel-mcp-server", "bin": "excel-mcp-server", "args": ["stdio"],
              "env": {"EXCEL_FILES_PATH": "{scratch}"}, "what": "Excel workbooks"},
    "word": {"eco": "pypi", "package": "office-word-mcp-server", "bin": "word_mcp_server",
             "what": "Word documents"},
    "shell": {"eco": "pypi", "package": "mcp-shell-server", "bin": "mcp-shell-server",
              "env": {"ALLOW_COMMANDS": "ls,cat,echo,pwd,wc,head,grep"}, "what": "runs allowed shell commands"},
    "text-editor": {"eco": "pypi", "package": "mcp-text-editor", "bin": "mcp-text-editor",
                    "extra": ["mcp<2"], "what": "line-based edits of text files"},
    "duckdb": {"eco": "pypi", "package": "mcp-server-duckdb", "bin": "mcp-server-duckdb",
               "args": ["--db-path", "{cwd}/test.duckdb"], "extra": ["mcp<2"], "what": "SQL on a DuckDB file"},
    "database": {"eco": "npm", "package": "@executeautomation/database-server", "bin": "ea-database-server",
                 "args": ["{cwd}/test.db"], "what": "SQL on a SQLite file"},
    "taskmanager": {"eco": "npm", "package": "@kazuph/mcp-taskmanager", "bin": "mcp-taskmanager",
                    "env": {"TASK_MANAGER_FILE_PATH": "{cwd}/tasks.json"}, "what": "a task queue in a file"},
    "tree-sitter": {"eco": "pypi", "package": "mcp-server-tree-sitter", "bin": "mcp-server-tree-sitter",
                    "extra": ["mcp<2"], "what": "parses the source files of registered projects"},
    "code-index": {"eco": "pypi", "package": "code-index-mcp", "bin": "code-index-mcp",
                   "args": ["--project-path", "{scratch}"], "what": "indexes and searches a project's files"},
    "commands": {"eco": "npm", "package": "mcp-server-commands", "bin": "mcp-server-commands",
                 "what": "runs commands and scripts (by design)"},
    "code-runner": {"eco": "npm", "package": "mcp-server-code-runner", "bin": "mcp-server-code-runner",
                    "what": "runs code snippets (by design)"},
    "github": {"eco": "npm", "package": "@modelcontextprotocol/server-github", "bin": "mcp-server-github",
               "what": "reference (archived): the GitHub API, no token (network)"},
    "motherduck": {"eco": "pypi", "package": "mcp-server-motherduck", "bin": "mcp-server-motherduck",
                   "args": ["--db-path", ":memory:", "--read-write"], "what": "SQL on an in-memory DuckDB"},
    "postgres": {"eco": "npm", "package": "@modelcontextprotocol/server-postgres", "bin": "mcp-server-postgres",
                 "args": ["postgresql://localhost/app"], "what": "reference (archived): SQL on a database nobody serves"},
    "redis": {"eco": "npm", "package": "@modelcontextprotocol/server-redis", "bin": "mcp-server-redis",
              "args": ["redis://localhost:6379"], "what": "reference (archived): a Redis nobody serves"},
    "notion": {"eco": "npm", "package": "@notionhq/notion-mcp-server", "bin": "notion-mcp-server",
               "what": "the Notion API, no token (network)"},
    "gitlab": {"eco": "npm", "package": "@modelcontextprotocol/server-gitlab", "bin": "mcp-server-gitlab",
               "env": {"GITLAB_PERSONAL_ACCESS_TOKEN": "none"}, "what": "reference (archived): the GitLab API (network)"},
    "git-cyanheads": {"eco": "npm", "package": "@cyanheads/git-mcp-server", "bin": "git-mcp-server",
                      "env": {"MCP_TRANSPORT_TYPE": "stdio", "GIT_BASE_DIR": "{git}"},
                      "what": "git commands on repositories"},
    "sqlite-npx": {"eco": "npm", "package": "mcp-server-sqlite-npx", "bin": "mcp-server-sqlite-npx",
                   "args": ["{cwd}/test.db"], "what": "SQL on a SQLite file"},
    "brave-search": {"eco": "npm", "package": "@modelcontextprotocol/server-brave-search",
                     "bin": "mcp-server-brave-search", "env": {"BRAVE_API_KEY": "none"},
                     "what": "reference (archived): web search (network)"},
    "playwright": {"eco": "npm", "package": "@playwright/mcp", "bin": "playwright-mcp",
                   "args": ["--headless", "--isolated"], "what": "drives a browser (none installed)"},
    "tavily": {"eco": "npm", "package": "tavily-mcp", "bin": "tavily-mcp", "env": {"TAVILY_API_KEY": "none"},
               "what": "web search and extraction (network)"},
    "exa": {"eco": "npm", "package": "exa-mcp-server", "bin": "exa-mcp-server", "env": {"EXA_API_KEY": "none"},
            "what": "web search (network)"},
    "firecrawl": {"eco": "npm", "package": "firecrawl-mcp", "bin": "firecrawl-mcp",
                  "env": {"FIRECRAWL_API_KEY": "fc-none"}, "what": "web scraping (network)"},
    "kubernetes": {"eco": "npm", "package": "mcp-server-kubernetes", "bin": "mcp-server-kubernetes",
                   "what": "kubectl and helm on a cluster nobody serves"},
    "slack": {"eco": "npm", "package": "@modelcontextprotocol/server-slack", "bin": "mcp-server-slack",
              "env": {"SLACK_BOT_TOKEN": "none", "SLACK_TEAM_ID": "none"},
              "what": "reference (archived): Slack (network)"},
    "google-maps": {"eco": "npm", "package": "@modelcontextprotocol/server-google-maps",
                    "bin": "mcp-server-google-maps", "env": {"GOOGLE_MAPS_API_KEY": "none"},
                    "what": "reference (archived): Google Maps (network)"},
    "youtube-transcript": {"eco": "npm", "package": "@kimtaeyoon83/mcp-server-youtube-transcript",
                           "bin": "mcp-server-youtube-transcript", "what": "YouTube transcripts (network)"},
    "basic-memory": {"eco": "pypi", "package": "basic-memory", "bin": "basic-memory", "python": "3.12",
                     "args": ["mcp"], "what": "a Markdown knowledge base with a SQLite index (in its HOME)"},
    "arxiv": {"eco": "pypi", "package": "arxiv-mcp-server", "bin": "arxiv-mcp-server",
              "args": ["--storage-path", "{scratch}"], "what": "arXiv search and downloads (network)"},
    "duckduckgo": {"eco": "pypi", "package": "duckduckgo-mcp-server", "bin": "duckduckgo-mcp-server",
                   "what": "web search (network)"},
    "pandoc": {"eco": "pypi", "package": "mcp-pandoc", "bin": "mcp-pandoc", "what": "converts documents with pandoc"},
    "neo4j": {"eco": "pypi", "package": "mcp-neo4j-cypher", "bin": "mcp-neo4j-cypher",
              "what": "Cypher on a Neo4j nobody serves"},
    "clickhouse": {"eco": "pypi", "package": "mcp-clickhouse", "bin": "mcp-clickhouse",
                   "env": {"CLICKHOUSE_HOST": "localhost", "CLICKHOUSE_USER": "default", "CLICKHOUSE_PASSWORD": ""},
                   "what": "SQL on a ClickHouse nobody serves"},
    "simple-arxiv": {"eco": "pypi", "package": "mcp-simple-arxiv", "bin": "mcp-simple-arxiv",
                     "what": "arXiv search (network)"},
    "ea-playwright": {"eco": "npm", "package": "@executeautomation/playwright-mcp-server",
                      "bin": "playwright-mcp-server", "what": "drives a browser (none installed)"},
    "figma": {"eco": "npm", "package": "figma-developer-mcp", "bin": "figma-developer-mcp",
              "args": ["--stdio"], "env": {"FIGMA_API_KEY": "none"}, "what": "Figma files (network)"},
    "mysql": {"eco": "npm", "package": "@benborla29/mcp-server-mysql", "bin": "mcp-server-mysql",
              "env": {"MYSQL_HOST": "127.0.0.1", "MYSQL_USER": "root"}, "what": "SQL on a MySQL nobody serves"},
    "pinecone": {"eco": "npm", "package": "@pinecone-database/mcp", "bin": "pinecone-mcp",
                 "what": "Pinecone docs and indexes, no key (network)"},
    "hubspot": {"eco": "npm", "package": "@hubspot/mcp-server", "bin": "mcp-hubspot",
                "env": {"PRIVATE_APP_ACCESS_TOKEN": "none"}, "what": "the HubSpot API (network)"},
    "puppeteer": {"eco": "npm", "package": "@modelcontextprotocol/server-puppeteer", "bin": "mcp-server-puppeteer",
                  "what": "reference (archived): drives a browser (none installed)"},
    "everart": {"eco": "npm", "package": "@modelcontextprotocol/server-everart", "bin": "mcp-server-everart",
                "env": {"EVERART_API_KEY": "none"}, "what": "reference (archived): image generation (network)"},
    "aws-kb": {"eco": "npm", "package": "@modelcontextprotocol/server-aws-kb-retrieval",
               "bin": "mcp-server-aws-kb-retrieval", "env": {"AWS_REGION": "us-east-1"},
               "what": "reference (archived): AWS knowledge bases, no credentials (network)"},
    "aws-docs": {"eco": "pypi", "package": "awslabs.aws-documentation-mcp-server",
                 "bin": "awslabs.aws-documentation-mcp-server", "python": "3.12",
                 "what": "AWS documentation search (network)"},
    "atlassian": {"eco": "pypi", "package": "mcp-atlassian", "bin": "mcp-atlassian", "python": "3.12",
                  "env": {"JIRA_URL": "https://jira.example.com", "JIRA_USERNAME": "a", "JIRA_API_TOKEN": "none"},
                  "what": "Jira and Confluence (network)"},
    "zotero": {"eco": "pypi", "package": "zotero-mcp", "bin": "zotero-mcp", "what": "a Zotero library (network)"},
}  # fmt: skip


def _where(name: str) -> Path:
    return HOME / "installs" / name


def _binary(name: str) -> Path:
    entry = CATALOG[name]
    if entry["eco"] == "npm":
        return _where(name) / "node_modules" / ".bin" / entry["bin"]
    return _where(name) / "bin" / entry["bin"]


def _python(entry: dict[str, Any]) -> str:
    """The interpreter a PyPI server's venv is made with: this one, or pyenv's `python` X.Y."""
    if "python" not in entry:
        return sys.executable
    found = sorted(Path("~/.pyenv/versions").expanduser().glob(f"{entry['python']}.*/bin/python"))
    return str(found[-1]) if found else f"python{entry['python']}"


def install(name: str) -> str | None:
    """Install one server (once); None, or why it could not be installed."""
    entry = CATALOG[name]
    where = _where(name)
    if _binary(name).exists():
        return None
    spec = entry["package"] + (
        ("@" if entry["eco"] == "npm" else "==") + entry["version"] if "version" in entry else ""
    )
    if entry["eco"] == "npm":
        where.mkdir(parents=True, exist_ok=True)
        argv = ["npm", "install", "--prefix", str(where), "--no-fund", "--no-audit", "--loglevel=error", spec]
    else:
        subprocess.run([_python(entry), "-m", "venv", str(where)], check=True)
        argv = [str(where / "bin" / "pip"), "install", "-q", spec]
    # A package whose install step downloads a browser installs without it (only the registries are reachable).
    env = {**os.environ, "PUPPETEER_SKIP_DOWNLOAD": "1", "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"}
    done = subprocess.run([*argv, *entry.get("extra", ())], capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        return f"install failed: {(done.stderr or done.stdout).strip().splitlines()[-1:]}"
    if not _binary(name).exists():
        return f"installed, but no {entry['bin']} in {_binary(name).parent}"
    return None


def version(name: str) -> str:
    entry = CATALOG[name]
    if entry["eco"] == "npm":
        manifest = _where(name) / "node_modules" / entry["package"] / "package.json"
        try:
            return str(json.loads(manifest.read_text())["version"])
        except (OSError, ValueError, KeyError):
            return "?"
    out = subprocess.run([str(_where(name) / "bin" / "pip"), "show", entry["package"]], capture_output=True, text=True)
    return next((line.split()[-1] for line in out.stdout.splitlines() if line.startswith("Version:")), "?")


def sdk(name: str) -> str:
    """The MCP SDK the server is built on, and its version."""
    if CATALOG[name]["eco"] == "npm":
        labels = []
        for package, label in (("sdk", "ts-sdk"), ("server", "ts-sdk @modelcontextprotocol/server")):
            found = sorted((_where(name) / "node_modules").glob(f"**/@modelcontextprotocol/{package}/package.json"))
            versions = sorted({json.loads(p.read_text()).get("version", "?") for p in found})
            if versions:
                labels.append(f"{label} {','.join(versions)}")
        return " + ".join(labels) or "?"
    names = []
    for dist in ("mcp", "fastmcp"):
        out = subprocess.run([str(_where(name) / "bin" / "pip"), "show", dist], capture_output=True, text=True)
        got = next((line.split()[-1] for line in out.stdout.splitlines() if line.startswith("Version:")), None)
        if got:
            names.append(f"{'py-sdk' if dist == 'mcp' else 'fastmcp'} {got}")
    return " + ".join(names) or "?"


def reset_scratch(name: str) -> Path:
    """The server's scratch directory, re-created with a few files."""
    scratch = SCRATCH / name
    shutil.rmtree(scratch, ignore_errors=True)
    (scratch / "notes").mkdir(parents=True)
    (scratch / "readme.txt").write_text("scratch directory for the popular-servers benchmark\n")
    (scratch / "notes" / "todo.md").write_text("- water the plants\n- fuzz the servers\n")
    (scratch / "data.json").write_text('{"answer": 42}\n')
    return scratch


def command(name: str, scratch: Path, cwd: Path) -> list[str]:
    entry = CATALOG[name]

    def fill(text: str) -> str:
        return text.replace("{scratch}", str(scratch)).replace("{cwd}", str(cwd)).replace("{git}", str(GIT_SCRATCH))

    env = [f"{k}={fill(v)}" for k, v in entry.get("env", {}).items()]
    argv = [str(_binary(name)), *(fill(a) for a in entry.get("args", ()))]
    return ["env", *env, *argv] if env else argv


def summarize(entry: dict[str, Any]) -> dict[str, Any]:
    findings = entry["findings"]
    return {
        "finding_count": len(findings),
        "by_kind": dict(Counter(f["kind"] for f in findings)),
        "tools": len([e for e in entry["entries"] if e[1] != "skipped"]),
    }


def compare(before: Path, after: Path) -> None:
    b = {s["server"]: s for s in json.loads(before.read_text())["servers"]}
    a = {s["server"]: s for s in json.loads(after.read_text())["servers"]}
    print("| server | package@version | calls before/after | findings before | findings after | after by kind |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name in CATALOG:
        if name not in a and name not in b:
            continue
        sa, sb = a.get(name), b.get(name)
        ref = sa or sb
        assert ref is not None
        kinds = (
            ", ".join(f"{k} {n}" for k, n in sorted(Counter(f["kind"] for f in sa["findings"]).items())) if sa else "-"
        )
        print(
            f"| {name} | {ref['package']}@{ref['version']} | {sb['calls'] if sb else '-'}/{sa['calls'] if sa else '-'} "
            f"| {len(sb['findings']) if sb else '-'} | {len(sa['findings']) if sa else '-'} | {kinds} |"
        )


def _fuzzgate_of(venv: Path | None) -> str:
    return str(venv / "bin" / "fuzzgate") if venv else FUZZGATE


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--budget", type=float, default=30.0)
    p.add_argument("--servers", default=",".join(CATALOG))
    p.add_argument("--sandbox", default="required", choices=("auto", "required", "off"))
    p.add_argument("--install-only", action="store_true")
    p.add_argument(
        "--before-venv",
        type=Path,
        default=None,
        help="also run this venv's fuzzgate on each server, just before this checkout's (label before)",
    )
    p.add_argument("--label", default="after", help="names this checkout's result file popular-LABEL.json")
    p.add_argument(
        "--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"), help="print the table of two result files"
    )
    ns = p.parse_args()
    if ns.compare:
        compare(*ns.compare)
        return
    import procs
    from realworld import fuzz

    if not procs.NETJAIL.is_file():
        sys.exit(f"no netjail at {procs.NETJAIL}: set NETJAIL to ../shared/tools/netjail.sh of the main checkout")
    passes = [("before", ns.before_venv)] if ns.before_venv else []
    passes.append((ns.label, None))
    results: dict[str, dict[str, Any]] = {}
    for label, venv in passes:
        results[label] = {
            "settings": {"budget_s": ns.budget, "sandbox": ns.sandbox, "label": label},
            "fuzzgate": {
                "binary": _fuzzgate_of(venv),
                "version": "" if ns.install_only else _version_of(_fuzzgate_of(venv)),
            },
            "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
            "servers": [],
            "errors": [],
        }
    names = ns.servers.split(",")
    for label, result in results.items():  # a run of some servers keeps the others' earlier results
        earlier = RESULTS / f"popular-{label}.json"
        if earlier.is_file() and not ns.install_only:
            kept = json.loads(earlier.read_text())
            result["servers"] = [s for s in kept["servers"] if s["server"] not in names]
            result["errors"] = [e for e in kept["errors"] if e.split(" ", 1)[0] not in names]
    for name in names:
        entry = CATALOG[name]
        problem = install(name)
        if problem:
            for result in results.values():
                result["errors"].append(f"{name} ({entry['package']}): {problem}")
            log(f"{name}: {problem}")
            continue
        if ns.install_only:
            log(f"{name}: {entry['package']} {version(name)} installed")
            continue
        for label, venv in passes:  # interleaved: each server's runs see the same load
            result = results[label]
            scratch = reset_scratch(name)
            if name == "git":
                reset_git_scratch()
            work = HOME / "runs" / label / name
            target = {
                "package": entry["package"],
                "version": version(name),
                "command": command(name, scratch, work / "cwd"),
            }
            log(f"fuzzgate ({label}) on {entry['package']} {target['version']} for {ns.budget:g}s")
            procs.FUZZGATE = _fuzzgate_of(venv)  # run_fuzzgate reads it at each call
            try:
                run = fuzz(name, target, ns.budget, ns.sandbox, work=work)
            except Exception as exc:
                result["errors"].append(f"{name} ({entry['package']} {target['version']}): {exc}"[:1500])
                log(f"  failed: {str(exc)[:300]}")
                continue
            finally:
                procs.FUZZGATE = FUZZGATE
                save_json(RESULTS / f"popular-{label}.json", result)
            notes = json.loads((work / "out" / "report.json").read_text()).get("notes", [])
            run.update(what=entry["what"], sdk=sdk(name), load_1min=os.getloadavg()[0], notes=notes, **summarize(run))
            log(f"  {run['calls']} calls, {run['finding_count']} findings {run['by_kind']}")
            result["servers"].append(run)
            save_json(RESULTS / f"popular-{label}.json", result)
    for label, result in results.items():
        result["finished"] = time.strftime("%Y-%m-%d %H:%M:%S %z")
        if not ns.install_only:
            save_json(RESULTS / f"popular-{label}.json", result)
            log(f"wrote {RESULTS / f'popular-{label}.json'}")


def _version_of(binary: str) -> str:
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False)
    return out.stdout.strip() or out.stderr.strip()


if __name__ == "__main__":
    main()
