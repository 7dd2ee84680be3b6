"""A snapshot of fuzzgate at one commit, to measure it while others edit src/.

    python bench/snapshot.py [REV]      # default HEAD; prints the venv's path

Makes bench/.work/fg-SHA/src from `git archive REV src` and a venv bench/.work/fg-SHA/venv whose
`.pth` puts that src first and then reuses .venv's packages (nothing is installed), with a
`bin/fuzzgate` script; `BENCH_FUZZGATE_VENV=<the printed path>` (or a script's `--fuzzgate-venv`)
then runs that fuzzgate. An existing snapshot of the same commit is reused as it is.
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import tarfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
WORK = BENCH / ".work"
MAIN_VENV = REPO / ".venv"


def snapshot(rev: str = "HEAD") -> Path:
    """The venv of the snapshot of `rev`, made when missing."""
    sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", rev], capture_output=True, text=True,
                         check=True).stdout.strip()  # fmt: skip
    root = WORK / f"fg-{sha}"
    venv = root / "venv"
    if (venv / "bin" / "fuzzgate").exists():
        return venv
    archive = subprocess.run(["git", "-C", str(REPO), "archive", sha, "src"], capture_output=True, check=True).stdout
    root.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(root, filter="data")
    subprocess.run([str(MAIN_VENV / "bin" / "python"), "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python*/site-packages"))
    main_site = next((MAIN_VENV / "lib").glob("python*/site-packages"))
    # The snapshot's src before .venv's site-packages, where the editable install points at the live src/.
    pth = f"{root / 'src'}\nimport site; site.addsitedir({str(main_site)!r})\n"
    (site / "00-fuzzgate-snapshot.pth").write_text(pth)
    script = venv / "bin" / "fuzzgate"
    script.write_text(f"#!{venv / 'bin' / 'python'}\nimport sys\nfrom fuzzgate.cli.main import main\n"
                      "if __name__ == '__main__':\n    sys.exit(main())\n")  # fmt: skip
    script.chmod(0o755)
    return venv


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("rev", nargs="?", default="HEAD")
    venv = snapshot(p.parse_args().rev)
    check = subprocess.run([str(venv / "bin" / "python"), "-c", "import fuzzgate; print(fuzzgate.__file__)"],
                           capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    if not check.startswith(str(venv.parent / "src")):
        sys.exit(f"the snapshot imports fuzzgate from {check}, not from its own src")
    print(venv)


if __name__ == "__main__":
    main()
