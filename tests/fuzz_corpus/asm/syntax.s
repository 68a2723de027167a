; every directive and operand form
.isa 1
.region io space=wbuf role=scratch base=0x40 size=0x100
.desc a dtype=bf16 space=l2 base=0x0 rows=2 cols=8 row_stride=16
.desc - dtype=f32 space=l2 base=0x100 rows=2 cols=8 row_stride=32 row_reg=r3 dyn_reg=r2 dyn_dim=cols
.desc q dtype=int4 space=ddr base=0x1000 rows=4 cols=64 row_stride=32 scale_mode=two_level scale_base=0x2000 scale_stride=8 group=32 ring=1
.desc odd raw=0x80:0x0:0x0:0x1
.const eps f32 1e-06
.const - i32 -5
.const nan f32 nan
.const payload raw=0x7fc0000100000000
.tensor a.out desc=a at=1
.tensor b desc=#2
top:
    cvo.rmsnorm dst=#2 a=a b=- k=eps wait=dma|gemv signal=ctl
    alui.xor rd=r15 rs1=r0 imm=-1
    ldst.sd space=wbuf rd=r1 rs1=r2 imm=64
    br.geu rs1=r1 rs2=r2 target=end
    br.al target=top
    gemv.pv dst=a src=a w=q
    .word 0xf000000000000000
    sys.halt
end:
