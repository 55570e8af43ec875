/* sass_cpasync.cu - a kernel of tests/test_sass.c, compiled with NVRTC for sm_90 */
extern "C" __global__ void gs_t_cpasync(const float4 *__restrict__ x, float *__restrict__ y) {
  __shared__ float4 s[128];
  unsigned sa = (unsigned)__cvta_generic_to_shared(&s[threadIdx.x]);
  const float4 *g = x + blockIdx.x * 128 + threadIdx.x;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(sa), "l"(g));
  asm volatile("cp.async.commit_group;\n" ::);
  asm volatile("cp.async.wait_group 0;\n" ::);
  __syncthreads();
  float4 v = s[127 - threadIdx.x];
  y[blockIdx.x * 128 + threadIdx.x] = v.x + v.y + v.z + v.w;
}
