#include "textflag.h"

// func foldRunVec(out, src *byte, n int, prev uint64) (int, uint64)
//
// foldRun's loop 64 bytes at a time: it folds src to out for as long as
// the next 64 bytes and the byte after them are ASCII and hold no two
// spaces in a row (counting the byte before, a space when prev is 0x80),
// and i+64 <= n. It returns the number of bytes folded and prev updated.
// Requires AVX-512BW.
TEXT ·foldRunVec(SB), NOSPLIT, $0-48
	MOVQ         out+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), R8
	MOVQ         prev+24(FP), DX
	SHRQ         $7, DX // 1 when the byte before is a space
	XORQ         CX, CX
	MOVL         $0x20, AX
	VPBROADCASTB AX, Z20 // ' ', the last byte that is a space, and 'a'-'A'
	MOVL         $0x7f, AX
	VPBROADCASTB AX, Z21
	MOVL         $'A', AX
	VPBROADCASTB AX, Z22
	MOVL         $26, AX
	VPBROADCASTB AX, Z23

loop:
	LEAQ     64(CX), BX
	CMPQ     BX, R8
	JA       done
	VMOVDQU8 (SI)(CX*1), Z0
	VPMOVB2M Z0, K1
	KORTESTQ K1, K1
	JNZ      done
	MOVBQZX  64(SI)(CX*1), AX
	CMPQ     AX, $0x80
	JAE      done

	// The spaces: bytes up to ' ', and 0x7f. None may follow another.
	VPCMPUB  $2, Z20, Z0, K2
	VPCMPEQB Z21, Z0, K3
	KORQ     K3, K2, K2
	KMOVQ    K2, AX
	MOVQ     AX, BX
	SHLQ     $1, BX
	ORQ      DX, BX
	TESTQ    AX, BX
	JNZ      done

	// Upper-case letters gain 0x20; spaces become ' '.
	VPSUBB   Z22, Z0, Z1
	VPCMPUB  $1, Z23, Z1, K4
	VPADDB   Z20, Z0, K4, Z0
	VMOVDQU8 Z20, K2, Z0
	VMOVDQU8 Z0, (DI)(CX*1)
	SHRQ     $63, AX
	MOVQ     AX, DX
	ADDQ     $64, CX
	JMP      loop

done:
	VZEROUPPER
	SHLQ $7, DX
	MOVQ CX, ret+32(FP)
	MOVQ DX, ret1+40(FP)
	RET
