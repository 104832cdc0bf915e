//go:build amd64 && !noasm

#include "textflag.h"

// AVX2 + FMA3 kernels. See kernel_amd64.go for the prototypes.
//
// Every matrix kernel ends with the same epilogue: the accumulated products
// are multiplied by alpha and, when the acc argument is non-zero, added to
// the output; otherwise the output is overwritten without being read.
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

// PN_ROWPTRS sets R11..R14 to the A rows of the current tile (base R8, row
// stride R9 bytes); rows past the BX remaining ones repeat the last valid row.
#define PN_ROWPTRS \
	MOVQ R8, R11           \
	LEAQ (R11)(R9*1), R12  \
	CMPQ BX, $2            \
	CMOVQLT R11, R12       \
	LEAQ (R12)(R9*1), R13  \
	CMPQ BX, $3            \
	CMOVQLT R12, R13       \
	LEAQ (R13)(R9*1), R14  \
	CMPQ BX, $4            \
	CMOVQLT R13, R14

// PN_CPTRS sets R11..R14 to the C rows of the current tile (base AX) and SI
// to the C row stride in bytes.
#define PN_CPTRS \
	MOVQ ldc+64(FP), SI    \
	SHLQ $3, SI            \
	MOVQ AX, R11           \
	LEAQ (R11)(SI*1), R12  \
	LEAQ (R12)(SI*1), R13  \
	LEAQ (R13)(SI*1), R14

// PN_NEXT advances to the next tile of four rows and loops to lbl if any
// rows remain.
#define PN_NEXT(lbl) \
	LEAQ (AX)(SI*4), AX    \
	LEAQ (R8)(R9*4), R8    \
	SUBQ $4, BX            \
	JGT  lbl

// func matVecAsm(m, n int, a *float64, lda int, x, y *float64, alpha float64, acc int)
//
// Rows are processed four at a time (the last block repeats its last row and
// stores only the valid lanes), columns eight at a time, then four, then a
// masked tail.
TEXT ·matVecAsm(SB), NOSPLIT, $0-64
	MOVQ m+0(FP), BX
	MOVQ n+8(FP), AX
	MOVQ a+16(FP), SI
	MOVQ lda+24(FP), DX
	SHLQ $3, DX
	MOVQ x+32(FP), DI
	MOVQ y+40(FP), R12
	VBROADCASTSD alpha+48(FP), Y14

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
	VMULPD Y14, Y0, Y0
	CMPQ BX, $4
	JLT  mv_partial
	CMPQ acc+56(FP), $0
	JEQ  mv_store
	VADDPD (R12), Y0, Y0

mv_store:
	VMOVUPD Y0, (R12)
	ADDQ $32, R12
	LEAQ (SI)(DX*4), SI
	SUBQ $4, BX
	JNE  mv_rows
	VZEROUPPER
	RET

mv_partial:
	// Store the first BX (1..3) lanes of Y0.
	LOADMASK(BX, CX, Y13)
	CMPQ acc+56(FP), $0
	JEQ  mv_pstore
	VMASKMOVPD (R12), Y13, Y1
	VADDPD Y1, Y0, Y0

mv_pstore:
	VMASKMOVPD Y0, Y13, (R12)
	VZEROUPPER
	RET

// func matTVecAsm(m, n int, a *float64, lda int, x, y *float64, alpha float64, acc int)
//
// Column blocks of 32 (8 accumulators), then 16 (rows unrolled by two), then
// blocks of 4 and a final masked block (rows unrolled by four). Each block loops over
// all m rows, broadcasting x[i].
TEXT ·matTVecAsm(SB), NOSPLIT, $0-64
	MOVQ m+0(FP), AX
	MOVQ n+8(FP), BX
	MOVQ a+16(FP), SI
	MOVQ lda+24(FP), DX
	SHLQ $3, DX
	MOVQ x+32(FP), DI
	MOVQ y+40(FP), R8
	VBROADCASTSD alpha+48(FP), Y14
	MOVQ acc+56(FP), R13

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

	VMULPD Y14, Y0, Y0
	VMULPD Y14, Y1, Y1
	VMULPD Y14, Y2, Y2
	VMULPD Y14, Y3, Y3
	VMULPD Y14, Y4, Y4
	VMULPD Y14, Y5, Y5
	VMULPD Y14, Y6, Y6
	VMULPD Y14, Y7, Y7
	TESTQ R13, R13
	JE    tv_st32
	VADDPD (R8), Y0, Y0
	VADDPD 32(R8), Y1, Y1
	VADDPD 64(R8), Y2, Y2
	VADDPD 96(R8), Y3, Y3
	VADDPD 128(R8), Y4, Y4
	VADDPD 160(R8), Y5, Y5
	VADDPD 192(R8), Y6, Y6
	VADDPD 224(R8), Y7, Y7

tv_st32:
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
	VMULPD Y14, Y0, Y0
	VMULPD Y14, Y1, Y1
	VMULPD Y14, Y2, Y2
	VMULPD Y14, Y3, Y3
	TESTQ R13, R13
	JE    tv_st16
	VADDPD (R8), Y0, Y0
	VADDPD 32(R8), Y1, Y1
	VADDPD 64(R8), Y2, Y2
	VADDPD 96(R8), Y3, Y3

tv_st16:
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
	VMULPD Y14, Y0, Y0
	TESTQ R13, R13
	JE    tv_st4
	VADDPD (R8), Y0, Y0

tv_st4:
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
	VMULPD Y14, Y0, Y0
	TESTQ R13, R13
	JE    tv_stm
	VMASKMOVPD (R8), Y15, Y1
	VADDPD Y1, Y0, Y0

tv_stm:
	VMASKMOVPD Y0, Y15, (R8)

tv_done:
	VZEROUPPER
	RET

// func dotTileAsm(R, n int, x *float64, ldx int, b0, b1, b2 *float64, y *float64, ldy int, k int, alpha float64, acc int)
//
// Register block: 4 rows of X × 3 rows of B, 12 accumulators, four columns
// per step. The masked column tail (n&3 columns at the end) is done first,
// initialising the accumulators. The last row block repeats its last row for
// the loads and stores only the valid rows.
TEXT ·dotTileAsm(SB), NOSPLIT, $24-96
	MOVQ n+8(FP), AX
	MOVQ AX, CX
	ANDQ $3, CX
	SHLQ $3, CX
	NEGQ CX
	LEAQ maskTab<>+32(SB), BX
	ADDQ CX, BX
	MOVQ BX, 0(SP) // address of the tail mask
	MOVQ k+72(FP), CX
	SHLQ $3, CX
	NEGQ CX
	LEAQ maskTab<>+32(SB), BX
	ADDQ CX, BX
	MOVQ BX, 16(SP) // address of the mask of the k output lanes
	MOVQ y+56(FP), BX
	MOVQ BX, 8(SP) // current output row
	MOVQ R+0(FP), BX
	MOVQ x+16(FP), DX
	MOVQ ldx+24(FP), SI
	SHLQ $3, SI
	MOVQ b0+32(FP), R12
	MOVQ b1+40(FP), R13
	MOVQ b2+48(FP), R14

dt_rows:
	MOVQ n+8(FP), AX
	ANDQ $-4, AX
	MOVQ DX, R8
	LEAQ (R8)(SI*1), R9
	CMPQ BX, $2
	CMOVQLT R8, R9
	LEAQ (R9)(SI*1), R10
	CMPQ BX, $3
	CMOVQLT R9, R10
	LEAQ (R10)(SI*1), R11
	CMPQ BX, $4
	CMOVQLT R10, R11

	CMPQ AX, n+8(FP)
	JEQ  dt_notail
	MOVQ 0(SP), CX
	VMOVUPD (CX), Y11
	VMASKMOVPD (R12)(AX*8), Y11, Y12
	VMASKMOVPD (R13)(AX*8), Y11, Y13
	VMASKMOVPD (R14)(AX*8), Y11, Y14
	VMASKMOVPD (R8)(AX*8), Y11, Y15
	VMULPD Y12, Y15, Y0
	VMULPD Y13, Y15, Y1
	VMULPD Y14, Y15, Y2
	VMASKMOVPD (R9)(AX*8), Y11, Y15
	VMULPD Y12, Y15, Y3
	VMULPD Y13, Y15, Y4
	VMULPD Y14, Y15, Y5
	VMASKMOVPD (R10)(AX*8), Y11, Y15
	VMULPD Y12, Y15, Y6
	VMULPD Y13, Y15, Y7
	VMULPD Y14, Y15, Y8
	VMASKMOVPD (R11)(AX*8), Y11, Y15
	VMULPD Y12, Y15, Y9
	VMULPD Y13, Y15, Y10
	VMULPD Y14, Y15, Y11
	JMP    dt_main

dt_notail:
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

dt_main:
	XORQ  CX, CX
	TESTQ AX, AX
	JE    dt_reduce

dt_loop:
	VMOVUPD (R12)(CX*8), Y12
	VMOVUPD (R13)(CX*8), Y13
	VMOVUPD (R14)(CX*8), Y14
	VMOVUPD (R8)(CX*8), Y15
	VFMADD231PD Y12, Y15, Y0
	VFMADD231PD Y13, Y15, Y1
	VFMADD231PD Y14, Y15, Y2
	VMOVUPD (R9)(CX*8), Y15
	VFMADD231PD Y12, Y15, Y3
	VFMADD231PD Y13, Y15, Y4
	VFMADD231PD Y14, Y15, Y5
	VMOVUPD (R10)(CX*8), Y15
	VFMADD231PD Y12, Y15, Y6
	VFMADD231PD Y13, Y15, Y7
	VFMADD231PD Y14, Y15, Y8
	VMOVUPD (R11)(CX*8), Y15
	VFMADD231PD Y12, Y15, Y9
	VFMADD231PD Y13, Y15, Y10
	VFMADD231PD Y14, Y15, Y11
	ADDQ $4, CX
	CMPQ CX, AX
	JLT  dt_loop

dt_reduce:
	REDUCE4(Y0, Y1, Y2, Y2, Y12, Y0)
	REDUCE4(Y3, Y4, Y5, Y5, Y13, Y3)
	REDUCE4(Y6, Y7, Y8, Y8, Y14, Y6)
	REDUCE4(Y9, Y10, Y11, Y11, Y15, Y9)
	VBROADCASTSD alpha+80(FP), Y15
	VMULPD Y15, Y0, Y0
	VMULPD Y15, Y3, Y3
	VMULPD Y15, Y6, Y6
	VMULPD Y15, Y9, Y9

	// Output rows; only the first min(BX, 4) are valid, and only the first
	// k lanes of each.
	MOVQ ldy+64(FP), AX
	SHLQ $3, AX
	MOVQ 8(SP), R8
	LEAQ (R8)(AX*1), R9
	LEAQ (R9)(AX*1), R10
	LEAQ (R10)(AX*1), R11
	LEAQ (R11)(AX*1), CX
	MOVQ CX, 8(SP)
	MOVQ 16(SP), CX
	VMOVUPD (CX), Y15
	CMPQ acc+88(FP), $0
	JEQ  dt_store
	VMASKMOVPD (R8), Y15, Y1
	VADDPD Y1, Y0, Y0
	CMPQ BX, $2
	JLT  dt_store
	VMASKMOVPD (R9), Y15, Y4
	VADDPD Y4, Y3, Y3
	CMPQ BX, $3
	JLT  dt_store
	VMASKMOVPD (R10), Y15, Y7
	VADDPD Y7, Y6, Y6
	CMPQ BX, $4
	JLT  dt_store
	VMASKMOVPD (R11), Y15, Y10
	VADDPD Y10, Y9, Y9

dt_store:
	VMASKMOVPD Y0, Y15, (R8)
	CMPQ BX, $2
	JLT  dt_done
	VMASKMOVPD Y3, Y15, (R9)
	CMPQ BX, $3
	JLT  dt_done
	VMASKMOVPD Y6, Y15, (R10)
	CMPQ BX, $4
	JLT  dt_done
	VMASKMOVPD Y9, Y15, (R11)
	LEAQ (DX)(SI*4), DX
	SUBQ $4, BX
	JGT  dt_rows

dt_done:
	VZEROUPPER
	RET

// func panelAsm(m, k int, a *float64, rsA, csA int, b *float64, ldb int, c *float64, ldc int, alpha float64, acc, w int)
//
// C[i][j] = alpha·Σ_p a[i*rsA + p*csA]·b[p*ldb + j] (+ C[i][j] if acc) for
// i < m, j < w, p < k: one panel of w columns (12, or 5..8 with the second
// vector masked, or 1..4 masked) of a
// product whose left factor is read with arbitrary row and column strides
// (A or Aᵀ). Register tiles of 4 rows × w columns; the B panel stays in L1
// while the tiles walk down the rows. The last tile repeats its last row for
// the loads and stores only the valid rows.
TEXT ·panelAsm(SB), NOSPLIT, $0-96
	MOVQ m+0(FP), BX
	MOVQ a+16(FP), R8
	MOVQ rsA+24(FP), R9
	SHLQ $3, R9
	MOVQ csA+32(FP), R10
	SHLQ $3, R10
	MOVQ ldb+48(FP), DX
	SHLQ $3, DX
	MOVQ c+56(FP), AX
	MOVQ w+88(FP), CX
	CMPQ CX, $12
	JEQ  pn12
	CMPQ CX, $4
	JLE  pn4pre
	SUBQ $4, CX
	LOADMASK(CX, SI, Y15) // mask of the second vector of an 8-wide panel
	JMP  pn8

pn4pre:
	LOADMASK(CX, SI, Y15)
	JMP  pn4

pn12:
	PN_ROWPTRS
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
	MOVQ b+40(FP), SI
	XORQ DI, DI
	MOVQ k+8(FP), CX

pn12_loop:
	VMOVUPD (SI), Y12
	VMOVUPD 32(SI), Y13
	VMOVUPD 64(SI), Y14
	VBROADCASTSD (R11)(DI*1), Y15
	VFMADD231PD Y12, Y15, Y0
	VFMADD231PD Y13, Y15, Y1
	VFMADD231PD Y14, Y15, Y2
	VBROADCASTSD (R12)(DI*1), Y15
	VFMADD231PD Y12, Y15, Y3
	VFMADD231PD Y13, Y15, Y4
	VFMADD231PD Y14, Y15, Y5
	VBROADCASTSD (R13)(DI*1), Y15
	VFMADD231PD Y12, Y15, Y6
	VFMADD231PD Y13, Y15, Y7
	VFMADD231PD Y14, Y15, Y8
	VBROADCASTSD (R14)(DI*1), Y15
	VFMADD231PD Y12, Y15, Y9
	VFMADD231PD Y13, Y15, Y10
	VFMADD231PD Y14, Y15, Y11
	ADDQ DX, SI
	ADDQ R10, DI
	DECQ CX
	JNE  pn12_loop

	VBROADCASTSD alpha+72(FP), Y12
	VMULPD Y12, Y0, Y0
	VMULPD Y12, Y1, Y1
	VMULPD Y12, Y2, Y2
	VMULPD Y12, Y3, Y3
	VMULPD Y12, Y4, Y4
	VMULPD Y12, Y5, Y5
	VMULPD Y12, Y6, Y6
	VMULPD Y12, Y7, Y7
	VMULPD Y12, Y8, Y8
	VMULPD Y12, Y9, Y9
	VMULPD Y12, Y10, Y10
	VMULPD Y12, Y11, Y11
	PN_CPTRS
	CMPQ acc+80(FP), $0
	JEQ  pn12_store
	VADDPD (R11), Y0, Y0
	VADDPD 32(R11), Y1, Y1
	VADDPD 64(R11), Y2, Y2
	CMPQ BX, $2
	JLT  pn12_store
	VADDPD (R12), Y3, Y3
	VADDPD 32(R12), Y4, Y4
	VADDPD 64(R12), Y5, Y5
	CMPQ BX, $3
	JLT  pn12_store
	VADDPD (R13), Y6, Y6
	VADDPD 32(R13), Y7, Y7
	VADDPD 64(R13), Y8, Y8
	CMPQ BX, $4
	JLT  pn12_store
	VADDPD (R14), Y9, Y9
	VADDPD 32(R14), Y10, Y10
	VADDPD 64(R14), Y11, Y11

pn12_store:
	VMOVUPD Y0, (R11)
	VMOVUPD Y1, 32(R11)
	VMOVUPD Y2, 64(R11)
	CMPQ BX, $2
	JLT  pn_done
	VMOVUPD Y3, (R12)
	VMOVUPD Y4, 32(R12)
	VMOVUPD Y5, 64(R12)
	CMPQ BX, $3
	JLT  pn_done
	VMOVUPD Y6, (R13)
	VMOVUPD Y7, 32(R13)
	VMOVUPD Y8, 64(R13)
	CMPQ BX, $4
	JLT  pn_done
	VMOVUPD Y9, (R14)
	VMOVUPD Y10, 32(R14)
	VMOVUPD Y11, 64(R14)
	PN_NEXT(pn12)
	JMP  pn_done

pn8:
	PN_ROWPTRS
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	MOVQ b+40(FP), SI
	XORQ DI, DI
	MOVQ k+8(FP), CX

pn8_loop:
	VMOVUPD (SI), Y12
	VMASKMOVPD 32(SI), Y15, Y13
	VBROADCASTSD (R11)(DI*1), Y8
	VFMADD231PD Y12, Y8, Y0
	VFMADD231PD Y13, Y8, Y1
	VBROADCASTSD (R12)(DI*1), Y9
	VFMADD231PD Y12, Y9, Y2
	VFMADD231PD Y13, Y9, Y3
	VBROADCASTSD (R13)(DI*1), Y10
	VFMADD231PD Y12, Y10, Y4
	VFMADD231PD Y13, Y10, Y5
	VBROADCASTSD (R14)(DI*1), Y11
	VFMADD231PD Y12, Y11, Y6
	VFMADD231PD Y13, Y11, Y7
	ADDQ DX, SI
	ADDQ R10, DI
	DECQ CX
	JNE  pn8_loop

	VBROADCASTSD alpha+72(FP), Y12
	VMULPD Y12, Y0, Y0
	VMULPD Y12, Y1, Y1
	VMULPD Y12, Y2, Y2
	VMULPD Y12, Y3, Y3
	VMULPD Y12, Y4, Y4
	VMULPD Y12, Y5, Y5
	VMULPD Y12, Y6, Y6
	VMULPD Y12, Y7, Y7
	PN_CPTRS
	CMPQ acc+80(FP), $0
	JEQ  pn8_store
	VADDPD (R11), Y0, Y0
	VMASKMOVPD 32(R11), Y15, Y9
	VADDPD Y9, Y1, Y1
	CMPQ BX, $2
	JLT  pn8_store
	VADDPD (R12), Y2, Y2
	VMASKMOVPD 32(R12), Y15, Y9
	VADDPD Y9, Y3, Y3
	CMPQ BX, $3
	JLT  pn8_store
	VADDPD (R13), Y4, Y4
	VMASKMOVPD 32(R13), Y15, Y9
	VADDPD Y9, Y5, Y5
	CMPQ BX, $4
	JLT  pn8_store
	VADDPD (R14), Y6, Y6
	VMASKMOVPD 32(R14), Y15, Y9
	VADDPD Y9, Y7, Y7

pn8_store:
	VMOVUPD Y0, (R11)
	VMASKMOVPD Y1, Y15, 32(R11)
	CMPQ BX, $2
	JLT  pn_done
	VMOVUPD Y2, (R12)
	VMASKMOVPD Y3, Y15, 32(R12)
	CMPQ BX, $3
	JLT  pn_done
	VMOVUPD Y4, (R13)
	VMASKMOVPD Y5, Y15, 32(R13)
	CMPQ BX, $4
	JLT  pn_done
	VMOVUPD Y6, (R14)
	VMASKMOVPD Y7, Y15, 32(R14)
	PN_NEXT(pn8)
	JMP  pn_done

pn4:
	// Masked panel of at most 4 columns (mask in Y15); the k loop is
	// unrolled by two into two sets of accumulators (Y0..Y3, Y4..Y7).
	PN_ROWPTRS
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	MOVQ b+40(FP), SI
	XORQ DI, DI
	MOVQ k+8(FP), CX
	SHRQ $1, CX
	JEQ  pn4_tail

pn4_loop:
	VMASKMOVPD (SI), Y15, Y12
	VMASKMOVPD (SI)(DX*1), Y15, Y13
	VBROADCASTSD (R11)(DI*1), Y8
	VFMADD231PD Y12, Y8, Y0
	VBROADCASTSD (R12)(DI*1), Y9
	VFMADD231PD Y12, Y9, Y1
	VBROADCASTSD (R13)(DI*1), Y10
	VFMADD231PD Y12, Y10, Y2
	VBROADCASTSD (R14)(DI*1), Y11
	VFMADD231PD Y12, Y11, Y3
	ADDQ R10, DI
	VBROADCASTSD (R11)(DI*1), Y8
	VFMADD231PD Y13, Y8, Y4
	VBROADCASTSD (R12)(DI*1), Y9
	VFMADD231PD Y13, Y9, Y5
	VBROADCASTSD (R13)(DI*1), Y10
	VFMADD231PD Y13, Y10, Y6
	VBROADCASTSD (R14)(DI*1), Y11
	VFMADD231PD Y13, Y11, Y7
	ADDQ R10, DI
	LEAQ (SI)(DX*2), SI
	DECQ CX
	JNE  pn4_loop

pn4_tail:
	MOVQ k+8(FP), CX
	ANDQ $1, CX
	JEQ  pn4_epi
	VMASKMOVPD (SI), Y15, Y12
	VBROADCASTSD (R11)(DI*1), Y8
	VFMADD231PD Y12, Y8, Y0
	VBROADCASTSD (R12)(DI*1), Y9
	VFMADD231PD Y12, Y9, Y1
	VBROADCASTSD (R13)(DI*1), Y10
	VFMADD231PD Y12, Y10, Y2
	VBROADCASTSD (R14)(DI*1), Y11
	VFMADD231PD Y12, Y11, Y3

pn4_epi:
	VADDPD Y4, Y0, Y0
	VADDPD Y5, Y1, Y1
	VADDPD Y6, Y2, Y2
	VADDPD Y7, Y3, Y3
	VBROADCASTSD alpha+72(FP), Y12
	VMULPD Y12, Y0, Y0
	VMULPD Y12, Y1, Y1
	VMULPD Y12, Y2, Y2
	VMULPD Y12, Y3, Y3
	PN_CPTRS
	CMPQ acc+80(FP), $0
	JEQ  pn4_store
	VMASKMOVPD (R11), Y15, Y8
	VADDPD Y8, Y0, Y0
	CMPQ BX, $2
	JLT  pn4_store
	VMASKMOVPD (R12), Y15, Y9
	VADDPD Y9, Y1, Y1
	CMPQ BX, $3
	JLT  pn4_store
	VMASKMOVPD (R13), Y15, Y10
	VADDPD Y10, Y2, Y2
	CMPQ BX, $4
	JLT  pn4_store
	VMASKMOVPD (R14), Y15, Y11
	VADDPD Y11, Y3, Y3

pn4_store:
	VMASKMOVPD Y0, Y15, (R11)
	CMPQ BX, $2
	JLT  pn_done
	VMASKMOVPD Y1, Y15, (R12)
	CMPQ BX, $3
	JLT  pn_done
	VMASKMOVPD Y2, Y15, (R13)
	CMPQ BX, $4
	JLT  pn_done
	VMASKMOVPD Y3, Y15, (R14)
	PN_NEXT(pn4)

pn_done:
	VZEROUPPER
	RET
