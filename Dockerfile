# tcplab's image: the API, the Celery worker and beat (docker-compose.yml picks the command).
#
#   docker build -t tcplab .
#
# Stage 1 builds the Rust core into the `tcpsim` wheel (maturin, release) and installs the
# locked dependencies into /app/.venv with uv; stage 2 is that venv plus the service's code.
# The base images are build arguments whose defaults are the official images (docker-compose.yml
# passes its PYTHON_IMAGE / RUST_IMAGE): `--build-arg PYTHON_IMAGE=tcplab-local/python:3.11-bookworm
# --build-arg RUST_IMAGE=tcplab-local/rust:bookworm --network host` builds from the local
# stand-ins of ../shared/docker/build-base-images where no registry is reachable.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm
ARG RUST_IMAGE=rust:1-slim-bookworm
ARG UV_VERSION=0.13.9

FROM ${RUST_IMAGE} AS rust

FROM ${PYTHON_IMAGE} AS build
ARG UV_VERSION
# The Rust toolchain (MSRV 1.85, see simulator/Cargo.toml) and a C linker for maturin.
COPY --from=rust /usr/local/rustup /usr/local/rustup
COPY --from=rust /usr/local/cargo /usr/local/cargo
ENV RUSTUP_HOME=/usr/local/rustup \
    CARGO_HOME=/usr/local/cargo \
    PATH=/usr/local/cargo/bin:$PATH
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
RUN pip install --no-cache-dir "uv==${UV_VERSION}"

WORKDIR /app
ENV UV_PROJECT_ENVIRONMENT=/app/.venv \
    UV_PYTHON_DOWNLOADS=never \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy
COPY pyproject.toml uv.lock ./
COPY simulator ./simulator
# The client package is a path dependency of the project (uv needs it to check the lock).
COPY client ./client
# The service's dependencies and tcpsim (built from simulator/python); no dev tools and no
# client (a dev dependency: the server imports none of it); --no-editable: the runtime stage
# copies the venv alone.
RUN uv sync --locked --no-dev --no-editable --python /usr/local/bin/python3.11 \
    && /app/.venv/bin/python -c "import tcpsim; print('tcpsim', tcpsim.__version__)"

FROM ${PYTHON_IMAGE} AS runtime
RUN useradd --create-home --uid 1000 tcplab
WORKDIR /app
COPY --from=build /app/.venv /app/.venv
COPY pyproject.toml alembic.ini ./
COPY migrations ./migrations
COPY infra ./infra
COPY services ./services
COPY api ./api
COPY worker ./worker
ENV PATH=/app/.venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONPATH=/app \
    TCPLAB_HOST=0.0.0.0 \
    TCPLAB_PORT=8000 \
    TCPLAB_STATE_DIR=/tmp/tcplab
USER tcplab
EXPOSE 8000
# The API (migrates first); the lab server's workers run `python -m celery -A worker.app worker`.
CMD ["python", "-m", "infra.launch", "--no-worker"]
