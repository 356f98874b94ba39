package policy

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/simdex/simdex/index"
)

// Errors callers branch on with errors.Is. Configuration errors wrap
// ErrInvalidConfig and, where one applies, a more specific sentinel.
var (
	// ErrInvalidConfig wraps every configuration error; the message names
	// the key ("policy.retention[2].period: ...").
	ErrInvalidConfig = errors.New("invalid policy configuration")
	// ErrBadPeriod reports a period that is not "7y", "6mo", "90d", "2w"
	// or a Go duration, or is not positive.
	ErrBadPeriod = errors.New("bad period")
	// ErrBadSelector reports a selector with a malformed pattern.
	ErrBadSelector = errors.New("bad selector")
	// ErrBadThreshold reports a near-copy threshold outside (0, 1].
	ErrBadThreshold = errors.New("threshold out of range")
	// ErrBadSchedule reports a cron expression that does not parse.
	ErrBadSchedule = errors.New("bad schedule")
)

// Actions of a retention rule once its period is over.
const (
	// ActionReview flags the document for disposition review; it is never
	// deleted by simdex.
	ActionReview = "review"
	// ActionDelete flags the document for disposition; it is deleted by
	// Engine.Execute once a reviewer has approved the flag.
	ActionDelete = "delete"
)

// Enforcement modes of rules and holds.
const (
	// ModeReport only raises flags.
	ModeReport = "report"
	// ModeHold also turns the S3 Object Lock legal hold on (holds only).
	ModeHold = "hold"
	// ModeDelete lets approved disposition flags be executed (rules only).
	ModeDelete = "delete"
)

// Age bases of retention rules.
const (
	// BasisModTime counts the period from the object's modification time.
	BasisModTime = "modtime"
	// BasisIndexed counts from when simdex indexed the document.
	BasisIndexed = "indexed"
	// BasisMetaPrefix, followed by a metadata key ("meta:date"), counts
	// from a date in the document's metadata (RFC 3339 or 2006-01-02).
	BasisMetaPrefix = "meta:"
)

// Config is the `policy` section of config.yaml.
type Config struct {
	// Path is the policy database; the daemon defaults it to
	// data_dir/policy.db.
	Path string `mapstructure:"path" yaml:"path"`
	// Retention rules, each with a unique name.
	Retention []RetentionRule `mapstructure:"retention" yaml:"retention"`
	// KeepAtLeast rules only retain: a matching document is never flagged
	// for disposition before its period is over.
	KeepAtLeast []KeepRule `mapstructure:"keep_at_least" yaml:"keep_at_least"`
	// Holds are legal holds created at start when absent from the store.
	Holds []HoldConfig `mapstructure:"holds" yaml:"holds"`
	// NearCopies is the scope in which a document due for disposition
	// brings its near-copies into the evaluation, unless a rule sets its
	// own.
	NearCopies index.Scope `mapstructure:"near_copies" yaml:"near_copies"`
	// Duplicates configures duplicate-upload flags at ingest.
	Duplicates DuplicateConfig `mapstructure:"duplicates" yaml:"duplicates"`
	// ReleaseGrace is how long after a hold's release nothing it covered
	// may be deleted (a fresh evaluation is needed as well).
	ReleaseGrace time.Duration `mapstructure:"release_grace" yaml:"release_grace"`
	// Schedules are cron expressions (five fields, or descriptors such as
	// "@daily"); empty disables the job.
	Schedules Schedules `mapstructure:"schedules" yaml:"schedules"`
}

// Schedules are the periodic jobs of the Scheduler.
type Schedules struct {
	// Evaluate runs the retention evaluation and the hold sweep.
	Evaluate string `mapstructure:"evaluate" yaml:"evaluate"`
	// Republish hands flags not yet published to the Publisher again.
	Republish string `mapstructure:"republish" yaml:"republish"`
}

// RetentionRule keeps the documents it selects for Period from Basis, then
// applies Action to them and their near-copies.
type RetentionRule struct {
	Name     string   `mapstructure:"name" yaml:"name" json:"name"`
	Selector Selector `mapstructure:"selector" yaml:"selector" json:"selector"`
	// Basis is modtime (default), indexed or meta:<key>.
	Basis string `mapstructure:"basis" yaml:"basis" json:"basis"`
	// Period is "7y", "6mo", "90d", "2w" or a Go duration ("36h").
	Period string `mapstructure:"period" yaml:"period" json:"period"`
	// Action is review or delete.
	Action string `mapstructure:"action" yaml:"action" json:"action"`
	// Mode is delete (default for action delete: approved flags may be
	// executed) or report (flags only).
	Mode string `mapstructure:"mode" yaml:"mode" json:"mode"`
	// NearCopies overrides Config.NearCopies for this rule.
	NearCopies *index.Scope `mapstructure:"near_copies" yaml:"near_copies,omitempty" json:"near_copies,omitempty"`
}

// KeepRule is a minimum-retention rule.
type KeepRule struct {
	Name     string   `mapstructure:"name" yaml:"name" json:"name"`
	Selector Selector `mapstructure:"selector" yaml:"selector" json:"selector"`
	Basis    string   `mapstructure:"basis" yaml:"basis" json:"basis"`
	Period   string   `mapstructure:"period" yaml:"period" json:"period"`
}

// Selector chooses documents. Every field set must match; an empty
// selector matches every document.
type Selector struct {
	// Source is a path.Match glob on the document's source ("s3:contracts",
	// "s3:*"); as in paths, * does not cross "/" ("fs:/srv/*").
	Source string `mapstructure:"source" yaml:"source,omitempty" json:"source,omitempty"`
	// Bucket is the S3 bucket, exactly.
	Bucket string `mapstructure:"bucket" yaml:"bucket,omitempty" json:"bucket,omitempty"`
	// Prefix is a prefix of the object key (within its bucket).
	Prefix string `mapstructure:"prefix" yaml:"prefix,omitempty" json:"prefix,omitempty"`
	// Glob is a path.Match pattern on the object key ("hr/*/*.pdf").
	Glob string `mapstructure:"glob" yaml:"glob,omitempty" json:"glob,omitempty"`
	// Meta are user metadata values that must be equal (keys lower-case).
	Meta map[string]string `mapstructure:"meta" yaml:"meta,omitempty" json:"meta,omitempty"`
	// Tags are object tags that must be equal; connectors deliver tags
	// with the metadata, so they are matched against it as well.
	Tags map[string]string `mapstructure:"tags" yaml:"tags,omitempty" json:"tags,omitempty"`
	// ContentType is a path.Match pattern on the sniffed media type
	// ("application/pdf", "text/*").
	ContentType string `mapstructure:"content_type" yaml:"content_type,omitempty" json:"content_type,omitempty"`
}

// checkText reports the selector's fields that are not storable text.
func (s Selector) checkText() error {
	errs := []error{texts(".source", s.Source, ".bucket", s.Bucket, ".prefix", s.Prefix, ".glob", s.Glob, ".content_type", s.ContentType)}
	for _, m := range []struct {
		name string
		kv   map[string]string
	}{{".meta", s.Meta}, {".tags", s.Tags}} {
		for k, v := range m.kv {
			errs = append(errs, texts(m.name+" key", k, m.name+"."+k, v))
		}
	}
	return errors.Join(errs...)
}

// DuplicateConfig scopes duplicate-upload flags.
type DuplicateConfig struct {
	// Enabled turns duplicate-upload flags on.
	Enabled bool `mapstructure:"enabled" yaml:"enabled"`
	// ExactOnly flags only identical texts; otherwise Scope applies.
	ExactOnly bool `mapstructure:"exact_only" yaml:"exact_only"`
	// Scope is the near-copy scope when ExactOnly is false.
	Scope index.Scope `mapstructure:"scope" yaml:"scope"`
	// Selector limits which new documents are checked (empty: all).
	Selector Selector `mapstructure:"selector" yaml:"selector"`
	// Children also checks documents inside archives and messages.
	Children bool `mapstructure:"children" yaml:"children"`
}

// HoldConfig is a legal hold declared in config.yaml.
type HoldConfig struct {
	// Matter identifies the hold; it is unique and permanent.
	Matter string `mapstructure:"matter" yaml:"matter"`
	Name   string `mapstructure:"name" yaml:"name"`
	Reason string `mapstructure:"reason" yaml:"reason"`
	Owner  string `mapstructure:"owner" yaml:"owner"`
	// Seeds are document ids; SeedKeys index keys (every current version
	// is a seed); Selectors choose seeds among stored documents.
	Seeds     []int64     `mapstructure:"seeds" yaml:"seeds"`
	SeedKeys  []string    `mapstructure:"seed_keys" yaml:"seed_keys"`
	Selectors []Selector  `mapstructure:"selectors" yaml:"selectors"`
	Scope     index.Scope `mapstructure:"scope" yaml:"scope"`
	// Mode is report (flags only) or hold (default: flags and S3 legal
	// holds).
	Mode string `mapstructure:"mode" yaml:"mode"`
}

// DefaultScope is the near-copy scope used when none is configured.
func DefaultScope() index.Scope { return index.Scope{Resemblance: 0.5, Containment: 0.8} }

// DefaultConfig returns the defaults: no rules, no holds, near-copies at
// the index's default thresholds, duplicate-upload flags for copies of at
// least 0.9 resemblance or 0.95 containment, a three-day release grace, a
// nightly evaluation and an hourly republish.
func DefaultConfig() Config {
	return Config{
		Retention:    []RetentionRule{},
		KeepAtLeast:  []KeepRule{},
		Holds:        []HoldConfig{},
		NearCopies:   DefaultScope(),
		Duplicates:   DuplicateConfig{Enabled: true, Scope: index.Scope{Resemblance: 0.9, Containment: 0.95}},
		ReleaseGrace: 72 * time.Hour,
		Schedules:    Schedules{Evaluate: "0 2 * * *", Republish: "@every 1h"},
	}
}

// configErrors collects every problem with its key.
type configErrors []error

func (e *configErrors) add(key string, sentinel error, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if sentinel != nil {
		*e = append(*e, fmt.Errorf("%w: %s: %w: %s", ErrInvalidConfig, key, sentinel, msg))
		return
	}
	*e = append(*e, fmt.Errorf("%w: %s: %s", ErrInvalidConfig, key, msg))
}

// Validate reports every invalid key, each error naming it and wrapping
// ErrInvalidConfig.
func (c *Config) Validate() error {
	var errs configErrors
	names := map[string]string{}
	for i, r := range c.Retention {
		key := fmt.Sprintf("policy.retention[%d]", i)
		checkName(&errs, key, r.Name, names)
		checkSelector(&errs, key+".selector", r.Selector)
		checkBasis(&errs, key+".basis", r.Basis)
		checkPeriod(&errs, key+".period", r.Period)
		switch r.Action {
		case ActionReview, ActionDelete:
		default:
			errs.add(key+".action", nil, "%q is not review or delete", r.Action)
		}
		switch r.Mode {
		case "", ModeReport, ModeDelete:
		default:
			errs.add(key+".mode", nil, "%q is not report or delete", r.Mode)
		}
		if r.Action == ActionDelete && r.Selector.empty() {
			errs.add(key+".selector", ErrBadSelector, "a delete rule needs a selector (use source: \"*\" to mean every document)")
		}
		if r.NearCopies != nil {
			checkScope(&errs, key+".near_copies", *r.NearCopies)
		}
	}
	for i, r := range c.KeepAtLeast {
		key := fmt.Sprintf("policy.keep_at_least[%d]", i)
		checkName(&errs, key, r.Name, names)
		checkSelector(&errs, key+".selector", r.Selector)
		checkBasis(&errs, key+".basis", r.Basis)
		checkPeriod(&errs, key+".period", r.Period)
	}
	matters := map[string]bool{}
	for i, h := range c.Holds {
		key := fmt.Sprintf("policy.holds[%d]", i)
		if err := h.spec().validate(); err != nil {
			errs = append(errs, fmt.Errorf("%w: %s%w", ErrInvalidConfig, key, err))
		}
		if matters[h.Matter] {
			errs.add(key+".matter", nil, "%q is used twice", h.Matter)
		}
		matters[h.Matter] = true
	}
	checkScope(&errs, "policy.near_copies", c.NearCopies)
	if c.Duplicates.Enabled && !c.Duplicates.ExactOnly {
		checkScope(&errs, "policy.duplicates.scope", c.Duplicates.Scope)
	}
	checkSelector(&errs, "policy.duplicates.selector", c.Duplicates.Selector)
	if c.ReleaseGrace < 0 {
		errs.add("policy.release_grace", nil, "%v is negative", c.ReleaseGrace)
	}
	checkSchedule(&errs, "policy.schedules.evaluate", c.Schedules.Evaluate)
	checkSchedule(&errs, "policy.schedules.republish", c.Schedules.Republish)
	return errors.Join(errs...)
}

func checkName(errs *configErrors, key, name string, seen map[string]string) {
	switch {
	case name == "":
		errs.add(key+".name", nil, "empty")
	case seen[name] != "":
		errs.add(key+".name", nil, "%q is also the name of %s", name, seen[name])
	default:
		seen[name] = key
	}
}

func checkSelector(errs *configErrors, key string, s Selector) {
	if err := s.Validate(); err != nil {
		errs.add(key, ErrBadSelector, "%v", err)
	}
}

func checkBasis(errs *configErrors, key, basis string) {
	switch {
	case basis == "", basis == BasisModTime, basis == BasisIndexed:
	case strings.HasPrefix(basis, BasisMetaPrefix) && len(basis) > len(BasisMetaPrefix):
	default:
		errs.add(key, nil, "%q is not modtime, indexed or meta:<key>", basis)
	}
}

func checkPeriod(errs *configErrors, key, p string) {
	if _, err := ParsePeriod(p); err != nil {
		errs.add(key, nil, "%v", err)
	}
}

func checkScope(errs *configErrors, key string, s index.Scope) {
	if err := validScope(s); err != nil {
		errs.add(key, ErrBadThreshold, "%v", err)
	}
}

// validScope reports a threshold of near-copy scope s outside (0, 1].
func validScope(s index.Scope) error {
	var errs []error
	if s.Resemblance <= 0 || s.Resemblance > 1 {
		errs = append(errs, fmt.Errorf("resemblance %v is not in (0, 1]", s.Resemblance))
	}
	if s.Containment <= 0 || s.Containment > 1 {
		errs = append(errs, fmt.Errorf("containment %v is not in (0, 1]", s.Containment))
	}
	return errors.Join(errs...)
}

func checkSchedule(errs *configErrors, key, spec string) {
	if spec == "" {
		return
	}
	if _, err := cron.ParseStandard(spec); err != nil {
		errs.add(key, ErrBadSchedule, "%q: %v", spec, err)
	}
}

// Validate reports a malformed glob.
func (s Selector) Validate() error {
	var errs []error
	for _, p := range []struct{ name, pat string }{{"source", s.Source}, {"glob", s.Glob}, {"content_type", s.ContentType}} {
		if p.pat == "" {
			continue
		}
		if _, err := path.Match(p.pat, ""); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", p.name, p.pat, err))
		}
	}
	return errors.Join(errs...)
}

func (s Selector) empty() bool {
	return s.Source == "" && s.Bucket == "" && s.Prefix == "" && s.Glob == "" &&
		len(s.Meta) == 0 && len(s.Tags) == 0 && s.ContentType == ""
}

// Period is a retention period: calendar years, months and days, plus a
// clock duration.
type Period struct {
	Years, Months, Days int
	Duration            time.Duration
}

// ParsePeriod parses "7y", "6mo", "90d", "2w" or a Go duration ("36h").
// The period must be positive.
func ParsePeriod(s string) (Period, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Period{}, fmt.Errorf("%w: empty", ErrBadPeriod)
	}
	for _, u := range []string{"mo", "y", "w", "d"} {
		num, ok := strings.CutSuffix(s, u)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(num)
		if err != nil {
			break // perhaps a Go duration such as "1h30m"
		}
		if n <= 0 {
			return Period{}, fmt.Errorf("%w: %q is not positive", ErrBadPeriod, s)
		}
		switch u {
		case "y":
			return Period{Years: n}, nil
		case "mo":
			return Period{Months: n}, nil
		case "w":
			return Period{Days: 7 * n}, nil
		default:
			return Period{Days: n}, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return Period{}, fmt.Errorf("%w: %q is not 7y, 6mo, 90d, 2w or a Go duration", ErrBadPeriod, s)
	}
	if d <= 0 {
		return Period{}, fmt.Errorf("%w: %q is not positive", ErrBadPeriod, s)
	}
	return Period{Duration: d}, nil
}

// After returns t plus the period.
func (p Period) After(t time.Time) time.Time {
	return t.AddDate(p.Years, p.Months, p.Days).Add(p.Duration)
}
