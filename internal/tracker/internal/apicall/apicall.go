// Package apicall sends one JSON request to an issue tracker's API and turns
// transport failures into *tracker.Error values. It is shared by the GitHub
// and Linear trackers and is no part of the public API.
package apicall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/tracker"
)

// MaxResponse is the most of a response body that is read; a comment's JSON
// is a few kilobytes.
const MaxResponse = 1 << 20

// Caller sends requests for one service.
type Caller struct {
	Service string        // "GitHub" or "Linear", for error messages
	Client  *http.Client  // never nil
	Timeout time.Duration // the budget of the whole operation, for messages
	Header  http.Header   // sent with every request (authorization, accept…)
}

// New returns the Caller for service with its defaults applied: a nil client
// means a new http.Client, a timeout of zero or less tracker.DefaultTimeout.
func New(service string, client *http.Client, timeout time.Duration, header http.Header) Caller {
	if timeout <= 0 {
		timeout = tracker.DefaultTimeout
	}
	if client == nil {
		client = &http.Client{}
	}
	return Caller{Service: service, Client: client, Timeout: timeout, Header: header}
}

// CheckURL returns nil when raw is an absolute http(s) URL with a host, and
// otherwise an error wrapping ckpt.ErrInvalid that names service and ends
// "give an http(s) URL such as " + examples.
func CheckURL(service, raw, examples string) error {
	if u, err := url.Parse(raw); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%w: %s API URL %q: give an http(s) URL such as %s", ckpt.ErrInvalid, service, raw, examples)
	}
	return nil
}

// Response is an HTTP answer, whatever its status.
type Response struct {
	Status int
	Body   []byte
}

// Do sends method url with payload as JSON (nil: no body) and returns the
// answer whatever its status. It fails only when no complete answer arrived:
// a *tracker.Error of KindTimeout when ctx's deadline passed, KindUnreachable
// for any other transport failure; a cancelled ctx is returned as it is.
func (c *Caller) Do(ctx context.Context, op, method, url string, payload any) (Response, error) {
	var body io.Reader
	if payload != nil {
		b, err := json.Marshal(payload)
		if err != nil {
			return Response{}, fmt.Errorf("%s %s: encoding the request: %w", c.Service, op, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return Response{}, &tracker.Error{Service: c.Service, Op: op, Kind: tracker.KindUnreachable, Message: err.Error(), Err: err,
			Hint: "check the configured API URL"}
	}
	for k, vs := range c.Header {
		req.Header[k] = vs
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Client.Do(req)
	if err != nil {
		return Response{}, c.transportError(ctx, op, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponse))
	if err != nil {
		return Response{}, c.transportError(ctx, op, err)
	}
	return Response{Status: resp.StatusCode, Body: data}, nil
}

func (c *Caller) transportError(ctx context.Context, op string, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return fmt.Errorf("%s %s: %w", c.Service, op, ctx.Err())
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return &tracker.Error{Service: c.Service, Op: op, Kind: tracker.KindTimeout, Timeout: c.Timeout, Message: err.Error(), Err: err}
	}
	msg := err.Error()
	var oe *net.OpError
	if errors.As(err, &oe) {
		msg = oe.Error()
	}
	return &tracker.Error{Service: c.Service, Op: op, Kind: tracker.KindUnreachable, Message: msg, Err: err}
}
