package httpapi_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
)

// TestErrorsSurviveTheWire: every sentinel of the root package comes back
// from its wire form as an error errors.Is recognises, with its status.
func TestErrorsSurviveTheWire(t *testing.T) {
	sentinels := []error{ckpt.ErrNotFound, ckpt.ErrExists, ckpt.ErrConflict, ckpt.ErrInvalid, ckpt.ErrCorrupt,
		ckpt.ErrNotResumable, ckpt.ErrCycleLimit, ckpt.ErrNoStore, ckpt.ErrUnavailable, ckpt.ErrUnauthenticated, ckpt.ErrForbidden}
	for _, s := range sentinels {
		err := fmt.Errorf("%w: detail", s)
		body, _ := json.Marshal(httpapi.ErrorOf(err))
		status := httpapi.Status(ckpt.ErrorCode(err))
		back := httpapi.DecodeError(status, body)
		if !errors.Is(back, s) || back.Error() != err.Error() {
			t.Errorf("%v came back as %v (status %d)", err, back, status)
		}
		if status < 400 {
			t.Errorf("%v has status %d", s, status)
		}
	}
	ce := &ckpt.ConflictError{ID: "a/b", Want: 3, Have: 5}
	body, _ := json.Marshal(httpapi.ErrorOf(ce))
	var got *ckpt.ConflictError
	if back := httpapi.DecodeError(http.StatusPreconditionFailed, body); !errors.As(back, &got) || *got != *ce {
		t.Errorf("a conflict came back as %v", back)
	}
	de := &ckpt.DamagedError{IDs: []string{"x", "y"}, Err: errors.New("bad line")}
	body, _ = json.Marshal(httpapi.ErrorOf(de))
	var gotD *ckpt.DamagedError
	if back := httpapi.DecodeError(500, body); !errors.As(back, &gotD) || len(gotD.IDs) != 2 || !errors.Is(back, ckpt.ErrCorrupt) {
		t.Errorf("a damaged listing came back as %v", back)
	}
}

// TestForeignErrorBodies: a proxy's page is not an API error; a 502-504 is
// retryable, anything else is not.
func TestForeignErrorBodies(t *testing.T) {
	for status, retry := range map[int]bool{502: true, 503: true, 504: true, 500: false, 404: false, 401: false} {
		err := httpapi.DecodeError(status, []byte("<html>nginx</html>"))
		if ckpt.Retryable(err) != retry {
			t.Errorf("status %d: %v, retryable %v", status, err, ckpt.Retryable(err))
		}
	}
}

func FuzzDecodeError(f *testing.F) {
	f.Add(412, []byte(`{"code":"conflict","message":"m","conflict":{"id":"a","want":1,"have":2}}`))
	f.Add(500, []byte(`{"code":"corrupt","message":"m","ids":["a"]}`))
	f.Add(503, []byte(`<html>`))
	f.Add(400, []byte(`{"code":"nonsense"}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		err := httpapi.DecodeError(status, body)
		if err == nil || err.Error() == "" {
			t.Fatalf("DecodeError(%d, %q) = %v", status, body, err)
		}
	})
}

// TestStatusesAreNetHTTPs: the package names its statuses itself so that it
// links no net/http; they must stay the statuses the server has always
// answered with, and a foreign error's message must word its status as
// net/http does.
func TestStatusesAreNetHTTPs(t *testing.T) {
	want := map[ckpt.Code]int{
		ckpt.CodeNotFound:         http.StatusNotFound,
		ckpt.CodeExists:           http.StatusConflict,
		ckpt.CodeConflict:         http.StatusPreconditionFailed,
		ckpt.CodeInvalid:          http.StatusBadRequest,
		ckpt.CodeCorrupt:          http.StatusInternalServerError,
		ckpt.CodeNotResumable:     http.StatusConflict,
		ckpt.CodeCycleLimit:       http.StatusUnprocessableEntity,
		ckpt.CodeNoStore:          http.StatusServiceUnavailable,
		ckpt.CodeUnavailable:      http.StatusServiceUnavailable,
		ckpt.CodeUnauthenticated:  http.StatusUnauthorized,
		ckpt.CodeForbidden:        http.StatusForbidden,
		ckpt.CodeCanceled:         499,
		ckpt.CodeInternal:         http.StatusInternalServerError,
		ckpt.Code("no_such_code"): http.StatusInternalServerError,
	}
	for code, status := range want {
		if got := httpapi.Status(code); got != status {
			t.Errorf("Status(%s) = %d, want %d", code, got, status)
		}
	}
	for _, status := range []int{200, 400, 401, 403, 404, 405, 408, 409, 412, 413, 422, 429, 500, 501, 502, 503, 504} {
		err := httpapi.DecodeError(status, []byte("<html>"))
		wantMsg := fmt.Sprintf("the server answered %d %s: %q", status, http.StatusText(status), "<html>")
		if err.Error() != wantMsg {
			t.Errorf("status %d: %q, want %q", status, err.Error(), wantMsg)
		}
	}
	if got, want := httpapi.DecodeError(599, []byte("x")).Error(), `the server answered 599: "x"`; got != want {
		t.Errorf("an unnamed status: %q, want %q", got, want)
	}
}
