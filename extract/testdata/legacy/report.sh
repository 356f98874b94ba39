#!/bin/sh
# Writes report.fods to stdout: a numeric daily trading report of three
# sheets (numbers, formulas with cached results, shared and array
# formulas, a string and a boolean result, an error, dates), for make.sh.
row() { printf '<table:table-row>%s</table:table-row>\n' "$1"; }
num() { printf '<table:table-cell office:value-type="float" office:value="%s"%s/>' "$1" "${2:+ table:style-name=\"$2\"}"; }
str() { printf '<table:table-cell office:value-type="string"><text:p>%s</text:p></table:table-cell>' "$1"; }
fml() { printf '<table:table-cell table:formula="of:=%s"%s/>' "$1" "${2:+ table:style-name=\"$2\"}"; }
cat <<'HEAD'
<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:number="urn:oasis:names:tc:opendocument:xmlns:datastyle:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:of="urn:oasis:names:tc:opendocument:xmlns:of:1.2" office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.spreadsheet">
<office:automatic-styles>
<number:date-style style:name="D1"><number:month/><number:text>/</number:text><number:day/><number:text>/</number:text><number:year/></number:date-style>
<number:date-style style:name="D2"><number:year number:style="long"/><number:text>-</number:text><number:month number:style="long"/><number:text>-</number:text><number:day number:style="long"/></number:date-style>
<number:number-style style:name="N2"><number:number number:decimal-places="2" number:min-integer-digits="1" number:grouping="true"/></number:number-style>
<number:percentage-style style:name="P1"><number:number number:decimal-places="1" number:min-integer-digits="1"/><number:text>%</number:text></number:percentage-style>
<style:style style:name="ce1" style:family="table-cell" style:data-style-name="D1"/>
<style:style style:name="ce2" style:family="table-cell" style:data-style-name="D2"/>
<style:style style:name="ce3" style:family="table-cell" style:data-style-name="N2"/>
<style:style style:name="ce4" style:family="table-cell" style:data-style-name="P1"/>
</office:automatic-styles>
<office:body><office:spreadsheet>
<table:table table:name="Trades">
HEAD
i=1
while [ $i -le 24 ]; do
	qty=$(( (i * 37 % 23 + 4) * 50 ))
	px=$(( 1600 + i * 13 % 41 ))
	row "$(num $((1000 + i)))$(num $i)$(num $qty)$(num "$(( px / 100 )).$(( px % 100 ))")$(fml "[.C$i]*[.D$i]" ce3)$(fml "[.E$i]-[.C$i]*16")"
	i=$((i + 1))
done
row "$(str Total)$(str)$(fml 'SUM([.C1:.C24])')$(fml 'AVERAGE([.D1:.D24])')$(fml 'SUM([.E1:.E24])' ce3)$(fml 'SUM([.F1:.F24])')"
echo '</table:table><table:table table:name="Positions">'
i=1
while [ $i -le 12 ]; do
	row "$(num $((i * 1000 + 7)))$(num $((i * 250)))$(num $((i * 3 + 1)))$(num "$i.25")$(num "0.$(printf %02d $i)" ce4)"
	i=$((i + 1))
done
echo '</table:table><table:table table:name="Summary">'
row "$(str Notional)$(fml 'SUM([Trades.E1:.E24])' ce3)"
row "$(str Weighted)<table:table-cell table:formula=\"of:=SUMPRODUCT([Trades.C1:.C24]*[Trades.D1:.D24])\" table:number-matrix-columns-spanned=\"1\" table:number-matrix-rows-spanned=\"1\"/>"
row "$(str Direction)$(fml 'IF([Trades.F25]&gt;0;&quot;up&quot;;&quot;down&quot;)')"
row "$(str Positive)$(fml '[Trades.F25]&gt;0')"
row "$(str Ratio)$(fml '[Trades.C25]/0')"
row "$(str Traded)<table:table-cell office:value-type=\"date\" office:date-value=\"2001-03-05\" table:style-name=\"ce1\"/>"
row "$(str Settlement)<table:table-cell office:value-type=\"date\" office:date-value=\"2001-03-08\" table:style-name=\"ce2\"/>"
row "$(str Booked)<table:table-cell office:value-type=\"boolean\" office:boolean-value=\"true\"/>"
echo '</table:table></office:spreadsheet></office:body></office:document>'
