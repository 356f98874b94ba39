package ingest

import (
	"log/slog"
	"sync"
	"time"
)

// progressLog tells the operator that ingestion is alive without flooding
// the log: one info line per indexed object, at most perSecond a second;
// beyond that the objects are counted, and a summary line every interval
// says how many went unlogged.
type progressLog struct {
	logger    *slog.Logger
	now       func() time.Time
	perSecond int
	interval  time.Duration

	mu         sync.Mutex
	second     time.Time // start of the current one-second window
	inSecond   int       // lines logged in it
	unlogged   int       // objects indexed since the last summary, not logged
	unloggedKB int64
	summarised time.Time
}

func newProgressLog(logger *slog.Logger, now func() time.Time) *progressLog {
	return &progressLog{logger: logger, now: now, perSecond: 10, interval: 10 * time.Second}
}

// indexed records one indexed object of size bytes (-1: unknown) made of
// docs documents.
func (l *progressLog) indexed(source, key string, size int64, docs int) {
	l.mu.Lock()
	now := l.now()
	if now.Sub(l.second) >= time.Second {
		l.second, l.inSecond = now, 0
	}
	if l.inSecond < l.perSecond {
		l.inSecond++
		l.mu.Unlock()
		l.logger.Info("indexed", "source", source, "key", key, "bytes", size, "documents", docs)
		return
	}
	l.unlogged++
	if size > 0 {
		l.unloggedKB += size / 1024
	}
	due := now.Sub(l.summarised) >= l.interval
	l.mu.Unlock()
	if due {
		l.flush()
	}
}

// flush logs the summary of the objects not logged one by one, if any.
func (l *progressLog) flush() {
	l.mu.Lock()
	n, kb := l.unlogged, l.unloggedKB
	l.unlogged, l.unloggedKB, l.summarised = 0, 0, l.now()
	l.mu.Unlock()
	if n > 0 {
		l.logger.Info("indexed more objects than are logged one by one", "objects", n, "kib", kb)
	}
}
