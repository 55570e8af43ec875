/* sass_vec4.cu - a kernel of tests/test_sass.c, compiled with NVRTC for sm_90 */
extern "C" __global__ void gs_t_vec4(const float4 *__restrict__ x, float *__restrict__ y, int n) {
  __shared__ float4 s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = x[i];
  __syncthreads();
  float acc = 0.0f;
  for (int j = 0; j < n; j++) {
    float4 a = s[(threadIdx.x + j) & 255];
    acc = fmaf(a.x, a.y, acc);
    acc = fmaf(a.z, a.w, acc);
  }
  y[i] = acc;
}
