#!/bin/sh
# mkpki.sh DIR: the certificates tests/e2e/fleet.bats uses, made with
# openssl in DIR: a CA (ca.crt) and its CRL (crl.pem, revoking
# revoked.crt), the proxy's server certificate (server.crt, for
# 127.0.0.1), clients ci (URI spiffe://corp/ci/runner and a CN that must
# not win), dev (a CN only), ci2 (spiffe://corp/ci/other, revoked later
# by a test), expired (valid in 2020 only), revoked, and stranger (of
# another CA).  Each NAME has NAME.crt and NAME.key.
set -eu
d=$1
mkdir -p "$d/db"
cd "$d"
: >db/index.txt
echo 1000 >db/serial
echo 1000 >db/crlnumber
cat >ca.cnf <<CNF
[ ca ]
default_ca = cordon_test
[ cordon_test ]
dir = .
database = \$dir/db/index.txt
serial = \$dir/db/serial
crlnumber = \$dir/db/crlnumber
new_certs_dir = \$dir/db
certificate = \$dir/ca.crt
private_key = \$dir/ca.key
default_md = sha256
default_days = 30
default_crl_days = 30
policy = anything
unique_subject = no
[ anything ]
commonName = optional
[ client ]
basicConstraints = CA:FALSE
extendedKeyUsage = clientAuth
[ client_uri ]
basicConstraints = CA:FALSE
extendedKeyUsage = clientAuth
subjectAltName = \$ENV::SAN
[ server ]
basicConstraints = CA:FALSE
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1
CNF
export SAN=URI:unused
q() { "$@" >/dev/null 2>&1 || { "$@"; exit 1; }; }
q openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt \
    -days 30 -subj "/CN=cordon test CA"
q openssl req -x509 -newkey rsa:2048 -nodes -keyout other-ca.key \
    -out other-ca.crt -days 30 -subj "/CN=another CA"
# sign NAME SUBJECT EXTENSIONS [openssl ca flags]
sign() {
	name=$1 subj=$2 ext=$3
	shift 3
	q openssl req -newkey rsa:2048 -nodes -keyout "$name.key" \
	    -out "$name.csr" -subj "$subj"
	q openssl ca -batch -config ca.cnf -notext \
	    -extensions "$ext" -in "$name.csr" -out "$name.crt" "$@"
}
sign server /CN=proxy server
SAN=URI:spiffe://corp/ci/runner
sign ci /CN=not-the-identity client_uri
sign dev /CN=dev-laptop client
SAN=URI:spiffe://corp/ci/other
sign ci2 /CN=ci2 client_uri
sign expired /CN=expired client -startdate 20200101000000Z \
    -enddate 20200201000000Z
sign revoked /CN=revoked client
q openssl ca -batch -config ca.cnf -revoke revoked.crt
q openssl ca -batch -config ca.cnf -gencrl -out crl.pem
q openssl req -newkey rsa:2048 -nodes -keyout stranger.key \
    -out stranger.csr -subj /CN=stranger
q openssl x509 -req -in stranger.csr -CA other-ca.crt -CAkey other-ca.key \
    -CAcreateserial -out stranger.crt -days 30
