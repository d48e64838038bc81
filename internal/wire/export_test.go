package wire

import "encoding/json"

// WritesFast reports whether Append writes v with the generated code
// (not encoding/json), for the tests.
func WritesFast(v any) bool {
	w := writer{ok: true}
	return w.writeAny(v) && w.ok
}

// ReadsFast reports whether Unmarshal reads data into v (a pointer to a
// zero value) with the generated code, for the tests.
func ReadsFast(data []byte, v any) bool {
	r := reader{b: data, ok: true}
	return r.readAny(v) && r.ok && r.i == len(data)
}

// Fallbacks returns how many times fn's calls of Unmarshal fell back to
// encoding/json.
func Fallbacks(fn func()) int {
	n := 0
	defer func(prev func([]byte, any) error) { jsonUnmarshal = prev }(jsonUnmarshal)
	jsonUnmarshal = func(data []byte, v any) error { n++; return json.Unmarshal(data, v) }
	fn()
	return n
}
