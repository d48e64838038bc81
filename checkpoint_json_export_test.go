package ckpt

// DecodesWithoutReflection reports whether DecodeCheckpointJSON reads data
// itself, for the fuzz tests.
func DecodesWithoutReflection(data []byte) bool {
	_, ok := decodeCheckpointFast(data)
	return ok
}

// AppendEventJSON is appendEventJSON, for the fuzz tests.
func AppendEventJSON(dst []byte, e *Event) ([]byte, bool) { return appendEventJSON(dst, e) }
