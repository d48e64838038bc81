package ckpt

// DecodesWithoutReflection reports whether DecodeCheckpointJSON reads data
// itself, for the fuzz tests.
func DecodesWithoutReflection(data []byte) bool {
	_, ok := decodeCheckpointFast(data)
	return ok
}
