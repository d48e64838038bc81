package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeWebhooksAndTellOverTheServer: a real ckpt serve with --webhook
// and --webhook-secret posts a signed body when an agent's work becomes
// blocked, counts the delivery in /metrics; ckpt tell with an agent-bound
// token records the token's agent as the sender, and ckpt inbox over the
// server lists the blocked work with its reason.
func TestServeWebhooksAndTellOverTheServer(t *testing.T) {
	bin := ckptBinary(t)
	store := newProcessStore(t, bin)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("hook-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bodies := make(chan string, 10)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m := hmac.New(sha256.New, []byte("hook-secret"))
		m.Write(body)
		if r.Header.Get("X-Ckpt-Signature") != "sha256="+hex.EncodeToString(m.Sum(nil)) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			bodies <- "BAD SIGNATURE " + string(body)
			return
		}
		bodies <- string(body)
	}))
	defer recv.Close()
	srv := startServe(t, bin, store, "127.0.0.1:0", "--webhook", recv.URL+"/ckpt#state=blocked,failed", "--webhook-secret", secret)
	out, code := remoteRun(t, bin, srv.url, srv.admin, "token", "create", "--scope", "write", "--prefix", "kai-7/", "--agent", "kai-lead")
	lead := strings.TrimSpace(out)
	if code != 0 {
		t.Fatalf("token create: %s", out)
	}
	if out, code := remoteRun(t, bin, srv.url, lead, "start", "kai-7/worker", "--title", "Schema"); code != 0 {
		t.Fatalf("start: %s", out)
	}
	if out, code := remoteRun(t, bin, srv.url, lead, "block", "kai-7/worker", "which schema version?"); code != 0 {
		t.Fatalf("block: %s", out)
	}
	select {
	case b := <-bodies:
		var e struct{ ID, To, Reason, Status string }
		if json.Unmarshal([]byte(b), &e) != nil || e.ID != "kai-7/worker" || e.To != "blocked" || e.Reason != "b1: which schema version?" {
			t.Fatalf("webhook body %s", b)
		}
	case <-time.After(time.Minute):
		t.Fatal("no webhook within a minute of the block")
	}
	out, code = remoteRun(t, bin, srv.url, srv.admin, "inbox", "--json")
	if code != 0 || !strings.Contains(out, `"state": "blocked"`) || !strings.Contains(out, `"reason": "b1: which schema version?"`) {
		t.Fatalf("inbox over the server: exit %d: %s", code, out)
	}
	// Telling with the lead's token: the sender is the token's agent, not
	// the claimed CKPT_AGENT.
	if out, code := remoteRun(t, bin, srv.url, lead, "tell", "kai-7/worker", "use version 2"); code != 0 || !strings.Contains(out, "message m3 from kai-lead") {
		t.Fatalf("tell over the server: exit %d: %s", code, out)
	}
	if out, code := remoteRun(t, bin, srv.url, lead, "tell", "other/x", "hi"); code == 0 {
		t.Errorf("a kai-7/ token told other/x: %s", out)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.url+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+srv.admin)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(metrics), `ckpt_webhook_deliveries_total{result="delivered"} 1`) {
		t.Errorf("/metrics lacks the delivery:\n%s", grepLines(string(metrics), "webhook"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
