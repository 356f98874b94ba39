package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/simdex/simdex/daemon"
)

// runCLIEnv, set, makes the test binary run main (see TestMain).
const runCLIEnv = "SIMDEX_TEST_RUN_CLI"

// cliRun is what one run of the command line, as its own process, left.
type cliRun struct {
	stdout, stderr string
	code           int
}

// runCLI runs the simdex command line as a process (the test binary
// running main) in dir, and returns its output and exit status.
func runCLI(t *testing.T, dir string, args ...string) cliRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), runCLIEnv+"=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("simdex %v: %v", args, err)
	}
	return cliRun{stdout: out.String(), stderr: errOut.String(), code: cmd.ProcessState.ExitCode()}
}

// commandPaths lists every command of the command table, groups included,
// by path without "simdex ".
func commandPaths(cmd *cobra.Command) []string {
	var paths []string
	for _, sub := range cmd.Commands() {
		paths = append(paths, strings.TrimPrefix(sub.CommandPath(), "simdex "))
		paths = append(paths, commandPaths(sub)...)
	}
	return paths
}

// badCall is one wrong invocation and what its error must name.
type badCall struct {
	args  []string
	names string
}

// badCalls are, for each command, a call missing its argument, one with a
// malformed argument and one naming something that does not exist. A
// command that takes nothing is given an argument it does not take as
// the missing one; na explains a kind that cannot apply.
type badCalls struct {
	missing, malformed, nonexistent badCall
	na                              string
}

// TestEveryErrorIsOneLine: every command, called with a missing, a
// malformed and a nonexistent argument, exits non-zero with exactly one
// line on standard error that names what was wrong (no Go stack, no usage
// dump) and prints nothing on standard output. The commands are taken
// from the command table: a new command without its calls here fails the
// test.
func TestEveryErrorIsOneLine(t *testing.T) {
	var dataDir string
	d := startServe(t, func(c *daemon.Config) { dataDir = c.DataDir })
	work := t.TempDir()
	conf := filepath.Join(work, "simdex.yaml")
	write(t, conf, []byte("data_dir: "+dataDir+"\nhttp:\n  addr: "+d.Addr().String()+"\n"))
	badConf := filepath.Join(work, "bad.yaml")
	write(t, badConf, []byte("data_dir: "+dataDir+"\nno_such_key: 1\n"))
	notIndex := filepath.Join(work, "notes.txt")
	write(t, notIndex, []byte("not an index"))
	badCheckpoint := filepath.Join(work, "checkpoint.json")
	write(t, badCheckpoint, []byte("{not json"))
	missingConf := filepath.Join(work, "nonexistent", "simdex.yaml")
	dead := "127.0.0.1:1" // nothing listens there
	call := func(names string, args ...string) badCall { return badCall{args: args, names: names} }
	calls := map[string]badCalls{
		"serve": {missing: call("extra", "serve", "extra"), malformed: call("no_such_key", "serve", "--config", badConf),
			nonexistent: call(missingConf, "serve", "--config", missingConf)},
		"scan": {missing: call("DIR", "scan"), malformed: call("many", "scan", "--workers", "many", work),
			nonexistent: call("/nonexistent", "scan", "/nonexistent")},
		"similar": {missing: call("FILE", "similar"), malformed: call("abc", "similar", "--id", "abc"),
			nonexistent: call("nothere.txt", "similar", "nothere.txt")},
		"backfill": {missing: call("CONNECTOR", "backfill"), malformed: call("a b", "backfill", "a", "b"),
			nonexistent: call("nosuchconnector", "backfill", "nosuchconnector")},
		"deadletters": {missing: call("extra", "deadletters", "extra"), malformed: call("many", "deadletters", "--limit", "many"),
			nonexistent: call(dead, "deadletters", "--addr", dead)},
		"hold": {missing: call("needs a command", "hold"), malformed: call("--bogus", "hold", "--bogus"),
			nonexistent: call("nosuch", "hold", "nosuch")},
		"hold create": {missing: call("matter", "hold", "create"), malformed: call("resemblance", "hold", "create", "--matter", "M-1", "--resemblance", "2"),
			nonexistent: call("/nonexistent/seed.txt", "hold", "create", "--matter", "M-1", "--seed", "/nonexistent/seed.txt")},
		"hold list": {missing: call("extra", "hold", "list", "extra"), malformed: call("bogus", "hold", "list", "--status", "bogus"),
			nonexistent: call(dead, "hold", "list", "--addr", dead)},
		"hold release": {missing: call("matter", "hold", "release", "--reason", "r"), malformed: call("--reason", "hold", "release", "--matter", "M-1", "--reason", " "),
			nonexistent: call("NOPE", "hold", "release", "--matter", "NOPE", "--reason", "r")},
		"flags": {missing: call("needs a command", "flags"), malformed: call("--bogus", "flags", "--bogus"),
			nonexistent: call("nosuch", "flags", "nosuch")},
		"flags list": {missing: call("extra", "flags", "list", "extra"), malformed: call("bogus", "flags", "list", "--status", "bogus"),
			nonexistent: call(dead, "flags", "list", "--addr", dead)},
		"flags approve": {missing: call("ID", "flags", "approve", "--reason", "r"), malformed: call("abc", "flags", "approve", "abc", "--reason", "r"),
			nonexistent: call("999999", "flags", "approve", "999999", "--reason", "r")},
		"flags dismiss": {missing: call("ID", "flags", "dismiss", "--reason", "r"), malformed: call("abc", "flags", "dismiss", "abc", "--reason", "r"),
			nonexistent: call("999999", "flags", "dismiss", "999999", "--reason", "r")},
		"flags execute": {missing: call("ID", "flags", "execute"), malformed: call("abc", "flags", "execute", "abc"),
			nonexistent: call("999999", "flags", "execute", "999999")},
		"policy": {missing: call("needs a command", "policy"), malformed: call("--bogus", "policy", "--bogus"),
			nonexistent: call("nosuch", "policy", "nosuch")},
		"policy eval": {missing: call("extra", "policy", "eval", "extra"), malformed: call("maybe", "policy", "eval", "--dry-run=maybe"),
			nonexistent: call(dead, "policy", "eval", "--addr", dead)},
		"audit": {missing: call("needs a command", "audit"), malformed: call("--bogus", "audit", "--bogus"),
			nonexistent: call("nosuch", "audit", "nosuch")},
		"audit verify": {missing: call("extra", "audit", "verify", "extra"), malformed: call(badCheckpoint, "audit", "verify", "--checkpoint", badCheckpoint),
			nonexistent: call(dead, "audit", "verify", "--addr", dead)},
		"disposals": {missing: call("extra", "disposals", "extra"), malformed: call("yesterday", "disposals", "--since", "yesterday"),
			nonexistent: call(dead, "disposals", "--addr", dead)},
		"export": {missing: call("extra", "export", "extra"), malformed: call("xml", "export", "--format", "xml"),
			nonexistent: call("NOPE", "export", "--matter", "NOPE")},
		"token": {missing: call("needs a command", "token"), malformed: call("--bogus", "token", "--bogus"),
			nonexistent: call("nosuch", "token", "nosuch")},
		"token create": {missing: call("role", "token", "create"), malformed: call("king", "token", "create", "--name", "Jane Doe", "--role", "king"),
			nonexistent: call(missingConf, "token", "create", "--name", "Jane Doe", "--role", "viewer", "--matter", "M-1", "--config", missingConf)},
		"token list": {missing: call("extra", "token", "list", "extra"), malformed: call("no_such_key", "token", "list", "--config", badConf),
			nonexistent: call(missingConf, "token", "list", "--config", missingConf)},
		"token revoke": {missing: call("ID", "token", "revoke", "--reason", "r"), malformed: call("a b", "token", "revoke", "a", "b", "--reason", "r"),
			nonexistent: call("nosuchtoken", "token", "revoke", "nosuchtoken", "--reason", "r")},
		"version": {missing: call("extra", "version", "extra"), malformed: call("maybe", "version", "--json=maybe"),
			na: "version reads nothing that could be missing"},
		"stats": {missing: call("index", "stats"), malformed: call(notIndex, "stats", "--index", notIndex),
			nonexistent: call("/nonexistent/index.db", "stats", "--index", "/nonexistent/index.db")},
	}
	for _, path := range commandPaths(newRootCmd()) {
		c, ok := calls[path]
		if !ok {
			t.Errorf("simdex %s has no bad calls in TestEveryErrorIsOneLine: add them", path)
			continue
		}
		for kind, bc := range map[string]badCall{"missing": c.missing, "malformed": c.malformed, "nonexistent": c.nonexistent} {
			if bc.args == nil {
				if c.na == "" {
					t.Errorf("simdex %s: no %s call, and no reason why", path, kind)
				}
				continue
			}
			args := bc.args
			if !strings.Contains(strings.Join(args, " "), "--config") {
				args = append(args, "--config", conf)
			}
			r := runCLI(t, work, args...)
			line := strings.TrimSuffix(r.stderr, "\n")
			switch {
			case r.code == 0:
				t.Errorf("%s %v: exit 0", kind, bc.args)
			case r.stdout != "":
				t.Errorf("%s %v: printed %q on standard output", kind, bc.args, r.stdout)
			case !strings.HasSuffix(r.stderr, "\n") || strings.Contains(line, "\n") || !strings.HasPrefix(line, "simdex: "):
				t.Errorf("%s %v: standard error is not one line:\n%s", kind, bc.args, r.stderr)
			case strings.Contains(line, "goroutine ") || strings.Contains(line, "panic") || strings.Contains(line, ".go:") ||
				strings.Contains(line, "strconv."):
				t.Errorf("%s %v: a Go stack, panic or Go words: %s", kind, bc.args, line)
			case !strings.Contains(line, bc.names):
				t.Errorf("%s %v: %q does not name %q", kind, bc.args, line, bc.names)
			}
			if testing.Verbose() {
				t.Logf("%-11s exit %d  %s", kind, r.code, line)
			}
		}
	}
}
