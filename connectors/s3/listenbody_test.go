package s3

import (
	"bufio"
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkListenBody measures reading a chunked listen stream one byte
// per Read, as listenIdentity makes minio-go do: 1,000 event lines of
// 1 KB, the size MinIO writes, per iteration.
func BenchmarkListenBody(b *testing.B) {
	line := append(bytes.Repeat([]byte("x"), 1023), '\n')
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for range 1000 {
			_, _ = w.Write(line)
		}
	}))
	defer srv.Close()
	b.SetBytes(int64(1000 * len(line)))
	for b.Loop() {
		resp, err := http.Get(srv.URL)
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(byteBody{resp.Body})
		n := 0
		for sc.Scan() {
			n++
		}
		_ = resp.Body.Close()
		if n != 1000 {
			b.Fatalf("read %d lines, want 1000 (%v)", n, sc.Err())
		}
	}
}
