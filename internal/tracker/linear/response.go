package linear

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ckpt-dev/ckpt/internal/tracker"
)

// errEntityNotFound marks a GraphQL error saying the referenced entity (for
// commentUpdate: the comment) does not exist.
var errEntityNotFound = errors.New("linear: entity not found")

func notFound(err error) bool { return errors.Is(err, errEntityNotFound) }

// gqlError is one entry of a GraphQL response's "errors". Linear adds
// extensions.type (e.g. "authentication_error", "invalid input") and
// extensions.userPresentableMessage.
type gqlError struct {
	Message    string `json:"message"`
	Extensions struct {
		Type                   string `json:"type"`
		Code                   string `json:"code"`
		UserPresentableMessage string `json:"userPresentableMessage"`
	} `json:"extensions"`
}

type gqlErrors []gqlError

// message is the first error's message (with Linear's user-facing text when
// it adds something) on one line, noting how many more there were.
func (es gqlErrors) message() string {
	if len(es) == 0 {
		return ""
	}
	m := oneLine(es[0].Message)
	if u := oneLine(es[0].Extensions.UserPresentableMessage); u != "" && !strings.Contains(m, u) {
		if m == "" {
			m = u
		} else {
			m += " — " + u
		}
	}
	if m == "" {
		m = "unspecified GraphQL error"
	}
	if len(es) > 1 {
		m += fmt.Sprintf(" (and %d more)", len(es)-1)
	}
	return cut(m, 300)
}

// sentinel returns errEntityNotFound when an error says an entity was not
// found, else nil.
func (es gqlErrors) sentinel() error {
	for _, e := range es {
		if strings.Contains(strings.ToLower(e.Message), "entity not found") || strings.EqualFold(e.Extensions.Code, "NOT_FOUND") {
			return errEntityNotFound
		}
	}
	return nil
}

// authentication reports whether an error says the API key was refused.
func (es gqlErrors) authentication() bool {
	for _, e := range es {
		if strings.EqualFold(e.Extensions.Type, "authentication_error") || strings.EqualFold(e.Extensions.Code, "AUTHENTICATION_ERROR") || strings.EqualFold(e.Extensions.Code, "UNAUTHENTICATED") {
			return true
		}
	}
	return false
}

// parseResponse reads a GraphQL response body. It returns the errors when
// there are any; otherwise data.<field>, which must be present and not null.
// A body that is not a JSON object is an error.
func parseResponse(body []byte, field string) (json.RawMessage, gqlErrors, error) {
	var v struct {
		Data   map[string]json.RawMessage `json:"data"`
		Errors gqlErrors                  `json:"errors"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, nil, fmt.Errorf("the response is not GraphQL JSON: %v", err)
	}
	if len(v.Errors) > 0 {
		return nil, v.Errors, nil
	}
	d, ok := v.Data[field]
	if !ok || string(d) == "null" {
		return nil, nil, fmt.Errorf("the response has no data.%s", field)
	}
	return d, nil, nil
}

// parseCommentPayload reads a CommentPayload ({success, comment {id url}}).
func parseCommentPayload(data json.RawMessage) (tracker.Comment, error) {
	var p struct {
		Success bool `json:"success"`
		Comment *struct {
			ID  string `json:"id"`
			URL string `json:"url"`
		} `json:"comment"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return tracker.Comment{}, fmt.Errorf("comment payload: %v", err)
	}
	if !p.Success {
		return tracker.Comment{}, errors.New("Linear reported success: false")
	}
	if p.Comment == nil || strings.TrimSpace(p.Comment.ID) == "" {
		return tracker.Comment{}, errors.New("comment payload has no comment id")
	}
	return tracker.Comment{ID: p.Comment.ID, URL: p.Comment.URL}, nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
