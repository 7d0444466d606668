# syntax=docker/dockerfile:1
# token-rotator: one image for the CronJob (`once`), the sidecar (`daemon`) and emergency rotation.
# Runs as a non-root numeric user on a read-only root filesystem: state and sinks live on volumes.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json tsconfig.production.json ./
COPY src ./src
# The image's own Node builds: with --ignore-scripts the pinned `node` devDependency has no binary.
# The production build leaves out the emulator, the demo and the test hooks (ROTATOR_TEST_FAILPOINT):
# they are not compiled, so dist/ has no file of theirs to copy.
RUN node node_modules/typescript/bin/tsc -p tsconfig.production.json

FROM node:24-bookworm-slim AS production-dependencies
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would build, and the build tools are not installed here.
# --omit=optional: oidc-provider, the emulator's authorization server, is an optional dependency.
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM node:24-bookworm-slim
# A 1 MB young generation takes ~35 MB off the daemon's resident memory (npm run bench).
ENV NODE_ENV=production \
    NODE_OPTIONS=--max-semi-space-size=1 \
    ROTATOR_STATE_DIR=/var/lib/token-rotator \
    ROTATOR_CONFIG=/etc/token-rotator/rotation.yaml \
    ROTATOR_LISTEN=0.0.0.0:9464
# ROTATOR_LISTEN: in a container the daemon must be reachable from outside it (probes, Prometheus);
# the pod's network is the boundary. Outside the image the default stays 127.0.0.1:9464.
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
