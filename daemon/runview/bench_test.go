package runview

import (
	"testing"

	"github.com/abctl/abctl/internal/jsonenc"
)

// The cost of the stored views: BenchmarkEncode is what every write of a
// run adds to the store's work (the view made in its write transaction),
// BenchmarkAppendJSON what a read of the run costs once the store has
// handed the view out, against BenchmarkMarshal, the answer built from the
// record and encoded, which the views save reads from.
//
//	go test ./daemon/runview -run '^$' -bench . -count 5

func BenchmarkEncode(b *testing.B) {
	rec := viewSamples()[0]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(rec); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	view, err := Encode(viewSamples()[0])
	if err != nil {
		b.Fatal(err)
	}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		if buf, err = view.AppendJSON(buf[:0], testAppURL, testFileURL); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshal(b *testing.B) {
	rec := viewSamples()[0]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := jsonenc.Marshal(Response(rec, testAppURL, testFileURL)); err != nil {
			b.Fatal(err)
		}
	}
}
