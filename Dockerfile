# syntax=docker/dockerfile:1
# token-rotator: one image for the CronJob (`once`), the sidecar (`daemon`) and emergency rotation.
# Runs as a non-root numeric user on a read-only root filesystem: state and sinks live on volumes.

# The base: the official Node image of the Node the tests pin (the `node` devDependency), by digest
# (the multi-platform index; linux/amd64 is sha256:5cbc7caba8c2c0f0bca675d1b61b9f2857e1cf1853c6164ee9dd409501a936e7),
# as docker-library/repo-info records it. Where no registry is reachable, scripts/image/build.sh
# assembles an equal base locally and passes it as --build-arg BASE=.
ARG BASE=docker.io/library/node:24.21.0-bookworm-slim@sha256:0e0ff40c39bc087845bfb27465a0df4ea419520094bc35842ff83dd8cbe6f9b6

FROM ${BASE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The product's own package.json and lock (scripts/lib/product-lock.mjs): no `workspaces`, and only
# the packages the product itself reaches. The workspace packages (the emulator, the Kubernetes
# double, the demo: packages/) are not in the build context at all (.dockerignore), and npm's own
# flags would still count them and what they need as production dependencies.
COPY scripts/lib/product-lock.mjs scripts/lib/script-arguments.mjs ./scripts/lib/
COPY scripts/image/product-manifest.mjs ./scripts/image/
RUN node scripts/image/product-manifest.mjs
# The secrets exist only where the builder passes them (scripts/image/npm-build-settings.sh: this
# machine's npm registry settings and CA bundle, for a registry behind a TLS proxy); they are mounted
# for this one command and never written to a layer. The cache mount keeps npm's downloads out too.
RUN --mount=type=secret,id=npmrc --mount=type=secret,id=npm_ca --mount=type=cache,id=token-rotator-npm,target=/root/.npm \
    if [ -f /run/secrets/npmrc ]; then export NPM_CONFIG_USERCONFIG=/run/secrets/npmrc; fi; \
    if [ -f /run/secrets/npm_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca; fi; \
    npm ci --ignore-scripts --no-audit --no-fund
# tsconfig*.json: esbuild reads tsconfig.json, and with it the file it extends.
COPY tsconfig*.json ./
COPY scripts/bundle.mjs scripts/image/warm-compile-cache.mjs ./scripts/
COPY src ./src
# The image's own Node builds: with --ignore-scripts the pinned `node` devDependency has no binary.
# The production build is the CLI bundled by esbuild (chunks and their source maps) and nothing else.
# Types are checked by CI (npm run check), not here.
RUN node scripts/bundle.mjs --production

FROM ${BASE} AS production-dependencies
WORKDIR /app
COPY package.json package-lock.json ./
# The product's own package.json and lock, as in the build stage, without its devDependencies.
COPY scripts/lib/product-lock.mjs scripts/lib/script-arguments.mjs ./scripts/lib/
COPY scripts/image/product-manifest.mjs ./scripts/image/
RUN node scripts/image/product-manifest.mjs --omit-dev
# --ignore-scripts: `prepare` would build, and the build tools are not installed here.
RUN --mount=type=secret,id=npmrc --mount=type=secret,id=npm_ca --mount=type=cache,id=token-rotator-npm,target=/root/.npm \
    if [ -f /run/secrets/npmrc ]; then export NPM_CONFIG_USERCONFIG=/run/secrets/npmrc; fi; \
    if [ -f /run/secrets/npm_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca; fi; \
    npm ci --omit=dev --ignore-scripts --no-audit --no-fund
# Dead weight out (source maps, type declarations, docs, tests, browser builds: see the script),
# then proof that every entry point of every runtime package that imported before still imports.
COPY scripts/image/prune-node-modules.sh scripts/image/browser-only-dirs.mjs scripts/image/check-imports.mjs ./
RUN node check-imports.mjs packages > /tmp/imports-before \
    && du -sm node_modules | cut -f1 > /tmp/size-before \
    && sh prune-node-modules.sh node_modules \
    && node check-imports.mjs packages > /tmp/imports-after \
    && diff /tmp/imports-before /tmp/imports-after \
    && echo "node_modules: $(cat /tmp/size-before) MB -> $(du -sm node_modules | cut -f1) MB; $(grep -c '^ok' /tmp/imports-after) entry points import"

FROM ${BASE}
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
# The product's package.json (for "type": "module"), as npm ci installed from it: no workspaces.
COPY --from=production-dependencies /app/package.json ./
RUN mkdir -p /var/lib/token-rotator && chown 1000:1000 /var/lib/token-rotator && chmod 0700 /var/lib/token-rotator \
    && mkdir /app/compile-cache && chown 1000:1000 /app/compile-cache
# Numeric, so that Kubernetes can verify runAsNonRoot. uid 1000 is the image's `node` user.
USER 1000:1000
# Node's compile cache, filled now: at run time the root file system is read-only, so it could never
# be written there. Node keys it on its version, the user id (hence filled as 1000) and each file's
# path and contents, all fixed in the image; it reads it at every start and its failed writes (a
# module not warmed here, another --user) are silent. Every chunk and the packages they import.
RUN --mount=type=bind,from=build,source=/app/scripts/warm-compile-cache.mjs,target=/tmp/warm-compile-cache.mjs \
    export NODE_COMPILE_CACHE=/app/compile-cache \
    && node dist/cli/main.js --version >/dev/null && node dist/cli/main.js --help >/dev/null \
    && node /tmp/warm-compile-cache.mjs /app/dist
ENV NODE_COMPILE_CACHE=/app/compile-cache
VOLUME ["/var/lib/token-rotator"]
EXPOSE 9464
# OCI labels, from the builder (scripts/image/build.sh passes them from package.json and git); last,
# so that a new `created` leaves the layers above cached.
ARG VERSION=unknown
ARG REVISION=unknown
ARG CREATED=unknown
ARG SOURCE=unknown
LABEL org.opencontainers.image.title="token-rotator" \
      org.opencontainers.image.description="Keeps API tokens rotated: regenerates due tokens with an overlap window and delivers each new secret to its sinks." \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.source="${SOURCE}"
ENTRYPOINT ["node", "/app/dist/cli/main.js"]
CMD ["once"]
