; Half-split RoPE of 2 tokens x 4 heads x 64 at positions read at run time.
; The positions (INT32, written by the host) are converted to F32 by the DMA,
; multiplied by the constant inverse-frequency row (an outer product:
; [2, 1] x [1, 32]) into the angle table, and the SFU rotates each pair
; (i, i + 32) by cos / sin of its angle. Nothing about the positions is baked
; into the program. tests/sim_func_examples_test.cc compares with rope().
;
; DDR   0x0000  pos, [2, 1] int32 (16 bytes apart)
;       0x0100  inv_freq, [1, 32] f32: theta^(-2i/64) rounded to f32
; L2    0x0000  q, [8, 64] bf16 (token-major: token t holds rows 4t..4t+3)
;       0x0400  pos_f, [2, 1] f32       0x0500  ang, [2, 32] f32
.isa 1
.region pos space=ddr role=input base=0x0 size=0x20
.region inv_freq space=ddr role=weights base=0x100 size=0x80
.region q space=l2 role=input base=0x0 size=0x400
.desc pos dtype=int32 space=ddr base=0x0 rows=2 cols=1 row_stride=16
.desc inv_freq dtype=f32 space=ddr base=0x100 rows=1 cols=32 row_stride=128
.desc q dtype=bf16 space=l2 base=0x0 rows=8 cols=64 row_stride=128
.desc pos_f dtype=f32 space=l2 base=0x400 rows=2 cols=1 row_stride=16
.desc ang dtype=f32 space=l2 base=0x500 rows=2 cols=32 row_stride=128
.tensor ang desc=ang
.tensor q desc=q
    memcpy dst=pos_f src=pos signal=sfu
    cvo.mul dst=ang a=pos_f b=inv_freq wait=dma
    cvo.rope dst=q a=q b=ang
    sys.halt
