# Build the release binary, then run it on a slim base.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
COPY templates ./templates
COPY migrations ./migrations
COPY static ./static
RUN cargo build --release --locked

FROM debian:bookworm-slim
RUN useradd --system --home /var/lib/backlab --create-home backlab
COPY --from=build /src/target/release/backlab /usr/local/bin/backlab
USER backlab
WORKDIR /var/lib/backlab
# The database, the data dir and its demo dataset live in the volume.
ENV BACKLAB_DB=/var/lib/backlab/backlab.db \
    BACKLAB_DATA_DIR=/var/lib/backlab/data
VOLUME /var/lib/backlab
# 8080: the web pages and REST API; 8081: the data listener agents send network backups to.
EXPOSE 8080 8081
ENTRYPOINT ["backlab"]
# Listening on all interfaces: the lab refuses to start unless BACKLAB_TOKEN is set.
CMD ["serve", "--bind", "0.0.0.0:8080", "--data-bind", "0.0.0.0:8081"]
