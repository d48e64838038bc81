package server

import (
	_ "embed"
	"net/http"
)

// openAPI is the API described in OpenAPI 3.1; docs/api.md says the same
// for people. A test checks that every route of the server is in it.
//
//go:embed openapi.json
var openAPI []byte

// serveOpenAPI serves the description without authentication: it holds
// nothing secret, and clients read it before they have a token.
func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPI)
}
