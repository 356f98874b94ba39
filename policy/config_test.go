package policy_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/policy"
)

func TestParsePeriod(t *testing.T) {
	base := time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"7y", time.Date(2031, 3, 1, 12, 0, 0, 0, time.UTC)},
		{"6mo", time.Date(2024, 8, 29, 12, 0, 0, 0, time.UTC)},
		{"90d", base.AddDate(0, 0, 90)},
		{"2w", base.AddDate(0, 0, 14)},
		{"36h", base.Add(36 * time.Hour)},
		{"1h30m", base.Add(90 * time.Minute)},
	} {
		p, err := policy.ParsePeriod(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if got := p.After(base); !got.Equal(tc.want) {
			t.Errorf("%s after %s = %s, want %s", tc.in, base, got, tc.want)
		}
	}
	for _, bad := range []string{"", "7", "y", "-1y", "0d", "7years", "-5h", "abc"} {
		if _, err := policy.ParsePeriod(bad); !errors.Is(err, policy.ErrBadPeriod) {
			t.Errorf("%q: err = %v, want ErrBadPeriod", bad, err)
		}
	}
}

func validConfig() policy.Config {
	c := policy.DefaultConfig()
	c.Retention = []policy.RetentionRule{{Name: "hr", Selector: policy.Selector{Bucket: "hr"}, Period: "7y", Action: policy.ActionDelete}}
	c.KeepAtLeast = []policy.KeepRule{{Name: "tax", Selector: policy.Selector{Prefix: "tax/"}, Period: "10y"}}
	c.Holds = []policy.HoldConfig{{Matter: "M-1", Seeds: []int64{1}, Scope: policy.DefaultScope()}}
	return c
}

func TestConfigValidate(t *testing.T) {
	if err := func() error { c := validConfig(); return c.Validate() }(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	for _, tc := range []struct {
		name     string
		mod      func(*policy.Config)
		key      string
		sentinel error
	}{
		{"bad period", func(c *policy.Config) { c.Retention[0].Period = "seven years" }, "policy.retention[0].period", policy.ErrInvalidConfig},
		{"bad action", func(c *policy.Config) { c.Retention[0].Action = "shred" }, "policy.retention[0].action", policy.ErrInvalidConfig},
		{"bad mode", func(c *policy.Config) { c.Retention[0].Mode = "hold" }, "policy.retention[0].mode", policy.ErrInvalidConfig},
		{"bad basis", func(c *policy.Config) { c.Retention[0].Basis = "birthday" }, "policy.retention[0].basis", policy.ErrInvalidConfig},
		{"bad glob", func(c *policy.Config) { c.Retention[0].Selector.Glob = "hr/[a-" }, "policy.retention[0].selector", policy.ErrBadSelector},
		{"bad content type", func(c *policy.Config) { c.KeepAtLeast[0].Selector.ContentType = "text/[" }, "policy.keep_at_least[0].selector", policy.ErrBadSelector},
		{"delete everything", func(c *policy.Config) { c.Retention[0].Selector = policy.Selector{} }, "policy.retention[0].selector", policy.ErrBadSelector},
		{"duplicate name", func(c *policy.Config) { c.KeepAtLeast[0].Name = "hr" }, "policy.keep_at_least[0].name", policy.ErrInvalidConfig},
		{"resemblance over 1", func(c *policy.Config) { c.NearCopies.Resemblance = 1.5 }, "policy.near_copies", policy.ErrBadThreshold},
		{"containment zero", func(c *policy.Config) { c.Retention[0].NearCopies = &index.Scope{Resemblance: 0.5} }, "policy.retention[0].near_copies", policy.ErrBadThreshold},
		{"hold scope", func(c *policy.Config) { c.Holds[0].Scope.Containment = -0.1 }, "policy.holds[0].scope", policy.ErrBadThreshold},
		{"hold without seeds", func(c *policy.Config) { c.Holds[0].Seeds = nil }, "policy.holds[0].seeds", policy.ErrInvalidHold},
		{"hold mode", func(c *policy.Config) { c.Holds[0].Mode = "delete" }, "policy.holds[0].mode", policy.ErrInvalidHold},
		{"hold bad selector", func(c *policy.Config) { c.Holds[0].Selectors = []policy.Selector{{Glob: "["}} }, "policy.holds[0].selectors[0]", policy.ErrBadSelector},
		{"matter twice", func(c *policy.Config) { c.Holds = append(c.Holds, c.Holds[0]) }, "policy.holds[1].matter", policy.ErrInvalidConfig},
		{"bad schedule", func(c *policy.Config) { c.Schedules.Evaluate = "every night" }, "policy.schedules.evaluate", policy.ErrBadSchedule},
		{"bad republish", func(c *policy.Config) { c.Schedules.Republish = "61 * * * *" }, "policy.schedules.republish", policy.ErrBadSchedule},
		{"negative grace", func(c *policy.Config) { c.ReleaseGrace = -time.Hour }, "policy.release_grace", policy.ErrInvalidConfig},
		{"duplicates scope", func(c *policy.Config) { c.Duplicates = policy.DuplicateConfig{Enabled: true} }, "policy.duplicates.scope", policy.ErrBadThreshold},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := validConfig()
			tc.mod(&c)
			err := c.Validate()
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, policy.ErrInvalidConfig) || !errors.Is(err, tc.sentinel) {
				t.Errorf("err = %v, want ErrInvalidConfig and %v", err, tc.sentinel)
			}
			if !strings.Contains(err.Error(), tc.key) {
				t.Errorf("err = %v, does not name %s", err, tc.key)
			}
		})
	}
}

func TestSelectorMatch(t *testing.T) {
	rec := func(key, source, mt string, meta map[string]string) *index.Record {
		return &index.Record{Doc: index.Doc{Key: key, Source: source, MediaType: mt, Meta: meta}}
	}
	pdf := rec("s3:main/hr/2020/alice/contract.pdf", "s3:main", "application/pdf", map[string]string{"dept": "hr", "class": "contract"})
	child := rec("s3:main/hr/2020/mail.eml!/att.txt", "s3:main", "text/plain; charset=utf-8", nil)
	file := rec("fs:/srv/inbox/notes/a.txt", "fs:/srv/inbox", "text/plain", nil)
	for _, tc := range []struct {
		name string
		sel  policy.Selector
		r    *index.Record
		want bool
	}{
		{"empty matches all", policy.Selector{}, pdf, true},
		{"source glob", policy.Selector{Source: "s3:*"}, pdf, true},
		{"source glob no", policy.Selector{Source: "fs:*"}, pdf, false},
		{"bucket", policy.Selector{Bucket: "hr"}, pdf, true},
		{"bucket no", policy.Selector{Bucket: "finance"}, pdf, false},
		{"prefix within bucket", policy.Selector{Prefix: "2020/"}, pdf, true},
		{"prefix includes bucket: no", policy.Selector{Prefix: "hr/2020"}, pdf, false},
		{"glob", policy.Selector{Glob: "2020/*/*.pdf"}, pdf, true},
		{"glob no", policy.Selector{Glob: "*.pdf"}, pdf, false},
		{"meta", policy.Selector{Meta: map[string]string{"dept": "hr"}}, pdf, true},
		{"meta differs", policy.Selector{Meta: map[string]string{"dept": "it"}}, pdf, false},
		{"tag missing", policy.Selector{Tags: map[string]string{"legal": "yes"}}, pdf, false},
		{"content type glob", policy.Selector{ContentType: "application/*"}, pdf, true},
		{"content type params", policy.Selector{ContentType: "text/plain"}, child, true},
		{"child matched on its object", policy.Selector{Bucket: "hr", Prefix: "2020/mail.eml"}, child, true},
		{"fs key", policy.Selector{Source: "fs:/srv/*", Prefix: "notes/"}, file, true},
		{"source star stops at slash", policy.Selector{Source: "fs:*"}, file, false},
		{"fs has no bucket", policy.Selector{Bucket: "notes"}, file, false},
	} {
		if got := tc.sel.Match(tc.r); got != tc.want {
			t.Errorf("%s: Match = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestObjectOf(t *testing.T) {
	o := policy.ObjectOf(&index.Record{Doc: index.Doc{Key: "s3:main/hr/a/b.eml!/att 1/x.pdf", Source: "s3:main", VersionID: "v9"}})
	want := policy.Object{Source: "s3:main", Bucket: "hr", Key: "a/b.eml", VersionID: "v9", IndexKey: "s3:main/hr/a/b.eml"}
	if o != want {
		t.Errorf("ObjectOf = %+v, want %+v", o, want)
	}
}
