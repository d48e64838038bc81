package wire

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
