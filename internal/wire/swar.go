package wire

// Eight bytes at a time: the reader scans a string's bytes as 64-bit
// words and skips whole a word in which no byte needs a look (the notes of
// a long-lived checkpoint are 8 KiB of text in every state read). Each
// test is exact for "some byte of x is ..." (Bit Twiddling Hacks' haszero
// and hasless, for n <= 128); a word that fails one is read byte by byte
// as before. The writer keeps its byte table: words of eight bytes made it
// faster on lines of 100 bytes and slower on lines of 8, which notes also
// have (BenchmarkNotesJSON).

const (
	lanes = 0x0101010101010101
	highs = 0x8080808080808080
)

// hasByte reports whether a byte of x is c.
func hasByte(x uint64, c byte) bool {
	v := x ^ (lanes * uint64(c))
	return (v-lanes)&^v&highs != 0
}

// hasLess reports whether a byte of x is below n (n <= 128).
func hasLess(x uint64, n byte) bool {
	return (x-lanes*uint64(n))&^x&highs != 0
}

// quietWord reports whether no byte of x ends or escapes a JSON string or
// is a control character: what strBytes looks for.
func quietWord(x uint64) bool {
	return !hasByte(x, '"') && !hasByte(x, '\\') && !hasLess(x, ' ')
}
