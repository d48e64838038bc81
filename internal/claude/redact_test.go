package claude

import "testing"

// FuzzRedact: the hint check in front of the patterns never changes what
// Redact does: with or without it, the same secrets are replaced.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		"go test ./...", "touch MIGRATED", "",
		"ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwx", "token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
		"Password: hunter2hunter2", "curl https://u:pa55word@example.com", "Authorization: Bearer abcdefghijklmnop1234",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", "AKIAABCDEFGHIJKLMNOP", "AIzaSyA-abcdefghijklmnopqrstuvwxyz0123",
		"xoxb-1234567890-abc", "glpat-abcdefghijklmnop", "lin_api_abcdefghijklmnopqrstuv", "eyJhbGciOi.eyJzdWIiOi.abcdefghij",
		"\u212aey: api_\u212aey=abcdefgh", "ſecret=abcdefgh", "SECRET = 'abcdefg'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Redact(s), redactAll(s); got != want {
			t.Fatalf("Redact(%q) = %q; the patterns alone give %q", s, got, want)
		}
	})
}

// TestRedactLeavesPlainCommands: a command with nothing that looks like a
// secret comes back as it is, and one with a secret is still redacted.
func TestRedactLeavesPlainCommands(t *testing.T) {
	for in, want := range map[string]string{
		"go test -race ./internal/claude":                          "go test -race ./internal/claude",
		"git push origin main":                                     "git push origin main",
		"export GH_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789": "export GH_TOKEN=[redacted]",
		"psql postgres://kai:s3cr3tpw@db/app":                      "psql postgres://[redacted]@db/app",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzFindExitCodeLine: skipping text without "exit" finds the same exit
// code line as the pattern alone.
func FuzzFindExitCodeLine(f *testing.F) {
	for _, s := range []string{"Exit code: 1", "ok\nexit status 2\n", "EXITED WITH CODE -3", "README.md", "", "exİt code 1", "\u212a exit code: 4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, want := findExitCodeLine(s), exitCodeLine.Get().FindStringSubmatch(s)
		if len(got) != len(want) || len(got) > 0 && got[1] != want[1] {
			t.Fatalf("findExitCodeLine(%q) = %q; the pattern finds %q", s, got, want)
		}
	})
}
