// The kernel behind sass_sm90_tile.cuobjdump.txt and sass_sm90_tile.nvdisasm.txt
// (tests/test_sass.c): a k-tile loop that stages A with cp.async and B with
// float4 loads, reads shared memory as float4, accumulates with FFMA, and
// reduces across the warp with shuffles. Captured with CUDA 13.0's
//   nvcc -cubin -arch=sm_90 -o t.cubin sass_sm90_tile.cu
// and the 13.2.86 wheels of make sass-tools:
//   cuobjdump -sass t.cubin > sass_sm90_tile.cuobjdump.txt
//   nvdisasm -c t.cubin > sass_sm90_tile.nvdisasm.txt
extern "C" __global__ void gs_sass_capture(const float4 *__restrict__ a, const float4 *__restrict__ b,
                                           float *__restrict__ y, int ktiles) {
  __shared__ float4 sa[64], sb[64];
  float acc = 0.0f;
#pragma unroll 1
  for (int kt = 0; kt < ktiles; kt++) {
    unsigned s = (unsigned)__cvta_generic_to_shared(&sa[threadIdx.x]);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(a + kt * 64 + threadIdx.x));
    asm volatile("cp.async.commit_group;\n" ::);
    sb[threadIdx.x] = b[kt * 64 + threadIdx.x];
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < 8; i++) {
      float4 p = sa[(threadIdx.x + i) & 63], q = sb[(threadIdx.x + 3 * i) & 63];
      acc = fmaf(p.x, q.x, acc); acc = fmaf(p.y, q.y, acc);
      acc = fmaf(p.z, q.z, acc); acc = fmaf(p.w, q.w, acc);
    }
    __syncthreads();
  }
  for (int o = 16; o; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
  if ((threadIdx.x & 31) == 0) y[blockIdx.x * 2 + (threadIdx.x >> 5)] = acc;
}
