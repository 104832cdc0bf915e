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

// Constants of sech2Asm, four copies each:
//    0: absmask
//   32: clamp = 350.0
//   64: m2 = -2.0
//   96: log2e = 1.4426950408889634
//  128: mln2hi = -0.6931471803691238
//  160: mln2lo = -1.9082149292705877e-10
//  192: one = 1.0
//  224: four = 4.0
//  256: c13 = 1.6059043836821613e-10
//  288: c12 = 2.08767569878681e-09
//  320: c11 = 2.505210838544172e-08
//  352: c10 = 2.755731922398589e-07
//  384: c9 = 2.7557319223985893e-06
//  416: c8 = 2.48015873015873e-05
//  448: c7 = 0.0001984126984126984
//  480: c6 = 0.001388888888888889
//  512: c5 = 0.008333333333333333
//  544: c4 = 0.041666666666666664
//  576: c3 = 0.16666666666666666
//  608: c2 = 0.5
//  640: c1 = 1.0
//  672: c0 = 1.0
//  704: shift = 0x1.8p52 + 1023 (adding it rounds to an integer n held,
//       biased by 1023, in the low bits: shifted left by 52 they are 2ⁿ)
DATA sechTab<>+0(SB)/8, $0x7fffffffffffffff
DATA sechTab<>+8(SB)/8, $0x7fffffffffffffff
DATA sechTab<>+16(SB)/8, $0x7fffffffffffffff
DATA sechTab<>+24(SB)/8, $0x7fffffffffffffff
DATA sechTab<>+32(SB)/8, $0x4075e00000000000
DATA sechTab<>+40(SB)/8, $0x4075e00000000000
DATA sechTab<>+48(SB)/8, $0x4075e00000000000
DATA sechTab<>+56(SB)/8, $0x4075e00000000000
DATA sechTab<>+64(SB)/8, $0xc000000000000000
DATA sechTab<>+72(SB)/8, $0xc000000000000000
DATA sechTab<>+80(SB)/8, $0xc000000000000000
DATA sechTab<>+88(SB)/8, $0xc000000000000000
DATA sechTab<>+96(SB)/8, $0x3ff71547652b82fe
DATA sechTab<>+104(SB)/8, $0x3ff71547652b82fe
DATA sechTab<>+112(SB)/8, $0x3ff71547652b82fe
DATA sechTab<>+120(SB)/8, $0x3ff71547652b82fe
DATA sechTab<>+128(SB)/8, $0xbfe62e42fee00000
DATA sechTab<>+136(SB)/8, $0xbfe62e42fee00000
DATA sechTab<>+144(SB)/8, $0xbfe62e42fee00000
DATA sechTab<>+152(SB)/8, $0xbfe62e42fee00000
DATA sechTab<>+160(SB)/8, $0xbdea39ef35793c76
DATA sechTab<>+168(SB)/8, $0xbdea39ef35793c76
DATA sechTab<>+176(SB)/8, $0xbdea39ef35793c76
DATA sechTab<>+184(SB)/8, $0xbdea39ef35793c76
DATA sechTab<>+192(SB)/8, $0x3ff0000000000000
DATA sechTab<>+200(SB)/8, $0x3ff0000000000000
DATA sechTab<>+208(SB)/8, $0x3ff0000000000000
DATA sechTab<>+216(SB)/8, $0x3ff0000000000000
DATA sechTab<>+224(SB)/8, $0x4010000000000000
DATA sechTab<>+232(SB)/8, $0x4010000000000000
DATA sechTab<>+240(SB)/8, $0x4010000000000000
DATA sechTab<>+248(SB)/8, $0x4010000000000000
DATA sechTab<>+256(SB)/8, $0x3de6124613a86d09
DATA sechTab<>+264(SB)/8, $0x3de6124613a86d09
DATA sechTab<>+272(SB)/8, $0x3de6124613a86d09
DATA sechTab<>+280(SB)/8, $0x3de6124613a86d09
DATA sechTab<>+288(SB)/8, $0x3e21eed8eff8d898
DATA sechTab<>+296(SB)/8, $0x3e21eed8eff8d898
DATA sechTab<>+304(SB)/8, $0x3e21eed8eff8d898
DATA sechTab<>+312(SB)/8, $0x3e21eed8eff8d898
DATA sechTab<>+320(SB)/8, $0x3e5ae64567f544e4
DATA sechTab<>+328(SB)/8, $0x3e5ae64567f544e4
DATA sechTab<>+336(SB)/8, $0x3e5ae64567f544e4
DATA sechTab<>+344(SB)/8, $0x3e5ae64567f544e4
DATA sechTab<>+352(SB)/8, $0x3e927e4fb7789f5c
DATA sechTab<>+360(SB)/8, $0x3e927e4fb7789f5c
DATA sechTab<>+368(SB)/8, $0x3e927e4fb7789f5c
DATA sechTab<>+376(SB)/8, $0x3e927e4fb7789f5c
DATA sechTab<>+384(SB)/8, $0x3ec71de3a556c734
DATA sechTab<>+392(SB)/8, $0x3ec71de3a556c734
DATA sechTab<>+400(SB)/8, $0x3ec71de3a556c734
DATA sechTab<>+408(SB)/8, $0x3ec71de3a556c734
DATA sechTab<>+416(SB)/8, $0x3efa01a01a01a01a
DATA sechTab<>+424(SB)/8, $0x3efa01a01a01a01a
DATA sechTab<>+432(SB)/8, $0x3efa01a01a01a01a
DATA sechTab<>+440(SB)/8, $0x3efa01a01a01a01a
DATA sechTab<>+448(SB)/8, $0x3f2a01a01a01a01a
DATA sechTab<>+456(SB)/8, $0x3f2a01a01a01a01a
DATA sechTab<>+464(SB)/8, $0x3f2a01a01a01a01a
DATA sechTab<>+472(SB)/8, $0x3f2a01a01a01a01a
DATA sechTab<>+480(SB)/8, $0x3f56c16c16c16c17
DATA sechTab<>+488(SB)/8, $0x3f56c16c16c16c17
DATA sechTab<>+496(SB)/8, $0x3f56c16c16c16c17
DATA sechTab<>+504(SB)/8, $0x3f56c16c16c16c17
DATA sechTab<>+512(SB)/8, $0x3f81111111111111
DATA sechTab<>+520(SB)/8, $0x3f81111111111111
DATA sechTab<>+528(SB)/8, $0x3f81111111111111
DATA sechTab<>+536(SB)/8, $0x3f81111111111111
DATA sechTab<>+544(SB)/8, $0x3fa5555555555555
DATA sechTab<>+552(SB)/8, $0x3fa5555555555555
DATA sechTab<>+560(SB)/8, $0x3fa5555555555555
DATA sechTab<>+568(SB)/8, $0x3fa5555555555555
DATA sechTab<>+576(SB)/8, $0x3fc5555555555555
DATA sechTab<>+584(SB)/8, $0x3fc5555555555555
DATA sechTab<>+592(SB)/8, $0x3fc5555555555555
DATA sechTab<>+600(SB)/8, $0x3fc5555555555555
DATA sechTab<>+608(SB)/8, $0x3fe0000000000000
DATA sechTab<>+616(SB)/8, $0x3fe0000000000000
DATA sechTab<>+624(SB)/8, $0x3fe0000000000000
DATA sechTab<>+632(SB)/8, $0x3fe0000000000000
DATA sechTab<>+640(SB)/8, $0x3ff0000000000000
DATA sechTab<>+648(SB)/8, $0x3ff0000000000000
DATA sechTab<>+656(SB)/8, $0x3ff0000000000000
DATA sechTab<>+664(SB)/8, $0x3ff0000000000000
DATA sechTab<>+672(SB)/8, $0x3ff0000000000000
DATA sechTab<>+680(SB)/8, $0x3ff0000000000000
DATA sechTab<>+688(SB)/8, $0x3ff0000000000000
DATA sechTab<>+696(SB)/8, $0x3ff0000000000000
DATA sechTab<>+704(SB)/8, $0x43380000000003ff
DATA sechTab<>+712(SB)/8, $0x43380000000003ff
DATA sechTab<>+720(SB)/8, $0x43380000000003ff
DATA sechTab<>+728(SB)/8, $0x43380000000003ff
GLOBL sechTab<>(SB), RODATA|NOPTR, $736

// SECH2 sets Y2 = sech²(Y0) = 4u/(1+u)² with u = exp(−2·min(|x|, 350)),
// the exponential by a degree-13 Taylor polynomial after reduction by the
// nearest multiple n of ln 2 (found with the 1.5·2⁵² + 1023 shifter, whose
// low bits then hold the biased exponent of 2ⁿ). The polynomial is evaluated
// by Estrin's scheme (pairs, then powers r², r⁴, r⁸), which shortens the
// dependency chain for short calls. It clobbers Y0..Y7; R9 holds the address
// of sechTab, Y8..Y14 the constants absmask, clamp, −2, log2e, 1, 4 and the
// shifter. NaN propagates.
#define SECH2 \
	VANDPD Y8, Y0, Y0               \
	VMINPD Y0, Y9, Y0               \
	VMULPD Y10, Y0, Y0              \
	VMOVAPD Y14, Y1                 \
	VFMADD231PD Y11, Y0, Y1         \
	VPSLLQ $52, Y1, Y3              \
	VSUBPD Y14, Y1, Y1              \
	VFMADD231PD 128(R9), Y1, Y0     \
	VFMADD231PD 160(R9), Y1, Y0     \
	VMULPD Y0, Y0, Y1               \
	VMOVUPD 256(R9), Y2             \
	VFMADD213PD 288(R9), Y0, Y2     \
	VMOVUPD 320(R9), Y4             \
	VFMADD213PD 352(R9), Y0, Y4     \
	VMOVUPD 384(R9), Y5             \
	VFMADD213PD 416(R9), Y0, Y5     \
	VMOVUPD 448(R9), Y6             \
	VFMADD213PD 480(R9), Y0, Y6     \
	VMOVUPD 512(R9), Y7             \
	VFMADD213PD 544(R9), Y0, Y7     \
	VFMADD231PD Y4, Y1, Y5          \
	VFMADD231PD Y6, Y1, Y7          \
	VMOVUPD 576(R9), Y4             \
	VFMADD213PD 608(R9), Y0, Y4     \
	VMOVUPD 640(R9), Y6             \
	VFMADD213PD 672(R9), Y0, Y6     \
	VFMADD231PD Y4, Y1, Y6          \
	VMULPD Y1, Y1, Y1               \
	VFMADD231PD Y2, Y1, Y5          \
	VFMADD231PD Y7, Y1, Y6          \
	VMULPD Y1, Y1, Y1               \
	VFMADD231PD Y5, Y1, Y6          \
	VMULPD Y3, Y6, Y2               \
	VADDPD Y12, Y2, Y4              \
	VMULPD Y4, Y4, Y4               \
	VMULPD Y13, Y2, Y2              \
	VDIVPD Y4, Y2, Y2

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

// func sech2Asm(rows, n int, x *float64, ldx int, b, a, y *float64, ldy int)
//
// Y[r][j] = a[j]·sech²(X[r][j] + b[j]) for r < rows, j < n (rows, n ≥ 1),
// four at a time, then a masked tail in each row. One call covers all rows so
// that the long dependency chains of consecutive vectors overlap.
TEXT ·sech2Asm(SB), NOSPLIT, $0-64
	MOVQ rows+0(FP), R11
	MOVQ x+16(FP), SI
	MOVQ ldx+24(FP), R12
	SHLQ $3, R12
	MOVQ b+32(FP), DI
	MOVQ a+40(FP), DX
	MOVQ y+48(FP), R8
	MOVQ ldy+56(FP), R13
	SHLQ $3, R13
	LEAQ sechTab<>(SB), R9
	VMOVUPD 0(R9), Y8
	VMOVUPD 32(R9), Y9
	VMOVUPD 64(R9), Y10
	VMOVUPD 96(R9), Y11
	VMOVUPD 192(R9), Y12
	VMOVUPD 224(R9), Y13
	VMOVUPD 704(R9), Y14
	MOVQ n+8(FP), BX
	MOVQ BX, R14
	ANDQ $-4, BX
	ANDQ $3, R14
	MOVQ R14, AX
	LOADMASK(AX, R10, Y15)

sh_row:
	XORQ CX, CX
	TESTQ BX, BX
	JE    sh_tail

sh_loop:
	VMOVUPD (SI)(CX*8), Y0
	VADDPD (DI)(CX*8), Y0, Y0
	SECH2
	VMULPD (DX)(CX*8), Y2, Y2
	VMOVUPD Y2, (R8)(CX*8)
	ADDQ $4, CX
	CMPQ CX, BX
	JLT  sh_loop

sh_tail:
	TESTQ R14, R14
	JE    sh_next
	VMASKMOVPD (SI)(CX*8), Y15, Y0
	VMASKMOVPD (DI)(CX*8), Y15, Y5
	VADDPD Y5, Y0, Y0
	SECH2
	VMASKMOVPD (DX)(CX*8), Y15, Y5
	VMULPD Y5, Y2, Y2
	VMASKMOVPD Y2, Y15, (R8)(CX*8)

sh_next:
	ADDQ R12, SI
	ADDQ R13, R8
	DECQ R11
	JNE  sh_row
	VZEROUPPER
	RET
