package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/simdex/simdex/daemon"
	"github.com/simdex/simdex/export"
	"github.com/simdex/simdex/index"
)

// TestOnePivotEverywhere: the API and the UI named the original with
// three identical copies as a family's pivot, the load file's ND_PivotID
// the one edited copy (issue 32, item 1). scan, the API's family (which
// the UI draws) and the load files now name the same pivot, on families
// of several shapes.
func TestOnePivotEverywhere(t *testing.T) {
	dir := t.TempDir()
	gpl, apache, mit := readCorpus(t, "GPL-3.0-only.txt"), readCorpus(t, "Apache-2.0.txt"), readCorpus(t, "MIT.txt")
	files := map[string][]byte{
		// an original with three identical copies, and one edited copy
		"apache.txt": apache, "apache-copy1.txt": apache, "apache-copy2.txt": apache, "apache-copy3.txt": apache,
		// (longer, which made it the pivot of the load files)
		"apache-edited.txt": append(bytes.Replace(apache, []byte("License"), []byte("Licence"), 9), []byte("\nAppendix: how to apply the Licence to your work, with an example.\n")...),
		// an original, one copy, two edited versions
		"gpl.txt": gpl, "gpl-copy.txt": gpl,
		"gpl-v2.txt": bytes.Replace(gpl, []byte("software"), []byte("programs"), 6),
		"gpl-v3.txt": bytes.Replace(gpl, []byte("License"), []byte("Licence"), 6),
		// three versions, no copy
		"mit-a.txt": mit, "mit-b.txt": bytes.Replace(mit, []byte("Software"), []byte("Work"), 2),
		"mit-c.txt": append(bytes.Clone(mit), []byte("\nAdditional notice: redistributions must keep this paragraph too.\n")...),
	}
	for name, b := range files {
		write(t, filepath.Join(dir, name), b)
	}
	idx := filepath.Join(t.TempDir(), "idx.db")
	out, code, err := run(t, "scan", "--index", idx, "--json", dir)
	if code != 0 {
		t.Fatalf("scan: %d %v", code, err)
	}
	var rep scanReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	scanPivot := map[string]string{} // member name -> pivot name
	for _, f := range rep.Families {
		for _, m := range f.Members {
			scanPivot[filepath.Base(m)] = filepath.Base(f.Pivot)
		}
	}
	if len(rep.Families) != 3 || scanPivot["apache-edited.txt"] == "apache-edited.txt" {
		t.Fatalf("scan families %+v: want 3, the Apache one's pivot not the edited copy", rep.Families)
	}

	cfg := daemon.DefaultConfig()
	cfg.Index.Path = idx
	eng, err := daemon.OpenEngine(context.Background(), &cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx := context.Background()
	th := index.DefaultThresholds()
	names := map[index.DocID]string{}
	err = eng.Store.Documents(ctx, func(r *index.Record) error { names[r.ID] = filepath.Base(r.Name); return nil })
	if err != nil {
		t.Fatal(err)
	}
	for id, name := range names {
		rec, err := eng.Store.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		fam, err := eng.Index.Family(ctx, rec, th, 50, func(*index.Record) bool { return true })
		if err != nil {
			t.Fatal(err)
		}
		if got := names[fam.Pivot]; got != scanPivot[name] {
			t.Errorf("%s: the API's pivot is %s, scan's %s", name, got, scanPivot[name])
		}
	}
	an, err := eng.Index.Analyse(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	err = export.Rows(ctx, eng.Index, an, th, nil, func(r *export.Row) error {
		if got := names[r.NDPivotID]; got != scanPivot[names[r.DocID]] {
			t.Errorf("%s: the load file's ND_PivotID is %s, scan's %s", names[r.DocID], got, scanPivot[names[r.DocID]])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
