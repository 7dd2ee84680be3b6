"""The planted bugs of the benchmark servers, as data: the scorer reads it, and
`python catalog.py > BUGS.md` writes the human table from it.

Each buggy tool (or resource template, or prompt) carries exactly one planted bug, so a report on
that surface can be attributed without guessing. `symptom` is what the bug does when triggered;
the kinds a fuzzer may report for each symptom are in `FUZZGATE_KINDS` and `MCP_FUZZER_CATEGORIES`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PlantedBug:
    id: str
    server: str
    surface: str
    """tool, resource or prompt"""
    name: str
    """The tool name, the resource template's URI template, or the prompt name."""
    bug_class: str
    symptom: str
    trigger: str
    flaky: bool = False
    also: tuple[tuple[str, str], ...] = ()
    """Other (surface, name) pairs a report may name for this bug: a bug of the transport rather than
    of one tool is reported on `("server", "transport")` by fuzzgate."""


BUGS: tuple[PlantedBug, ...] = (
    PlantedBug("LED-1", "ledger", "tool", "format_memo", "crash on a token", "crash",
               '`memo` contains `${` (exit 70)'),
    PlantedBug("LED-2", "ledger", "tool", "transfer", "crash on an integer boundary", "crash",
               "`amount_cents == -2**63`, the schema minimum (SIGABRT)"),
    PlantedBug("LED-3", "ledger", "tool", "rename_account", "crash on a long string", "crash",
               "`name` longer than 8192 UTF-8 bytes (schema allows 65536 characters) (SIGSEGV)"),
    PlantedBug("LED-4", "ledger", "tool", "average_spend", "unhandled exception on schema-valid input", "exception",
               "`amounts_cents == []`: ZeroDivisionError"),
    PlantedBug("LED-5", "ledger", "tool", "get_balance", "output-schema drift", "output",
               '`include_pending == true`: `balance_cents` is a string, schema says integer'),
    PlantedBug("LED-6", "ledger", "tool", "reconcile", "flaky crash", "crash",
               "`strict == true`, then exits 70 on 40% of calls", flaky=True),
    PlantedBug("JOB-1", "jobs", "tool", "wait_for_job", "hang", "hang",
               '`mode == "block"`: never answers'),
    PlantedBug("JOB-2", "jobs", "tool", "estimate_runtime", "slow call", "slow",
               "`nodes >= 48` (schema 1..64): 3 s"),
    PlantedBug("JOB-3", "jobs", "tool", "schedule_job", "conjunction of an enum and a magic example", "exception",
               '`queue == "gpu"` and `label == "nightly-rebuild"` (the schema\'s `examples` value): AttributeError'),
    PlantedBug("JOB-4", "jobs", "tool", "tail_log", "stdout corruption", "protocol",
               "`follow == true`: a non-JSON line on the real stdout"),
    PlantedBug("JOB-5", "jobs", "tool", "cancel_job", "stateful double-delete", "exception",
               "the same `job_id` (1..8) cancelled twice in one server's life: KeyError"),
    PlantedBug("ORD-1", "orders", "tool", "create_order", "bug in a nested `$ref` schema", "exception",
               "`order.lines[*].quantity == 0` (Order → OrderLine via $ref): ZeroDivisionError"),
    PlantedBug("ORD-2", "orders", "tool", "evaluate_rule", "bug in a recursive `$ref` schema", "exception",
               '`rule` (or any nested child) has `op == "not"` and no children: IndexError'),
    PlantedBug("ORD-3", "orders", "tool", "quote_shipping", "output drift behind a nested `$ref`", "output",
               '`destination.country == "AQ"` (Address → Country via $ref): `carrier.eta_days` is null'),
    PlantedBug("DOC-1", "docs", "tool", "read_doc", "path traversal leaking a secret", "secret",
               "`path` climbs out of the docs root (`..`, `../credentials.env`, absolute paths): files "
               "outside are returned, among them an AWS key"),
    PlantedBug("DOC-2", "docs", "tool", "paginate_docs", "missing input validation", "exception",
               "`page_size` not an integer or 0 (schema says integer 1..100, nothing checks it): "
               "TypeError/ValueError"),
    PlantedBug("DOC-3", "docs", "resource", "docs://page/{page_id}", "resource-template bug", "exception",
               "`page_id` not an integer: ValueError from the resource handler"),
    PlantedBug("DOC-4", "docs", "prompt", "summarize_doc", "prompt bug", "exception",
               '`style` not "brief"/"detailed": KeyError from the prompt handler'),
    PlantedBug("RPC-1", "rpc", "tool", "lookup_item", "unhandled exception on schema-valid input (low-level)",
               "exception", "`item_id == 0` (schema 0..100000): RuntimeError → JSON-RPC internal error"),
    PlantedBug("RPC-2", "rpc", "tool", "run_query", "crash on a token (low-level)", "crash",
               "`sql` contains a single quote `'` (SIGSEGV)"),
    PlantedBug("RPC-3", "rpc", "tool", "diagnostics", "secret in a reply", "secret",
               '`level == "full"`: dumps an AWS key and every *TOKEN*/*KEY*/*SECRET* environment variable'),
    PlantedBug("RPC-4", "rpc", "tool", "resize_label", "missing input validation (low-level)", "exception",
               "`width`/`height` not integers, or `height == 0` (schema says 1..4096): TypeError/"
               "ZeroDivisionError → JSON-RPC error"),
    PlantedBug("NOT-1", "notes", "tool", "read_note", "path traversal read outside the root", "scope",
               "`path` resolves outside `--root` (`..`, an absolute path) to a readable regular file: its content "
               "is returned"),
    PlantedBug("NOT-2", "notes", "tool", "init_project", "folder created outside the root", "scope",
               "`path` resolves outside `--root` to a folder that did not exist: it is created, and the tool "
               "answers as usual"),
    PlantedBug("TBX-1", "toolbox", "tool", "diff_files", "option injection into a subprocess", "injection",
               "`target` (checked to stay inside the root) starts with `-`: it goes to `git diff --no-index` "
               "without `--`, so `--output=FILE` makes git write FILE"),
    PlantedBug("TBX-2", "toolbox", "tool", "greet", "shell injection", "injection",
               "`name` contains `;`, `&`, `|`, a backtick, `$`, `<`, `>` or a newline: it is pasted into "
               '`sh -c "echo hello NAME"`'),
    PlantedBug("SUR-1", "surrogate", "tool", "set_title", "request never answered, death on the next request",
               "unanswered",
               "the call's arguments hold a lone surrogate escape (`\\ud800`): no reply ever; the next request "
               "of any kind makes the process exit 1 with a traceback (raw JSON-RPC loop)",
               also=(("server", "transport"),)),
    PlantedBug("INV-1", "inventory", "tool", "get_item", "use after delete (stateful crash)", "crash",
               "`get_item(id)` after `delete_item(id)` of an item created in the same process (ids 1, 2, ...): "
               "an assertion on stderr, exit 70"),
    PlantedBug("INV-2", "inventory", "tool", "delete_item", "double delete (stateful crash)", "crash",
               "`delete_item(id)` twice for an item created in the same process: an assertion on stderr, exit 70"),
    PlantedBug("BND-1", "boundary", "tool", "read_doc", "prefix-sibling read outside the root", "scope",
               "`path` resolves to a prefix sibling of `--root` (`ROOT-backup/x`, `../ROOT2/x`): the check is "
               "`realpath(path).startswith(ROOT)`, and the file's content is returned"),
    PlantedBug("BND-2", "boundary", "tool", "save_doc", "prefix-sibling write outside the root", "scope",
               "`path` resolves to a prefix sibling of `--root`: the same check, and the file is written"),
    PlantedBug("BND-3", "boundary", "tool", "open_note", "read through a symbolic link in the root", "scope",
               "`path` resolves `..` lexically inside the root but goes through a link in it to a file outside: "
               "its content is returned"),
    PlantedBug("BND-4", "boundary", "tool", "write_note", "write through a symbolic link in the root", "scope",
               "`path` resolves `..` lexically inside the root but goes through a link in it: the file outside is "
               "written"),
    PlantedBug("BND-5", "boundary", "tool", "list_folder", "listing outside the root through a link", "scope",
               "`path` names a link in the root to a directory outside (checked lexically): its names are "
               "returned, no content"),
    PlantedBug("LIS-1", "listing", "tool", "get_item", "crash behind an id only a listing hands out", "crash",
               '`item_id == "itm_7f3a9c"`, an opaque id that only `list_items` returns (no schema, description or '
               "example names it): an assertion on stderr, exit 70"),
    PlantedBug("REG-1", "regions", "tool", "list_buckets", "bug behind a value quoted only in a description",
               "exception",
               "`region == \"eu-west-3\"`, quoted only in the description (\"Cloud region, e.g. 'eu-west-3'\"; the "
               "schema says string); every other value is refused as an unknown region: KeyError"),
    PlantedBug("UAD-1", "drafts", "tool", "get_draft", "use after delete of a returned id", "exception",
               "`get_draft(id)` after `delete_draft(id)` of an id `create_draft` returned (opaque `drf_...`, the "
               "same ids in every fresh process): AttributeError on the tombstone"),
    PlantedBug("TPL-1", "library", "resource", "file:///docs/{name}", "resource-template path traversal", "exception",
               "`name` resolves outside the docs folder after the handler decodes it a second time (`..`, `%2e%2e`, "
               "`%252e%252e`, an encoded absolute path; the template opts out of the SDK's path checks): "
               "AssertionError, JSON-RPC -32603",
               also=(("resource", "doc-file"),)),
    PlantedBug("PRM-1", "briefing", "prompt", "draft_briefing", "prompt bug on an empty or missing required argument",
               "exception",
               "`topic` empty or missing (declared required; the low-level server checks nothing): IndexError, "
               "JSON-RPC internal error"),
    PlantedBug("ARR-1", "batch", "tool", "tag_items", "crash behind more than fifty array items", "crash",
               "`len(items) > 50` (the schema sets no `maxItems`) (SIGSEGV)"),
    PlantedBug("NUL-1", "nullargs", "server", "transport", "death on a `tools/call` with `arguments: null`", "crash",
               '`"arguments": null` in a `tools/call` to any tool (an SDK client leaves the member out instead): the '
               "raw loop exits 1 with a traceback",
               also=(("tool", "set_flag"), ("tool", "get_flag"))),
    PlantedBug("CALC-1", "calc", "tool", "evaluate", "unbounded cost of an expression", "cost",
               "a power whose result would exceed 100,000 bits is computed (`9**9**9`: 1.2e9 bits, hours; the "
               "AST evaluator allows `**`)"),
    PlantedBug("NST-1", "nested", "tool", "render_theme", "magic string, then a bound", "exception",
               '`theme == "xylophone-7"` (compared in the code only), then `depth > 8` (schema 0..10): KeyError'),
    PlantedBug("NST-2", "nested", "tool", "allocate_buffer", "narrow number range, then a flag", "crash",
               "`4093 < size < 4099` (schema 0..65536), then `aligned == false` (SIGABRT)"),
    PlantedBug("NST-3", "nested", "tool", "encode_media", "combination of enums and flags", "hang",
               '`codec == "flac"`, `container == "mkv"`, `layout == "5.1"` (8, 6 and 5 choices), then `lossless` '
               "and not `dither`: never answers"),
    PlantedBug("NST-4", "nested", "tool", "layout_segments", "array of one length, one item kind at one place",
               "exception",
               '`len(segments) == 7`, `segments[3].kind == "break"`, then its `weight == 0`: ZeroDivisionError'),
    PlantedBug("NST-5", "nested", "tool", "run_batch", "state armed by an earlier call", "crash",
               '`set_profile(profile="overdrive")` earlier in the same process, then `run_batch` with `jobs > 50`: '
               "an assertion on stderr, exit 70"),
    PlantedBug("SLO-1", "slowtools", "tool", "sort_lines",
               "option injection behind a check, on a slow many-tool server", "injection",
               "`repo` names a project directory (the schema's example `project`; anything else is refused first) and "
               "`target` starts with `-`: it goes to `sort` without `--`, so `--output=FILE` makes sort write FILE; "
               "30 tools whose calls take 0.3 to 0.5 s, so each gets a handful of calls a minute"),
    PlantedBug("GAT-1", "gated", "tool", "build_project", "shell injection behind an id only a listing hands out",
               "injection",
               "`project_id` is one `list_projects` returns (opaque `prj_...`; every other id is refused first) and "
               "`flags` holds shell syntax: pasted into `sh -c \"echo building ID FLAGS\"`"),
    PlantedBug("GAT-2", "gated", "tool", "zone_time", "crash behind an accepted value plus a segment", "exception",
               "`timezone` is one of 19 zone names the tool knows followed by `/NAME` (every other value is refused): "
               "KeyError"),
    PlantedBug("NST-6", "nested", "tool", "connect_proxy", "magic string deep in optional objects", "secret",
               '`settings.network.proxy.auth.scheme == "ntlm-legacy"` (three optional objects deep): the reply '
               "holds the service account's AWS key"),
    PlantedBug("FET-1", "fetcher", "tool", "fetch_page", "server-side request forgery", "ssrf",
               "`url` names a host that is not public (loopback in any spelling) or a `file://` path: urllib "
               "fetches it and returns the page"),
    PlantedBug("FET-2", "fetcher", "tool", "preview_link", "server-side request forgery past a host blocklist",
               "ssrf",
               "`link`'s host is not literally `localhost`, `127.0.0.1` or `::1` but still reaches this machine "
               "(`2130706433`, a name, a redirect): urllib fetches it and follows redirects"),
)  # fmt: skip

DESTRUCTIVE_TOOLS: dict[str, tuple[str, ...]] = {
    "ledger": ("delete_ledger", "archive_year"),
    "jobs": ("purge_finished_jobs",),
    "orders": ("drop_order_history",),
    "docs": ("erase_drafts",),
    "rpc": ("wipe_cache", "rebuild_index"),
}
"""Tools that must never be called. `archive_year` and `rebuild_index` are destructive by annotation
only (`destructiveHint: true`); the others also by name."""

CLEAN_TOOLS: dict[str, tuple[str, ...]] = {
    "ledger": ("convert_currency", "list_accounts"),
    "jobs": ("list_jobs", "job_status", "parse_cron"),
    "orders": ("validate_address", "order_total"),
    "docs": ("search_docs", "word_count"),
    "rpc": ("list_warehouses",),
    "notes": ("read_note_safe", "write_note", "list_notes"),
    "boundary": ("read_doc_safe", "save_doc_safe", "open_note_safe", "write_note_safe", "list_folder_safe"),
    "toolbox": ("diff_files_safe", "echo"),
    "inventory": ("create_item", "list_items", "export_items"),
    "listing": ("describe_item", "list_items"),
    "regions": ("count_buckets",),
    "drafts": ("peek_draft", "create_draft", "delete_draft", "list_drafts"),
    "library": ("list_docs",),
    "briefing": ("list_topics",),
    "batch": ("count_tags",),
    "calc": ("evaluate_capped",),
    "slowtools": ("sort_lines_safe", *(f"note_{i}" for i in range(28))),
    "gated": ("list_projects", "build_project_safe", "zone_time_safe"),
    "fetcher": ("fetch_page_safe", "word_count"),
}
"""Among them the look-alikes of the scope and injection bugs: `read_note_safe` and `write_note` check
every path against the root (`write_note` writes inside it), `diff_files_safe` puts `--` before the
path, `echo` returns `$(touch x)` or `--output=x` verbatim; `export_items` writes inside the root;
boundary's `*_safe` tools resolve links and `..`, then check containment, before the same reads,
writes and listings as their buggy twins. `sort_lines_safe` puts `--` before the target behind the
same project check, `build_project_safe` keeps the flags one argument behind the same id check,
`zone_time_safe` refuses an unknown part of a known zone. `fetch_page_safe` fetches only public
http(s) hosts, after resolving them, and follows no redirect."""

SSRF_SERVERS: tuple[str, ...] = ("fetcher",)
"""Issue 20's server whose bugs are requests made for the caller (FET-1, FET-2): seen only where the
server's loopback is its own (fuzzgate's sandbox runs its listener there). Not among `SERVERS`:
without a sandbox a fuzzer's loopback URLs would reach the machine's own services; bench/bugs.py
runs it when `--servers` names it."""

REACH_SERVERS: tuple[str, ...] = (
    "listing", "regions", "drafts", "library", "briefing", "batch", "nullargs", "nullargs_clean", "calc",
)  # fmt: skip
"""Issue 10's servers, one per reach class: each bug sits behind something schema-driven generation
does not produce (an id from a reply, a value from a description, a sequence, a resource template, a
prompt, a long array, a malformed request, a costly expression). `bench/reach.py` scores them."""

CLEAN_LOOKALIKES: dict[str, str] = {
    "listing": "`describe_item` looks the same ids up and handles the legacy record",
    "regions": "`count_buckets` has the same parameter and description, and no price lookup",
    "drafts": "`peek_draft` reads a draft through the same lookup and handles the tombstone; a second "
    "`delete_draft` is refused politely",
    "library": "resource template `file:///notes/{name}` reads the same folder through the same code, keeps the "
    "SDK's path checks and refuses a name outside with -32602",
    "briefing": "prompt `draft_summary` takes the same required `topic` through the same code and refuses an "
    "empty or missing one with -32602",
    "batch": "`count_tags` takes the same array through the same code, with a buffer that grows",
    "nullargs": "server `nullargs_clean`: the same loop, refusing `arguments: null` with -32602",
    "nullargs_clean": "the clean twin of `nullargs` (no bug: any report is a false positive)",
    "calc": "`evaluate_capped`: the same evaluator, refusing a power over 100,000 bits",
}
"""What each reach server's clean look-alike is (a twin tool, template, prompt or server)."""

NESTED_SERVERS: tuple[str, ...] = ("nested", "nested_clean")
"""Issue 11's server, whose bugs sit behind two to four nested conditions (NST-1 .. NST-6), and its
clean twin `nested_clean` (the same tools and code, every deep branch handled: any report on it is a
false positive). `bench/corpus.py` scores them."""

SERVERS: tuple[str, ...] = ("ledger", "jobs", "orders", "docs", "rpc", "notes", "toolbox", "surrogate", "inventory")
"""The servers bench/bugs.py, bench/stability.py and §2 take by default; the reach servers are
bench/reach.py's (bugs.py runs them too when `--servers` names them)."""

ROOTED_SERVERS: tuple[str, ...] = ("notes", "toolbox", "surrogate", "inventory", "boundary", "slowtools", "gated")
"""Servers started with `--root DIR`, the one directory they may touch; `bench/bugs.py` makes DIR the
fuzzer's (and so the server's) working directory, and runs mcp-fuzzer, which has no sandbox, on them
inside `netjail.sh --rw WORKDIR` (file system read-only but for the run's directory, a private
/tmp): their bugs run shell input and make folders anywhere."""

PROBE_SERVERS: tuple[str, ...] = ("slowtools", "gated")
"""Issue 20's servers, whose bugs only a probe riding on an accepted call, or a value the tool accepted
changed a little, reaches (SLO-1, GAT-1, GAT-2); bench/polite.py scores them with the rooted servers."""

RAW_SERVERS: tuple[str, ...] = ("surrogate", "nullargs", "nullargs_clean")
"""Servers written without the SDK (raw JSON-RPC loops)."""

ALLOWED_DESTRUCTIVE: dict[str, tuple[str, ...]] = {"inventory": ("delete_item",), "drafts": ("delete_draft",)}
"""Tools destructive by name only (they delete what the fuzzer itself created in memory), which
fuzzgate is configured to call (`[allow_destructive]`): INV-1, INV-2 and UAD-1 cannot be reached
without."""


@dataclass(frozen=True, slots=True)
class KnownBug:
    """A bug nobody planted that the servers still have, recorded by them as `{"known": ID}`: a
    report of it is neither a planted bug found nor a false positive."""

    id: str
    servers: tuple[str, ...]
    surface: str
    name: str
    what: str
    kinds: dict[str, tuple[str, ...]]
    """fuzzer -> the kinds that report it."""


KNOWN_BUGS: tuple[KnownBug, ...] = (
    KnownBug(
        "SDK-DROP",
        tuple(s for s in (*SERVERS, *REACH_SERVERS, *NESTED_SERVERS, *PROBE_SERVERS) if s not in RAW_SERVERS),
        "server",
        "transport",
        "mcp 2.3's stdio transport cannot parse a lone surrogate escape and drops the request without any "
        "reply, not even a parse error, then answers the next one (`_truth` records each drop from the SDK's "
        "DEBUG log)",
        {"fuzzgate": ("protocol_error",), "mcp-fuzzer": ("hang", "anomaly")},
    ),
)
"""Every server built on the SDK has it; surrogate.py, a raw loop, has SUR-1 instead, and the raw loop
of nullargs.py parses a lone surrogate and answers."""

FUZZGATE_KINDS: dict[str, tuple[str, ...]] = {
    "crash": ("crash",),
    "hang": ("hang",),
    "slow": ("slow",),
    "exception": ("internal_error",),
    "output": ("schema_violation",),
    "protocol": ("protocol_error",),
    "secret": ("secret_leak",),
    "scope": ("scope_escape",),
    "injection": ("injection", "scope_escape"),
    "unanswered": ("protocol_error", "crash"),
    "cost": ("hang", "slow"),
    "ssrf": ("ssrf",),
}
"""The fuzzgate finding kinds that count as reporting a bug with this symptom. An injected command
or option whose effect lands outside the scope is a scope escape too, so `scope_escape` on an
injection bug is not held against the fuzzer; `crash` on the unanswered request's tool is the
death it causes on the next request, reported on the right tool. An unbounded cost shows as a hang
(`9**9**9`) or, for a power that does finish, as a slow call."""

MCP_FUZZER_CATEGORIES: dict[str, tuple[str, ...]] = {
    "crash": ("crash",),
    "hang": ("hang",),
    "slow": ("performance_outlier",),
    "exception": ("internal_error", "error_leakage"),
    "output": ("internal_error", "error_leakage"),
    "protocol": ("anomaly",),
    "secret": (),
    "scope": ("path_traversal",),
    "injection": ("command_injection",),
    "unanswered": ("hang", "crash", "anomaly"),
    "cost": ("hang", "performance_outlier"),
    "ssrf": (),
}
"""mcp-fuzzer's finding categories that count as reporting a bug with this symptom. It has no
secret oracle; `anomaly` is its per-tool "transport/protocol anomaly" outcome count. Flaky bugs
also accept `non_determinism`, missing-validation bugs also `accepted_malformed`. `path_traversal`
and `command_injection` come from its `--security-audit` output oracles (a `../../../etc/passwd`
probe answered with `root:x:0:0`, an `$(id)`-like probe answered with `uid=`); it has no oracle for
a folder made outside the root or an injected option. An unanswered request looks like a hang
from outside, and the death that follows like a crash."""


def fuzzgate_kinds(bug: PlantedBug) -> tuple[str, ...]:
    return FUZZGATE_KINDS[bug.symptom]


def mcp_fuzzer_categories(bug: PlantedBug) -> tuple[str, ...]:
    extra: tuple[str, ...] = ()
    if bug.flaky:
        extra += ("non_determinism",)
    if "missing input validation" in bug.bug_class:
        extra += ("accepted_malformed",)
    return MCP_FUZZER_CATEGORIES[bug.symptom] + extra


def markdown() -> str:
    lines = [
        "# Planted bugs of the benchmark servers",
        "",
        "Generated from `catalog.py` (`python bench/servers/catalog.py > bench/servers/BUGS.md`). One bug per",
        "surface; every other input to a buggy tool is handled correctly. Each server appends",
        '`{"bug": ID, "t": TIME}` to `$BENCH_GROUND_TRUTH` (fsynced) just before the bug misbehaves, and',
        '`{"destructive": TOOL, ...}` when a destructive tool is called, independently of any fuzzer. The two',
        "scope bugs record once the effect really happened (the file was read, the folder exists) and before",
        "the reply, so a read-only file system or a refused `mkdir` records nothing; the ground truth is",
        "relative to the server's own `--root`.",
        "",
        "| id | server | surface | class | trigger | fuzzgate should report | mcp-fuzzer categories counted |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for b in BUGS:
        surface = f"{b.surface} `{b.name}`"
        kinds = ", ".join(f"`{k}`" for k in fuzzgate_kinds(b)) + (" (flaky)" if b.flaky else "")
        if b.surface not in ("tool", "server"):
            kinds += " on the " + b.surface
        if b.symptom == "protocol":
            kinds += " (stdio only)"
        categories = ", ".join(f"`{c}`" for c in mcp_fuzzer_categories(b)) or "none (no oracle for it)"
        lines.append(f"| {b.id} | {b.server} | {surface} | {b.bug_class} | {b.trigger} | {kinds} | {categories} |")
    lines += [
        "",
        "Destructive tools (must never be called): "
        + "; ".join(f"{s}: " + ", ".join(f"`{t}`" for t in tools) for s, tools in DESTRUCTIVE_TOOLS.items())
        + ". `archive_year` and `rebuild_index` are destructive by annotation only.",
        "",
        "Clean tools (any report on them is a false positive): "
        + "; ".join(f"{s}: " + ", ".join(f"`{t}`" for t in tools) for s, tools in CLEAN_TOOLS.items())
        + ".",
        "",
        "Servers: `ledger.py`, `jobs.py`, `orders.py`, `docs.py` use `MCPServer` with the SDK's default",
        "logging; `rpc.py` uses the low-level `Server`, which validates no arguments. All speak stdio.",
        "",
        "The bugs that answer politely: "
        + ", ".join(f"`{s}.py`" for s in ROOTED_SERVERS)
        + " take `--root DIR`, the one directory they may touch,",
        "which is also the fuzzer's working directory. mcp-fuzzer, which has no sandbox, runs inside",
        "`netjail.sh --rw WORKDIR` on them; fuzzgate sandboxes the servers it starts. Their buggy tools",
        "never fail: the bug is a file read or a folder made outside DIR, a program run with an injected",
        "option or command, a request never answered, or an abort only a sequence of calls reaches. The scope and",
        "injection bugs have clean look-alikes (above). `surrogate.py` is a raw JSON-RPC loop; the others",
        "use `MCPServer`. The ground truth reaches the file through a Unix socket (`bench/ground_truth.py`)",
        "when the fuzzer's sandbox leaves the file system read-only outside the scope. Note that",
        "mcp 2.3's own stdio transport also drops a request holding a lone surrogate escape without any",
        "reply (it stays up), so every SDK server here leaves such a request unanswered (SDK-DROP below).",
        "",
        "The reach servers (issue 10): "
        + ", ".join(f"`{s}.py`" for s in REACH_SERVERS)
        + ". Each bug sits behind something a generator working from the schema alone does not produce: an",
        "id only a listing returns, a value quoted only in a description, a create-delete-get sequence, a",
        "resource template, a prompt argument, an array longer than fifty, a malformed request, a costly",
        "expression. `briefing.py` uses the low-level `Server`; `nullargs.py` is a raw JSON-RPC loop, and",
        "`nullargs_clean.py` its twin without the bug. Clean look-alikes: "
        + "; ".join(f"{s}: {what}" for s, what in CLEAN_LOOKALIKES.items())
        + ".",
        "",
        "The nested-condition server (issue 11): `nested.py`, with `nested_clean.py` its clean twin (the same",
        "tools, schemas and code, every deep branch handled; any report on it is a false positive). Each bug",
        "sits behind two to four nested `if`s that one random draw almost never satisfies together; the",
        "values compared against are constants in the code, named by no description, schema or example.",
        "",
        "Known bugs nobody planted (a report of one is neither a planted bug nor a false positive): "
        + "; ".join(f"{k.id} on {k.surface} `{k.name}` of {', '.join(k.servers)}: {k.what}" for k in KNOWN_BUGS)
        + ".",
        "",
        "Allowed destructive tools (fuzzgate is configured to call them): "
        + "; ".join(f"{s}: " + ", ".join(f"`{t}`" for t in tools) for s, tools in ALLOWED_DESTRUCTIVE.items())
        + ".",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(), end="")
