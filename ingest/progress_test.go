package ingest

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestProgressLogIsRateLimited(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	l := newProgressLog(slog.New(slog.NewTextHandler(&buf, nil)), func() time.Time { return now })
	l.summarised = now
	for i := 0; i < 25; i++ { // 25 objects in one second: 10 lines
		l.indexed("fs:inbox", "a.txt", 2048, 1)
	}
	if got := strings.Count(buf.String(), `msg=indexed `); got != 10 {
		t.Fatalf("%d lines for 25 objects in a second, want 10:\n%s", got, buf.String())
	}
	now = now.Add(10 * time.Second)
	l.indexed("fs:inbox", "b.txt", 2048, 1) // a new second: logged
	l.flush()
	if !strings.Contains(buf.String(), "objects=15 kib=30") {
		t.Fatalf("no summary of the 15 objects not logged:\n%s", buf.String())
	}
	buf.Reset()
	l.flush()
	if buf.Len() != 0 {
		t.Fatalf("an empty summary was logged: %s", buf.String())
	}
}
