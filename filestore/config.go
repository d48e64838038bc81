package filestore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/ckpt-dev/ckpt"
)

// parseConfig reads config.json (at path, for messages). A file that is
// not JSON, names a key twice (JSON decoders disagree on which one wins, so
// ckpt takes neither), or is not a ckpt store config fails with
// ckpt.ErrNoStore; a format version ckpt does not read fails plainly. Zero
// or negative options take their defaults.
func parseConfig(b []byte, path string) (config, error) {
	var cfg config
	notConfig := func(why string) error {
		return fmt.Errorf("%w: %s is not a ckpt store config (%s): restore it from a backup", ckpt.ErrNoStore, path, why)
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return config{}, notConfig(err.Error())
	}
	if key, ok := duplicateKey(b); ok {
		return config{}, notConfig(fmt.Sprintf("the key %q appears more than once: keep one", key))
	}
	if cfg.Format != configFormat {
		return config{}, notConfig(fmt.Sprintf("format %q, want %q", cfg.Format, configFormat))
	}
	if cfg.Version != configVersion {
		return config{}, fmt.Errorf("filestore: %s has store format version %d; this ckpt reads version %d: use a matching ckpt",
			filepath.Dir(path), cfg.Version, configVersion)
	}
	if cfg.BackupEvery <= 0 {
		cfg.BackupEvery = DefaultBackupEvery
	}
	if cfg.BackupKeep <= 0 {
		cfg.BackupKeep = DefaultBackupKeep
	}
	return cfg, nil
}

// duplicateKey returns the first key that appears twice in one object of
// the JSON document b (at any depth, compared as encoding/json matches
// them: ignoring case), if any. b must be valid JSON.
func duplicateKey(b []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	key, err := walkValue(dec)
	return key, err == nil && key != ""
}

// walkValue consumes one JSON value from dec and returns the first
// duplicate key inside it, or "".
func walkValue(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return "", err
			}
			// encoding/json matches keys case-insensitively, so
			// "Version" and "version" fill one field: a duplicate too.
			key, _ := k.(string)
			if seen[strings.ToLower(key)] {
				return key, nil
			}
			seen[strings.ToLower(key)] = true
			if dup, err := walkValue(dec); err != nil || dup != "" {
				return dup, err
			}
		}
		_, err = dec.Token() // '}'
	case json.Delim('['):
		for dec.More() {
			if dup, err := walkValue(dec); err != nil || dup != "" {
				return dup, err
			}
		}
		_, err = dec.Token() // ']'
	}
	if err == io.EOF {
		err = nil
	}
	return "", err
}
