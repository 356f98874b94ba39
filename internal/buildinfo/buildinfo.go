// Package buildinfo says which simdex this is: its version and commit, the
// Go that built it, and the versions of the formats it writes (normal form,
// fingerprint scheme, index schema), for `simdex version`, the API's
// /api/v1/about and the review UI's footer. Two binaries whose scheme or
// schema differ do not share an index as they are.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/normalise"
	"github.com/simdex/simdex/index/sqlite"
)

// Info describes the running binary.
type Info struct {
	Version     string `json:"version"`          // module version, or "devel"
	Commit      string `json:"commit,omitempty"` // VCS revision it was built from
	Modified    bool   `json:"modified,omitempty"`
	GoVersion   string `json:"go_version"`
	NormalForm  int    `json:"normal_form_version"`
	Scheme      string `json:"fingerprint_scheme"` // of the default options, hex
	IndexSchema int    `json:"index_schema_version"`
}

// Read returns the running binary's Info.
func Read() Info {
	in := Info{
		Version:     "devel",
		GoVersion:   runtime.Version(),
		NormalForm:  normalise.Version,
		Scheme:      fmt.Sprintf("%08x", index.DefaultOptions().Scheme()),
		IndexSchema: sqlite.SchemaVersion,
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return in
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		in.Version = v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Commit = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	return in
}

// String formats the Info for people, one fact a line.
func (in Info) String() string {
	commit := in.Commit
	if commit == "" {
		commit = "unknown"
	} else if in.Modified {
		commit += " (modified)"
	}
	return fmt.Sprintf("simdex %s\ncommit %s\n%s\nnormal form %d, fingerprint scheme %s, index schema %d\n",
		in.Version, commit, in.GoVersion, in.NormalForm, in.Scheme, in.IndexSchema)
}
