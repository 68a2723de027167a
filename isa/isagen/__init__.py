"""The modules of isa/gen_isa.py: table (load and check), cpp, sv and md (emitters)."""
