package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary double as the ckpt command (testscript's
// way); the scripts themselves run the binary ckptBinary builds, which
// scriptPath puts first on their PATH.
func TestMain(m *testing.M) {
	testscript.Main(removingBuilds{m}, map[string]func(){
		"ckpt": main,
	})
}

// removingBuilds runs the tests, then removes the directories of the
// binaries they built (buildDir): each holds ckpt, ckpt-server and ckpt-pg,
// some 70 MB per test process, which /tmp otherwise keeps.
type removingBuilds struct{ m *testing.M }

func (r removingBuilds) Run() int {
	code := r.m.Run()
	builds.Lock()
	defer builds.Unlock()
	for _, dir := range builds.dirs {
		os.RemoveAll(dir)
	}
	return code
}

// builds are the directories buildDir made in this test process.
var builds struct {
	sync.Mutex
	dirs []string
}

// buildDir makes a temporary directory (os.MkdirTemp) for binaries built
// once per test process, which TestMain removes after the tests.
func buildDir(pattern string) (string, error) {
	dir, err := os.MkdirTemp("", pattern)
	if err == nil {
		builds.Lock()
		builds.dirs = append(builds.dirs, dir)
		builds.Unlock()
	}
	return dir, err
}

// TestScripts runs the end-to-end scripts in testdata/script.
func TestScripts(t *testing.T) {
	bin := ckptBinary(t)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup:               func(env *testscript.Env) error { return scriptPath(env, bin) },
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits": cmdExits,
			"json":  cmdJSON,
		},
	})
}

// scriptPath makes `exec ckpt` in a script run bin, the ckpt binary built
// as a user builds it, rather than this test binary. Under go test -race
// the test binary carries the race runtime, and the scripts' ~930 ckpt
// processes in it took most of the suite's time (over 7 minutes of a
// 9-minute package on 2 cores); the code they run is race-tested in
// process by internal/cli's tests.
func scriptPath(env *testscript.Env, bin string) error {
	env.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+env.Getenv("PATH"))
	return nil
}

// cmdExits runs a program and asserts its exit code:
//
//	exits CODE PROGRAM [ARGS...]
//
// Its stdout and stderr are then available to stdout, stderr and cmp, as
// after exec.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: code %q is not a number", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("exits: running %s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited with code %d, want %d", args[1], got, want)
	}
}

// cmdJSON asserts a value in a JSON file (or stdout/stderr):
//
//	json [-lines] [-len] FILE PATH WANT
//
// PATH is "." for the whole value, or a sequence of .name and [index]
// selectors. A string value is compared as is, anything else as compact JSON
// (3, true, null, [], {"a":1}, object keys sorted); a missing member is
// <missing>. With -len the
// length of the array, object or string is compared instead. With -lines
// the file holds one JSON value per line and the root is the array of them.
// With ! the value must differ.
func cmdJSON(ts *testscript.TestScript, neg bool, args []string) {
	var lines, length bool
	for len(args) > 0 && (args[0] == "-lines" || args[0] == "-len") {
		lines = lines || args[0] == "-lines"
		length = length || args[0] == "-len"
		args = args[1:]
	}
	if len(args) != 3 {
		ts.Fatalf("usage: json [-lines] [-len] FILE PATH WANT")
	}
	got, err := jsonAt(ts.ReadFile(args[0]), lines, length, args[1])
	if err != nil {
		ts.Fatalf("json %s %s: %v", args[0], args[1], err)
	}
	if eq := got == args[2]; eq == neg {
		if neg {
			ts.Fatalf("json %s %s is %s, want anything else", args[0], args[1], got)
		}
		ts.Fatalf("json %s %s is %s, want %s", args[0], args[1], got, args[2])
	}
}

var selector = regexp.MustCompile(`^(?:\.([^.\[]+)|\[(\d+)\])`)

// jsonAt returns the value at path in data, rendered as cmdJSON compares it.
func jsonAt(data string, lines, length bool, path string) (string, error) {
	var root any
	dec := json.NewDecoder(strings.NewReader(data))
	dec.UseNumber()
	if lines {
		var all []any
		for {
			var v any
			if err := dec.Decode(&v); err == io.EOF {
				break
			} else if err != nil {
				return "", fmt.Errorf("not JSON lines: %v", err)
			}
			all = append(all, v)
		}
		root = all
	} else {
		if err := dec.Decode(&root); err != nil {
			return "", fmt.Errorf("not JSON: %v", err)
		}
		if _, err := dec.Token(); err != io.EOF {
			return "", errors.New("more than one JSON value: use json -lines")
		}
	}
	p := path
	if p == "." {
		p = ""
	}
	v := root
	for p != "" {
		m := selector.FindStringSubmatch(p)
		if m == nil {
			return "", fmt.Errorf("bad path at %q: use .name and [index] selectors", p)
		}
		p = p[len(m[0]):]
		if m[1] != "" {
			obj, ok := v.(map[string]any)
			if !ok {
				return "", fmt.Errorf("%s is not an object", m[0])
			}
			if v, ok = obj[m[1]]; !ok {
				return "<missing>", nil
			}
			continue
		}
		arr, ok := v.([]any)
		i, _ := strconv.Atoi(m[2])
		if !ok || i >= len(arr) {
			return "", fmt.Errorf("%s: not an array or index out of range", m[0])
		}
		v = arr[i]
	}
	if length {
		switch x := v.(type) {
		case []any:
			return strconv.Itoa(len(x)), nil
		case map[string]any:
			return strconv.Itoa(len(x)), nil
		case string:
			return strconv.Itoa(len(x)), nil
		}
		return "", errors.New("-len needs an array, object or string")
	}
	if s, ok := v.(string); ok {
		return s, nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// TestJSONAt pins the script command's path language, so a script's json
// assertion means what it says.
func TestJSONAt(t *testing.T) {
	doc := `{"id":"a","rev":3,"steps":[{"id":"s","status":"done"}],"meta":{"k":{"x":[1,2]}},"ok":true,"none":null}`
	cases := []struct {
		path   string
		length bool
		want   string
	}{
		{".id", false, "a"}, {".rev", false, "3"}, {".steps", true, "1"}, {".steps[0].status", false, "done"},
		{".meta.k", false, `{"x":[1,2]}`}, {".meta.k.x", true, "2"}, {".ok", false, "true"}, {".none", false, "null"},
		{".missing", false, "<missing>"}, {".id", true, "1"}, {".", true, "6"},
	}
	for _, tc := range cases {
		if got, err := jsonAt(doc, false, tc.length, tc.path); err != nil || got != tc.want {
			t.Errorf("jsonAt(%s, len=%v) = %q, %v; want %q", tc.path, tc.length, got, err, tc.want)
		}
	}
	if got, err := jsonAt("{\"seq\":1}\n{\"seq\":2}\n", true, false, "[1].seq"); err != nil || got != "2" {
		t.Errorf("lines: %q %v", got, err)
	}
	if got, err := jsonAt("[]\n", false, true, "."); err != nil || got != "0" {
		t.Errorf("empty array length: %q %v", got, err)
	}
	for _, bad := range []string{"{", `{"a":1}{"b":2}`} {
		if _, err := jsonAt(bad, false, false, "."); err == nil {
			t.Errorf("jsonAt(%q) accepted", bad)
		}
	}
	if _, err := jsonAt(doc, false, false, ".steps[5]"); err == nil {
		t.Error("index out of range accepted")
	}
	if _, err := jsonAt(doc, false, true, ".rev"); err == nil {
		t.Error("-len of a number accepted")
	}
}
