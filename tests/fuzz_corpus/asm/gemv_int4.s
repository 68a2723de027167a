; INT4 GEMV with weight scales: y = W x for a 64 x 256 INT4 matrix, once with
; one F32 scale per row and once with one F32 scale per group of 64 inputs.
; Both products read the same weights and activation and write different
; outputs, so they need no tokens. tests/sim_func_examples_test.cc runs it
; against the numerics core's linear_npu().
;
; DDR   0x0000  W, 64 rows x 128 bytes (two INT4 per byte, even element low)
;       0x2000  row scales, 64 x F32
;       0x2100  group scales, 64 rows x 4 groups x F32
; L2    0x0000  x, [1, 256] bf16
;       0x0200  y_row, [1, 64] bf16       0x0300  y_grp, [1, 64] f32
.isa 1
.region weights space=ddr role=weights base=0x0 size=0x2500
.region x space=l2 role=input base=0x0 size=0x200
.region y space=l2 role=output base=0x200 size=0x200
.desc w_row dtype=int4 space=ddr base=0x0 rows=64 cols=256 row_stride=128 scale_mode=row scale_base=0x2000 scale_stride=4
.desc w_grp dtype=int4 space=ddr base=0x0 rows=64 cols=256 row_stride=128 scale_mode=group scale_base=0x2100 scale_stride=16 group=64
.desc x dtype=bf16 space=l2 base=0x0 rows=1 cols=256 row_stride=512
.desc y_row dtype=bf16 space=l2 base=0x200 rows=1 cols=64 row_stride=128
.desc y_grp dtype=f32 space=l2 base=0x300 rows=1 cols=64 row_stride=256
.tensor y_row desc=y_row
.tensor y_grp desc=y_grp
    gemv.mv dst=y_row src=x w=w_row
    gemv.mv dst=y_grp src=x w=w_grp
    sys.halt
