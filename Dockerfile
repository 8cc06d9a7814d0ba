# One image for the edge and the worker (the command picks the process).
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
# The offline speech engine (PyPI pocketsphinx with its en-us model), where the worker looks for
# it: $(dirname PLATFORM_BIN_DIR)/python. ffmpeg and the OCR model come with the npm packages.
ENV PLATFORM_BIN_DIR=/opt/platform/bin
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-pip \
  && python3 -m pip install --no-cache-dir --break-system-packages --target /opt/platform/python pocketsphinx==5.1.1 \
  && apt-get purge -y python3-pip && apt-get autoremove -y && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund && npm cache clean --force
COPY tsconfig.json ./
COPY activities ./activities
COPY edge ./edge
COPY workflows ./workflows
COPY workers ./workers
# Named volumes take this directory's owner on first mount: the edge writes admin-key.txt here.
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8000
CMD ["node_modules/.bin/tsx", "workers/edge.ts"]
