package natstest_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/simdex/simdex/internal/natstest"
)

func TestRestartKeepsStreams(t *testing.T) {
	s := natstest.Start(t)
	nc := s.Conn(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatalf("create stream: %v", err)
	}
	if _, err := js.Publish(ctx, "t.a", []byte("hello")); err != nil {
		t.Fatalf("publish: %v", err)
	}
	url := s.URL()
	s.Restart(t)
	if s.URL() != url {
		t.Fatalf("URL after restart = %s, want %s", s.URL(), url)
	}
	// The old connection reconnects; the stream and its message survive.
	for {
		var stream jetstream.Stream
		stream, err = js.Stream(ctx, "T")
		if err == nil {
			var msg *jetstream.RawStreamMsg
			msg, err = stream.GetMsg(ctx, 1)
			if err == nil {
				if string(msg.Data) != "hello" {
					t.Fatalf("message after restart = %q, want hello", msg.Data)
				}
				return
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("read stream after restart: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
