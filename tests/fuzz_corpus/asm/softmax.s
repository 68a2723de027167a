; Row softmax of attention scores, 8 rows of 100, f32 in and out (the
; attention's score format), as the numerics core's softmax(): max, exp of
; the differences, lane-tree sum, one reciprocal.
;
; L2    0x0000  s, [8, 100] f32 (rows 512 bytes apart)
;       0x1000  p, [8, 100] f32
.isa 1
.region s space=l2 role=input base=0x0 size=0x1000
.region p space=l2 role=output base=0x1000 size=0x1000
.desc s dtype=f32 space=l2 base=0x0 rows=8 cols=100 row_stride=512
.desc p dtype=f32 space=l2 base=0x1000 rows=8 cols=100 row_stride=512
.tensor p desc=p
    cvo.softmax dst=p a=s
    sys.halt
