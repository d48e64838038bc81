package server

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestEveryRouteIsDocumented: each JSON endpoint is in openapi.json with
// its method.
func TestEveryRouteIsDocumented(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	s := &Server{}
	for _, rt := range s.apiRoutes() {
		path := strings.ReplaceAll(rt.path, "{id...}", "{id}")
		if _, ok := doc.Paths[path][strings.ToLower(rt.method)]; !ok {
			t.Errorf("%s %s is served but not in openapi.json", rt.method, path)
		}
	}
	for _, p := range []string{"/v1/changes", "/mcp", "/metrics", "/healthz", "/readyz", "/openapi.json"} {
		if doc.Paths[p] == nil {
			t.Errorf("%s is served but not in openapi.json", p)
		}
	}
}
