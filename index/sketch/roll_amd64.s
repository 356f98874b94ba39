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

// func rollVec(tv *uint64, n, w int, h uint64, slots *uint64, k, mask uint64, buf *uint32, nb int, pend *uint64) (h2 uint64, nb2, np int)
//
// Rolls the hash over n shingles, a multiple of 8, eight at a time, from
// the table values tv (see roller.rollPow2Vec), appending the sampled
// values to buf[nb:]. It reads the slots of each group's shingles at once
// and writes j<<32 | v to pend for each shingle whose value v is below
// its slot j, returning how many; the caller lowers the slots. Requires
// AVX-512F, DQ, VL and POPCNT.
TEXT ·rollVec(SB), NOSPLIT, $0-104
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

loop:
	CMPQ SI, DI
	JAE  done
	GROUP

	// The group's slots j, their values, and those below.
	VPMULUDQ      Z21, Z5, Z6
	VPSRLQ        $32, Z6, Z6
	KXNORB        K2, K2, K2
	VPGATHERQQ    (R10)(Z6*8), K2, Z9
	VPCMPUQ       $1, Z9, Z4, K3
	VPSLLQ        $32, Z6, Z6
	VPORQ         Z4, Z6, Z6
	VPCOMPRESSQ.Z Z6, K3, Z7
	VMOVDQU64     Z7, (BX)(CX*8)
	KMOVB         K3, AX
	POPCNTL       AX, AX
	ADDQ          AX, CX
	ADDQ          $64, SI
	JMP           loop

done:
	VMOVQ X8, AX
	VZEROUPPER
	MOVQ  AX, h2+80(FP)
	MOVQ  R9, nb2+88(FP)
	MOVQ  CX, np+96(FP)
	RET
