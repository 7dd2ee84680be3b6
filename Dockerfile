# The fuzzgate GitHub Action. GitHub builds this image, mounts the checked-out repository at
# $GITHUB_WORKSPACE, makes that the working directory and passes the inputs as INPUT_* variables.
# No USER: GitHub runs Docker actions as root; another user could not write to the workspace.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# The toolchains MCP servers are commonly started with: Node.js and npm (npx) from Debian, and uv
# (uvx, uv run) for Python servers whose dependencies are not installed in this image.
RUN apt-get update \
    && apt-get install -y --no-install-recommends nodejs=18.* npm=9.* \
    && rm -rf /var/lib/apt/lists/* \
    && pip install --no-cache-dir uv==0.13.8

# .dockerignore admits only what `pip install` reads: pyproject.toml, README.md, LICENSE and src/.
COPY . /tmp/fuzzgate
RUN pip install --no-cache-dir /tmp/fuzzgate \
    && rm -rf /tmp/fuzzgate

ENTRYPOINT ["python", "-m", "fuzzgate.cli.action"]
