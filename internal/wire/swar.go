package wire

// Eight bytes at a time: the reader scans a string's bytes as 64-bit
// words and skips whole a word in which no byte needs a look (the notes of
// a long-lived checkpoint are 8 KiB of text in every state read). Each
// test is exact for "some byte of x is ..." (Bit Twiddling Hacks' haszero
// and hasless, for n <= 128); a word that fails one is read byte by byte
// as before. The writer reads words only once a string has shown a long
// run of plain bytes (writer.str).

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

// wordsAfter is the run of plain bytes after which the writer reads a
// string's later runs a word at a time.
const wordsAfter = 32

// load8 returns the first 8 bytes of s (at least 8 long) as a
// little-endian word: one load once compiled.
func load8(s string) uint64 {
	s = s[:8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// plainWord reports whether every byte of x is one json.Marshal writes as
// it is in a string (plainASCII). The five escaped printable bytes take
// three tests: setting bit 2 maps '"' (0x22) and '&' (0x26), and no other
// byte, to '&'; setting bit 1 maps '<' (0x3c) and '>' (0x3e) to '>'.
func plainWord(x uint64) bool {
	return x&highs == 0 && !hasLess(x, ' ') && !hasByte(x|lanes*0x04, '&') &&
		!hasByte(x|lanes*0x02, '>') && !hasByte(x, '\\')
}

// plainPrefix returns how many bytes at the start of s are plainASCII.
func plainPrefix(s string) int {
	i := 0
	for ; i+8 <= len(s) && plainWord(load8(s[i:])); i += 8 {
	}
	for ; i < len(s) && s[i] < 0x80 && plainASCII[s[i]]; i++ {
	}
	return i
}
