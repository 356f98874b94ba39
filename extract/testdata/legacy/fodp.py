#!/usr/bin/env python3
"""Write a flat OpenDocument presentation (.fodp) from an HTML manual
chapter: each heading starts a slide, the paragraphs and list items under
it are its text (a new slide after eight). LibreOffice then converts it to
PPT and PPTX (see make.sh)."""
import html, sys
from html.parser import HTMLParser

class Blocks(HTMLParser):
    title = ""
    intitle = False
    blocks = {"p", "li", "dt", "dd", "pre", "h1", "h2", "h3", "h4", "td", "th"}
    def __init__(self):
        super().__init__()
        self.out, self.cur, self.tag, self.skip = [], [], None, 0
    def handle_starttag(self, tag, attrs):
        if tag == "title":
            self.intitle = True
        if tag in ("script", "style", "head"):
            self.skip += 1
        elif tag in self.blocks:
            self.flush()
            self.tag = tag
    def handle_endtag(self, tag):
        if tag == "title":
            self.intitle = False
        if tag in ("script", "style", "head"):
            self.skip -= 1
        elif tag in self.blocks:
            self.flush()
    def handle_data(self, data):
        if self.intitle:
            self.title += data
        if not self.skip:
            self.cur.append(data)
    def flush(self):
        text = " ".join("".join(self.cur).split())
        if text:
            self.out.append((self.tag or "p", text))
        self.cur = []

b = Blocks()
b.feed(open(sys.argv[1], encoding="utf-8").read())
b.flush()
slides = []
for tag, text in b.out:
    if tag.startswith("h") or not slides or len(slides[-1][1]) >= 8:
        slides.append((text if tag.startswith("h") else "", []))
        if tag.startswith("h"):
            continue
    slides[-1][1].append(text)

e = lambda s: html.escape(s, quote=False)
print('''<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0" office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.presentation">
<office:meta><dc:title>%s</dc:title><meta:initial-creator>Debian</meta:initial-creator><dc:creator>Debian</dc:creator></office:meta>
<office:styles><style:style style:name="small" style:family="paragraph"><style:text-properties fo:font-size="10pt"/></style:style></office:styles>
<office:automatic-styles><style:page-layout style:name="PM1"><style:page-layout-properties fo:page-width="28cm" fo:page-height="21cm"/></style:page-layout></office:automatic-styles>
<office:master-styles><style:master-page style:name="Default" style:page-layout-name="PM1"/></office:master-styles>
<office:body><office:presentation>''' % e(" ".join(b.title.split())))
for i, (title, paras) in enumerate(slides):
    print('<draw:page draw:name="slide%d" draw:master-page-name="Default">' % (i + 1))
    if title:
        print('<draw:frame svg:x="1cm" svg:y="0.5cm" svg:width="26cm" svg:height="2cm"><draw:text-box><text:p>%s</text:p></draw:text-box></draw:frame>' % e(title))
    if paras:
        print('<draw:frame svg:x="1cm" svg:y="3cm" svg:width="26cm" svg:height="17cm"><draw:text-box>')
        for p in paras:
            print('<text:p text:style-name="small">%s</text:p>' % e(p))
        print('</draw:text-box></draw:frame>')
    print('</draw:page>')
print('</office:presentation></office:body></office:document>')
