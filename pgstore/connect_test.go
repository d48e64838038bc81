package pgstore

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt"
)

// A database that cannot be reached is named once, with the user and
// database the connection string gives and what to check; the error is
// still ckpt.ErrUnavailable for retrying callers.
func TestOpenUnreachableSaysWhereOnce(t *testing.T) {
	_, err := Open(context.Background(), "postgres://bob@127.0.0.1:1/agents?connect_timeout=5")
	if err == nil {
		t.Fatal("opened a database on port 1")
	}
	want := "store unavailable: cannot connect to PostgreSQL at 127.0.0.1:1 as bob, database agents (connection refused): is the server running there, and is the connection string right?"
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}
	if !errors.Is(err, ckpt.ErrUnavailable) {
		t.Errorf("%v is not ErrUnavailable", err)
	}
	if strings.Count(err.Error(), "127.0.0.1") != 1 {
		t.Errorf("the address is repeated: %v", err)
	}
}
