#!/bin/sh
# mk/link-libs.sh LINK CC PKG...: the linker flags for the pkg-config
# packages PKG..., as cordon-main and cordon-log are linked.
#
# LINK=static: each library whose archive (libNAME.a) CC finds is linked
# from it, between -Wl,-Bstatic and -Wl,-Bdynamic; the rest (the C
# library, libmnl, which Debian ships shared only, and zlib, which
# Debian wants shared) stay shared.  A run
# starts about 2.5 ms sooner (make bench BENCH=start): the loader maps
# and relocates one object instead of fourteen, and each fork of the run
# copies fewer mappings.  The price: a security update of one of these
# libraries reaches cordon when it is built again.
# LINK=shared: every library shared, as pkg-config gives them.
set -eu

link=${1:?usage: link-libs.sh LINK CC PKG...}
cc=${2:?usage: link-libs.sh LINK CC PKG...}
shift 2

if [ "$link" != static ]; then
	exec pkg-config --libs "$@"
fi
archived= shared= seen=
for f in $(pkg-config --static --libs "$@"); do
	case " $seen " in *" $f "*) continue ;; esac
	seen="$seen $f"
	case $f in
	-lc|-ldl|-lm|-lpthread|-lrt) shared="$shared $f" ;;	# the C library's
	-lz) shared="$shared $f" ;;	# lintian: an embedded zlib is an error
	-l*)
		a=$("$cc" -print-file-name="lib${f#-l}.a")
		case $a in
		/*) archived="$archived $f" ;;
		*) shared="$shared $f" ;;
		esac ;;
	*) shared="$shared $f" ;;
	esac
done
# In a group the archives resolve each other's references in any order.
echo "-Wl,-Bstatic -Wl,--start-group$archived -Wl,--end-group" \
    "-Wl,-Bdynamic$shared"
