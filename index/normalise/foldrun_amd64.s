#include "textflag.h"

// func foldVec(out, src *byte, n int, prev uint64) (i, o int, last uint64)
//
// foldBytes 64 bytes at a time: for as long as the next 64 bytes of src
// and the byte after them are ASCII (i+64 < n), letters are made lower
// case, every other byte but a digit becomes ' ', and a ' ' that follows
// another (or the byte before src, when prev is 1) is dropped. It returns
// the bytes of src read, of out written, and prev updated: 1 when the
// last byte read was a separator. out must hold n bytes. Requires
// AVX-512BW and AVX512_VBMI2.
TEXT ·foldVec(SB), NOSPLIT, $0-56
	MOVQ         out+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), R8
	MOVQ         prev+24(FP), DX
	XORQ         CX, CX // i
	XORQ         R9, R9 // o
	MOVL         $0x20, AX
	VPBROADCASTB AX, Z20 // ' ', and 'a'-'A'
	MOVL         $'0', AX
	VPBROADCASTB AX, Z21
	MOVL         $10, AX
	VPBROADCASTB AX, Z22
	MOVL         $'a', AX
	VPBROADCASTB AX, Z23
	MOVL         $26, AX
	VPBROADCASTB AX, Z24
	MOVL         $'A', AX
	VPBROADCASTB AX, Z25

loop:
	LEAQ     64(CX), BX
	CMPQ     BX, R8
	JAE      done
	VMOVDQU8 (SI)(CX*1), Z0
	VPMOVB2M Z0, K1
	KORTESTQ K1, K1
	JNZ      done
	MOVBQZX  64(SI)(CX*1), AX
	CMPQ     AX, $0x80
	JAE      done

	// Digits, letters of either case, upper-case letters.
	VPSUBB  Z21, Z0, Z1
	VPCMPUB $1, Z22, Z1, K2
	VPORD   Z20, Z0, Z2
	VPSUBB  Z23, Z2, Z2
	VPCMPUB $1, Z24, Z2, K3
	VPSUBB  Z25, Z0, Z3
	VPCMPUB $1, Z24, Z3, K4

	// Upper-case letters gain 0x20; separators become ' '.
	VPADDB   Z20, Z0, K4, Z0
	KORQ     K2, K3, K2
	KNOTQ    K2, K3
	VMOVDQU8 Z20, K3, Z0

	// Keep every byte but a separator after a separator.
	KMOVQ       K3, AX
	MOVQ        AX, BX
	SHLQ        $1, BX
	ORQ         DX, BX
	ANDQ        AX, BX
	NOTQ        BX
	KMOVQ       BX, K5
	VPCOMPRESSB Z0, K5, Z1
	VMOVDQU8    Z1, (DI)(R9*1)
	POPCNTQ     BX, BX
	ADDQ        BX, R9
	SHRQ        $63, AX
	MOVQ        AX, DX
	ADDQ        $64, CX
	JMP         loop

done:
	VZEROUPPER
	MOVQ CX, i+32(FP)
	MOVQ R9, o+40(FP)
	MOVQ DX, last+48(FP)
	RET
