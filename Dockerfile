# syntax=docker/dockerfile:1
# Herald runtime image: one image, one role per container (`node bin/herald.js api|worker|migrate`).
# Herald is compiled to JavaScript here (npm run build); the image runs it with plain node and
# carries production dependencies only: no tsx, no TypeScript compiler. Development runs the
# TypeScript sources through tsx (README, "Supply chain").

# Compile: every dependency (TypeScript included), the sources, `npm run build` -> /app/dist.
# No install script runs here: tsc needs none.
FROM node:22.23.3-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run build

# Production dependencies only, each tarball checked against its integrity hash in the lock.
FROM node:22.23.3-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:22.23.3-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
# The compiled tree, laid out as the sources are: bin/herald.js, cli/, api/, db/migrations/…
COPY --from=build /app/dist ./
# Application files stay root-owned (read-only to the app); only the data directory is writable.
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
EXPOSE 3000
CMD ["node", "bin/herald.js", "api"]
