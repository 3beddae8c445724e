"""Arista EOS (the 7060X5/X6 fixed switches; the EOS64.swi image)."""
