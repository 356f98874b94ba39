#include "textflag.h"

// Index vectors of VPERMD rotating eight 32-bit lanes by 1 to 7.
DATA rot<>+0x00(SB)/8, $0x0000000200000001
DATA rot<>+0x08(SB)/8, $0x0000000400000003
DATA rot<>+0x10(SB)/8, $0x0000000600000005
DATA rot<>+0x18(SB)/8, $0x0000000000000007
DATA rot<>+0x20(SB)/8, $0x0000000300000002
DATA rot<>+0x28(SB)/8, $0x0000000500000004
DATA rot<>+0x30(SB)/8, $0x0000000700000006
DATA rot<>+0x38(SB)/8, $0x0000000100000000
DATA rot<>+0x40(SB)/8, $0x0000000400000003
DATA rot<>+0x48(SB)/8, $0x0000000600000005
DATA rot<>+0x50(SB)/8, $0x0000000000000007
DATA rot<>+0x58(SB)/8, $0x0000000200000001
DATA rot<>+0x60(SB)/8, $0x0000000500000004
DATA rot<>+0x68(SB)/8, $0x0000000700000006
DATA rot<>+0x70(SB)/8, $0x0000000100000000
DATA rot<>+0x78(SB)/8, $0x0000000300000002
DATA rot<>+0x80(SB)/8, $0x0000000600000005
DATA rot<>+0x88(SB)/8, $0x0000000000000007
DATA rot<>+0x90(SB)/8, $0x0000000200000001
DATA rot<>+0x98(SB)/8, $0x0000000400000003
DATA rot<>+0xa0(SB)/8, $0x0000000700000006
DATA rot<>+0xa8(SB)/8, $0x0000000100000000
DATA rot<>+0xb0(SB)/8, $0x0000000300000002
DATA rot<>+0xb8(SB)/8, $0x0000000500000004
DATA rot<>+0xc0(SB)/8, $0x0000000000000007
DATA rot<>+0xc8(SB)/8, $0x0000000200000001
DATA rot<>+0xd0(SB)/8, $0x0000000400000003
DATA rot<>+0xd8(SB)/8, $0x0000000600000005
GLOBL rot<>(SB), RODATA|NOPTR, $224

// func intersectBlocks(a, b *uint32, na, nb int) (n, i, j int)
//
// Counts the common values of a[:na] and b[:nb], sorted and distinct, a
// block of eight of each at a time: each value of a's block is compared
// with all eight of b's (the block of b rotated seven times), and the
// block whose last value is smaller moves on (both when equal). It stops
// when either has fewer than eight values left, and returns the count and
// where it stopped; the rest is for a scalar merge. Requires AVX2 and
// POPCNT, na >= 8 and nb >= 8.
TEXT ·intersectBlocks(SB), NOSPLIT, $0-56
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ na+16(FP), R8
	MOVQ nb+24(FP), R9
	SUBQ $8, R8 // a block starts at most at na-8
	SUBQ $8, R9
	XORQ AX, AX // count
	XORQ BX, BX // i
	XORQ CX, CX // j
	VMOVDQU rot<>+0x00(SB), Y9
	VMOVDQU rot<>+0x20(SB), Y10
	VMOVDQU rot<>+0x40(SB), Y11
	VMOVDQU rot<>+0x60(SB), Y12
	VMOVDQU rot<>+0x80(SB), Y13
	VMOVDQU rot<>+0xa0(SB), Y14
	VMOVDQU rot<>+0xc0(SB), Y15

loop:
	CMPQ BX, R8
	JGT  done
	CMPQ CX, R9
	JGT  done
	VMOVDQU (SI)(BX*4), Y0
	VMOVDQU (DI)(CX*4), Y1
	VPERMD  Y1, Y9, Y2
	VPERMD  Y1, Y10, Y3
	VPERMD  Y1, Y11, Y4
	VPERMD  Y1, Y12, Y5
	VPERMD  Y1, Y13, Y6
	VPERMD  Y1, Y14, Y7
	VPERMD  Y1, Y15, Y8
	VPCMPEQD Y0, Y1, Y1
	VPCMPEQD Y0, Y2, Y2
	VPCMPEQD Y0, Y3, Y3
	VPCMPEQD Y0, Y4, Y4
	VPCMPEQD Y0, Y5, Y5
	VPCMPEQD Y0, Y6, Y6
	VPCMPEQD Y0, Y7, Y7
	VPCMPEQD Y0, Y8, Y8
	VPOR     Y1, Y2, Y1
	VPOR     Y3, Y4, Y3
	VPOR     Y5, Y6, Y5
	VPOR     Y7, Y8, Y7
	VPOR     Y1, Y3, Y1
	VPOR     Y5, Y7, Y5
	VPOR     Y1, Y5, Y1
	VMOVMSKPS Y1, DX
	POPCNTL  DX, DX
	ADDQ     DX, AX
	// Move on: a's block when its last value is not above b's, b's when
	// its last value is not above a's.
	MOVL  28(SI)(BX*4), R10
	MOVL  28(DI)(CX*4), R11
	XORL  R12, R12
	XORL  R13, R13
	CMPL  R10, R11
	SETLS R12B
	SETCC R13B
	LEAQ  (BX)(R12*8), BX
	LEAQ  (CX)(R13*8), CX
	JMP   loop

done:
	VZEROUPPER
	MOVQ AX, n+32(FP)
	MOVQ BX, i+40(FP)
	MOVQ CX, j+48(FP)
	RET
