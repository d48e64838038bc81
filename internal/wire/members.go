package wire

// Members reads data as one JSON object in the form json.Marshal writes
// (no spaces; keys without escapes, among keys in their order, each at
// most once) and returns the bytes of each member's value by its key's
// position in keys (nil when absent), each checked to be JSON. ok is
// false for anything else (another form, invalid JSON, a key not in
// keys): decode such data with encoding/json. It lets a reader pick the
// parts of an answer it gives to the generated code, without encoding/json
// scanning the whole answer first.
func Members(data []byte, keys ...string) (raw [][]byte, ok bool) {
	out := make([][]byte, len(keys))
	r := reader{b: data, ok: true}
	r.object(keys, func(k string) {
		v := r.value(0)
		for i := range keys {
			if keys[i] == k {
				out[i] = v
			}
		}
	})
	if !r.ok || r.i != len(data) {
		return nil, false
	}
	return out, true
}
