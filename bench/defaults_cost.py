"""What each of fuzzgate's defaults costs: whole 12 s runs on the fast server with the defaults, and
with each default turned off in turn, against the bare SDK loop measured in the same round.

    python bench/defaults_cost.py [--rounds 3] [--seconds 12] [--transports stdio,http,http-command] [--out FILE]
    python bench/defaults_cost.py --markdown [FILE]

Variants (each a whole `fuzzgate run --budget 12s --seed 1`, timed from spawn to exit, as
`wholerun.py` times them; its `bare` loop is the baseline):

- `defaults`: `--sandbox auto`, `--feedback auto` (the coverage collector on a Python stdio server);
- `no sandbox`: `--sandbox off`;
- `no collector`: `--feedback behaviour`;
- `neither`: `--sandbox off --feedback behaviour` (the issue's 0.8 aim);
- `no memory watch`: `--memory-limit off` (the server's memory read from /proc every 50 ms).

Transports: `stdio`; `http`, the server started by the bench and reached by URL (fuzzgate has no
sandbox or collector for a server it does not start, so only `defaults` and `neither` are measured
there); `http-command`, the server started by fuzzgate from `[target] command` (a `fuzzgate.toml`
with `kind = "http"`: in the sandbox through its relay, with the collector), every variant. Over
HTTP the bare loop reaches a server the bench started.

Rounds are interleaved: every round measures the bare loop, then every variant, the order of the
variants rotated each round; a variant's ratio is its calls / the bare calls of its round, and the
table gives the median over rounds. Results: bench/.work/results/defaults_cost.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from procs import PYTHON, RESULTS, WORK, free_port, fuzzgate_version, http_server, log, run_fuzzgate, save_json
from wholerun import FAST_SERVER, bare

RESULT = RESULTS / "defaults_cost.json"
VARIANTS: dict[str, tuple[str, ...]] = {
    "defaults": (),
    "no sandbox": ("--sandbox", "off"),
    "no collector": ("--feedback", "behaviour"),
    "neither": ("--sandbox", "off", "--feedback", "behaviour"),
    "no memory watch": ("--memory-limit", "off"),
}
HTTP_VARIANTS = ("defaults", "neither")


def _command_config(tmp: Path) -> None:
    """A `fuzzgate.toml` in `tmp` whose target is the fast server over HTTP, started by fuzzgate."""
    port = free_port()
    args = ", ".join(json.dumps(a) for a in (str(FAST_SERVER), "--transport", "http", "--port", str(port)))
    lines = ["[target]", 'kind = "http"', f'url = "http://127.0.0.1:{port}/mcp"', f"command = {json.dumps(PYTHON)}",
             f"args = [{args}]"]  # fmt: skip
    (tmp / "fuzzgate.toml").write_text("\n".join(lines) + "\n")


def fuzzgate(seconds: float, url: str | None, extra: tuple[str, ...], *, command: bool = False) -> dict[str, Any]:
    """`command`: an HTTP server fuzzgate starts (`_command_config`), not the stdio server."""
    target = ["--url", url] if url else [] if command else ["--command", PYTHON, f"--arg={FAST_SERVER}"]
    WORK.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=WORK) as name:
        tmp = Path(name)
        if command:
            _command_config(tmp)
        args = [*target, "--budget", f"{seconds:g}s", "--seed", "1", "--baseline", str(tmp / "baseline"), *extra]
        run = run_fuzzgate(args, tmp / "out", cwd=tmp, timeout_s=seconds + 300)
    if run.report is None:
        raise RuntimeError(f"fuzzgate run failed (exit {run.exit_code}):\n{run.output[-3000:]}")
    feedback = run.report.get("feedback") or {}
    return {
        "calls": run.report["calls"],
        "wall_s": round(run.wall_s, 2),
        "first_call_s": round(run.progress[0][0], 2) if run.progress else None,
        "feedback": feedback.get("signal"),
        "containment": (run.report.get("containment") or "")[:60],
    }


def measure(rounds: int, seconds: float, transports: list[str]) -> dict[str, Any]:
    rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
    bares: dict[str, list[dict[str, Any]]] = {t: [] for t in transports}
    loads: list[float] = []
    for r in range(rounds):
        for transport in transports:
            names = list(HTTP_VARIANTS) if transport == "http" else list(VARIANTS)
            names = names[r % len(names) :] + names[: r % len(names)]
            port = free_port() if transport != "stdio" else 0
            server = [PYTHON, str(FAST_SERVER), "--transport", "http", "--port", str(port)]
            for who in ["bare", *names]:
                loads.append(round(os.getloadavg()[0], 2))
                if transport == "http-command" and who != "bare":
                    m = fuzzgate(seconds, None, VARIANTS[who], command=True)
                elif transport != "stdio":
                    with http_server(server, port) as url:
                        m = bare("http", seconds, url) if who == "bare" else fuzzgate(seconds, url, VARIANTS[who])
                else:
                    m = bare(transport, seconds, None) if who == "bare" else fuzzgate(seconds, None, VARIANTS[who])
                if who == "bare":
                    bares[transport].append(m)
                else:
                    m["ratio"] = round(m["calls"] / bares[transport][-1]["calls"], 3)
                    rows.setdefault((transport, who), []).append(m)
                log(f"round {r + 1} {transport} {who}: {m['calls']} calls in {m['wall_s']} s wall")
    cells = [
        {
            "transport": transport,
            "variant": variant,
            "runs": runs,
            "ratio_median": statistics.median(m["ratio"] for m in runs),
            "bare_calls_median": statistics.median(b["calls"] for b in bares[transport]),
        }
        for (transport, variant), runs in rows.items()
    ]
    return {"cells": cells, "loadavg_1m": loads}


def section(data: dict[str, Any]) -> list[str]:
    s, loads = data["settings"], data["loadavg_1m"]
    out = [
        f"### What each default costs (whole runs of {s['seconds']:g} s)",
        "",
        f"`bench/defaults_cost.py` ({data['started'][:16]}, fuzzgate {data['fuzzgate']}): whole runs on the fast "
        f"server with the defaults and with each default off, each against the bare SDK loop of its round; "
        f"{s['rounds']} interleaved rounds, medians (load average {min(loads)}-{max(loads)}).",
        "",
        "| transport | variant | fuzzgate calls / bare calls | per round | first call at s | feedback |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for c in data["cells"]:
        runs = c["runs"]
        out.append(
            f"| {c['transport']} | {c['variant']} | **{c['ratio_median']:.2f}** | "
            + " / ".join(f"{m['ratio']:.2f}" for m in runs)
            + " | "
            + " / ".join(str(m["first_call_s"]) for m in runs)
            + f" | {runs[0]['feedback']} |"
        )
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=float, default=12.0)
    p.add_argument("--transports", default="stdio,http", help="of stdio, http, http-command")
    p.add_argument("--out", type=Path, default=RESULT)
    p.add_argument("--markdown", nargs="?", const=str(RESULT), default=None)
    ns = p.parse_args()
    if ns.markdown:
        print("\n".join(section(json.loads(Path(ns.markdown).read_text()))))
        return
    os.environ["WHOLERUN_SECONDS"] = repr(ns.seconds)
    started = time.strftime("%Y-%m-%d %H:%M")
    data = measure(ns.rounds, ns.seconds, ns.transports.split(","))
    data.update(
        started=started,
        fuzzgate=fuzzgate_version(),
        settings={"rounds": ns.rounds, "seconds": ns.seconds, "python": sys.version.split()[0]},
    )
    save_json(ns.out, data)
    print("\n".join(section(data)))


if __name__ == "__main__":
    main()
