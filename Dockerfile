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
USER node
EXPOSE 8000
CMD ["node_modules/.bin/tsx", "workers/edge.ts"]
