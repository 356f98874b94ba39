#include "textflag.h"

// The rotation counts 1 to 8 of the eight lanes: lane l of a group holds
// the shingle l+1 steps after the one before the group.
DATA rotv<>+0x00(SB)/8, $1
DATA rotv<>+0x08(SB)/8, $2
DATA rotv<>+0x10(SB)/8, $3
DATA rotv<>+0x18(SB)/8, $4
DATA rotv<>+0x20(SB)/8, $5
DATA rotv<>+0x28(SB)/8, $6
DATA rotv<>+0x30(SB)/8, $7
DATA rotv<>+0x38(SB)/8, $8
GLOBL rotv<>(SB), RODATA|NOPTR, $64

// The rotation counts 5 to 40 of the eight lanes of a word hash group.
DATA rot5<>+0x00(SB)/8, $5
DATA rot5<>+0x08(SB)/8, $10
DATA rot5<>+0x10(SB)/8, $15
DATA rot5<>+0x18(SB)/8, $20
DATA rot5<>+0x20(SB)/8, $25
DATA rot5<>+0x28(SB)/8, $30
DATA rot5<>+0x30(SB)/8, $35
DATA rot5<>+0x38(SB)/8, $40
GLOBL rot5<>(SB), RODATA|NOPTR, $64

// GROUP rolls the hash over the eight shingles of the group at SI, and
// leaves their values (spread(h)>>32) in Z4 and their spread hashes in Z5,
// and appends the sampled values to buf. It uses rollVec's registers:
//
//	SI  the group's out values, tv[x:x+8]; R11 8w, from those to the in ones
//	R8  buf, R9 the number of samples in it
//	Z8  the rolling hash before the group, in every lane
//	Z16 the rotation counts 1 to 8, Z17 w%64 in every lane, Z18 zero
//	Z19 spread's multiplier, Z20 the sampling mask, Z22 7, in every lane
//
// The group's hashes follow h[l] = rotl(h[l-1], 1) ^ d[l], with
// d[l] = rotl(tab[out[l]], w) ^ tab[in[l]]. So
// h[l] = rotl(h[-1], l+1) ^ D[l], where D[l] is the XOR of rotl(d[m], l-m)
// for m <= l: a prefix computed in three steps of one, two and four lanes
// (VALIGNQ shifts the lanes up, filling with zero), each rotating what it
// shifts in by as many bits as lanes.
#define GROUP \
	VMOVDQU64  (SI), Z0; \
	VMOVDQU64  (SI)(R11*1), Z1; \
	VPROLVQ    Z17, Z0, Z0; \
	VPXORQ     Z1, Z0, Z0; \
	VALIGNQ    $7, Z18, Z0, Z1; \
	VPROLQ     $1, Z1, Z1; \
	VPXORQ     Z1, Z0, Z0; \
	VALIGNQ    $6, Z18, Z0, Z1; \
	VPROLQ     $2, Z1, Z1; \
	VPXORQ     Z1, Z0, Z0; \
	VALIGNQ    $4, Z18, Z0, Z1; \
	VPROLQ     $4, Z1, Z1; \
	VPXORQ     Z1, Z0, Z0; \
	VPROLVQ    Z16, Z8, Z2; \
	VPXORQ     Z0, Z2, Z2; \
	VPERMQ     Z2, Z22, Z8; \
	VPSRLQ     $29, Z2, Z3; \
	VPXORQ     Z2, Z3, Z3; \
	VPMULLQ    Z19, Z3, Z3; \
	VPSRLQ     $32, Z3, Z4; \
	VPXORQ     Z3, Z4, Z5; \
	VPTESTNMQ  Z20, Z5, K1; \
	VPMOVQD    Z4, Y6; \
	VPCOMPRESSD.Z Y6, K1, Y7; \
	VMOVDQU    Y7, (R8)(R9*4); \
	KMOVB      K1, AX; \
	POPCNTL    AX, AX; \
	ADDQ       AX, R9

// func buzGather(text *byte, n int, tab *[256]uint64, dst *uint64)
//
// dst[x] = tab[text[x]] for x < n, a multiple of 8, eight at a time.
// Requires AVX-512F.
TEXT ·buzGather(SB), NOSPLIT, $0-32
	MOVQ text+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ tab+16(FP), AX
	MOVQ dst+24(FP), DI
	XORQ DX, DX

gloop:
	CMPQ       DX, CX
	JGE        gdone
	VPMOVZXBQ  (SI)(DX*1), Z0
	KXNORB     K1, K1, K1
	VPGATHERQQ (AX)(Z0*8), K1, Z1
	VMOVDQU64  Z1, (DI)(DX*8)
	ADDQ       $8, DX
	JMP        gloop

gdone:
	VZEROUPPER
	RET

// func rollVec(tv *uint64, n, w int, h uint64, slots *uint64, k, mask uint64, buf *uint32, nb int, pend *uint64, top uint64) (h2 uint64, nb2, np int)
//
// Rolls the hash over n shingles, a multiple of 8, eight at a time, from
// the table values tv (see roller.rollPow2Vec), appending the sampled
// values to buf[nb:]. It writes to pend the spread hash of each shingle
// that may lower its slot, returning how many; the caller lowers the
// slots. With top 0 those are the shingles whose value is below their
// slot (a gather reads the slots of a group's shingles at once); with
// top above every slot, those whose value is below top: a compare instead
// of a gather and its index, about a fifth of the loop's vector work, for
// a few more shingles to check. Requires AVX-512F, DQ, VL and POPCNT.
TEXT ·rollVec(SB), NOSPLIT, $0-112
	MOVQ         tv+0(FP), SI
	MOVQ         n+8(FP), DI
	LEAQ         (SI)(DI*8), DI
	MOVQ         w+16(FP), R11
	MOVQ         R11, AX
	ANDQ         $63, AX
	VPBROADCASTQ AX, Z17
	SHLQ         $3, R11
	MOVQ         h+24(FP), AX
	VPBROADCASTQ AX, Z8
	MOVQ         slots+32(FP), R10
	MOVQ         k+40(FP), AX
	VPBROADCASTQ AX, Z21
	MOVQ         mask+48(FP), AX
	VPBROADCASTQ AX, Z20
	MOVQ         buf+56(FP), R8
	MOVQ         nb+64(FP), R9
	MOVQ         pend+72(FP), BX
	XORQ         CX, CX
	VMOVDQU64    rotv<>(SB), Z16
	VPXORQ       Z18, Z18, Z18
	MOVQ         $0xbf58476d1ce4e5b9, AX
	VPBROADCASTQ AX, Z19
	MOVQ         $7, AX
	VPBROADCASTQ AX, Z22

	MOVQ         top+80(FP), AX
	TESTQ        AX, AX
	JNZ          tops
	VPBROADCASTQ AX, Z23

loop:
	CMPQ SI, DI
	JAE  done
	GROUP

	// The group's slots j, and the shingles below them.
	VPMULUDQ      Z21, Z5, Z6
	VPSRLQ        $32, Z6, Z6
	KXNORB        K2, K2, K2
	VPGATHERQQ    (R10)(Z6*8), K2, Z9
	VPCMPUQ       $1, Z9, Z4, K3
	VPCOMPRESSQ.Z Z5, K3, Z7
	VMOVDQU64     Z7, (BX)(CX*8)
	KMOVB         K3, AX
	POPCNTL       AX, AX
	ADDQ          AX, CX
	ADDQ          $64, SI
	JMP           loop

tops:
	VPBROADCASTQ AX, Z23

tloop:
	CMPQ SI, DI
	JAE  done
	GROUP

	// The shingles below top.
	VPCMPUQ       $1, Z23, Z4, K3
	VPCOMPRESSQ.Z Z5, K3, Z7
	VMOVDQU64     Z7, (BX)(CX*8)
	KMOVB         K3, AX
	POPCNTL       AX, AX
	ADDQ          AX, CX
	ADDQ          $64, SI
	JMP           tloop

done:
	VMOVQ X8, AX
	VZEROUPPER
	MOVQ  AX, h2+88(FP)
	MOVQ  R9, nb2+96(FP)
	MOVQ  CX, np+104(FP)
	RET

// func wordVec(text *byte, tv *uint64, n int, h, inWord uint64, ends *uint64, masks *[256][8]uint8) (h2, inWord2 uint64, ne int)
//
// wordHashes over text[:n], n a multiple of 8, eight bytes at a time,
// writing to ends from ends[0]; tv[:n] are the bytes' buzTable values and
// masks is wordMasks. Requires AVX-512F, DQ, BW, VL and POPCNT.
//
// Within a group of eight bytes, h[l] = rotl(h[l-1], 5) ^ tab[c[l]] in a
// word and 0 at a separator. As in rollVec, h[l] is rotl(h[-1], 5(l+1))
// ^ D[l], with D a prefix over the lanes in three steps, except that a
// separator cuts it: a step adds lane l-s into lane l only if no
// separator lies in the lanes lane l's part covers so far (the bit masks
// of wordMasks), and h[-1] counts only in the lanes with no separator up
// to theirs. The hashes ending words are those of the lanes before a
// separator that follows a word byte: a compressing store writes them in
// order.
//
// The separators of 64 bytes are found at once, and each group's masks
// are loaded from wordMasks by its eight separator bits, straight into
// mask registers: computing them took as many instructions as the
// hashing, on the same ports.
TEXT ·wordVec(SB), NOSPLIT, $0-80
	MOVQ         text+0(FP), SI
	MOVQ         n+16(FP), DI
	ADDQ         SI, DI
	MOVQ         tv+8(FP), AX
	MOVQ         h+24(FP), R8
	VPBROADCASTQ R8, Z8
	MOVQ         inWord+32(FP), R9
	MOVQ         ends+40(FP), BX
	MOVQ         masks+48(FP), R10
	XORQ         DX, DX
	VMOVDQU64    rot5<>(SB), Z16
	VPXORQ       Z18, Z18, Z18
	MOVQ         $7, R8
	VPBROADCASTQ R8, Z22
	MOVL         $32, R8
	VPBROADCASTB R8, Z23
	MOVL         $10, R8
	VPBROADCASTB R8, Z24

chunk:
	// The separators of the next 64 bytes, or of the rest.
	MOVQ     DI, CX
	SUBQ     SI, CX
	JLE      wdone
	MOVQ     $-1, R8
	CMPQ     CX, $64
	JAE      full
	MOVQ     $1, R8
	SHLQ     CX, R8
	DECQ     R8

full:
	KMOVQ       R8, K1
	VMOVDQU8.Z  (SI), K1, Z0
	VPCMPEQB    Z23, Z0, K2
	VPCMPEQB    Z24, Z0, K3
	KORQ        K2, K3, K2
	KMOVQ       K2, R13
	LEAQ        64(SI), R12
	CMPQ        R12, DI
	CMOVQHI     DI, R12 // the chunk's end

wloop:
	CMPQ    SI, R12
	JAE     chunk
	MOVL    R13, R14
	ANDL    $0xff, R14
	SHRQ    $8, R13
	LEAQ    (R10)(R14*8), R14
	KMOVB   (R14), K3
	KMOVB   1(R14), K4
	KMOVB   2(R14), K5
	KMOVB   3(R14), K6
	KMOVB   4(R14)(R9*1), K7
	MOVBQZX 6(R14)(R9*1), R11
	MOVBQZX (R14), R9
	SHRL    $7, R9

	VMOVDQU64.Z (AX), K3, Z2
	VALIGNQ     $7, Z18, Z2, Z3
	VPROLQ      $5, Z3, Z3
	VPXORQ      Z3, Z2, K3, Z2
	VALIGNQ     $6, Z18, Z2, Z3
	VPROLQ      $10, Z3, Z3
	VPXORQ      Z3, Z2, K4, Z2
	VALIGNQ     $4, Z18, Z2, Z3
	VPROLQ      $20, Z3, Z3
	VPXORQ      Z3, Z2, K5, Z2
	VPROLVQ     Z16, Z8, Z3
	VPXORQ      Z3, Z2, K6, Z2

	// The hashes before each separator ending a word.
	VALIGNQ       $7, Z8, Z2, Z4
	VPCOMPRESSQ.Z Z4, K7, Z5
	VMOVDQU64     Z5, (BX)(DX*8)
	ADDQ          R11, DX
	VPERMQ        Z2, Z22, Z8
	ADDQ          $8, SI
	ADDQ          $64, AX
	JMP           wloop

wdone:
	VMOVQ X8, AX
	VZEROUPPER
	MOVQ  AX, h2+56(FP)
	MOVQ  R9, inWord2+64(FP)
	MOVQ  DX, ne+72(FP)
	RET

// FEAT computes the features of the eight words whose hashes are at SI
// (the one words-1 back at SI+DX, DX = -8(words-1); R15 = words-1), f = the sum of the
// word hashes times phi^(words-1), ..., phi^0 by Horner's rule, mixes
// them into Z0 (murmur3's finaliser), keeps the lanes of K1 and adds
// their bits to the nibble counters Z10 to Z13: Z1x counts bit 4q+x of
// the lanes' features in its nibble q.
#define FEAT \
	LEAQ      (SI)(DX*1), R12; \
	VMOVDQU64 (R12), Z0; \
	MOVQ      R15, R13; \
featm: \
	TESTQ     R13, R13; \
	JZ        featd; \
	ADDQ      $8, R12; \
	VPMULLQ   Z19, Z0, Z0; \
	VPADDQ    (R12), Z0, Z0; \
	DECQ      R13; \
	JMP       featm; \
featd: \
	VPSRLQ    $33, Z0, Z1; \
	VPXORQ    Z1, Z0, Z0; \
	VPMULLQ   Z20, Z0, Z0; \
	VPSRLQ    $33, Z0, Z1; \
	VPXORQ    Z1, Z0, Z0; \
	VPMULLQ   Z21, Z0, Z0; \
	VPSRLQ    $33, Z0, Z1; \
	VPXORQ    Z1, Z0, Z0; \
	VMOVDQA64.Z Z0, K1, Z0; \
	VPANDQ    Z14, Z0, Z1; \
	VPADDQ    Z1, Z10, Z10; \
	VPSRLQ    $1, Z0, Z1; \
	VPANDQ    Z14, Z1, Z1; \
	VPADDQ    Z1, Z11, Z11; \
	VPSRLQ    $2, Z0, Z1; \
	VPANDQ    Z14, Z1, Z1; \
	VPADDQ    Z1, Z12, Z12; \
	VPSRLQ    $3, Z0, Z1; \
	VPANDQ    Z14, Z1, Z1; \
	VPADDQ    Z1, Z13, Z13

// FOLD moves the nibble counters to the byte counters Z24 to Z31 (Z2x
// counts bit 8b+x-24 in its byte b): the even nibbles of Z1x go to
// Z(24+x), the odd ones to Z(28+x).
#define FOLD \
	VPANDQ  Z15, Z10, Z1; \
	VPADDQ  Z1, Z24, Z24; \
	VPSRLQ  $4, Z10, Z1; \
	VPANDQ  Z15, Z1, Z1; \
	VPADDQ  Z1, Z28, Z28; \
	VPANDQ  Z15, Z11, Z1; \
	VPADDQ  Z1, Z25, Z25; \
	VPSRLQ  $4, Z11, Z1; \
	VPANDQ  Z15, Z1, Z1; \
	VPADDQ  Z1, Z29, Z29; \
	VPANDQ  Z15, Z12, Z1; \
	VPADDQ  Z1, Z26, Z26; \
	VPSRLQ  $4, Z12, Z1; \
	VPANDQ  Z15, Z1, Z1; \
	VPADDQ  Z1, Z30, Z30; \
	VPANDQ  Z15, Z13, Z1; \
	VPADDQ  Z1, Z27, Z27; \
	VPSRLQ  $4, Z13, Z1; \
	VPANDQ  Z15, Z1, Z1; \
	VPADDQ  Z1, Z31, Z31; \
	VPXORQ  Z10, Z10, Z10; \
	VPXORQ  Z11, Z11, Z11; \
	VPXORQ  Z12, Z12, Z12; \
	VPXORQ  Z13, Z13, Z13

// func featVec(hs *uint64, n, words int, cnt *[8][8]uint64)
//
// Counts the bits of the features of the n words whose hashes are
// hs[0:n], eight at a time, into the byte counters cnt: byte b of lane l
// of cnt[x] counts bit 8b+x of lane l's features. The words-1 hashes
// before hs[0] must be readable, and so must hs[n:] up to a multiple of
// 8. The caller flushes cnt before a byte can overflow: each group of
// eight words adds at most 1. Requires AVX-512F and DQ.
//
// A feature costs about twelve scalar instructions to count in
// laneCounter.add and six more to compute; here eight take about the
// same, and the nibble counters are folded into the byte counters every
// fifteen groups, before a nibble can overflow.
TEXT ·featVec(SB), NOSPLIT, $0-32
	MOVQ         hs+0(FP), SI
	MOVQ         n+8(FP), R9
	MOVQ         words+16(FP), R15
	DECQ         R15
	MOVQ         R15, DX
	SHLQ         $3, DX
	NEGQ         DX
	MOVQ         cnt+24(FP), BX
	MOVQ         $0x9E3779B97F4A7C15, AX
	VPBROADCASTQ AX, Z19
	MOVQ         $0xff51afd7ed558ccd, AX
	VPBROADCASTQ AX, Z20
	MOVQ         $0xc4ceb9fe1a85ec53, AX
	VPBROADCASTQ AX, Z21
	MOVQ         $0x1111111111111111, AX
	VPBROADCASTQ AX, Z14
	MOVQ         $0x0f0f0f0f0f0f0f0f, AX
	VPBROADCASTQ AX, Z15
	VPXORQ       Z10, Z10, Z10
	VPXORQ       Z11, Z11, Z11
	VPXORQ       Z12, Z12, Z12
	VPXORQ       Z13, Z13, Z13
	VMOVDQU64    0(BX), Z24
	VMOVDQU64    64(BX), Z25
	VMOVDQU64    128(BX), Z26
	VMOVDQU64    192(BX), Z27
	VMOVDQU64    256(BX), Z28
	VMOVDQU64    320(BX), Z29
	VMOVDQU64    384(BX), Z30
	VMOVDQU64    448(BX), Z31
	XORQ         R14, R14

floop:
	TESTQ R9, R9
	JLE   fdone
	MOVL  $0xff, AX
	CMPQ  R9, $8
	JGE   ffull

	// The last group: its first R9 lanes.
	MOVQ R9, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX

ffull:
	KMOVB AX, K1
	FEAT
	ADDQ  $64, SI
	SUBQ  $8, R9
	INCQ  R14
	CMPQ  R14, $15
	JB    floop
	FOLD
	XORQ  R14, R14
	JMP   floop

fdone:
	FOLD
	VMOVDQU64 Z24, 0(BX)
	VMOVDQU64 Z25, 64(BX)
	VMOVDQU64 Z26, 128(BX)
	VMOVDQU64 Z27, 192(BX)
	VMOVDQU64 Z28, 256(BX)
	VMOVDQU64 Z29, 320(BX)
	VMOVDQU64 Z30, 384(BX)
	VMOVDQU64 Z31, 448(BX)
	VZEROUPPER
	RET
