; RMSNorm of 4 rows of 256 with a weight (the decoder's norms), and the
; weightless form (Gemma 3n's V norm), on the SFU. The weight is F32 in DDR;
; a DMA copy brings it to L2 and a token orders the copy before the norm.
; tests/sim_func_examples_test.cc checks both against the numerics core's rmsnorm().
;
; DDR   0x0000  w, [1, 256] f32
; L2    0x0000  x, [4, 256] bf16        0x0800  w copy, [1, 256] f32
;       0x1000  y, [4, 256] bf16        0x1800  v, [4, 256] bf16
.isa 1
.region weight space=ddr role=weights base=0x0 size=0x400
.region x space=l2 role=input base=0x0 size=0x800
.region out space=l2 role=output base=0x1000 size=0x1000
.desc w_ddr dtype=f32 space=ddr base=0x0 rows=1 cols=256 row_stride=1024
.desc w dtype=f32 space=l2 base=0x800 rows=1 cols=256 row_stride=1024
.desc x dtype=bf16 space=l2 base=0x0 rows=4 cols=256 row_stride=512
.desc y dtype=bf16 space=l2 base=0x1000 rows=4 cols=256 row_stride=512
.desc v dtype=bf16 space=l2 base=0x1800 rows=4 cols=256 row_stride=512
.const eps f32 1e-06
.tensor y desc=y
.tensor v desc=v
    memcpy dst=w src=w_ddr signal=sfu
    cvo.rmsnorm dst=y a=x b=w k=eps wait=dma
    cvo.rmsnorm dst=v a=x b=- k=eps
    sys.halt
