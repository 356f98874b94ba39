package sketch

import "testing"

func BenchmarkMicroMinVec(b *testing.B) {
	text := longText(1, 4096)
	var r roller
	r.init(20)
	r.slots = make([]uint64, 128)
	for i := range r.slots { r.slots[i] = empty }
	tv := make([]uint64, 2048); pend := make([]uint64, 1024)
	buzGather(&text[0], 1024+24, &r.inTab, &tv[0])
	b.SetBytes(1024)
	for b.Loop() {
		rollVec(&tv[0], 1024, 20, 1, &r.slots[0], 128, 15<<8, &r.buf[0], 0, &pend[0])
	}
}

func BenchmarkMicroGather(b *testing.B) {
	text := longText(1, 4096)
	var r roller
	r.init(20)
	tv := make([]uint64, 2048)
	b.SetBytes(1024)
	for b.Loop() {
		buzGather(&text[0], 1024, &r.inTab, &tv[0])
	}
}

func BenchmarkMicroRollMin(b *testing.B) {
	text := longText(1, 4096)
	var r roller
	r.init(20)
	r.mask, r.k = 15<<8, 128
	r.slots = make([]uint64, 128)
	for i := range r.slots { r.slots[i] = empty }
	b.SetBytes(1024)
	for b.Loop() {
		r.rollMin(text[:1024], text[20:1044], 1, 0)
	}
}
