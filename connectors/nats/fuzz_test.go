package nats_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	natsgo "github.com/nats-io/nats.go"

	"github.com/simdex/simdex/connectors"
	"github.com/simdex/simdex/connectors/jetstream"
	"github.com/simdex/simdex/connectors/nats"
)

// parseHeaders reads "Name: value" lines, as a fuzzer-friendly header block.
func parseHeaders(text string) natsgo.Header {
	h := natsgo.Header{}
	for line := range strings.SplitSeq(text, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok {
			h.Add(k, strings.TrimPrefix(v, " "))
		}
	}
	return h
}

func FuzzDecode(f *testing.F) {
	f.Add("Simdex-Id: a\nContent-Type: text/plain\nSimdex-Meta-Owner: x", []byte("body"), uint64(1))
	f.Add("Simdex-Id: a\nSimdex-Op: delete", []byte(""), uint64(2))
	f.Add("Simdex-Ref: s3://bucket/a%20b?versionId=v1", []byte(""), uint64(3))
	f.Add("Simdex-Ref: s3://bucket/k\nSimdex-Op: delete\nSimdex-Version: 9", []byte(""), uint64(4))
	f.Add("Simdex-Ref: s3://bucket/a%zz", []byte(""), uint64(5))
	f.Add("Simdex-Id: \xff\nSimdex-Op: purge", []byte("x"), uint64(6))
	f.Add("simdex-meta-: v\nSIMDEX-ID: k", []byte("x"), uint64(7))
	fetch := memFetcher{"bucket/a b@v1": "ref body"}
	d := nats.NewDecoder(sourceName, 64, fetch)
	f.Fuzz(func(t *testing.T, hdr string, data []byte, seq uint64) {
		m := jetstream.Message{Subject: subject, Header: parseHeaders(hdr), Data: data, Stream: "DOCS", Sequence: seq, Delivered: 1}
		evs, err := d.Decode(context.Background(), m)
		if err != nil {
			var cerr *connectors.Error
			if !errors.As(err, &cerr) || !errors.Is(err, connectors.ErrInvalid) {
				t.Fatalf("error %v is not an Invalid *connectors.Error", err)
			}
			if evs != nil {
				t.Fatalf("events %v returned with error", evs)
			}
			return
		}
		if len(evs) != 1 {
			t.Fatalf("%d events", len(evs))
		}
		ev := evs[0]
		if ev.Key == "" || !utf8.ValidString(ev.Key) || strings.ContainsRune(ev.Key, 0) || ev.VersionID == "" {
			t.Fatalf("bad key or version: %+q %+q", ev.Key, ev.VersionID)
		}
		if ev.Source != sourceName || (ev.Kind != connectors.Created && ev.Kind != connectors.Removed) {
			t.Fatalf("event %+v", ev)
		}
		if ev.Kind == connectors.Removed {
			if ev.Open != nil {
				t.Fatal("Removed event with Open")
			}
			return
		}
		if ev.Open == nil {
			t.Fatal("Created event without Open")
		}
		if ev.Bucket != "" {
			return // a reference; Open goes to the fetcher
		}
		rc, err := ev.Open(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		if string(b) != string(data) || ev.Size != int64(len(data)) {
			t.Fatalf("body %q size %d, want %q", b, ev.Size, data)
		}
	})
}

// FuzzParseRef checks that ParseRef never panics and that FormatRef output
// parses back to the same parts.
func FuzzParseRef(f *testing.F) {
	f.Add("bucket", "dir/a b+c%.txt", "v1")
	f.Add("my.bucket-1", "日本語/?#&=", "")
	f.Add("b", "", "x")
	f.Fuzz(func(t *testing.T, bucket, key, version string) {
		if b, k, v, err := nats.ParseRef("s3://" + bucket + "/" + key + "?" + version); err == nil {
			if (b != bucket && !strings.ContainsAny(bucket, "/?")) || k == "" || !utf8.ValidString(k) || strings.ContainsRune(v, 0) {
				t.Fatalf("ParseRef accepted %q/%q/%q as %q/%q/%q", bucket, key, version, b, k, v)
			}
		}
		if strings.ContainsAny(bucket, "/?") {
			return // no bucket name has them (S3 allows [a-z0-9.-]): not a ref's parts
		}
		ref := nats.FormatRef(bucket, key, version)
		b, k, v, err := nats.ParseRef(ref)
		if err != nil {
			return // the parts themselves are invalid
		}
		if b != bucket || k != key || v != version {
			t.Fatalf("FormatRef(%q, %q, %q) = %q parses as %q, %q, %q", bucket, key, version, ref, b, k, v)
		}
	})
}
