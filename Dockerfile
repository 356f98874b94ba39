# simdex container image.
#
# Two stages: the official Go image builds a static binary (CGO_ENABLED=0;
# the SQLite store is modernc.org/sqlite, pure Go), and distroless/static
# runs it as the non-root user 65532 with no shell and no package manager.
# Both bases are pinned tags; pin them by digest as well when publishing.
#
#   docker build -t simdex .
#   docker run -p 8080:8080 -v simdex-data:/var/lib/simdex simdex
#
# The Helm chart in charts/simdex mounts its own config.yaml over
# /etc/simdex/config.yaml and a volume on /var/lib/simdex.

FROM golang:1.26.8-bookworm AS build
WORKDIR /src
# Dependencies first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/simdex ./cmd/simdex \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/simdex /simdex
# The documented configuration; SIMDEX_* variables override any key of it.
COPY config.yaml /etc/simdex/config.yaml
# An empty data directory owned by the runtime user, so that the image also
# runs without a mounted volume (its data is then lost with the container).
COPY --from=build --chown=65532:65532 /out/data /var/lib/simdex
ENV SIMDEX_DATA_DIR=/var/lib/simdex \
    SIMDEX_HTTP_ADDR=0.0.0.0:8080
VOLUME ["/var/lib/simdex"]
# Health, readiness, metrics, API and UI.
EXPOSE 8080
USER 65532:65532
ENTRYPOINT ["/simdex", "serve"]
CMD ["--config", "/etc/simdex/config.yaml"]
