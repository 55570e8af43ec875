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
    printf("\n");
    return 0;
}
