#if defined(FAKE_USE_HIP)
#define FAKE_CUDA_NAME "ROCm"
#else
#define FAKE_CUDA_NAME "CUDA"
#endif
