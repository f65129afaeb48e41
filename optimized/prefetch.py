"""Software prefetch for the compiled kernels: ``prefetch(a, i)`` and ``prefetch_write(a, i)``
ask the CPU to start loading the cache line of ``a[i]`` now, without waiting for it.

Why: at 10^7 pending timers the task table and the chunk pool are hundreds of megabytes, and a
cascade stores each moved task's new location at a random index of the task table, a line no
cache holds, about 100 ns away; a cancel of a random task reads one word of the liveness bitmap,
which at that size has often left the core's caches too.  Out-of-order execution overlaps only
the misses of the next one or two operations; a loop over a batch knows the ids many iterations
ahead and can start their misses early, so several are in flight at once.

A prefetch is a hint: it never faults and never changes a value, so a wrong or out-of-range
address only wastes a memory access.  Kernels still compute only in-range indices for it.

numba has no prefetch of its own; this is LLVM's ``llvm.prefetch`` intrinsic (read or write,
locality 3 = keep in all cache levels, data cache), emitted inline.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


def _emit(context, builder, aryty, ary_val, index, rw: int) -> None:
    ary = context.make_array(aryty)(context, builder, ary_val)
    ptr = builder.gep(ary.data, [index])
    i8p = ir.IntType(8).as_pointer()
    i32 = ir.IntType(32)
    fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
    fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
    builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, rw), ir.Constant(i32, 3),
                      ir.Constant(i32, 1)])


def _make(rw: int):
    @intrinsic
    def _prefetch(typingctx, arr, index):
        if not (isinstance(arr, types.Array) and arr.ndim == 1 and isinstance(index, types.Integer)):
            return None

        def codegen(context, builder, signature, args):
            _emit(context, builder, signature.args[0], args[0], args[1], rw)
            return context.get_dummy_value()

        return types.void(arr, index), codegen

    return _prefetch


#: ``prefetch(a, i)``: start loading ``a[i]``'s cache line for a read (1-d arrays only).
prefetch = _make(0)
#: ``prefetch_write(a, i)``: the same, for a line about to be written (x86: ``prefetchw``).
prefetch_write = _make(1)
