# One image for the edge and the worker (the command picks the process).
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
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
