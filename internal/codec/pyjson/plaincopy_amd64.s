//go:build !purego

#include "textflag.h"

// A byte is plain when, as a signed byte, it is above 0x1f (which leaves
// out the control characters and every byte from 0x80 up), it is not
// 0x7f, and it is neither '"' nor '\\'. PLAIN_CONSTS puts the four bytes
// of that test, sixteen times each, in X1-X4; PLAIN_STOPS judges the block
// in X0 (and overwrites it), leaving in AX the mask of the bytes that are
// not plain, with the flags of that mask (ZF: none).
#define PLAIN_CONSTS \
	MOVQ $0x1f1f1f1f1f1f1f1f, AX; MOVQ AX, X1; PUNPCKLQDQ X1, X1; \
	MOVQ $0x7f7f7f7f7f7f7f7f, AX; MOVQ AX, X2; PUNPCKLQDQ X2, X2; \
	MOVQ $0x2222222222222222, AX; MOVQ AX, X3; PUNPCKLQDQ X3, X3; \
	MOVQ $0x5c5c5c5c5c5c5c5c, AX; MOVQ AX, X4; PUNPCKLQDQ X4, X4

#define PLAIN_STOPS \
	MOVO X0, X5; PCMPGTB X1, X5; /* above 0x1f, signed */ \
	MOVO X0, X6; PCMPEQB X2, X6; /* 0x7f */ \
	PANDN X5, X6; /* X6 = above 0x1f and not 0x7f */ \
	MOVO X0, X7; PCMPEQB X3, X7; /* '"' */ \
	PCMPEQB X4, X0; /* '\\' */ \
	POR X0, X7; \
	PANDN X6, X7; /* X7 = plain */ \
	PMOVMSKB X7, AX; \
	XORL $0xffff, AX

// func copyPlain(dst []byte, s string) (n int, stopped bool)
//
// Each block of sixteen bytes is loaded, stored, then judged; the first
// block with a byte that is not plain ends the loop, and BSF finds that
// byte in the block's mask.
TEXT ·copyPlain(SB), NOSPLIT, $0-49
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), R8
	MOVQ s_base+24(FP), SI
	MOVQ s_len+32(FP), R9
	CMPQ R9, R8
	CMOVQLT R9, R8 // R8: the length both have
	SUBQ $16, R8 // a block starts at most here
	PLAIN_CONSTS
	XORQ CX, CX // the block's offset

loop:
	CMPQ CX, R8
	JGT  none
	MOVOU (SI)(CX*1), X0
	MOVOU X0, (DI)(CX*1)
	PLAIN_STOPS
	JNZ stop
	ADDQ $16, CX
	JMP loop

stop:
	BSFL AX, AX
	ADDQ CX, AX
	MOVQ AX, n+40(FP)
	MOVB $1, stopped+48(FP)
	RET

none:
	MOVQ CX, n+40(FP)
	MOVB $0, stopped+48(FP)
	RET

// func skipPlain(s string) (n int, stopped bool)
//
// copyPlain's loop without the store.
TEXT ·skipPlain(SB), NOSPLIT, $0-25
	MOVQ s_base+0(FP), SI
	MOVQ s_len+8(FP), R8
	SUBQ $16, R8 // a block starts at most here
	PLAIN_CONSTS
	XORQ CX, CX // the block's offset

skiploop:
	CMPQ CX, R8
	JGT  skipnone
	MOVOU (SI)(CX*1), X0
	PLAIN_STOPS
	JNZ skipstop
	ADDQ $16, CX
	JMP skiploop

skipstop:
	BSFL AX, AX
	ADDQ CX, AX
	MOVQ AX, n+16(FP)
	MOVB $1, stopped+24(FP)
	RET

skipnone:
	MOVQ CX, n+16(FP)
	MOVB $0, stopped+24(FP)
	RET
