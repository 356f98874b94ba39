#!/bin/sh
# Makes the legacy Office fixtures of this folder, and their OOXML twins,
# from the Debian manuals of testdata/corpora/debian-docs with LibreOffice,
# and the EML twins of the Outlook MSG files with msgconvert. Not run by CI;
# run it by hand after
#   apt-get install -y libreoffice-writer-nogui libreoffice-calc-nogui \
#     libreoffice-impress-nogui libemail-outlook-message-perl gnumeric
# (LibreOffice 7.4 and Gnumeric 1.12 of Debian 12 made the committed files).
# LibreOffice no longer writes Excel 5.0/95 nor Word 6.0/95: Gnumeric's
# ssconvert writes the BIFF5 workbooks, and TestWriteWord6Fixtures the
# Word 6.0/95 documents (no Debian program writes them; antiword reads
# them in TestLegacyOracles).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
shared=$here/../../../testdata/corpora
raw=$shared/debian-docs/raw
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A private LibreOffice profile that writes no thumbnail into the
# SummaryInformation stream (it would make each PPT over 500 KB).
mkdir -p "$tmp/profile/user"
cat > "$tmp/profile/user/registrymodifications.xcu" <<'XCU'
<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Common/Save/Document"><prop oor:name="GenerateThumbnail" oor:op="fuse"><value>false</value></prop></item>
</oor:items>
XCU
# office FORMAT FILE [INFILTER]
office() {
	soffice -env:UserInstallation="file://$tmp/profile" --headless ${3:+--infilter="$3"} --convert-to "$1" --outdir "$here" "$2"
}

# Word: HTML chapters in English, French and Japanese.
cp "$raw/debian-faq/usr/share/doc/debian/FAQ/choosing.en.html" "$tmp/faq-choosing.html"
cp "$raw/maint-guide-fr/usr/share/doc/maint-guide-fr/html/start.fr.html" "$tmp/maint-guide-start.fr.html"
cp "$raw/maint-guide-ja/usr/share/doc/maint-guide-ja/html/start.ja.html" "$tmp/maint-guide-start.ja.html"
for f in faq-choosing maint-guide-start.fr maint-guide-start.ja; do
	office 'doc:MS Word 97' "$tmp/$f.html"
	office 'docx:MS Word 2007 XML' "$tmp/$f.html"
done

# Excel: an HTML chapter imported by Calc (one paragraph a row).
cp "$raw/debian-policy/usr/share/doc/debian-policy/policy.html/ch-scope.html" "$tmp/policy-scope.html"
office 'xls:MS Excel 97' "$tmp/policy-scope.html" 'HTML (StarCalc)'
office 'xlsx:Calc MS Excel 2007 XML' "$tmp/policy-scope.html" 'HTML (StarCalc)'

# Excel 5.0/95 (BIFF5) of the same chapter, from the BIFF8 file.
ssconvert --export-type=Gnumeric_Excel:excel_biff7 "$here/policy-scope.xls" "$here/policy-scope.biff5.xls"

# Numbers: a trading report of three sheets (report.sh), as BIFF8 by
# Calc, as BIFF5 by Gnumeric, and as XLSX.
sh "$here/report.sh" > "$tmp/trading-report.fods"
office 'xls:MS Excel 97' "$tmp/trading-report.fods"
office 'xlsx:Calc MS Excel 2007 XML' "$tmp/trading-report.fods"
ssconvert --export-type=Gnumeric_Excel:excel_biff7 "$here/trading-report.xls" "$here/trading-report.biff5.xls"

# Word 6.0/95: written by the tests from the Word 97 files' text.
(cd "$here/../.." && SIMDEX_WRITE_FIXTURES=1 go test -count=1 -run '^TestWriteWord6Fixtures$' .)

# PowerPoint: an HTML chapter as slides (fodp.py), saved by Impress.
python3 "$here/fodp.py" "$raw/developers-reference/usr/share/developers-reference/l10n.html" > "$tmp/devref-l10n.fodp"
office 'ppt:MS PowerPoint 97' "$tmp/devref-l10n.fodp"
office 'pptx:Impress MS PowerPoint 2007 XML' "$tmp/devref-l10n.fodp"
# Impress writes a 590 KB uncompressed thumbnail into every PPT whatever
# the profile says: the PPT is committed gzipped (31 KB), the tests
# decompress it.
gzip -9nf "$here/devref-l10n.ppt"

# Embedded objects: a Writer document with a Calc object inline
# (embedded/embedded-sheet.fodt, written by hand), saved as Word 97: the
# object becomes an ObjectPool storage holding an Excel workbook.
soffice -env:UserInstallation="file://$tmp/profile" --headless --convert-to 'doc:MS Word 97' \
	--outdir "$here/embedded" "$here/embedded/embedded-sheet.fodt"

# Outlook: each MSG as EML by msgconvert, its attachment bodies removed
# (NAME.msg.attachments lists their names, sizes and SHA-256).
for f in strangeDate unicode; do
	cp "$shared/outlook/$f.msg" "$tmp/$f.msg"
	(cd "$tmp" && msgconvert --outfile "$f.eml" "$f.msg")
	python3 - "$tmp/$f.eml" "$here/$f.msg.eml" "$here/$f.msg.attachments" <<'PY'
import email, email.policy, hashlib, sys
msg = email.message_from_bytes(open(sys.argv[1], "rb").read(), policy=email.policy.compat32)
rows = []
for part in msg.walk():
    if part.get_content_disposition() == "attachment":
        data = part.get_payload(decode=True)
        rows.append("%s\t%d\t%s\n" % (part.get_filename(), len(data), hashlib.sha256(data).hexdigest()))
        part.set_payload("")
open(sys.argv[2], "wb").write(msg.as_bytes())
open(sys.argv[3], "w").write("".join(rows))
PY
done
ls -l "$here"
