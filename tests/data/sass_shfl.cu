/* sass_shfl.cu - a kernel of tests/test_sass.c, compiled with NVRTC for sm_90 */
extern "C" __global__ void gs_t_shfl(const float *__restrict__ x, float *__restrict__ y) {
  float v = x[blockIdx.x * blockDim.x + threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) y[(blockIdx.x * blockDim.x + threadIdx.x) >> 5] = v;
}
