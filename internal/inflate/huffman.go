package inflate

import (
	"errors"
	"math/bits"
)

// A decoding table maps the next bits of the stream (least significant
// first, as deflate packs its codes) to an entry: how many bits the code
// takes, what the symbol is, and its extra bits. Codes longer than the
// table's primary bits go through a subtable the primary entry points to,
// indexed by the bits after the primary ones. One lookup answers most
// symbols; the tables are laid out in fixed arrays so that masking an
// index bounds it.
//
// An entry (uint32):
//
//	bits 0-4    the bits to consume (for a subtable pointer: the primary bits)
//	bits 5-7    the kind: a literal, a length, the end of the block, a
//	            subtable pointer, or a code no symbol has
//	bits 8-12   the extra bits after the code (a subtable pointer: its bits)
//	bits 16-31  the value: the literal, the length or distance base, the
//	            subtable's start
const (
	kindLit  = 0 << 5
	kindLen  = 1 << 5
	kindEnd  = 2 << 5
	kindSub  = 3 << 5
	kindBad  = 4 << 5
	kindMask = 7 << 5
)

const (
	litBits  = 11
	distBits = 8
	// litSize holds the primary table and the largest set of subtables:
	// at most 288 codes longer than litBits, each a subtable of at most
	// 1<<(15-litBits) entries.
	litSize  = 1 << 13
	distSize = 1 << 13
	clenBits = 7 // code length codes are at most 7 bits: no subtables
)

var (
	errOversubscribed = errors.New("invalid Huffman code: oversubscribed")
	errIncomplete     = errors.New("invalid Huffman code: incomplete")
)

var lengthBase = [...]uint32{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
var lengthExtra = [...]uint32{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
var distBase = [...]uint32{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
var distExtra = [...]uint32{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}

// litSyms, distSyms and clenSyms are each symbol's entry, without the
// bits it takes.
var litSyms, distSyms, clenSyms [288]uint32

// fixedLit and fixedDist are the tables of the fixed codes (BTYPE 01).
var fixedLit [litSize]uint32
var fixedDist [distSize]uint32

func init() {
	for s := range litSyms {
		switch {
		case s < 256:
			litSyms[s] = kindLit | uint32(s)<<16
		case s == 256:
			litSyms[s] = kindEnd
		case s < 286:
			litSyms[s] = kindLen | lengthExtra[s-257]<<8 | lengthBase[s-257]<<16
		default:
			litSyms[s] = kindBad
		}
		if s < 30 {
			distSyms[s] = kindLen | distExtra[s]<<8 | distBase[s]<<16
		} else {
			distSyms[s] = kindBad
		}
		clenSyms[s] = kindLit | uint32(s)<<16
	}
	var lens [288]uint8
	for s := range lens {
		switch {
		case s < 144:
			lens[s] = 8
		case s < 256:
			lens[s] = 9
		case s < 280:
			lens[s] = 7
		default:
			lens[s] = 8
		}
	}
	if build(fixedLit[:], litBits, lens[:], litSyms[:]) != nil {
		panic("inflate: the fixed literal code")
	}
	for s := range 30 {
		lens[s] = 5
	}
	// Distance codes 30 and 31 have fixed codes but no meaning.
	lens[30], lens[31] = 5, 5
	if build(fixedDist[:], distBits, lens[:32], distSyms[:]) != nil {
		panic("inflate: the fixed distance code")
	}
}

// build fills table (primary bits, then subtables) with the canonical
// Huffman code of the code lengths lens, symbol s's entry being syms[s].
// Like zlib, it refuses an oversubscribed code, and an incomplete one
// unless it is a single code of one bit; a code of no symbols gives a
// table whose every entry is bad (an error only if the block uses it).
// (Like compress/flate; zlib also refuses a single code of one bit for
// the code length code, which no encoder writes.)
func build(table []uint32, primary uint, lens []uint8, syms []uint32) error {
	var count [16]int
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	maxLen := 0
	left := 1
	for l := 1; l < 16; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return errOversubscribed
		}
		if count[l] > 0 {
			maxLen = l
		}
	}
	if left > 0 && maxLen > 1 {
		return errIncomplete
	}
	for i := range 1 << primary {
		table[i] = kindBad
	}
	var next [16]uint32
	code := uint32(0)
	for l := 1; l < 16; l++ {
		code = (code + uint32(count[l-1])) << 1
		next[l] = code
	}
	subBits := uint(0)
	if uint(maxLen) > primary {
		subBits = uint(maxLen) - primary
	}
	free := uint32(1) << primary
	mask := uint32(1)<<primary - 1
	for s, l := range lens {
		if l == 0 {
			continue
		}
		r := bits.Reverse32(next[l]) >> (32 - uint(l))
		next[l]++
		if uint(l) <= primary {
			e := syms[s] | uint32(l)
			for j := r; j < 1<<primary; j += 1 << l {
				table[j] = e
			}
			continue
		}
		p := r & mask
		if table[p]&kindMask != kindSub {
			table[p] = kindSub | uint32(subBits)<<8 | free<<16 | uint32(primary)
			free += 1 << subBits
			if int(free) > len(table) {
				return errOversubscribed // cannot happen for a valid code
			}
		}
		start := table[p] >> 16
		e := syms[s] | (uint32(l) - uint32(primary))
		for j := r >> primary; j < 1<<subBits; j += 1 << (uint(l) - primary) {
			table[start+j] = e
		}
	}
	return nil
}
