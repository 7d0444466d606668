# syntax=docker/dockerfile:1
# token-rotator: one image for the CronJob (`once`), the sidecar (`daemon`) and emergency rotation.
# Runs as a non-root numeric user on a read-only root filesystem: state and sinks live on volumes.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# The image's own Node builds: with --ignore-scripts the pinned `node` devDependency has no binary.
RUN node node_modules/typescript/bin/tsc -p tsconfig.build.json

FROM node:24-bookworm-slim AS production-dependencies
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would build, and the build tools are not installed here.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM node:24-bookworm-slim
# A 1 MB young generation takes ~35 MB off the daemon's resident memory (npm run bench).
ENV NODE_ENV=production \
    NODE_OPTIONS=--max-semi-space-size=1 \
    ROTATOR_STATE_DIR=/var/lib/token-rotator \
    ROTATOR_CONFIG=/etc/token-rotator/rotation.yaml
WORKDIR /app
COPY --from=production-dependencies /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
RUN mkdir -p /var/lib/token-rotator && chown 1000:1000 /var/lib/token-rotator && chmod 0700 /var/lib/token-rotator
# Numeric, so that Kubernetes can verify runAsNonRoot. uid 1000 is the image's `node` user.
USER 1000:1000
VOLUME ["/var/lib/token-rotator"]
EXPOSE 9464
ENTRYPOINT ["node", "/app/dist/cli/main.js"]
CMD ["once"]
