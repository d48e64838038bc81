package ckpt

// DecodesWithoutReflection reports whether DecodeCheckpointJSON reads data
// itself, for the fuzz tests.
func DecodesWithoutReflection(data []byte) bool {
	_, ok := decodeCheckpointFast(data)
	return ok
}

// SummaryDecodesWithoutReflection reports whether DecodeSummaryJSON reads
// data itself.
func SummaryDecodesWithoutReflection(data []byte) bool {
	var s Summary
	return decodeSummaryFast(data, &s)
}

// AppendEventJSON is appendEventJSON, for the fuzz tests.
func AppendEventJSON(dst []byte, e *Event) ([]byte, bool) { return appendEventJSON(dst, e) }

// MarshalData and UnmarshalData are the event data codec, for the fuzz
// tests; FastData reports whether UnmarshalData reads data itself.
var MarshalData, UnmarshalData = marshalData, unmarshalData

func FastData(data []byte, v any) bool {
	r := jsonReader{b: data, ok: true}
	switch v.(type) {
	case *Patch:
		r.patch(new(Patch))
	case *StepChange:
		r.stepChange(new(StepChange))
	default:
		return false
	}
	return r.ok && r.i == len(r.b)
}
