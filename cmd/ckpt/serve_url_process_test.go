package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestServeAllInterfacesPrintsAUsableURL: `ckpt serve --addr 0.0.0.0:0`
// says it listens on all interfaces and prints http://localhost:PORT, a URL
// that answers, not http://0.0.0.0:PORT or [::].
func TestServeAllInterfacesPrintsAUsableURL(t *testing.T) {
	bin := ckptBinary(t)
	store := newProcessStore(t, bin)
	cmd := exec.Command(bin, "serve", "--addr", "0.0.0.0:0", "--store", store)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	rd := bufio.NewReader(errPipe)
	var lines []string
	serving := regexp.MustCompile(`^ckpt serve: serving (http://localhost:\d+) \(`)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("ckpt serve ended before listening: %v; stderr:\n%s", err, strings.Join(lines, ""))
		}
		lines = append(lines, line)
		m := serving.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		go io.Copy(io.Discard, rd)
		all := strings.Join(lines, "")
		if !regexp.MustCompile(`ckpt serve: listening on all interfaces \((0\.0\.0\.0|\[::\]):\d+\)`).MatchString(all) {
			t.Errorf("no word about listening on all interfaces:\n%s", all)
		}
		if strings.Contains(all, "://0.0.0.0") || strings.Contains(all, "://[::]") {
			t.Errorf("an unusable URL was printed:\n%s", all)
		}
		resp, err := http.Get(m[1] + "/healthz")
		if err != nil {
			t.Fatalf("the printed URL does not answer: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s/healthz: %d", m[1], resp.StatusCode)
		}
		return
	}
}
