"""The packed int32 layouts of a GPTQ checkpoint, read in Triton: qweight
packs eight 4-bit codes of consecutive input rows into one int32 of a
column (row r in bits 4*(r % 8)); qzeros packs eight codes of consecutive
output columns into one int32 of a group row (column c in bits
4*(c % 8)). The stored zero is one less than the zero used: the weight is
(code - (zero + 1)) * scale."""

import triton
import triton.language as tl


# portq: ports exllama:exllama_ext/matrix.h::MatrixView_q4_column.item @3dc7cd9
@triton.jit
def column_code(w_ptr, rows, cols, width):
    """4-bit codes at (rows, cols) of a column-packed matrix."""
    word = tl.load(w_ptr + (rows // 8).to(tl.int64) * width + cols)
    return (word >> ((rows % 8) * 4)) & 0xF


# portq: ports exllama:exllama_ext/matrix.h::MatrixView_q4_row.item @3dc7cd9
@triton.jit
def row_code(z_ptr, groups, cols, width):
    """4-bit codes at (groups, cols) of a row-packed matrix."""
    word = tl.load(z_ptr + groups.to(tl.int64) * (width // 8) + cols // 8)
    return (word >> ((cols % 8) * 4)) & 0xF
