//go:build amd64 && !noasm

#include "textflag.h"

// AVX2 + FMA3 kernels. See kernel_amd64.go for the prototypes.
//
// Masks for VMASKMOVPD: the 4 quadwords at maskTab<>+32-8*t have their
// first t lanes set (0 ≤ t ≤ 4).
DATA maskTab<>+0(SB)/8, $0xffffffffffffffff
DATA maskTab<>+8(SB)/8, $0xffffffffffffffff
DATA maskTab<>+16(SB)/8, $0xffffffffffffffff
DATA maskTab<>+24(SB)/8, $0xffffffffffffffff
DATA maskTab<>+32(SB)/8, $0
DATA maskTab<>+40(SB)/8, $0
DATA maskTab<>+48(SB)/8, $0
DATA maskTab<>+56(SB)/8, $0
GLOBL maskTab<>(SB), RODATA|NOPTR, $64

// LOADMASK loads into ymm the mask of the first t lanes, t in register tr
// (clobbered), using scratch register sr.
#define LOADMASK(tr, sr, ymm) \
	SHLQ $3, tr                \
	NEGQ tr                    \
	LEAQ maskTab<>+32(SB), sr  \
	VMOVUPD (sr)(tr*1), ymm

// REDUCE4 sets d = [Σa, Σb, Σc, Σd] (lane sums of the accumulators a, b, c,
// d); a and c are clobbered, t is scratch. d may equal a.
#define REDUCE4(a, b, c, dd, t, out) \
	VHADDPD b, a, a               \
	VHADDPD dd, c, c              \
	VPERM2F128 $0x21, c, a, t     \
	VBLENDPD $0x0C, c, a, out     \
	VADDPD t, out, out

// func matVecAsm(m, n int, a *float64, lda int, x, y *float64)
//
// Rows are processed four at a time (the last block repeats its last row and
// stores only the valid lanes), columns eight at a time, then four, then a
// masked tail.
TEXT ·matVecAsm(SB), NOSPLIT, $0-48
	MOVQ m+0(FP), BX
	MOVQ n+8(FP), AX
	MOVQ a+16(FP), SI
	MOVQ lda+24(FP), DX
	SHLQ $3, DX
	MOVQ x+32(FP), DI
	MOVQ y+40(FP), R12

	// Y15 = mask of the n&3 tail columns.
	MOVQ AX, R13
	ANDQ $3, R13
	LOADMASK(R13, CX, Y15)
	ANDQ $-8, AX

mv_rows:
	MOVQ SI, R8
	LEAQ (R8)(DX*1), R9
	CMPQ BX, $2
	CMOVQLT R8, R9
	LEAQ (R9)(DX*1), R10
	CMPQ BX, $3
	CMOVQLT R9, R10
	LEAQ (R10)(DX*1), R11
	CMPQ BX, $4
	CMOVQLT R10, R11

	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	XORQ CX, CX
	TESTQ AX, AX
	JE mv_tail4

mv_loop8:
	VMOVUPD (DI)(CX*8), Y8
	VMOVUPD 32(DI)(CX*8), Y9
	VFMADD231PD (R8)(CX*8), Y8, Y0
	VFMADD231PD 32(R8)(CX*8), Y9, Y1
	VFMADD231PD (R9)(CX*8), Y8, Y2
	VFMADD231PD 32(R9)(CX*8), Y9, Y3
	VFMADD231PD (R10)(CX*8), Y8, Y4
	VFMADD231PD 32(R10)(CX*8), Y9, Y5
	VFMADD231PD (R11)(CX*8), Y8, Y6
	VFMADD231PD 32(R11)(CX*8), Y9, Y7
	ADDQ $8, CX
	CMPQ CX, AX
	JLT  mv_loop8

mv_tail4:
	MOVQ n+8(FP), R13
	SUBQ CX, R13
	CMPQ R13, $4
	JLT  mv_tailm
	VMOVUPD (DI)(CX*8), Y8
	VFMADD231PD (R8)(CX*8), Y8, Y0
	VFMADD231PD (R9)(CX*8), Y8, Y2
	VFMADD231PD (R10)(CX*8), Y8, Y4
	VFMADD231PD (R11)(CX*8), Y8, Y6
	ADDQ $4, CX
	SUBQ $4, R13

mv_tailm:
	TESTQ R13, R13
	JE    mv_reduce
	VMASKMOVPD (DI)(CX*8), Y15, Y8
	VMASKMOVPD (R8)(CX*8), Y15, Y9
	VFMADD231PD Y9, Y8, Y1
	VMASKMOVPD (R9)(CX*8), Y15, Y10
	VFMADD231PD Y10, Y8, Y3
	VMASKMOVPD (R10)(CX*8), Y15, Y11
	VFMADD231PD Y11, Y8, Y5
	VMASKMOVPD (R11)(CX*8), Y15, Y12
	VFMADD231PD Y12, Y8, Y7

mv_reduce:
	VADDPD Y1, Y0, Y0
	VADDPD Y3, Y2, Y2
	VADDPD Y5, Y4, Y4
	VADDPD Y7, Y6, Y6
	REDUCE4(Y0, Y2, Y4, Y6, Y1, Y0)
	CMPQ BX, $4
	JLT  mv_partial
	VMOVUPD Y0, (R12)
	ADDQ $32, R12
	LEAQ (SI)(DX*4), SI
	SUBQ $4, BX
	JNE  mv_rows
	VZEROUPPER
	RET

mv_partial:
	// Store the first BX (1..3) lanes of Y0.
	CMPQ BX, $2
	JLT  mv_p1
	VMOVUPD X0, (R12)
	JEQ  mv_pdone
	VEXTRACTF128 $1, Y0, X1
	VMOVSD X1, 16(R12)
	JMP  mv_pdone

mv_p1:
	VMOVSD X0, (R12)

mv_pdone:
	VZEROUPPER
	RET

// func matTVecAsm(m, n int, a *float64, lda int, x, y *float64)
//
// Column blocks of 32 (8 accumulators), then 16 (rows unrolled by two), then
// blocks of 4 and a final masked block (rows unrolled by four). Each block loops over
// all m rows, broadcasting x[i].
TEXT ·matTVecAsm(SB), NOSPLIT, $0-48
	MOVQ m+0(FP), AX
	MOVQ n+8(FP), BX
	MOVQ a+16(FP), SI
	MOVQ lda+24(FP), DX
	SHLQ $3, DX
	MOVQ x+32(FP), DI
	MOVQ y+40(FP), R8

tv_check32:
	CMPQ BX, $32
	JLT  tv_check16
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	MOVQ SI, R9
	XORQ CX, CX

tv_loop32:
	VBROADCASTSD (DI)(CX*8), Y8
	VFMADD231PD (R9), Y8, Y0
	VFMADD231PD 32(R9), Y8, Y1
	VFMADD231PD 64(R9), Y8, Y2
	VFMADD231PD 96(R9), Y8, Y3
	VFMADD231PD 128(R9), Y8, Y4
	VFMADD231PD 160(R9), Y8, Y5
	VFMADD231PD 192(R9), Y8, Y6
	VFMADD231PD 224(R9), Y8, Y7
	ADDQ DX, R9
	INCQ CX
	CMPQ CX, AX
	JLT  tv_loop32

	VMOVUPD Y0, (R8)
	VMOVUPD Y1, 32(R8)
	VMOVUPD Y2, 64(R8)
	VMOVUPD Y3, 96(R8)
	VMOVUPD Y4, 128(R8)
	VMOVUPD Y5, 160(R8)
	VMOVUPD Y6, 192(R8)
	VMOVUPD Y7, 224(R8)
	ADDQ $256, SI
	ADDQ $256, R8
	SUBQ $32, BX
	JMP  tv_check32

tv_check16:
	CMPQ BX, $16
	JLT  tv_check4
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	MOVQ SI, R9
	XORQ CX, CX
	MOVQ AX, R10
	ANDQ $-2, R10
	TESTQ R10, R10
	JE    tv_tail16

tv_loop16:
	VBROADCASTSD (DI)(CX*8), Y8
	VBROADCASTSD 8(DI)(CX*8), Y9
	VFMADD231PD (R9), Y8, Y0
	VFMADD231PD 32(R9), Y8, Y1
	VFMADD231PD 64(R9), Y8, Y2
	VFMADD231PD 96(R9), Y8, Y3
	VFMADD231PD (R9)(DX*1), Y9, Y4
	VFMADD231PD 32(R9)(DX*1), Y9, Y5
	VFMADD231PD 64(R9)(DX*1), Y9, Y6
	VFMADD231PD 96(R9)(DX*1), Y9, Y7
	LEAQ (R9)(DX*2), R9
	ADDQ $2, CX
	CMPQ CX, R10
	JLT  tv_loop16

tv_tail16:
	CMPQ CX, AX
	JGE  tv_done16
	VBROADCASTSD (DI)(CX*8), Y8
	VFMADD231PD (R9), Y8, Y0
	VFMADD231PD 32(R9), Y8, Y1
	VFMADD231PD 64(R9), Y8, Y2
	VFMADD231PD 96(R9), Y8, Y3

tv_done16:
	VADDPD Y4, Y0, Y0
	VADDPD Y5, Y1, Y1
	VADDPD Y6, Y2, Y2
	VADDPD Y7, Y3, Y3
	VMOVUPD Y0, (R8)
	VMOVUPD Y1, 32(R8)
	VMOVUPD Y2, 64(R8)
	VMOVUPD Y3, 96(R8)
	ADDQ $128, SI
	ADDQ $128, R8
	SUBQ $16, BX

tv_check4:
	CMPQ BX, $4
	JLT  tv_checkm
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	MOVQ SI, R9
	XORQ CX, CX
	MOVQ AX, R10
	ANDQ $-4, R10
	TESTQ R10, R10
	JE    tv_tail4f

tv_loop4f:
	VBROADCASTSD (DI)(CX*8), Y8
	VBROADCASTSD 8(DI)(CX*8), Y9
	VBROADCASTSD 16(DI)(CX*8), Y10
	VBROADCASTSD 24(DI)(CX*8), Y11
	VFMADD231PD (R9), Y8, Y0
	VFMADD231PD (R9)(DX*1), Y9, Y1
	LEAQ (R9)(DX*2), R9
	VFMADD231PD (R9), Y10, Y2
	VFMADD231PD (R9)(DX*1), Y11, Y3
	LEAQ (R9)(DX*2), R9
	ADDQ $4, CX
	CMPQ CX, R10
	JLT  tv_loop4f

tv_tail4f:
	MOVQ AX, R11
	SUBQ CX, R11
	CMPQ R11, $2
	JLT  tv_tail4f1
	VBROADCASTSD (DI)(CX*8), Y8
	VBROADCASTSD 8(DI)(CX*8), Y9
	VFMADD231PD (R9), Y8, Y0
	VFMADD231PD (R9)(DX*1), Y9, Y1
	LEAQ (R9)(DX*2), R9
	ADDQ $2, CX

tv_tail4f1:
	CMPQ CX, AX
	JGE  tv_done4f
	VBROADCASTSD (DI)(CX*8), Y8
	VFMADD231PD (R9), Y8, Y0
	ADDQ DX, R9
	INCQ CX
	JMP  tv_tail4f1

tv_done4f:
	VADDPD Y1, Y0, Y0
	VADDPD Y3, Y2, Y2
	VADDPD Y2, Y0, Y0
	VMOVUPD Y0, (R8)
	ADDQ $32, SI
	ADDQ $32, R8
	SUBQ $4, BX
	JMP  tv_check4

tv_checkm:
	// Final masked block of BX (0..3) columns.
	TESTQ BX, BX
	JE    tv_done
	LOADMASK(BX, R12, Y15)
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	MOVQ SI, R9
	XORQ CX, CX
	MOVQ AX, R10
	ANDQ $-4, R10
	TESTQ R10, R10
	JE    tv_tail4

tv_loop4:
	VMASKMOVPD (R9), Y15, Y4
	VBROADCASTSD (DI)(CX*8), Y8
	VFMADD231PD Y4, Y8, Y0
	VMASKMOVPD (R9)(DX*1), Y15, Y5
	VBROADCASTSD 8(DI)(CX*8), Y9
	VFMADD231PD Y5, Y9, Y1
	LEAQ (R9)(DX*2), R9
	VMASKMOVPD (R9), Y15, Y6
	VBROADCASTSD 16(DI)(CX*8), Y10
	VFMADD231PD Y6, Y10, Y2
	VMASKMOVPD (R9)(DX*1), Y15, Y7
	VBROADCASTSD 24(DI)(CX*8), Y11
	VFMADD231PD Y7, Y11, Y3
	LEAQ (R9)(DX*2), R9
	ADDQ $4, CX
	CMPQ CX, R10
	JLT  tv_loop4

tv_tail4:
	CMPQ CX, AX
	JGE  tv_done4
	VMASKMOVPD (R9), Y15, Y4
	VBROADCASTSD (DI)(CX*8), Y8
	VFMADD231PD Y4, Y8, Y0
	ADDQ DX, R9
	INCQ CX
	JMP  tv_tail4

tv_done4:
	VADDPD Y1, Y0, Y0
	VADDPD Y3, Y2, Y2
	VADDPD Y2, Y0, Y0
	VMASKMOVPD Y0, Y15, (R8)

tv_done:
	VZEROUPPER
	RET

// func mulNTAsm(R, n int, x *float64, ldx int, a0, a1, a2, a3 *float64, y *float64, ldy int, k int)
//
// Register block: 3 rows of X × 4 rows of A, 12 accumulators, four columns
// per step. The masked column tail (n&3 columns at the end) is done first,
// initialising the accumulators. The last row block repeats its last row
// (and its output row), which stores identical values twice.
TEXT ·mulNTAsm(SB), NOSPLIT, $16-88
	MOVQ n+8(FP), AX
	MOVQ AX, CX
	ANDQ $3, CX
	SHLQ $3, CX
	NEGQ CX
	LEAQ maskTab<>+32(SB), BX
	ADDQ CX, BX
	MOVQ BX, 0(SP) // address of the tail mask
	MOVQ y+64(FP), BX
	MOVQ BX, 8(SP) // current output row
	MOVQ R+0(FP), BX
	MOVQ x+16(FP), DX
	MOVQ ldx+24(FP), SI
	SHLQ $3, SI
	MOVQ a0+32(FP), R11
	MOVQ a1+40(FP), R12
	MOVQ a2+48(FP), R13
	MOVQ a3+56(FP), DI

nt_rows:
	MOVQ n+8(FP), AX
	ANDQ $-4, AX
	MOVQ DX, R8
	LEAQ (R8)(SI*1), R9
	CMPQ BX, $2
	CMOVQLT R8, R9
	LEAQ (R9)(SI*1), R10
	CMPQ BX, $3
	CMOVQLT R9, R10

	CMPQ AX, n+8(FP)
	JEQ  nt_notail
	MOVQ 0(SP), CX
	VMOVUPD (CX), Y15
	VMASKMOVPD (R8)(AX*8), Y15, Y12
	VMASKMOVPD (R9)(AX*8), Y15, Y13
	VMASKMOVPD (R10)(AX*8), Y15, Y14
	VMASKMOVPD (R11)(AX*8), Y15, Y11
	VMULPD Y11, Y12, Y0
	VMULPD Y11, Y13, Y4
	VMULPD Y11, Y14, Y8
	VMASKMOVPD (R12)(AX*8), Y15, Y11
	VMULPD Y11, Y12, Y1
	VMULPD Y11, Y13, Y5
	VMULPD Y11, Y14, Y9
	VMASKMOVPD (R13)(AX*8), Y15, Y11
	VMULPD Y11, Y12, Y2
	VMULPD Y11, Y13, Y6
	VMULPD Y11, Y14, Y10
	VMASKMOVPD (DI)(AX*8), Y15, Y15
	VMULPD Y15, Y12, Y3
	VMULPD Y15, Y13, Y7
	VMULPD Y15, Y14, Y11
	JMP    nt_main

nt_notail:
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11

nt_main:
	XORQ  CX, CX
	TESTQ AX, AX
	JE    nt_reduce

nt_loop:
	VMOVUPD (R8)(CX*8), Y12
	VMOVUPD (R9)(CX*8), Y13
	VMOVUPD (R10)(CX*8), Y14
	VMOVUPD (R11)(CX*8), Y15
	VFMADD231PD Y15, Y12, Y0
	VFMADD231PD Y15, Y13, Y4
	VFMADD231PD Y15, Y14, Y8
	VMOVUPD (R12)(CX*8), Y15
	VFMADD231PD Y15, Y12, Y1
	VFMADD231PD Y15, Y13, Y5
	VFMADD231PD Y15, Y14, Y9
	VMOVUPD (R13)(CX*8), Y15
	VFMADD231PD Y15, Y12, Y2
	VFMADD231PD Y15, Y13, Y6
	VFMADD231PD Y15, Y14, Y10
	VMOVUPD (DI)(CX*8), Y15
	VFMADD231PD Y15, Y12, Y3
	VFMADD231PD Y15, Y13, Y7
	VFMADD231PD Y15, Y14, Y11
	ADDQ $4, CX
	CMPQ CX, AX
	JLT  nt_loop

nt_reduce:
	REDUCE4(Y0, Y1, Y2, Y3, Y12, Y0)
	REDUCE4(Y4, Y5, Y6, Y7, Y13, Y4)
	REDUCE4(Y8, Y9, Y10, Y11, Y14, Y8)

	// Output rows (repeated past the last valid row).
	MOVQ ldy+72(FP), AX
	SHLQ $3, AX
	MOVQ 8(SP), R8
	LEAQ (R8)(AX*1), R9
	CMPQ BX, $2
	CMOVQLT R8, R9
	LEAQ (R9)(AX*1), R10
	CMPQ BX, $3
	CMOVQLT R9, R10
	LEAQ (R8)(AX*2), CX
	ADDQ AX, CX
	MOVQ CX, 8(SP)

	MOVQ k+80(FP), AX
	CMPQ AX, $4
	JLT  nt_maskstore
	VMOVUPD Y0, (R8)
	VMOVUPD Y4, (R9)
	VMOVUPD Y8, (R10)
	JMP  nt_next

nt_maskstore:
	// Store the first k (1..3) lanes.
	CMPQ AX, $2
	JLT  nt_k1
	VMOVUPD X0, (R8)
	VMOVUPD X4, (R9)
	VMOVUPD X8, (R10)
	JEQ  nt_next
	VEXTRACTF128 $1, Y0, X0
	VEXTRACTF128 $1, Y4, X4
	VEXTRACTF128 $1, Y8, X8
	VMOVSD X0, 16(R8)
	VMOVSD X4, 16(R9)
	VMOVSD X8, 16(R10)
	JMP  nt_next

nt_k1:
	VMOVSD X0, (R8)
	VMOVSD X4, (R9)
	VMOVSD X8, (R10)

nt_next:
	LEAQ (DX)(SI*2), DX
	ADDQ SI, DX
	SUBQ $3, BX
	JGT  nt_rows
	VZEROUPPER
	RET

// func mulNNAsm(m, n int, x0, x1, x2, x3 *float64, a *float64, lda int, y0, y1, y2, y3 *float64)
//
// Register block: 4 rows × 12 columns (12 accumulators), looping over the m
// rows of A, then masked blocks of at most 4 columns.
TEXT ·mulNNAsm(SB), NOSPLIT, $0-96
	MOVQ m+0(FP), AX
	MOVQ n+8(FP), BX
	MOVQ x0+16(FP), R8
	MOVQ x1+24(FP), R9
	MOVQ x2+32(FP), R10
	MOVQ x3+40(FP), R11
	MOVQ lda+56(FP), DX
	SHLQ $3, DX
	XORQ SI, SI

nn_check12:
	CMPQ BX, $12
	JLT  nn_check4
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	MOVQ a+48(FP), R12
	LEAQ (R12)(SI*8), R12
	XORQ CX, CX

nn_loop12:
	VMOVUPD (R12), Y12
	VMOVUPD 32(R12), Y13
	VMOVUPD 64(R12), Y14
	VBROADCASTSD (R8)(CX*8), Y15
	VFMADD231PD Y12, Y15, Y0
	VFMADD231PD Y13, Y15, Y1
	VFMADD231PD Y14, Y15, Y2
	VBROADCASTSD (R9)(CX*8), Y15
	VFMADD231PD Y12, Y15, Y3
	VFMADD231PD Y13, Y15, Y4
	VFMADD231PD Y14, Y15, Y5
	VBROADCASTSD (R10)(CX*8), Y15
	VFMADD231PD Y12, Y15, Y6
	VFMADD231PD Y13, Y15, Y7
	VFMADD231PD Y14, Y15, Y8
	VBROADCASTSD (R11)(CX*8), Y15
	VFMADD231PD Y12, Y15, Y9
	VFMADD231PD Y13, Y15, Y10
	VFMADD231PD Y14, Y15, Y11
	ADDQ DX, R12
	INCQ CX
	CMPQ CX, AX
	JLT  nn_loop12

	MOVQ y0+64(FP), R13
	VMOVUPD Y0, (R13)(SI*8)
	VMOVUPD Y1, 32(R13)(SI*8)
	VMOVUPD Y2, 64(R13)(SI*8)
	MOVQ y1+72(FP), R13
	VMOVUPD Y3, (R13)(SI*8)
	VMOVUPD Y4, 32(R13)(SI*8)
	VMOVUPD Y5, 64(R13)(SI*8)
	MOVQ y2+80(FP), R13
	VMOVUPD Y6, (R13)(SI*8)
	VMOVUPD Y7, 32(R13)(SI*8)
	VMOVUPD Y8, 64(R13)(SI*8)
	MOVQ y3+88(FP), R13
	VMOVUPD Y9, (R13)(SI*8)
	VMOVUPD Y10, 32(R13)(SI*8)
	VMOVUPD Y11, 64(R13)(SI*8)
	ADDQ $12, SI
	SUBQ $12, BX
	JMP  nn_check12

nn_check4:
	TESTQ BX, BX
	JLE   nn_done
	MOVQ  $4, R13
	CMPQ  BX, $4
	CMOVQLT BX, R13
	LOADMASK(R13, DI, Y15)
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	MOVQ a+48(FP), R12
	LEAQ (R12)(SI*8), R12
	XORQ CX, CX

nn_loop4:
	VMASKMOVPD (R12), Y15, Y12
	VBROADCASTSD (R8)(CX*8), Y13
	VFMADD231PD Y12, Y13, Y0
	VBROADCASTSD (R9)(CX*8), Y14
	VFMADD231PD Y12, Y14, Y1
	VBROADCASTSD (R10)(CX*8), Y13
	VFMADD231PD Y12, Y13, Y2
	VBROADCASTSD (R11)(CX*8), Y14
	VFMADD231PD Y12, Y14, Y3
	ADDQ DX, R12
	INCQ CX
	CMPQ CX, AX
	JLT  nn_loop4

	CMPQ BX, $4
	JLT  nn_mstore
	MOVQ y0+64(FP), R13
	VMOVUPD Y0, (R13)(SI*8)
	MOVQ y1+72(FP), R13
	VMOVUPD Y1, (R13)(SI*8)
	MOVQ y2+80(FP), R13
	VMOVUPD Y2, (R13)(SI*8)
	MOVQ y3+88(FP), R13
	VMOVUPD Y3, (R13)(SI*8)
	ADDQ $4, SI
	SUBQ $4, BX
	JMP  nn_check4

nn_mstore:
	MOVQ y0+64(FP), R13
	VMASKMOVPD Y0, Y15, (R13)(SI*8)
	MOVQ y1+72(FP), R13
	VMASKMOVPD Y1, Y15, (R13)(SI*8)
	MOVQ y2+80(FP), R13
	VMASKMOVPD Y2, Y15, (R13)(SI*8)
	MOVQ y3+88(FP), R13
	VMASKMOVPD Y3, Y15, (R13)(SI*8)

nn_done:
	VZEROUPPER
	RET
