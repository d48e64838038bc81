package filestore

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt"
)

// TestConfigDuplicateKeyIsNamed: a config.json that gives a key twice is
// refused with the key's name: which one a JSON decoder keeps is not
// something to guess about.
func TestConfigDuplicateKeyIsNamed(t *testing.T) {
	s := newStore(t, Options{})
	path := filepath.Join(s.Dir(), configName)
	for _, c := range []struct{ body, key string }{
		{`{"format":"ckpt-filestore","version":1,"backup_every":5,"backup_keep":10,"backup_every":1}`, "backup_every"},
		{`{"format":"ckpt-filestore","format":"ckpt-filestore","version":1}`, "format"},
		{`{"format":"ckpt-filestore","version":1,"x":{"a":1,"a":2}}`, "a"},
		{`{"format":"ckpt-filestore","version":1,"Version":1}`, "Version"},
	} {
		if err := os.WriteFile(path, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(s.Dir())
		if !errors.Is(err, ckpt.ErrNoStore) || !strings.Contains(err.Error(), `key "`+c.key+`" appears more than once`) {
			t.Errorf("Open with %s: %v, want an error naming the key %q", c.body, err, c.key)
		}
	}
	os.WriteFile(path, []byte(`{"format":"other","version":1}`), 0o644)
	if _, err := Open(s.Dir()); err == nil || !strings.Contains(err.Error(), `format "other"`) {
		t.Errorf("Open of another format: %v", err)
	}
}

// FuzzParseConfig: config.json is outside input (a store can come with a
// cloned repository). The parser never panics; what it accepts is a ckpt
// store config with usable options and no key given twice.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"format":"ckpt-filestore","version":1,"backup_every":5,"backup_keep":10}`))
	f.Add([]byte(`{"format":"ckpt-filestore","version":1,"backup_every":5,"backup_every":1}`))
	f.Add([]byte(`{"format":"ckpt-filestore","version":2}`))
	f.Add([]byte(`{"format":"ckpt-filestore","version":1,"x":[{"a":1},{"a":1,"a":2}]}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"format":"ckpt-filestore","version":1,"backup_every":-3}`))
	f.Add([]byte{})
	f.Add([]byte("{\n  \"format\": \"ckpt-filestore\",\n  \"version\": 1,\n  \"backup_every\": 5,\n  \"backup_keep\": 10\n}\n"))
	f.Add([]byte("{\n  \"format\": \"ckpt-filestore\",\n  \"version\": 1,\n  \"backup_every\": -05,\n  \"backup_keep\": 0\n}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if fast, ok := parseInitConfig(b); ok {
			var want config
			if err := json.Unmarshal(b, &want); err != nil || want != fast {
				t.Fatalf("parseInitConfig read %+v; json.Unmarshal reads %+v, %v", fast, want, err)
			}
		}
		cfg, err := parseConfig(b, "config.json")
		if err != nil {
			return
		}
		if cfg.Format != configFormat || cfg.Version != configVersion || cfg.BackupEvery <= 0 || cfg.BackupKeep <= 0 {
			t.Fatalf("accepted an unusable config: %+v", cfg)
		}
		if key, dup := duplicateKey(b); dup {
			t.Fatalf("accepted a config that gives %q twice", key)
		}
	})
}
