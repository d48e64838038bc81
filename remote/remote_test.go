package remote_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/internal/pgtest"
	"github.com/ckpt-dev/ckpt/internal/server"
	"github.com/ckpt-dev/ckpt/memstore"
	"github.com/ckpt-dev/ckpt/pgstore"
	"github.com/ckpt-dev/ckpt/remote"
	"github.com/ckpt-dev/ckpt/storetest"
)

var cluster pgtest.Cluster

func TestMain(m *testing.M) { pgtest.Main(m, &cluster) }

// served is a backend behind an in-process ckpt serve, with an admin token.
type served struct {
	backend ckpt.Store
	srv     *server.Server
	http    *httptest.Server
	tokens  *server.FileTokens
	admin   string
}

// serve starts a server over backend, closed when the test ends.
func serve(t testing.TB, backend ckpt.Store) *served {
	t.Helper()
	tokens, err := server.OpenFileTokens(filepath.Join(t.TempDir(), server.TokenFileName))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := server.Bootstrap(context.Background(), tokens, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(backend, server.Options{Tokens: tokens, Keepalive: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		backend.Close()
	})
	return &served{backend: backend, srv: srv, http: hs, tokens: tokens, admin: admin}
}

// client opens a remote store on s with token.
func (s *served) client(t testing.TB, token string) ckpt.Store {
	t.Helper()
	st, err := remote.Open(context.Background(), s.http.URL, remote.Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestConformanceOverMemstore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) ckpt.Store {
		s := serve(t, memstore.New())
		return s.client(t, s.admin)
	})
}

func newFileStore(t testing.TB) *filestore.Store {
	t.Helper()
	fs, err := filestore.Init(filepath.Join(t.TempDir(), filestore.StoreDirName), filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestConformanceOverFilestore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) ckpt.Store {
		s := serve(t, newFileStore(t))
		return s.client(t, s.admin)
	})
}

// newPGStore opens a pgstore on a fresh database of the test cluster.
func newPGStore(t testing.TB) *pgstore.Store {
	t.Helper()
	cluster.Need(t)
	st, err := pgstore.Open(context.Background(), cluster.DSN(cluster.NewDatabase(t)))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestConformanceOverPGStore(t *testing.T) {
	t.Parallel()
	cluster.Need(t)
	storetest.Run(t, func(t *testing.T) ckpt.Store {
		s := serve(t, newPGStore(t))
		return s.client(t, s.admin)
	})
}
