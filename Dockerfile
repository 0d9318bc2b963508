# syntax=docker/dockerfile:1
# Herald runtime image: one image, one role per container (`node bin/herald.js api|worker|migrate`).
# TypeScript runs through tsx, which is a runtime dependency, so there is no build step.

FROM node:20.19.5-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:20.19.5-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY . .
# Application files stay root-owned (read-only to the app); only the data directory is writable.
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
EXPOSE 3000
CMD ["node", "bin/herald.js", "api"]
