#!/bin/sh
# Regenerates the oracle of TestPSTOracle: what Debian's readpst (package
# pst-utils, LibPST 0.6.76) finds in the Outlook fixtures of
# testdata/corpora/outlook, one .eml per message and one .ics per calendar
# item, by folder. CI does not run this; run it by hand after
# `apt-get install pst-utils`, from the repository root:
#
#	sh extract/testdata/pst/regenerate.sh
set -eu
out=extract/testdata/pst
for pst in support 32-bit; do
	tmp=$(mktemp -d)
	readpst -q -e -o "$tmp" "testdata/corpora/outlook/$pst.pst"
	rm -rf "${out:?}/$pst"
	# readpst names the top directory after the message store; drop it.
	mv "$tmp"/* "$out/$pst"
	rmdir "$tmp"
done
