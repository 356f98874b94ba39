package mailthread

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestIDs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"<a@x> <b@x>\n\t<c@x>", []string{"a@x", "b@x", "c@x"}},
		{"1e3137bc-53e2@ettus.com", []string{"1e3137bc-53e2@ettus.com"}},
		{"", nil},
		{"<>", nil},
		{"Ann's message of <a@x>", []string{"a@x"}},
	} {
		if got := IDs(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("IDs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	long := strings.Repeat("<x@y> ", 200) + "<last@y>"
	if got := IDs(long); len(got) != maxIDs || got[len(got)-1] != "last@y" {
		t.Errorf("IDs of 201 ids: %d, last %q", len(got), got[len(got)-1])
	}
}

func TestKey(t *testing.T) {
	root := Header{MessageID: "<root@x>", Subject: "Budget"}
	reply := Header{MessageID: "<r1@x>", InReplyTo: "<root@x>", References: "<root@x>", Subject: "Re: Budget"}
	reply2 := Header{MessageID: "<r2@x>", InReplyTo: "<r1@x>", References: "<root@x> <r1@x>", Subject: "Re: Budget"}
	if Key(root) != Key(reply) || Key(reply) != Key(reply2) {
		t.Errorf("keys differ in one thread: %s %s %s", Key(root), Key(reply), Key(reply2))
	}
	if Key(root) != KeyOf("root@x") {
		t.Errorf("Key(root) = %s, want KeyOf(root@x) = %s", Key(root), KeyOf("root@x"))
	}
	other := Header{MessageID: "<o@x>", Subject: "Budget"}
	if Key(other) == Key(root) {
		t.Error("two roots share a key")
	}
	a, b := Header{Subject: "Re: Budget"}, Header{Subject: "budget"}
	if Key(a) == "" || Key(a) != Key(b) {
		t.Errorf("subject keys: %q %q", Key(a), Key(b))
	}
	if Key(Header{}) != "" {
		t.Error("Key of no header is not empty")
	}
}

// finder is a Finder over maps.
type finder struct {
	byID    map[string]string
	byQuote map[string]string
	err     error
}

func (f finder) ThreadOfMessage(_ context.Context, id string) (string, error) {
	return f.byID[id], f.err
}

func (f finder) ThreadOfQuote(_ context.Context, quoted string) (string, error) {
	for q, k := range f.byQuote {
		if strings.Contains(quoted, q) {
			return k, f.err
		}
	}
	return "", f.err
}

func TestResolve(t *testing.T) {
	ctx := context.Background()
	f := finder{
		byID:    map[string]string{"parent@x": "T1"},
		byQuote: map[string]string{"the quarterly numbers are attached here": "T2"},
	}
	quoting := "Thanks.\n\nOn Mon, Ann wrote:\n> Hello Bob, the quarterly numbers are attached here for you.\n"
	for _, tc := range []struct {
		name string
		h    Header
		body string
		want string
	}{
		{"parent stored", Header{MessageID: "<c@x>", InReplyTo: "parent@x"}, "", "T1"},
		{"parent in references", Header{MessageID: "<c@x>", References: "<root@x> <parent@x>"}, "", "T1"},
		{"parent unknown", Header{MessageID: "<c@x>", References: "<root@x> <p2@x>"}, quoting, KeyOf("root@x")},
		{"headers stripped", Header{MessageID: "<c@x>", Subject: "Re: numbers"}, quoting, "T2"},
		{"headers stripped, short quote", Header{MessageID: "<c@x>"}, "Ok\n> yes\n", KeyOf("c@x")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Resolve(ctx, f, tc.h, tc.body)
			if err != nil || got != tc.want {
				t.Errorf("Resolve = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	boom := errors.New("boom")
	if _, err := Resolve(ctx, finder{err: boom}, Header{InReplyTo: "<p@x>"}, ""); !errors.Is(err, boom) {
		t.Errorf("Resolve error = %v, want boom", err)
	}
}

func TestWords(t *testing.T) {
	for in, want := range map[string]int{"": 0, "> Looks good: Reviewed-by: Ann <a@x.com>": 8, "日本 語": 2, "a_b": 2} {
		if got := Words(in); got != want {
			t.Errorf("Words(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestInclusive(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2023, 1, d, 0, 0, 0, 0, time.UTC) }
	// texts: each later message quotes all of the earlier ones, except 3,
	// a side branch, and 4, which drops 1's attachment.
	msgs := []Message{
		{Date: day(1)}, // 0: root
		{Date: day(2), Attachments: []string{"a"}}, // 1: reply with an attachment
		{Date: day(3)},                             // 2: quotes 0 and 1, not the attachment
		{Date: day(4)},                             // 3: side reply to 0
		{Date: day(5), Draft: true},                // 4: a draft quoting everything
		{Date: day(6), Attachments: []string{"b"}}, // 5: last, quotes 0, 1, 2
	}
	holds := map[[2]int]bool{{0, 1}: true, {0, 2}: true, {1, 2}: true, {0, 3}: true, {0, 4}: true, {1, 4}: true, {2, 4}: true, {3, 4}: true,
		{0, 5}: true, {1, 5}: true, {2, 5}: true}
	asked := map[[2]int]int{}
	marks := Inclusive(msgs, func(i, j int) bool {
		asked[[2]int{i, j}]++
		if !msgs[j].Date.After(msgs[i].Date) {
			t.Errorf("asked whether %d holds %d, an earlier message", j, i)
		}
		return holds[[2]int{i, j}]
	})
	want := []Mark{
		{By: 1},
		{Inclusive: true, Reason: ByAttachment, By: -1},
		{By: 5},
		{Inclusive: true, Reason: ByMessage, By: -1},
		{Inclusive: true, Reason: ByDraft, By: -1},
		{Inclusive: true, Reason: ByMessage | ByAttachment, By: -1},
	}
	if !slices.Equal(marks, want) {
		t.Errorf("marks = %+v\nwant    %+v", marks, want)
	}
	for pair, n := range asked {
		if n > 1 {
			t.Errorf("pair %v asked %d times", pair, n)
		}
	}
	if got := (ByMessage | ByAttachment).String(); got != "Message; Attachment" {
		t.Errorf("reason = %q", got)
	}
}
