// Package wire is the JSON codec of the domain types (ckpt.Checkpoint,
// ckpt.Summary, ckpt.Event, the event payloads and the types they hold)
// where the stores read and write them: state files, index and journal
// lines, a remote client's spool, `ckpt ls --json`.
//
// Its contract is encoding/json's: Marshal and Append write exactly the
// bytes json.Marshal writes, and Unmarshal reads any input to the value
// json.Unmarshal reads into a zero value, with an error exactly when it
// returns one. Only the cost differs: the root types (Roots) are written,
// and read in the form json.Marshal writes (members in order, no spaces),
// by code generated from their encoding/json tags (codec_*gen.go, by
// package wiregen), with no reflection and none of encoding/json's
// first-use cost, which a short-lived `ckpt update` process would pay in
// full; anything else goes to encoding/json. The root package keeps plain
// types with their tags: a new field needs `go generate ./internal/wire`
// and nothing written by hand here (TestGeneratedCodeIsCurrent fails until
// it is run; TestEveryFieldRoundTrips and the fuzz tests hold the result
// equal to encoding/json).
package wire

//go:generate go test -run ^TestGeneratedCodeIsCurrent$ -update .

import (
	"encoding/json"
	"reflect"

	"github.com/ckpt-dev/ckpt"
)

// Roots returns the types the generated code handles by value or pointer
// (and through them every struct type of the root package they hold): a
// new event payload type goes here, then `go generate ./internal/wire`.
func Roots() []any {
	return []any{
		ckpt.Checkpoint{}, ckpt.Summary{}, ckpt.Event{}, ckpt.Change{},
		ckpt.Created{}, ckpt.Patch{}, ckpt.StatusChange{}, ckpt.StepChange{}, ckpt.DecisionData{},
		ckpt.BlockerChange{}, ckpt.ErrorChange{}, ckpt.AcceptChange{}, ckpt.CycleChange{},
		ckpt.SessionChange{}, ckpt.Takeover{}, ckpt.Restart{}, ckpt.Snapshot{}, ckpt.Note{},
		ckpt.Archive{}, ckpt.CodeState{}, ckpt.Tell{}, ckpt.Delivery{}, ckpt.Signal{}, ckpt.Presence{}, ckpt.PresenceView{},
	}
}

// Marshal returns json.Marshal(v)'s bytes.
func Marshal(v any) ([]byte, error) { return Append(nil, v) }

// Append appends json.Marshal(v)'s bytes to dst. On error dst is returned
// unchanged.
func Append(dst []byte, v any) ([]byte, error) {
	w := writer{b: dst, ok: true}
	if w.writeAny(v) && w.ok {
		return w.b, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// Unmarshal decodes data into *v, which it overwrites whole: the result is
// what json.Unmarshal reads into a zero value (unlike json.Unmarshal,
// nothing of what *v held before is kept, and on error *v holds what
// json.Unmarshal left in a zero value). It shares no memory with data,
// which may be reused or unmapped afterwards.
//
// v may also point to a pointer to a root type (&res.State, a
// **ckpt.Checkpoint): the value is read into a new one, as json.Unmarshal
// does, and a JSON null leaves the pointer nil.
func Unmarshal(data []byte, v any) error {
	target := reflect.ValueOf(v)
	if target.Kind() != reflect.Pointer || target.IsNil() {
		return jsonUnmarshal(data, v) // json.Unmarshal's InvalidUnmarshalError
	}
	target.Elem().SetZero()
	into := v
	var fresh reflect.Value
	if target.Elem().Kind() == reflect.Pointer && string(data) != "null" {
		fresh = reflect.New(target.Elem().Type().Elem())
		into = fresh.Interface()
	}
	r := reader{b: data, ok: true}
	if r.readAny(into) && r.ok && r.i == len(data) {
		if fresh.IsValid() {
			target.Elem().Set(fresh)
		}
		return nil
	}
	target.Elem().SetZero()
	return jsonUnmarshal(data, v)
}

// jsonUnmarshal is encoding/json's, what Unmarshal falls back to (a
// variable so that the tests can count the fallbacks).
var jsonUnmarshal = json.Unmarshal

// DecodePrefix reads one value of a root type (see Roots), in the form
// json.Marshal writes, from the start of data into *v, which it
// overwrites whole, and returns how many bytes it took: *v is then what
// json.Unmarshal(data[:n], v) reads. ok is false when the codec cannot
// read such a value there (*v is then zero): decode with encoding/json.
// It lets a reader take a large member (an answer's state) in one pass
// instead of finding its end first.
func DecodePrefix(data []byte, v any) (n int, ok bool) {
	target := reflect.ValueOf(v)
	if target.Kind() != reflect.Pointer || target.IsNil() {
		return 0, false
	}
	target.Elem().SetZero()
	r := reader{b: data, ok: true}
	if r.readAny(v) && r.ok {
		return r.i, true
	}
	target.Elem().SetZero()
	return 0, false
}

// Compact returns raw as json.Marshal writes a json.RawMessage: compacted,
// with < > & and U+2028/U+2029 escaped; invalid JSON is an error.
func Compact(raw json.RawMessage) ([]byte, error) {
	w := writer{ok: true}
	if w.rawJSON(raw); w.ok {
		return w.b, nil
	}
	return json.Marshal(raw)
}

// The root package's events (NewEvent's payload, Apply's decoding, a
// history line's body) go through this codec in every program that links
// the wire: the bytes and values are encoding/json's, the cost is not.
func init() {
	ckpt.SetJSONCodec(ckpt.JSONCodec{Marshal: Marshal, Unmarshal: Unmarshal})
}
