; One decode step of sliding-window, grouped-query attention over a KV ring:
; 4 query heads over 2 KV heads of 32, a ring of 16 positions, window 8.
; The position comes from memory at run time; registers carry the window:
;   r1 = pos, r2 = max(0, pos - 7) (first visible position), r3 = pos - r2 + 1.
; The new K / V rows are written into ring slot pos mod 16 (row_reg r1), the
; scores read the ring from r2 for r3 rows (row_reg r2, dyn_reg r3): causal and
; sliding-window masking are ranges. Tokens order DMA -> GEMV -> SFU -> GEMV.
; tests/sim_func_examples_test.cc compares ctx with the numerics core's attend().
;
; DDR   0x0000  pos, int32
;       0x1000  K ring, [16, 64] f16 (two KV heads side by side)
;       0x2000  V ring, [16, 64] f16
; L2    0x0000  q, [4, 32] bf16         0x0100  k_new, v_new, [1, 64] bf16 each
;       0x0200  s, [4, 16] f32 (run-time cols r3)    0x0400  ctx, [4, 32] bf16
.isa 1
.region pos space=ddr role=input base=0x0 size=0x10
.region kv space=ddr role=kv base=0x1000 size=0x1800
.region q space=l2 role=input base=0x0 size=0x200
.region ctx space=l2 role=output base=0x400 size=0x100
.desc q dtype=bf16 space=l2 base=0x0 rows=4 cols=32 row_stride=64
.desc k_new dtype=bf16 space=l2 base=0x100 rows=1 cols=64 row_stride=128
.desc v_new dtype=bf16 space=l2 base=0x180 rows=1 cols=64 row_stride=128
.desc k_slot dtype=f16 space=ddr base=0x1000 rows=16 cols=64 row_stride=128 row_reg=r1 dyn_reg=r4 ring=1
.desc v_slot dtype=f16 space=ddr base=0x2000 rows=16 cols=64 row_stride=128 row_reg=r1 dyn_reg=r4 ring=1
.desc k_win dtype=f16 space=ddr base=0x1000 rows=16 cols=64 row_stride=128 row_reg=r2 dyn_reg=r3 ring=1
.desc v_win dtype=f16 space=ddr base=0x2000 rows=16 cols=64 row_stride=128 row_reg=r2 dyn_reg=r3 ring=1
.desc s dtype=f32 space=l2 base=0x200 rows=4 cols=16 row_stride=64 dyn_reg=r3 dyn_dim=cols
.desc ctx dtype=bf16 space=l2 base=0x400 rows=4 cols=32 row_stride=64
.tensor s desc=s at=probs
.tensor ctx desc=ctx
    ldst.lw space=ddr rd=r1 rs1=r0 imm=0
    alui.add rd=r2 rs1=r1 imm=-7
    alui.max rd=r2 rs1=r2 imm=0
    alu.sub rd=r3 rs1=r1 rs2=r2
    alui.add rd=r3 rs1=r3 imm=1
    alui.add rd=r4 rs1=r0 imm=1
    memcpy dst=k_slot src=k_new
    memcpy dst=v_slot src=v_new signal=gemv
    gemv.qk dst=s src=q w=k_win wait=dma signal=sfu
probs:
    cvo.softmax dst=s a=s wait=gemv signal=gemv
    gemv.pv dst=ctx src=s w=v_win wait=sfu
    sys.halt
