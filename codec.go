package ckpt

import (
	"encoding/json"
	"sync/atomic"
)

// JSONCodec is a faster JSON codec for the package's own types with
// encoding/json's contract, which NewEvent (an event's payload), Apply (its
// decoding), EncodeLine and DecodeLine (a history line's body) use in place
// of encoding/json once it is installed with SetJSONCodec.
//
// Marshal must return exactly json.Marshal's bytes and error (nil or not)
// for any value. Unmarshal must leave in *v, which the package always passes
// as a pointer to a zero value, exactly what json.Unmarshal leaves, and fail
// exactly when it fails; the error's text may differ only where the package
// does not show it. The package's history lines and their checksums depend
// on the bytes, so a codec that differs corrupts nothing but breaks the
// chain's checks: it must be held to encoding/json by fuzz tests, as
// internal/wire's are.
//
// The root package imports only the standard library, so the codec is
// installed from outside: internal/wire installs its generated one when it
// is linked (every store that writes files links it). Without one,
// encoding/json is used, whose first use of each type is what a short-lived
// process pays for (see docs/design.md, "Start-up").
type JSONCodec struct {
	Marshal   func(v any) ([]byte, error)
	Unmarshal func(data []byte, v any) error
}

var jsonCodec atomic.Pointer[JSONCodec]

// SetJSONCodec installs c for the whole process and returns the codec it
// replaces. A zero JSONCodec (or one with a nil function) means
// encoding/json.
func SetJSONCodec(c JSONCodec) (previous JSONCodec) {
	var p *JSONCodec
	if c.Marshal != nil && c.Unmarshal != nil {
		p = &c
	}
	if old := jsonCodec.Swap(p); old != nil {
		return *old
	}
	return JSONCodec{}
}

func marshalJSON(v any) ([]byte, error) {
	if c := jsonCodec.Load(); c != nil {
		return c.Marshal(v)
	}
	return json.Marshal(v)
}

// unmarshalJSON decodes data into v, a pointer to a zero value.
func unmarshalJSON(data []byte, v any) error {
	if c := jsonCodec.Load(); c != nil {
		return c.Unmarshal(data, v)
	}
	return json.Unmarshal(data, v)
}
