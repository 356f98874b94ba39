package s3_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/signer"
)

type oneByte struct{ r io.Reader }

func (o oneByte) Read(p []byte) (int, error) { return o.r.Read(p[:min(len(p), 1)]) }

func TestReproRaw(t *testing.T) {
	ms := startMinIO(t)
	ms.MakeBucket(t, "rbk", true, false)
	start := time.Now()
	req, _ := http.NewRequest("GET", "http://"+ms.Endpoint()+"/rbk?events=s3:ObjectCreated:*&ping=10&prefix=&suffix=", nil)
	req.Header.Set("X-Amz-Content-Sha256", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
	req = signer.SignV4(*req, ms.AccessKey(), ms.SecretKey(), "", "us-east-1")
	go func() {
		tr := &http.Transport{DisableCompression: true}
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Logf("%6.1fs rt err %v", time.Since(start).Seconds(), err)
			return
		}
		t.Logf("%6.1fs headers %s", time.Since(start).Seconds(), resp.Status)
		sc := bufio.NewScanner(oneByte{resp.Body})
		for sc.Scan() {
			l := sc.Text()
			i := strings.Index(l, `"key":"`)
			k := ""
			if i > 0 {
				k = l[i : i+20]
			}
			t.Logf("%6.1fs line %d %s", time.Since(start).Seconds(), len(l), k)
		}
		t.Logf("%6.1fs end %v", time.Since(start).Seconds(), sc.Err())
	}()
	time.Sleep(time.Second)
	pc := ms.Client(t)
	putN := func(n int, p string) {
		for i := range n {
			k := fmt.Sprintf("%s-%d", p, i)
			if _, err := pc.PutObject(context.Background(), "rbk", k, bytes.NewReader([]byte("x")), 1, minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(500 * time.Millisecond)
		}
		t.Logf("%6.1fs put %d %s", time.Since(start).Seconds(), n, p)
	}
	putN(20, "twenty")
	time.Sleep(15 * time.Second)
}
