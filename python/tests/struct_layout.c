/* Prints the size and field offsets of the gensor.h structures the Python
 * package declares with ctypes (python/gensor/_lib.py), one line per
 * structure: "NAME SIZE FIELD=OFFSET:SIZE ..."; test_gensor.py compares them. */
#include <stddef.h>
#include <stdio.h>

#include "gensor.h"

#define F(T, f) printf(" %s=%zu:%zu", #f, offsetof(T, f), sizeof(((T *)0)->f))

int main(void) {
    printf("gs_construct_opts %zu", sizeof(gs_construct_opts));
    F(gs_construct_opts, seed); F(gs_construct_opts, top_k); F(gs_construct_opts, chains);
    F(gs_construct_opts, t_start); F(gs_construct_opts, t_threshold); F(gs_construct_opts, policy);
    F(gs_construct_opts, strategy); F(gs_construct_opts, max_ms); F(gs_construct_opts, conv_form);
    F(gs_construct_opts, split_atomic); F(gs_construct_opts, threads); F(gs_construct_opts, reserved);
    printf("\ngs_launch_arg %zu", sizeof(gs_launch_arg));
    F(gs_launch_arg, name); F(gs_launch_arg, role); F(gs_launch_arg, type); F(gs_launch_arg, index);
    F(gs_launch_arg, dim); F(gs_launch_arg, bytes); F(gs_launch_arg, elems); F(gs_launch_arg, ivalue);
    F(gs_launch_arg, fvalue); F(gs_launch_arg, zero_first);
    printf("\ngs_kernel_stats %zu", sizeof(gs_kernel_stats));
    F(gs_kernel_stats, arch); F(gs_kernel_stats, registers); F(gs_kernel_stats, spill_store_bytes);
    F(gs_kernel_stats, spill_load_bytes); F(gs_kernel_stats, smem_bytes); F(gs_kernel_stats, stack_bytes);
    F(gs_kernel_stats, compile_s);
    printf("\ngs_model_binding %zu", sizeof(gs_model_binding));
    F(gs_model_binding, buffer); F(gs_model_binding, tensor); F(gs_model_binding, constant);
    F(gs_model_binding, output);
    printf("\ngs_model_node %zu", sizeof(gs_model_node));
    F(gs_model_node, name); F(gs_model_node, op_type); F(gs_model_node, kind); F(gs_model_node, op);
    F(gs_model_node, fused_into); F(gs_model_node, reason); F(gs_model_node, out_init);
    F(gs_model_node, nbindings); F(gs_model_node, bindings);
    printf("\ngs_dispatch_opts %zu", sizeof(gs_dispatch_opts));
    F(gs_dispatch_opts, dialect); F(gs_dispatch_opts, arch); F(gs_dispatch_opts, cache_dir);
    F(gs_dispatch_opts, construct); F(gs_dispatch_opts, warm_start); F(gs_dispatch_opts, warm_chains);
    F(gs_dispatch_opts, reuse_tol); F(gs_dispatch_opts, compile);
    printf("\ngs_kernel_handle %zu", sizeof(gs_kernel_handle));
    F(gs_kernel_handle, name); F(gs_kernel_handle, key); F(gs_kernel_handle, grid); F(gs_kernel_handle, block);
    F(gs_kernel_handle, smem_bytes); F(gs_kernel_handle, nint); F(gs_kernel_handle, int_args);
    F(gs_kernel_handle, alpha); F(gs_kernel_handle, beta); F(gs_kernel_handle, has_bias); F(gs_kernel_handle, hit);
    F(gs_kernel_handle, disk_hit); F(gs_kernel_handle, new_shape); F(gs_kernel_handle, constructed);
    F(gs_kernel_handle, warm); F(gs_kernel_handle, memo); F(gs_kernel_handle, predicted_s);
    F(gs_kernel_handle, construct_s); F(gs_kernel_handle, compile_s); F(gs_kernel_handle, dispatch_s);
    F(gs_kernel_handle, binary_kind); F(gs_kernel_handle, binary); F(gs_kernel_handle, binary_len);
    F(gs_kernel_handle, program); F(gs_kernel_handle, config); F(gs_kernel_handle, workspace_bytes);
    printf("\ngs_dispatch_stats %zu", sizeof(gs_dispatch_stats));
    F(gs_dispatch_stats, dispatches); F(gs_dispatch_stats, shapes); F(gs_dispatch_stats, constructions);
    F(gs_dispatch_stats, compiles); F(gs_dispatch_stats, hits); F(gs_dispatch_stats, disk_hits);
    F(gs_dispatch_stats, kernels); F(gs_dispatch_stats, warm_kept); F(gs_dispatch_stats, memo_hits);
    F(gs_dispatch_stats, tie_reused); F(gs_dispatch_stats, cache_corrupt); F(gs_dispatch_stats, cache_write_errors);
    F(gs_dispatch_stats, construct_ms); F(gs_dispatch_stats, construct_cpu_ms); F(gs_dispatch_stats, compile_ms);
    F(gs_dispatch_stats, dispatch_ms);
    printf("\n");
    return 0;
}
