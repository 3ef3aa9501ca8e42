# posekit: one container serving the REST + websocket API, the viewer and the landing page.
FROM python:3.11-slim

# Sessions (SQLite) and downloaded Menagerie robots live on the /data volume, so a
# recreated container restores its sessions without fetching their robots again.
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    POSEKIT_DB=/data/posekit.sqlite3 \
    POSEKIT_DATA_DIR=/data \
    MENAGERIE_CACHE_DIR=/data/menagerie \
    NUMBA_CACHE_DIR=/home/posekit/.cache/numba

# MuJoCo renders nothing here, but its wheel links against these at import time.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libgl1 libglib2.0-0 \
    && rm -rf /var/lib/apt/lists/*

RUN useradd --create-home --uid 1000 posekit
WORKDIR /app
# The dependencies at the versions of requirements.lock (refresh it with `make lock`).
COPY requirements.lock ./
COPY pyproject.toml README.md ./
COPY server ./server
COPY frontend ./frontend
COPY models ./models
RUN pip install --constraint requirements.lock ".[server,cluster]" \
    && mkdir -p /data/menagerie && chown -R posekit:posekit /data

USER posekit
# Compile every Numba kernel of the engine once, at build time, into the user's cache.
RUN python -m posekit.warmup

VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/api/health', timeout=4)"

CMD ["posekit", "up", "--host", "0.0.0.0", "--port", "8000"]
