#!/bin/sh
# One-shot (docker-compose.yml service nats-certs): a private CA and NATS's server certificate for
# the name "nats", made once into /tls (nats-server's, key included) and /ca (ca.pem only, for the
# dbproxy services). Replace them with your own for anything but a demo.
set -eu
if [ -s /tls/server.pem ] && [ -s /ca/ca.pem ]; then exit 0; fi
command -v openssl >/dev/null || apk add --no-cache openssl >/dev/null
cd /tls
openssl req -x509 -newkey rsa:2048 -nodes -days 825 -subj "/CN=dbproxy NATS CA" -keyout ca.key -out ca.pem
openssl req -newkey rsa:2048 -nodes -subj "/CN=nats" -keyout server.key -out server.csr
printf 'subjectAltName = DNS:nats, DNS:localhost\n' > san.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 825 -extfile san.ext -out server.pem
chmod 644 server.key ca.pem server.pem
cp ca.pem /ca/ca.pem
