package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStoreCommandsNeedNoConnectorSecrets: token create refused to run
// unless the S3 keys of the configured buckets were set, though it opens
// only the token store. The commands that open simdex's own stores load
// the configuration without the secrets of connectors, NATS and notifier
// channels; serve still refuses to start without them.
func TestStoreCommandsNeedNoConnectorSecrets(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "simdex.yaml")
	write(t, conf, []byte(`data_dir: `+filepath.Join(dir, "data")+`
connectors:
  s3:
    - name: contracts
      endpoint: minio.invalid:9000
      bucket: contracts
      mode: listen
      access_key_env: SIMDEX_TEST_UNSET_ACCESS_KEY
      secret_key_env: SIMDEX_TEST_UNSET_SECRET_KEY
notifier:
  channels:
    - name: legal-hook
      type: webhook
      url: https://hooks.invalid/simdex
      secret_env: SIMDEX_TEST_UNSET_WEBHOOK_SECRET
`))
	for _, v := range []string{"SIMDEX_TEST_UNSET_ACCESS_KEY", "SIMDEX_TEST_UNSET_SECRET_KEY", "SIMDEX_TEST_UNSET_WEBHOOK_SECRET"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	out, code, err := run(t, "token", "create", "--config", conf, "--name", "Vic Viewer", "--role", "viewer", "--matter", "M-1")
	if code != 0 || strings.TrimSpace(out) == "" {
		t.Fatalf("token create without the S3 keys: exit %d: %v", code, err)
	}
	out, code, err = run(t, "token", "list", "--config", conf)
	if code != 0 || !strings.Contains(out, "viewer") {
		t.Errorf("token list without the S3 keys: exit %d: %v\n%s", code, err, out)
	}
	docs := filepath.Join(dir, "docs")
	write(t, filepath.Join(docs, "a.txt"), []byte(strings.Repeat("a scan opens the index alone ", 30)))
	if out, code, err := run(t, "scan", "--config", conf, docs); code != 0 {
		t.Errorf("scan without the S3 keys: exit %d: %v\n%s", code, err, out)
	}
	_, code, err = run(t, "serve", "--config", conf)
	if code != 2 || err == nil || !strings.Contains(err.Error(), "SIMDEX_TEST_UNSET_ACCESS_KEY") {
		t.Errorf("serve without the S3 keys: exit %d, %v; want it refused naming the variable", code, err)
	}
}
