# A small static image with `ply` and nothing else: built for musl, copied into `scratch`.
#   docker build -t ply .
#   docker run --rm -v "$PWD:/work" -w /work ply render examples/hello-world
# The image runs as an unprivileged user (65532) and has no shell; `helm` is not in it, so
# `--enable-helm` needs an image of your own that adds it.
FROM rust:1-bookworm AS build
ARG PLY_COMMIT=unknown
# No debug info and stripped symbols: about 6 MB instead of 33.
ENV PLY_COMMIT=${PLY_COMMIT} CARGO_PROFILE_RELEASE_DEBUG=false CARGO_PROFILE_RELEASE_STRIP=symbols
WORKDIR /src
# musl-gcc: ring (rustls' crypto, for `ply fetch` of https file URLs) compiles C for musl.
RUN rustup target add "$(uname -m)-unknown-linux-musl" \
 && apt-get update && apt-get install -y --no-install-recommends musl-tools \
 && rm -rf /var/lib/apt/lists/*
COPY Cargo.toml Cargo.lock build.rs ./
COPY src ./src
RUN cargo build --release --locked --target "$(uname -m)-unknown-linux-musl" \
 && cp "target/$(uname -m)-unknown-linux-musl/release/ply" /ply \
 && /ply version

FROM scratch
COPY --from=build /ply /ply
USER 65532:65532
ENTRYPOINT ["/ply"]
CMD ["--help"]
