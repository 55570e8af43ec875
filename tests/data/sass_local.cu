/* sass_local.cu - a kernel of tests/test_sass.c, compiled with NVRTC for sm_90 */
extern "C" __global__ void gs_t_local(const float *__restrict__ x, const int *__restrict__ idx,
                                        float *__restrict__ y) {
  float a[256];
  for (int i = 0; i < 256; i++) a[i] = x[i * 32 + threadIdx.x];
  int j = idx[threadIdx.x] & 255;
  a[j] += 1.0f;
  float s = 0.0f;
  for (int i = 0; i < 256; i += 7) s += a[(i * j) & 255];
  y[threadIdx.x] = s;
}
