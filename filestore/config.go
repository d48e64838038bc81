package filestore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ckpt-dev/ckpt"
)

// parseConfig reads config.json (at path, for messages). A file that is
// not JSON, names a key twice (JSON decoders disagree on which one wins, so
// ckpt takes neither), or is not a ckpt store config fails with
// ckpt.ErrNoStore; a format version ckpt does not read fails plainly. Zero
// or negative options take their defaults.
func parseConfig(b []byte, path string) (config, error) {
	notConfig := func(why string) error {
		return fmt.Errorf("%w: %s is not a ckpt store config (%s): restore it from a backup", ckpt.ErrNoStore, path, why)
	}
	cfg, ok := parseInitConfig(b)
	if !ok {
		if err := json.Unmarshal(b, &cfg); err != nil {
			return config{}, notConfig(err.Error())
		}
		if key, ok := duplicateKey(b); ok {
			return config{}, notConfig(fmt.Sprintf("the key %q appears more than once: keep one", key))
		}
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

// parseInitConfig reads a config in exactly the form ckpt init writes it
// (json.MarshalIndent, two spaces) without encoding/json, whose decoder and
// the duplicate-key walk were most of opening a store; ok is false for any
// other bytes, which parseConfig decodes in full (FuzzParseConfig holds
// the two equal).
func parseInitConfig(b []byte) (cfg config, ok bool) {
	rest := b
	field := func(prefix string) (int, bool) {
		var found bool
		if rest, found = bytes.CutPrefix(rest, []byte(prefix)); !found {
			return 0, false
		}
		end := 0
		for end < len(rest) && (rest[end] == '-' || rest[end] >= '0' && rest[end] <= '9') {
			end++
		}
		digits := string(rest[:end])
		n, err := strconv.Atoi(digits)
		if err != nil || strconv.Itoa(n) != digits {
			return 0, false
		}
		rest = rest[end:]
		return n, true
	}
	const head = "{\n  \"format\": \"" + configFormat + "\",\n  \"version\": "
	var ok1, ok2, ok3 bool
	cfg.Format = configFormat
	cfg.Version, ok1 = field(head)
	cfg.BackupEvery, ok2 = field(",\n  \"backup_every\": ")
	cfg.BackupKeep, ok3 = field(",\n  \"backup_keep\": ")
	tail := string(rest)
	return cfg, ok1 && ok2 && ok3 && (tail == "\n}" || tail == "\n}\n")
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
