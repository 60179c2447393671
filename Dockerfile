# One image for every dbproxy service; the container's command names the service:
#   docker run dbproxy start config-api --config /etc/dbproxy/dbproxy.toml
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
COPY apps ./apps
COPY libs ./libs
COPY tools ./tools
COPY tsconfig.base.json tsconfig.build.json ./
RUN npm ci --no-audit --no-fund
RUN npm run build
RUN npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/package.json ./package.json
COPY bin ./bin
COPY config ./config
# the xa-coordinator's journal directory (a volume in compose, a PersistentVolumeClaim in k8s)
RUN mkdir -p /var/lib/dbproxy/xa && chown node:node /var/lib/dbproxy/xa
USER node
EXPOSE 6033 6034 6432 6433 6380 6381 8080 9090 9101 9102 9103 9104 9105 9106 9107
ENTRYPOINT ["node", "bin/dbproxy"]
CMD ["start", "--config", "config/dbproxy.example.toml"]
