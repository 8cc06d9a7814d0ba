# One image for the edge and the worker: the command picks the process (docs/build.md).
#   docker build -t loyalty-platform .
#   docker run ... loyalty-platform                              # the edge (default command)
#   docker run ... loyalty-platform node dist/workers/worker.js  # a worker
# Three stages build it; the runtime stage holds compiled JavaScript, production dependencies and
# the offline speech engine, and runs as the unprivileged `node` user.

# Every stage starts from this image, pinned by version and digest (docs/build.md): a rebuild gets
# the same Node and Debian, not whatever the tag points to that day.
ARG NODE_IMAGE=node:20.20.2-bookworm-slim@sha256:2cf067cfed83d5ea958367df9f966191a942351a2df77d6f0193e162b5febfc0

# 1. build: every dependency, then `npm run build` (tsc to dist/, the prebuilt workflow bundle, the
#    console's static files).
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY activities ./activities
COPY edge ./edge
COPY workflows ./workflows
COPY workers ./workers
# the console (dist/console) is bundled from these: the typed client and the console's sources
COPY client/src ./client/src
COPY client/console ./client/console
COPY tools/build.ts tools/source-stamp.ts tools/console-build.ts ./tools/
RUN npm run build

# 2. dependencies: production ones only, without other platforms' native builds (prune-runtime.mjs).
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY tools/prune-runtime.mjs ./
RUN npm ci --omit=dev --no-audit --no-fund && node prune-runtime.mjs node_modules && npm cache clean --force

# 3. the offline speech engine (PyPI pocketsphinx with its en-us model), built with pip here so the
#    runtime has python3 but no pip. The OCR model comes with an npm package.
FROM ${NODE_IMAGE} AS speech
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-pip \
  && python3 -m pip install --no-cache-dir --break-system-packages --target /opt/platform/python pocketsphinx==5.1.1

# runtime
FROM ${NODE_IMAGE}
# ffmpeg comes with an npm package on x64 only: elsewhere (arm64) Debian's is on PATH.
RUN apt-get update && apt-get install -y --no-install-recommends python3 \
  && if [ "$(dpkg --print-architecture)" != amd64 ]; then apt-get install -y --no-install-recommends ffmpeg; fi \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
# reachable from outside the container; /data: the edge's generated admin key when PLATFORM_ADMIN_KEY
# is unset, a worker's mail files when SMTP_URL is unset (compose gives each process its own volume)
ENV HOST=0.0.0.0 PORT=8000 DATA_DIR=/data
# the worker looks for the speech engine in $(dirname PLATFORM_BIN_DIR)/python
ENV PLATFORM_BIN_DIR=/opt/platform/bin
# the worker touches this file while it runs; the health check reads it (no file: the edge)
ENV WORKER_HEARTBEAT_FILE=/tmp/platform-worker.alive
COPY --from=speech /opt/platform/python /opt/platform/python
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# Named volumes take this directory's owner on first mount: the process writes there as node.
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 CMD ["node", "dist/workers/healthcheck.js"]
CMD ["node", "dist/workers/edge.js"]
