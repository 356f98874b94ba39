package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
)

// TestPageSize checks that a new index gets pageSize and that an index
// made with SQLite's default page size keeps it and opens.
func TestPageSize(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		make func(t *testing.T, path string)
		want int
	}{
		{"new", func(*testing.T, string) {}, pageSize},
		{"older 4 KiB", func(t *testing.T, path string) {
			db, err := sql.Open("sqlite", "file:"+path+"?_pragma=page_size(4096)")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", indexKind.ID)); err != nil {
				t.Fatal(err)
			}
		}, 4096},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "index.db")
			tt.make(t, path)
			s := open(t, path, 1)
			var got int
			if err := s.w.QueryRowContext(ctx, "PRAGMA page_size").Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("page size %d, want %d", got, tt.want)
			}
		})
	}
}
