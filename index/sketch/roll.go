package sketch

import (
	"math/bits"
	"slices"
)

// fillPerSlot sets when Compute's main loop stops updating the MinHash
// slots unconditionally and starts filtering by their largest value (see
// roller.rollPow2): after fillPerSlot*MinHashK shingles.
const fillPerSlot = 64

// roller is the working state of Compute: the MinHash slots, the SimHash
// state, and the tables and buffers of its main loop for a power-of-two
// SampleN (rollPow2), which rolls the shingle hash, samples and fills the
// slots. It is reused by later calls to Compute with the same Sketch.
type roller struct {
	// inTab is buzTable, here so that both tables share a base register.
	inTab [256]uint64
	// outTab[c] is buzTable[c] already rotated as it must be when byte c
	// leaves the window: one table load instead of a load and a rotation
	// by a variable count (which ties up the CX register).
	outTab [256]uint64
	// buf receives the samples of one block; rollPow2Vec's groups store
	// eight values past the last sample.
	buf [block + 8]uint32
	// tv and pend are rollPow2Vec's: the table values of a block's
	// bytes, and the shingles that may lower their slot.
	tv, pend []uint64
	// slots are the MinHash slots.
	slots []uint64
	// sim is the SimHash state.
	sim simState
	// w is the window outTab was made for, 0 before the first use.
	w int
	// mask is SampleN-1 shifted to the sampling bits, k is MinHashK, and
	// no slot is above top (once rollTop runs).
	mask, k, top uint64
}

// init prepares the tables for window w.
func (r *roller) init(w int) {
	if r.w == w {
		return
	}
	r.inTab = buzTable
	for c, v := range buzTable {
		r.outTab[c] = bits.RotateLeft64(v, w%64)
	}
	r.w = w
}

// rollPow2 rolls the shingle hash h (that of text[:w], already visited)
// over the rest of text, visiting every later shingle as visit does with a
// power-of-two SampleN, into r.slots and samples, which it returns
// extended. len(text) must be more than p.Window.
//
// Sampling keeps one shingle in SampleN at random, so an "if sampled"
// branch would be mispredicted about once per sample. Instead every
// shingle's sample is written to the next free place of a buffer and the
// fill count advances only when it is kept (by 0 or 1); the buffer is
// appended every block shingles, so it never needs more than block places.
//
// The slots are updated in two ways, which give the same result. The
// first fillPerSlot*MinHashK shingles lower their slot to their value
// without a branch (rollMin). After that, a shingle can only lower a slot
// if its value is below the largest value of all slots, top, which by then
// is low: only about ln(K)/fillPerSlot of the shingles are below it, and
// fewer and fewer as the text goes on. So rollTop tests v < top first, a
// branch that is nearly always predicted, and skips the slot for nearly
// every shingle; top is recomputed whenever the slot holding it is
// lowered. Testing top from the start would take the slot path for every
// shingle until every slot is filled, and then for most of them for a
// while: about ln(K)*K/i of the shingles around the i-th, each a
// mispredicted branch.
func (r *roller) rollPow2(p Params, text []byte, h uint64, samples []uint32) []uint32 {
	w := p.Window
	r.init(w)
	r.mask, r.k = uint64(p.SampleN-1)<<8, uint64(p.MinHashK)
	fillEnd := w + fillPerSlot*p.MinHashK
	top := false
	for i := w; i < len(text); i += block {
		end := min(i+block, len(text))
		out, in := text[i-w:end-w], text[i:end]
		var nb int
		if i < fillEnd {
			h, nb = r.rollMin(out, in, h, 0)
		} else {
			if !top {
				r.top = slices.Max(r.slots)
				top = true
			}
			for x := 0; x < len(in); {
				var lowered bool
				if h, x, nb, lowered = r.rollTop(out, in, x, nb, h); lowered {
					// The top slot (or one of several equal to it)
					// was lowered.
					r.top = slices.Max(r.slots)
				}
			}
		}
		samples = append(samples, r.buf[:nb]...)
	}
	return samples
}

// rollMin is the main loop over at most block shingles, updating every
// shingle's slot without a branch: in are the bytes entering the window
// and out those leaving it (as long as in). nb samples are in r.buf
// already. It returns the rolling hash and the number of samples in r.buf.
func (r *roller) rollMin(out, in []byte, h uint64, nb int) (uint64, int) {
	// mask and k are read from r in the loop, which has no register to
	// spare for them.
	slots := r.slots
	out = out[:len(in)] // proves out[x] in range below
	for x, c := range in {
		// The table values are combined first, so that the loop-carried
		// dependency is one rotation and one XOR.
		h = bits.RotateLeft64(h, 1) ^ (r.outTab[out[x]] ^ r.inTab[c])
		y := (h ^ h>>29) * 0xbf58476d1ce4e5b9 // spread(h) is y ^ y>>32
		v := y >> 32                          // spread(h)>>32, the value
		g := y ^ v                            // spread(h)
		r.buf[nb] = uint32(v)                 // nb <= x < block+8
		nb += int(b2u(g&r.mask == 0))
		j := uint64(uint32(g)) * r.k >> 32
		slots[j] = min(slots[j], v)
	}
	return h, nb
}

// rollTop is rollMin from in[x] on, with nb samples in r.buf, testing each
// shingle's value against r.top before its slot. It returns just after a
// shingle that lowered the slot holding r.top, with the rolling hash, the
// position after that shingle, the number of samples and true, for the
// caller to recompute r.top; or at the end of in. It calls nothing, so
// that its values can all stay in registers.
func (r *roller) rollTop(out, in []byte, x, nb int, h uint64) (_ uint64, _, _ int, lowered bool) {
	top, mask := r.top, r.mask
	out = out[:len(in)]
	for x < len(in) {
		h = bits.RotateLeft64(h, 1) ^ (r.outTab[out[x]] ^ r.inTab[in[x]])
		x++
		y := (h ^ h>>29) * 0xbf58476d1ce4e5b9
		v := y >> 32
		r.buf[nb] = uint32(v)
		nb += int(b2u((y^v)&mask == 0))
		if v < top {
			// Rare once top is low: the slot is read only here.
			slots := r.slots
			j := uint64(uint32(y^v)) * r.k >> 32
			if old := slots[j]; v < old {
				slots[j] = v
				if old == top {
					return h, x, nb, true
				}
			}
		}
	}
	return h, x, nb, false
}

// readStep is how many shingles rollPow2Vec has rollVec roll over at a
// time while it reads the slots, a multiple of 8: the slots it keeps
// shingles by are those before the step, and short texts are mostly
// their first steps.
const readStep = 256

// rollPow2Vec is rollPow2 eight shingles at a time, with AVX-512 (see
// haveVec); it gives the same samples and slots. Compute calls it instead
// of rollPow2 when haveVec is set. Samples are sorted
// afterwards and a slot keeps its minimum, so the order in which shingles
// are visited does not matter, only that each is visited once.
//
// The scalar loop is bound by its instruction count, about 30 per
// shingle. Here, for each block, buzGather first looks up the table value
// of every byte from the window's start (tv[x] = buzTable[text[i-w+x]]),
// eight lookups per instruction; a shingle's outgoing byte's value is
// then tv[x] rotated by w and its incoming one tv[x+w], so one lookup per
// byte serves both. rollVec then rolls the hash over eight shingles at
// once (a prefix of rotations and XORs across the lanes), spreads them
// with a lane multiply, stores the sampled values with a compressing
// store, reads the eight shingles' slots with one gather and keeps, in
// pend, only the shingles below their slot. Its loop has no branch but
// its own; the few kept are applied to the slots after the block. The
// slots read are those before the block, never below the slots' values
// once pend is applied, so no shingle that lowers its slot is dropped.
// After fillPerSlot*MinHashK shingles (see rollPow2), when the slots are
// low, it compares with their largest value, top, instead of reading
// them: cheaper, and only a few more shingles are kept.
// The last shingles of a block, fewer than eight, go through rollMin.
//
// It also hashes the text's words into r.sim (which the caller begins and
// sums), with the table values it has looked up: a gather costs more than
// the rest of wordVec's work on a group.
func (r *roller) rollPow2Vec(p Params, text []byte, h uint64, samples []uint32) []uint32 {
	w := p.Window
	r.init(w)
	r.mask, r.k = uint64(p.SampleN-1)<<8, uint64(p.MinHashK)
	if cap(r.tv) < block+w {
		r.tv = make([]uint64, block+w)
	}
	if r.pend == nil {
		r.pend = make([]uint64, block)
	}
	tv, pend, slots := r.tv[:cap(r.tv)], r.pend[:block], r.slots
	fillEnd := w + fillPerSlot*p.MinHashK
	var top uint64 // 0 until fillEnd: rollVec reads the slots
	for i := w; i < len(text); i += block {
		end := min(i+block, len(text))
		n := end - i
		// The table values of text[i-w:end].
		src := text[i-w : end]
		g := len(src) &^ 7
		buzGather(&src[0], g, &r.inTab, &tv[0])
		for x := g; x < len(src); x++ {
			tv[x] = r.inTab[src[x]]
		}
		v := n &^ 7 // shingles rolled eight at a time
		// While rollVec reads the slots, it does so a part of the block
		// at a time, lowering them in between: the slots read at the
		// start of a block of a text's first thousand shingles are
		// mostly empty, and would keep nearly all of them.
		step := v
		if i < fillEnd {
			step = readStep
		} else if v > 0 {
			// (Never 0: every slot is filled by now, in all but texts
			// of one repeated shingle, and then 0 only means reading
			// the slots.)
			top = slices.Max(slots)
		}
		nb := 0
		for x := 0; x < v; x += step {
			var np int
			h, nb, np = rollVec(&tv[x], min(step, v-x), w, h, &slots[0], r.k, r.mask, &r.buf[0], nb, &pend[0], top)
			for _, g := range pend[:np] {
				j := uint64(uint32(g)) * r.k >> 32
				slots[j] = min(slots[j], g>>32)
			}
		}
		if i == w {
			r.sim.addVec(text[:w], tv[:w], false)
		}
		r.sim.addVec(text[i:end], tv[w:w+n], end == len(text))
		h, nb = r.rollMin(text[i-w+v:end-w], text[i+v:end], h, nb)
		samples = append(samples, r.buf[:nb]...)
	}
	return samples
}
