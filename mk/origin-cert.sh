#!/bin/sh
# mk/origin-cert.sh DIR NAME...: a throwaway CA and a certificate it signs
# for an HTTPS origin of the tests and benchmarks (tests/tools/httpd
# --tls-cert/--tls-key): DIR/origin-ca.pem and .key, DIR/origin.pem and
# .key, EC P-256, valid two days, one subjectAltName per NAME (IP: for an
# IPv4 literal, DNS: otherwise).
set -eu

dir=${1:?usage: origin-cert.sh DIR NAME...}
shift
[ "$#" -gt 0 ] || { echo "usage: origin-cert.sh DIR NAME..." >&2; exit 2; }
san=
for n in "$@"; do
	case $n in
	*[!0-9.]*) san="$san${san:+,}DNS:$n" ;;
	*) san="$san${san:+,}IP:$n" ;;
	esac
done
mkdir -p "$dir"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$dir/origin-ca.key" -out "$dir/origin-ca.pem" -days 2 \
    -subj "/CN=origin test CA" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$dir/origin.key" -out "$dir/origin.csr" -subj "/CN=$1" \
    2>/dev/null
printf 'subjectAltName=%s\n' "$san" >"$dir/origin.ext"
openssl x509 -req -in "$dir/origin.csr" -CA "$dir/origin-ca.pem" \
    -CAkey "$dir/origin-ca.key" -CAcreateserial -out "$dir/origin.pem" \
    -days 2 -extfile "$dir/origin.ext" 2>/dev/null
rm -f "$dir/origin.csr" "$dir/origin.ext" "$dir/origin-ca.srl"
